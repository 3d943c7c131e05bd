/**
 * The workflow bundle for the nightly real-server test: the real nightlyImport
 * and a stand-in importFile child that succeeds, fails for keys containing
 * "broken", or runs until terminated for keys containing "long", so the parent's bookkeeping is tested without the import steps.
 */
import { ApplicationFailure, condition } from '@temporalio/workflow';
import type { ImportFileInput } from '../../workflows/contracts/import-input.js';

export { nightlyImport } from '../../workflows/nightly-import.js';

export async function importFile(input: ImportFileInput): Promise<{ jobId: number }> {
  // A long job: runs until the test terminates it.
  if (input.source.key.includes('long')) await condition(() => false);
  if (input.source.key.includes('broken')) {
    throw ApplicationFailure.nonRetryable('header lacks Account Domain', 'InvalidCsvHeader');
  }
  return { jobId: 1 };
}
