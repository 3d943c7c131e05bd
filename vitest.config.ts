import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { WaitingFirstSequencer } from './test/support/waiting-first-sequencer.js';

export default defineConfig({
  test: {
    // forks, not threads: two test files loading the Temporal native module in threads segfault.
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    // One file more than there are cores: most of a real-server file's time is spent waiting (on heartbeat
    // timeouts, settles, retries), not computing, so three files on CI's two cores share them well. Every
    // file starts its own servers on free ports. Files that once failed under this load were timing-bound,
    // and fixed at their cause: the ledger burst (the gate now sends one Update at a time) and the
    // upload's late refusal (the simulator hangs up without a reset).
    maxWorkers: availableParallelism() + 1,
    sequence: { sequencer: WaitingFirstSequencer },
    // The workflow code bundled once for the run, not once per file that starts a worker.
    globalSetup: ['test/support/bundle-once.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
