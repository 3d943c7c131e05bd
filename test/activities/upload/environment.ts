/**
 * What the upload tests run against: s3rver and the service simulator on
 * loopback, the real S3 source and service client, the in-memory budget gate,
 * and activities run under MockActivityEnvironment (no Temporal server here).
 */
import { Readable } from 'node:stream';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Info } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { currentAttempt } from '../../../activities/job-record/gate.js';
import { type RangeRead, S3Source } from '../../../activities/s3/source.js';
import { ServiceClient } from '../../../activities/service/client.js';
import { createTokenSource } from '../../../activities/service/token-source.js';
import { makeUploadData, type UploadDataDeps } from '../../../activities/upload/index.js';
import { Secret } from '../../../temporal.config.js';
import { type LocalS3, startLocalS3 } from '../../../worker/demo/local-s3.js';
import type { UploadDataInput, UploadDataResult, UploadProgress } from '../../../workflows/contracts/activities.js';
import { DEMO_TOKENS, type Simulator, startSimulator } from '../../simulator/server.js';
import { accountsCsv } from '../../support/accounts-csv.js';
import { type ActivityRun, runActivity } from '../../support/activities.js';
import { InMemoryBudgetGate, SPEC_BUDGET_SETTINGS } from '../../support/in-memory-budget-gate.js';
import { InMemoryJobRecordGate } from '../../support/in-memory-job-record-gate.js';

export { sha256 } from '../../support/accounts-csv.js';

export const BUCKET = 'imports';
/** The tenant the world's budget gate holds: uploads must name it (or none). */
const WORLD_TENANT = 'acme';

/** An S3Source that keeps every read asked of it and every stream it opened (was it destroyed?). */
class RecordingS3Source extends S3Source {
  readonly opened: Readable[] = [];
  readonly reads: { key: string; start?: number; end?: number }[] = [];

  override async read(bucket: string, key: string, options: RangeRead): Promise<Readable> {
    this.reads.push({ key, start: options.start, end: options.end });
    const stream = await super.read(bucket, key, options);
    this.opened.push(stream);
    return stream;
  }
}

/**
 * An S3 source whose bodies flow past their first `openBytes` only once `gate`
 * resolves: a slow read, on a real S3 socket.
 */
export class GatedS3Source extends S3Source {
  constructor(
    client: S3Client,
    private readonly gate: Promise<void>,
    private readonly openBytes = 0,
  ) {
    super(client);
  }

  override async read(bucket: string, key: string, options: RangeRead): Promise<Readable> {
    const body = await super.read(bucket, key, options);
    const { gate, openBytes } = this;
    return Readable.from(
      (async function* () {
        let passed = 0;
        for await (const chunk of body as AsyncIterable<Buffer>) {
          if (passed >= openBytes) await gate;
          passed += chunk.byteLength;
          yield chunk;
        }
      })(),
    );
  }
}

export interface UploadWorld {
  s3: LocalS3;
  source: RecordingS3Source;
  sim: Simulator;
  service: ServiceClient;
  budget: InMemoryBudgetGate;
  put(key: string, body: string | Uint8Array): Promise<void>;
  newJobId(): Promise<string>;
  close(): Promise<void>;
}

interface WorldOptions {
  /** The service client's own idle limit (the activity's watchdog has its own). */
  clientIdleTimeoutMs?: number;
  /** How long the service client waits for the answer once the whole body is sent. */
  clientResponseTimeoutMs?: number;
}

export async function startWorld(options: WorldOptions = {}): Promise<UploadWorld> {
  const s3 = await startLocalS3({ buckets: [BUCKET] });
  const sim = await startSimulator({ processingMs: 60_000 });
  const service = new ServiceClient({
    baseUrl: sim.baseUrl,
    tokens: createTokenSource({ kind: 'env', token: new Secret(DEMO_TOKENS.importer) }),
    uploadIdleTimeoutMs: options.clientIdleTimeoutMs ?? 60_000,
    uploadResponseTimeoutMs: options.clientResponseTimeoutMs,
  });
  return {
    s3,
    source: new RecordingS3Source(s3.client),
    sim,
    service,
    budget: new InMemoryBudgetGate(SPEC_BUDGET_SETTINGS, Date.now, WORLD_TENANT),
    async put(key, body) {
      await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: Buffer.from(body) }));
    },
    async newJobId() {
      const job = await service.createJob({ dataImportName: 'upload test', entityType: 'Account' });
      return job.id;
    },
    async close() {
      await service.close();
      await sim.close();
      await s3.close();
    },
  };
}

/** Leases and lags short enough for tests (a lease must outlast the fence's 1 s margin). */
export const TEST_RECORD_SETTINGS = { leaseMs: 3_000, lagMs: 200, deliveryBoundMs: 300 };

