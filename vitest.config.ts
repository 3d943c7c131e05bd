import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { WaitingFirstSequencer } from './test/support/waiting-first-sequencer.js';

export default defineConfig({
  test: {
    // forks, not threads: two test files loading the Temporal native module in threads segfault.
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    // One file at a time on CI's two cores (vitest's default, cores - 1). Two at a time ran the suite in
    // 1,095 s instead of about 1,450 s, but under that load two timing-bound files failed: the ledger
    // burst (200 Updates, two in flight, outran its patience) and the upload's late-refusal case (a
    // second PUT). Every file starts its own servers on free ports, so `--maxWorkers=2` works locally.
    maxWorkers: Math.max(1, availableParallelism() - 1),
    sequence: { sequencer: WaitingFirstSequencer },
    // The workflow code bundled once for the run, not once per file that starts a worker.
    globalSetup: ['test/support/bundle-once.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
