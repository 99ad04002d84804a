// .ci/run's closing line, `tests: N passed, N failed`, read from vitest's JSON
// report: a test file that fails before any of its tests run (an import error,
// a failing beforeAll) must count as a failure, not as "0 failed".
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const SUMMARY = join(process.cwd(), '.ci', 'summary.cjs');
const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function summary(report: unknown, status: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-ci-'));
  dirs.push(dir);
  const file = join(dir, 'vitest.json');
  if (report !== undefined) writeFileSync(file, JSON.stringify(report));
  return execFileSync(process.execPath, [SUMMARY, file, String(status)], { encoding: 'utf8' }).trim();
}

function file(status: 'passed' | 'failed', tests: Array<'passed' | 'failed' | 'skipped'>) {
  return { status, assertionResults: tests.map((s) => ({ status: s })) };
}

describe('.ci summary line', () => {
  it('counts passed and failed tests', () => {
    const report = { numPassedTests: 3, numFailedTests: 1, testResults: [file('passed', ['passed', 'passed']), file('failed', ['passed', 'failed'])] };
    expect(summary(report, 1)).toBe('tests: 3 passed, 1 failed');
  });

  it('counts a test file that failed before its tests ran', () => {
    const report = { numPassedTests: 2, numFailedTests: 0, testResults: [file('passed', ['passed', 'passed']), file('failed', []), file('failed', ['skipped'])] };
    expect(summary(report, 1)).toBe('tests: 2 passed, 2 failed');
  });

  it('never reports 0 failed for a run that failed', () => {
    expect(summary({ numPassedTests: 5, numFailedTests: 0, testResults: [file('passed', ['passed'])] }, 1)).toBe('tests: 5 passed, 1 failed');
  });

  it('reports one failure when there is no report at all', () => {
    expect(summary(undefined, 1)).toBe('tests: 0 passed, 1 failed');
  });

  it('reports a clean run as it is', () => {
    expect(summary({ numPassedTests: 7, numFailedTests: 0, testResults: [file('passed', ['passed'])] }, 0)).toBe('tests: 7 passed, 0 failed');
  });
});
