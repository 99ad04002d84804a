// Prints .ci/run's closing line, `tests: N passed, N failed`, from vitest's
// JSON report and npm test's exit status: node .ci/summary.cjs REPORT STATUS.
// A test file that failed before any of its tests ran (an import error, a
// failing beforeAll) counts as one failure, and a failed run never reads "0 failed".
const { existsSync, readFileSync } = require('node:fs');

const [file, statusText] = process.argv.slice(2);
const status = Number(statusText);
let passed = 0;
let failed = 0;
if (file !== undefined && existsSync(file) && readFileSync(file, 'utf8').trim() !== '') {
  const report = JSON.parse(readFileSync(file, 'utf8'));
  passed = report.numPassedTests;
  failed = report.numFailedTests;
  for (const result of report.testResults ?? []) {
    const testFailed = (result.assertionResults ?? []).some((test) => test.status === 'failed');
    if (result.status === 'failed' && !testFailed) failed += 1;
  }
}
if (status !== 0 && failed === 0) failed = 1;
console.log(`tests: ${passed} passed, ${failed} failed`);
