/**
 * Workflows that stand where the CLI's operator commands look, each in a
 * state its input chooses: an import that answers `progress` with the given
 * answer and waits for retry or abandon (or fails at once), and a nightly
 * run that never ends. The real workflows reach these states only after
 * minutes of faults; the CLI reads nothing but the query, the signals and
 * the workflow's status, which these answer as the real ones do.
 */
import { ApplicationFailure, condition, setHandler } from '@temporalio/workflow';
import type { ImportProgress } from '../../workflows/contracts/import-workflow.js';
import { abandonSignal, progressQuery, retrySignal } from '../../workflows/contracts/messages.js';

export interface StandInImportInput {
  progress: ImportProgress;
  /** Fail at once with this message (type EmptyFile). */
  fail?: string;
}

export async function importFile(input: StandInImportInput): Promise<string> {
  if (input.fail) throw ApplicationFailure.nonRetryable(input.fail, 'EmptyFile');
  let answer: string | undefined;
  setHandler(progressQuery, () => input.progress);
  setHandler(retrySignal, () => {
    answer = 'retried';
  });
  setHandler(abandonSignal, () => {
    answer = 'abandoned';
  });
  await condition(() => answer !== undefined);
  return answer as string;
}

export async function nightlyImport(): Promise<void> {
  await condition(() => false);
}
