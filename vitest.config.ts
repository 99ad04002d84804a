import { defineConfig } from 'vitest/config';

// .ci/run reads the JSON report to print its closing `tests: N passed, N failed` line.
const jsonReport = process.env.SLUICE_TEST_REPORT;

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: the e2e suites start daemons and sinks of their own.
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    reporters: jsonReport ? ['default', ['json', { outputFile: jsonReport }]] : ['default'],
  },
});
