/**
 * The real uploadData activity as a benchmark child builds it: the real
 * service client and S3 source, an in-memory budget gate, run under
 * MockActivityEnvironment. Shared by the single and the concurrent upload runs.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import type { RowPlan } from '../../activities/rows/index.js';
import { createS3Client } from '../../activities/s3/client.js';
import { S3Source } from '../../activities/s3/source.js';
import { ServiceClient } from '../../activities/service/client.js';
import { createTokenSource } from '../../activities/service/token-source.js';
import { Secret } from '../../temporal.config.js';
import type { UploadDataInput, UploadDataResult } from '../../workflows/contracts/activities.js';
import type { PartOfVersion } from '../../workflows/contracts/object-version.js';
import { uploadAfterCreate } from '../activities/upload/environment.js';
import { DEMO_TOKENS } from '../simulator/server.js';
import { InMemoryBudgetGate, SPEC_BUDGET_SETTINGS } from '../support/in-memory-budget-gate.js';
import { InMemoryJobRecordGate } from '../support/in-memory-job-record-gate.js';
import type { BenchObject, BenchTarget } from './bench-env.js';

const MiB = 1024 * 1024;
/** The budget gate is bound to one tenant, as a worker's is; every bench upload names it. */
const BENCH_TENANT = 'bench';

interface BenchUploader {
  /**
   * Uploads `object` into job `jobId`, as one activity run; with a row plan, its regenerated body (`sizeBytes`
   * long): part 1, or the part named.
   */
  upload(object: BenchObject, jobId: string, rowPlan?: RowPlan, part?: PartOfVersion): Promise<UploadDataResult>;
  close(): Promise<void>;
}

export function createBenchUploader(t: BenchTarget): BenchUploader {
  if (t.simulatorUrl === undefined) throw new Error('BENCH_TARGET needs simulatorUrl');
  const service = new ServiceClient({
    baseUrl: t.simulatorUrl,
    tokens: createTokenSource({ kind: 'env', token: new Secret(DEMO_TOKENS.importer) }),
  });
  // As in an import, the job is the record's before the upload claims it.
  const uploadData = uploadAfterCreate({
    service,
    s3: new S3Source(createS3Client({ endpoint: t.s3Endpoint, region: 'us-east-1', forcePathStyle: true })),
    budget: new InMemoryBudgetGate(SPEC_BUDGET_SETTINGS, Date.now, BENCH_TENANT),
    jobRecord: new InMemoryJobRecordGate(),
    uploadIdleTimeoutMs: 60_000,
    partSizeBytes: t.partSizeBytes ?? 8 * MiB,
    parallelParts: t.parallelParts ?? 1,
  });
  let runs = 0;
  return {
    async upload(object, jobId, rowPlan, part) {
      const env = new MockActivityEnvironment({ activityId: `bench-upload-${++runs}` });
      const { key, etag, sizeBytes } = object;
      const input: UploadDataInput = {
        tenant: BENCH_TENANT,
        jobId,
        bucket: t.bucket,
        key,
        etag,
        sizeBytes,
        listAction: 'noop',
        ...(rowPlan ? { rowPlan } : {}),
        ...(part ? { part } : {}),
      };
      return (await env.run(uploadData, input)) as UploadDataResult;
    },
    close: () => service.close(),
  };
}

/** Samples resident memory every 10 ms (memoryUsage.rss() only: the full call walks the heap and costs CPU). */
export function sampleRss(): { before: number; stop(): number } {
  const before = process.memoryUsage.rss();
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 10);
  return {
    before,
    stop() {
      clearInterval(timer);
      return Math.max(peak, process.memoryUsage.rss());
    },
  };
}
