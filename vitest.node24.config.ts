/**
 * CI's Node 24 lane (.ci/run says why these files and not the others): the
 * files whose behaviour depends on Node itself, one at a time, as the lane
 * shares the machine with the Node 20 and browser suites. None starts a
 * worker from the sources or loads a workflow bundle (the compiled package
 * runs its own dist/), so no global setup runs first: npm test's two bundles
 * and transpiled sources would cost about 12 CPU s here for nothing.
 */
import { configDefaults, defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  test: {
    ...base.test,
    include: [
      'test/end-to-end/compiled-package.test.ts',
      'test/worker/process/log-attributes.test.ts',
      'test/activities/s3/**/*.test.ts',
      'test/activities/service/**/*.test.ts',
      'test/activities/upload/**/*.test.ts',
      'test/activities/inspect-source.test.ts',
      'test/activities/rows/**/*.test.ts',
    ],
    // The real-server scenarios run once, under Node 20.
    exclude: [...configDefaults.exclude, '**/*real-server*'],
    maxWorkers: 1,
    globalSetup: [],
  },
});
