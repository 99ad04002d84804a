import { defineConfig } from 'vitest/config';

// .ci/run reads the JSON report to print its closing `tests: N passed, N failed` line.
const jsonReport = process.env.SLUICE_TEST_REPORT;

// The tests talk to servers of their own on loopback: never through a proxy a
// machine's environment names (Sluice honours HTTP(S)_PROXY and NO_PROXY).
const noProxy = [process.env.no_proxy ?? process.env.NO_PROXY, '127.0.0.1', 'localhost', '::1'].filter(Boolean).join(',');

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: the e2e suites start daemons and sinks of their own.
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    env: { no_proxy: noProxy, NO_PROXY: noProxy },
    reporters: jsonReport ? ['default', ['json', { outputFile: jsonReport }]] : ['default'],
  },
});
