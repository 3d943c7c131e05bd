/**
 * The workflow bundle for the upload real-server test: one uploadData call
 * with the production retry policy's non-retryable types and quick retries,
 * so Temporal itself schedules (and names) each attempt.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { UploadDataInput, UploadDataResult } from '../../../workflows/contracts/activities.js';
import { NON_RETRYABLE_FAILURES } from '../../../workflows/contracts/failure-types.js';

const { uploadData } = proxyActivities<{ uploadData(input: UploadDataInput): Promise<UploadDataResult> }>({
  startToCloseTimeout: '2m',
  heartbeatTimeout: '30s',
  retry: {
    initialInterval: '100ms',
    backoffCoefficient: 1,
    maximumAttempts: 4,
    nonRetryableErrorTypes: [...NON_RETRYABLE_FAILURES],
  },
});

export async function uploadOnce(input: UploadDataInput): Promise<UploadDataResult> {
  return uploadData(input);
}
