import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { WaitingFirstSequencer } from './test/support/waiting-first-sequencer.js';

export default defineConfig({
  test: {
    // forks, not threads: two test files loading the Temporal native module in threads segfault.
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    // Two files at a time at least (vitest's default is one fewer than the cores: one file at a time on
    // CI's two). Most of the suite's time is spent waiting on the servers, not computing; every file starts
    // its own servers on free ports, with its own task queues and temporary folders, so files do not meet.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    sequence: { sequencer: WaitingFirstSequencer },
    // The workflow code bundled once for the run, not once per file that starts a worker.
    globalSetup: ['test/support/bundle-once.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
