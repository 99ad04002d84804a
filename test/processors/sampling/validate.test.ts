// Bad sampling percentages are config errors, reported by `sluice validate` with their YAML path.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../../..');
const CLI = join(ROOT, 'dist/src/cli.js');
let directory: string;

beforeAll(async () => {
  if (!existsSync(CLI)) await run('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT }).catch(() => undefined);
  directory = mkdtempSync(join(tmpdir(), 'sluice-sampling-'));
}, 120_000);

afterAll(() => {
  rmSync(directory, { recursive: true, force: true });
});

function configWith(percentage: string): string {
  return `
receivers:
  otlp: { protocols: { http: { endpoint: "127.0.0.1:4318" } } }
processors:
  sampling/web:
    rules:
      - { environment: production, percentage: ${percentage}, path_prefix: /api }
exporters:
  drains: {}
drains:
  - name: honeycomb
    url: https://api.honeycomb.io/v1/traces
    sampling:
      - { environment: production, percentage: ${percentage} }
service:
  storage: { directory: ${directory} }
  pipelines:
    traces: { receivers: [otlp], processors: [sampling/web], exporters: [drains] }
`;
}

async function validate(text: string): Promise<{ code: number; out: string }> {
  const file = join(directory, `c-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, text);
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, 'validate', '--config', file]);
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string };
    return { code: failed.code, out: failed.stdout + failed.stderr };
  }
}

describe('sluice validate and sampling percentages', () => {
  it('accepts decimal percentages from 0 to 100', async () => {
    expect(await validate(configWith('12.5'))).toMatchObject({ code: 0 });
    expect(await validate(configWith('0'))).toMatchObject({ code: 0 });
    expect(await validate(configWith('100'))).toMatchObject({ code: 0 });
  });

  for (const bad of ['101', '-1', '"ten"', '.nan']) {
    it(`refuses percentage ${bad}, naming each YAML path`, async () => {
      const { code, out } = await validate(configWith(bad));
      expect(code).toBe(1);
      expect(out).toContain('processors.sampling/web.rules[0].percentage: must be a number from 0 to 100');
      expect(out).toContain('drains[0].sampling[0].percentage: must be a number from 0 to 100');
    });
  }

  it('refuses a path_prefix without its leading /, which no request path begins with, naming each YAML path', async () => {
    const { code, out } = await validate(configWith('10').replace('path_prefix: /api', 'path_prefix: api').replace('percentage: 10 }', 'percentage: 10, path_prefix: checkout }'));
    expect(code).toBe(1);
    expect(out).toContain('processors.sampling/web.rules[0].path_prefix: must begin with / (a request path, such as /api)');
    expect(out).toContain('drains[0].sampling[0].path_prefix: must begin with / (a request path, such as /api)');
  });

  it('refuses an environment with a space around it, which no trace\'s environment matches, naming each YAML path', async () => {
    const { code, out } = await validate(configWith('10').replace('{ environment: production, percentage: 10, path_prefix', '{ environment: " production", percentage: 10, path_prefix').replace('{ environment: production, percentage: 10 }', '{ environment: "production ", percentage: 10 }'));
    expect(code).toBe(1);
    expect(out).toContain('processors.sampling/web.rules[0].environment: must not begin or end with a space (environments are compared whole)');
    expect(out).toContain('drains[0].sampling[0].environment: must not begin or end with a space (environments are compared whole)');
  });

  it('refuses an http drain URL unless insecure is set', async () => {
    const { code, out } = await validate(configWith('10').replace('https://api.honeycomb.io', 'http://api.honeycomb.io'));
    expect(code).toBe(1);
    expect(out).toContain('drains[0].url: must be an https URL');
    expect(await validate(configWith('10').replace('https://api.honeycomb.io/v1/traces', 'http://127.0.0.1:9/v1/traces\n    insecure: true'))).toMatchObject({ code: 0 });
  });
});
