/**
 * `npm run record:histories`: runs the real-server scenarios (each starts its
 * own Temporal dev or time-skipping server, see test/support/temporal-server.ts)
 * with RECORD_HISTORIES_DIR set, so each writes the history of the run it
 * drove, then replaces the fixtures in test/workflows/histories/ with them.
 *
 * A fixture is written only by a scenario whose assertions passed; if any
 * scenario fails, the committed fixtures stay as they were and the command
 * exits non-zero. Only the folder's top-level files are replaced: histories of
 * released versions kept in subfolders stay. The replay suite picks up every
 * file in the folder and its subfolders.
 *
 * The top-level files are the recordings of the code since the last
 * release: before the first re-recording after a release, move them to a
 * subfolder named for it (as `v0.1.0/`), so that release's runs must still
 * replay (docs/changing-workflow-code.md).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { HISTORIES_DIR } from './recorded-histories.js';

/** The test files whose scenarios record a history. */
const RECORDING_TEST_FILES = [
  'test/workflows/real-server.test.ts',
  'test/workflows/budget-ledger.real-server.test.ts',
  'test/end-to-end/nightly-import.full-stack.real-server.test.ts',
  'test/workflows/nightly-import.scripted.real-server.test.ts',
];

const root = path.resolve(import.meta.dirname, '../..');
const staging = mkdtempSync(path.join(tmpdir(), 'recorded-histories-'));
const run = spawnSync('npx', ['vitest', 'run', ...RECORDING_TEST_FILES], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, RECORD_HISTORIES_DIR: staging },
});
const recorded = readdirSync(staging).filter((f) => f.endsWith('.json'));
if (run.status !== 0 || recorded.length === 0) {
  rmSync(staging, { recursive: true, force: true });
  console.error(`record:histories: the scenarios failed (exit ${run.status}); the fixtures were left unchanged`);
  process.exit(1);
}
for (const old of readdirSync(HISTORIES_DIR).filter((f) => f.endsWith('.json'))) rmSync(path.join(HISTORIES_DIR, old));
for (const file of recorded.sort()) copyFileSync(path.join(staging, file), path.join(HISTORIES_DIR, file));
rmSync(staging, { recursive: true, force: true });
console.log(`record:histories: ${recorded.length} histories in ${path.relative(root, HISTORIES_DIR)}/`);
