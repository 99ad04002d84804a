import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Two cores: the e2e suites start daemons and sinks of their own.
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
  },
});
