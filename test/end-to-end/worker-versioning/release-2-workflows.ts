/**
 * Release 2 of the workflow code, for worker-versioning.real-server.test.ts:
 * importFile starts with a timer that release 1 never started, and no patch
 * guards it. A release-1 history replayed by this code fails with a
 * nondeterminism error, so an import can only finish if it stays on the
 * release that started it. The other workflows are release 1's.
 */
import { sleep } from '@temporalio/workflow';
import type { ImportFileInput } from '../../../workflows/contracts/import-input.js';
import type { ImportFileResult } from '../../../workflows/contracts/import-workflow.js';
import { importFile as release1ImportFile } from '../../../workflows/import-file.js';

// Every other workflow of the release as it is: a release that lacked one (the job record) would leave its starts unserved.
export {
  budgetLedger,
  dryRunFeed,
  dryRunImport,
  jobRecord,
  mappingLock,
  nightlyImport,
} from '../../../workflows/index.js';

/** How release 2's imports show in their history: a first timer of this length. */
export const RELEASE_2_TIMER_MS = 10;

export async function importFile(input: ImportFileInput): Promise<ImportFileResult> {
  await sleep(RELEASE_2_TIMER_MS);
  return release1ImportFile(input);
}