export function uploadDeps(world: UploadWorld, overrides: Partial<UploadDataDeps> = {}): UploadDataDeps {
  return {
    service: world.service,
    s3: world.source,
    budget: world.budget,
    // One record per deps, so the attempts of one upload share it; a short lease and lag keep settles short.
    jobRecord: new InMemoryJobRecordGate(TEST_RECORD_SETTINGS),
    uploadIdleTimeoutMs: 60_000,
    partSizeBytes: 64 * 1024,
    parallelParts: 1,
    heartbeatIntervalMs: 20,
    ...overrides,
  };
}

type UploadAttempt = ActivityRun<UploadDataResult, UploadProgress>;

/**
 * uploadData as an import runs it: its job was made through the object
 * version's record first. A record that knows no job yet is told the input's
 * job was created by this workflow's createImportJob (scheduled before any
 * upload attempt).
 */
export function uploadAfterCreate(deps: UploadDataDeps) {
  const upload = makeUploadData(deps);
  return async function uploadData(input: UploadDataInput): Promise<UploadDataResult> {
    await jobMadeThroughRecord(deps, input);
    return upload(input);
  };
}

/** Runs one attempt of uploadData (after its create, see uploadAfterCreate), recording its heartbeats. */
export function runUpload(deps: UploadDataDeps, input: UploadDataInput, info: Partial<Info> = {}): UploadAttempt {
  return runActivity<UploadDataInput, UploadDataResult, UploadProgress>(uploadAfterCreate(deps), input, {
    activityId: 'upload',
    ...info,
  });
}

async function jobMadeThroughRecord(deps: UploadDataDeps, input: UploadDataInput): Promise<void> {
  const { workflowId, runId } = currentAttempt();
  const version = {
    tenant: deps.budget.tenant,
    bucket: input.bucket,
    key: input.key,
    etag: input.etag,
    ...(input.part ? { part: input.part } : {}),
  };
  const create = deps.jobRecord.session(version, { workflowId, runId, activityId: 'create', scheduledMs: 0 });
  const claim = await create.claimCreate();
  if (claim.kind === 'create') await create.resolveCreate(claim.seq, { jobId: input.jobId, state: 'new' });
}

/** CSV-like bytes, exactly `bytes` long: a header row, then numbered rows (deterministic, so hashes are stable). */
export function csvBytes(bytes: number, header = 'Account Name,Account Domain'): Buffer {
  return accountsCsv(bytes, header).subarray(0, bytes);
}

export async function etagOf(world: UploadWorld, key: string): Promise<string> {
  return (await world.source.head(BUCKET, key)).etag;
}

export interface RetriedUpload {
  /** The result of the attempt that succeeded, if one did. */
  result?: UploadDataResult;
  /** The failure that ended the retries: non-retryable, or the last one when attempts ran out. */
  failure?: ApplicationFailure;
  attempts: number;
}

/**
 * Runs uploadData the way Temporal retries it: a retryable failure starts the
 * next attempt (with the last heartbeat's details, which only show progress), until an attempt succeeds,
 * fails non-retryably, or `maxAttempts` ran (standing for "retried forever").
 */
export async function uploadWithRetries(
  deps: UploadDataDeps,
  input: UploadDataInput,
  maxAttempts = 4,
  /** Heartbeat details an earlier attempt left, and the number of the first attempt run here. */
  earlier?: UploadProgress,
  firstAttempt = 1,
): Promise<RetriedUpload> {
  let details = earlier;
  for (let attempt = firstAttempt; ; attempt++) {
    // Each attempt scheduled later than the one before, as Temporal schedules them: the record tells them apart.
    const run = runUpload(deps, input, {
      attempt,
      heartbeatDetails: details,
      currentAttemptScheduledTimestampMs: attempt,
    });
    try {
      return { result: await run.result, attempts: attempt };
    } catch (err) {
      if (!(err instanceof ApplicationFailure)) throw err;
      details = run.heartbeats.at(-1) ?? details;
      if (err.nonRetryable || attempt >= maxAttempts) return { failure: err, attempts: attempt };
    }
  }
}

/** Stores `bytes` under `key` and makes a fresh job for them: the input of one upload. */
export async function prepareUpload(world: UploadWorld, key: string, bytes: Buffer): Promise<UploadDataInput> {
  await world.put(key, bytes);
  return {
    tenant: WORLD_TENANT,
    jobId: await world.newJobId(),
    bucket: BUCKET,
    key,
    etag: await etagOf(world, key),
    sizeBytes: bytes.length,
    listAction: 'noop',
  };
}

/** The data PUTs the service saw for one job: more than one is a second upload. */
export function dataPutsTo(world: UploadWorld, jobId: string): number {
  return world.sim.requests().filter((r) => r.endpoint === 'submitData' && r.path.includes(`/job/${jobId}/`)).length;
}
