import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // forks, not threads: two test files loading the Temporal native module in threads segfault.
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
