/**
 * Builds the activities' real dependencies from configuration: the service
 * client (token from env, a rotating file or a client-credentials exchange), the S3 source, the budget
 * gate spending allowances of the tenant's ledger workflow, the gate of the object versions' job records, and the
 * tenant's sweep board.
 */
import type { Client } from '@temporalio/client';
import { AllowanceGate } from '../../activities/budget/allowance-gate.js';
import { TemporalBudgetGate } from '../../activities/budget/temporal-gate.js';
import type { ActivityDeps } from '../../activities/index.js';
import { TemporalJobRecordGate } from '../../activities/job-record/gate.js';
import { temporalMappingLocks } from '../../activities/mapping-lock.js';
import { temporalWorkflowStatuses } from '../../activities/read-import-states.js';
import { createS3Client } from '../../activities/s3/client.js';
import { S3Source } from '../../activities/s3/source.js';
import { ServiceClient } from '../../activities/service/client.js';
import { createTokenSource } from '../../activities/service/token-source.js';
import { TemporalSweepBoard } from '../../activities/watch/temporal-sweep-board.js';
import { type Config, ConfigError } from '../../temporal.config.js';
import { meteredBudgetGate, type WorkerMetrics } from './metrics.js';

export function createActivityDeps(config: Config, client: Client, metrics?: WorkerMetrics): ActivityDeps {
  const service = config.service;
  if (!service) throw new ConfigError('COMPANY_DATA_BASE_URL and a token must be configured to run a worker');
  // The process spends calls from allowances the ledger granted it, asking the ledger a fraction as often.
  const gate = new AllowanceGate(
    new TemporalBudgetGate({
      client,
      taskQueue: config.temporal.taskQueue,
      tenant: config.tenant,
      settings: config.budget,
    }),
  );
  return {
    service: new ServiceClient({
      baseUrl: service.baseUrl,
      tokens: createTokenSource(service.token, { requestTimeoutMs: service.requestTimeoutMs }),
      requestTimeoutMs: service.requestTimeoutMs,
      uploadIdleTimeoutMs: service.uploadIdleTimeoutMs,
      onResponse: metrics ? (e) => metrics.apiCall(e.endpoint, e.status ?? 'error') : undefined,
    }),
    s3: new S3Source(createS3Client(config.s3)),
    budget: metrics ? meteredBudgetGate(gate, metrics) : gate,
    workflows: temporalWorkflowStatuses(client),
    mappingLocks: temporalMappingLocks(client, config.temporal.taskQueue),
    // On the main task queue, like the budget ledger: the record is a workflow the import's worker runs.
    jobRecord: new TemporalJobRecordGate({ client, taskQueue: config.temporal.taskQueue, settings: config.jobRecord }),
    // One sweep of the tenant's processing jobs per interval, shared by every worker process.
    sweepBoard: new TemporalSweepBoard({
      client,
      taskQueue: config.temporal.taskQueue,
      tenant: config.tenant,
      releaseCheckMs: config.jobRecord.releaseCheckMs,
    }),
    settings: {
      maxFileBytes: config.maxFileBytes,
      maxPartBytes: config.maxPartBytes,
      poll: { scheduleMs: config.poll.scheduleMs, jitterRatio: config.poll.jitterRatio },
      uploadIdleTimeoutMs: service.uploadIdleTimeoutMs,
      partSizeBytes: config.upload.partSizeBytes,
      parallelParts: config.upload.parallelParts,
      // The service may commit a create that long after its last byte, and list the job that long after again.
      createSettleMs: 2 * config.jobRecord.lagMs,
    },
    notify: config.worker.notify && { ...config.worker.notify, timeoutMs: service.requestTimeoutMs },
    onBytesUploaded: metrics ? (n) => metrics.bytesUploaded(n) : undefined,
  };
}
