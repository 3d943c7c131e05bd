/**
 * `npm run test:ui`: the browser tests (test/ui/*.browser.ts), kept out of
 * `npm test` because they need Chromium (test/ui/install-chromium.sh).
 */
import path from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: path.resolve(import.meta.dirname, '../..'),
  test: {
    // forks, not threads: the Temporal native module segfaults in threads (ENVIRONMENT.md).
    pool: 'forks',
    include: ['test/ui/**/*.browser.ts'],
    // One dev server, one browser: a whole import happens inside each test.
    testTimeout: 300_000,
    hookTimeout: 180_000,
  },
});
