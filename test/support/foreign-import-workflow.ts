/**
 * Another deployment's importFile on the same task queue: it fails every import
 * at once, as a worker without the demo's bucket does.
 */
import { ApplicationFailure } from '@temporalio/workflow';

export async function importFile(): Promise<never> {
  throw ApplicationFailure.nonRetryable('this worker has no bucket demo-imports', 'SourceNotFound');
}
