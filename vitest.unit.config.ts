/**
 * `npm run test:unit`: the pure tests, in seconds: no Temporal server, no
 * simulator or S3 server, no child process, no workflow sandbox. Run it while
 * editing; run `npm test` (everything, about ten minutes here) before a commit
 * that touches I/O, workflows or the processes.
 */
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  test: {
    ...base.test,
    include: [
      'test/activities/csv/*.test.ts',
      'test/activities/rows/*.test.ts',
      'test/activities/check-rows/*.test.ts',
      'test/activities/job-record/*.test.ts',
      'test/worker/cli/{guard-band,import-progress,schedules-plan,start-input}.test.ts',
      'test/worker/config/*.test.ts',
      'test/workflows/*.test.ts',
      'test/workflows/contracts/*.test.ts',
    ],
    // Same folders, but they bundle or replay workflows in the sandbox, or start a server.
    exclude: ['**/*.replay.test.ts', '**/*real-server*.test.ts', 'test/workflows/bundle.test.ts'],
    // Nothing here starts a worker: no workflow bundle to build first.
    globalSetup: [],
  },
});
