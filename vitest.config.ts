import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { WaitingFirstSequencer } from './test/support/waiting-first-sequencer.js';

export default defineConfig({
  test: {
    // forks, not threads: two test files loading the Temporal native module in threads segfault.
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    // Two files more than there are cores: most of a real-server file's time is spent waiting (on heartbeat
    // timeouts, settles, retries), not computing: with three files at once the suite spent about 950 CPU
    // seconds in 750 s, so two cores had room for a fourth file. Every file starts its own servers on free ports. Files that once failed under load were
    // timing-bound, and fixed at their cause (the ledger burst, the upload's late refusal, the simulator's
    // keep-alive, the 401 test's idle bound).
    maxWorkers: availableParallelism() + 2,
    sequence: { sequencer: WaitingFirstSequencer },
    // The workflow code bundled once for the run, not once per file that starts a worker; the sources
    // transpiled once for the worker and CLI processes the tests start, not by tsx at each start.
    globalSetup: ['test/support/bundle-once.ts', 'test/support/compile-once.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
