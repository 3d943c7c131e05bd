/**
 * The import pipeline's promise, end to end on real sockets: the activities
 * exactly as createActivities() wires them, over s3rver and the service
 * simulator, run step by step the way the importFile workflow runs them (no
 * Temporal server can run here; the workflow's own decisions are covered by
 * the replay tests). Each scenario is one way an import is interrupted, and
 * what it must leave behind: one job, one accepted upload, byte-exact data,
 * no budget overspent.
 */
import { createHash } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { Info } from '@temporalio/activity';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createActivities } from '../../activities/index.js';
import { S3Source } from '../../activities/s3/source.js';
import { ServiceClient } from '../../activities/service/client.js';
import { createTokenSource } from '../../activities/service/token-source.js';
import { Secret } from '../../temporal.config.js';
import { type LocalS3, startLocalS3 } from '../../worker/demo/local-s3.js';
import type { FieldMappingSet } from '../../workflows/contracts/import-input.js';
import { DEMO_TOKENS, type Simulator, startSimulator } from '../simulator/server.js';
import { failureOf, runActivity } from '../support/activities.js';
import { InMemoryBudgetGate, SPEC_BUDGET_SETTINGS } from '../support/in-memory-budget-gate.js';
import { InMemoryJobRecordGate } from '../support/in-memory-job-record-gate.js';

const BUCKET = 'crm-exports';
const TENANT = 'acme';
const MAPPINGS: FieldMappingSet = {
  sourceId: '1001',
  objectType: 'account',
  mappings: [
    { sourceFieldLabel: 'Account Name', serviceFieldName: 'name', dataType: 'string' },
    { sourceFieldLabel: 'Account Domain', serviceFieldName: 'domain', dataType: 'string' },
  ],
};

function accountsCsv(rows: number): Buffer {
  const lines = ['\uFEFFAccount Name,Account Domain,Employees'];
  for (let i = 0; i < rows; i++) lines.push(`"Company ${i}, Inc.",company-${i}.example.com,${i % 5000}`);
  return Buffer.from(`${lines.join('\n')}\n`);
}

function inspectInput(key: string, mappings?: FieldMappingSet['mappings']) {
  return { tenant: TENANT, bucket: BUCKET, key, entityType: 'Account' as const, mappings };
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

interface World {
  s3: LocalS3;
  sim: Simulator;
  service: ServiceClient;
  budget: InMemoryBudgetGate;
  clock: { now: number };
  activities: ReturnType<typeof createActivities>;
}

let world: World;

async function startWorld(limits: Partial<typeof SPEC_BUDGET_SETTINGS.limits> = {}): Promise<World> {
  const clock = { now: Date.parse('2026-11-22T02:59:00Z') };
  const s3 = await startLocalS3({ buckets: [BUCKET] });
  const sim = await startSimulator({ processingMs: 50 });
  const service = new ServiceClient({
    baseUrl: sim.baseUrl,
    tokens: createTokenSource({ kind: 'env', token: new Secret(DEMO_TOKENS.importer) }),
  });
  const budget = new InMemoryBudgetGate(
    { ...SPEC_BUDGET_SETTINGS, limits: { ...SPEC_BUDGET_SETTINGS.limits, ...limits } },
    () => clock.now,
    TENANT,
  );
  const activities = createActivities({
    service,
    s3: new S3Source(s3.client),
    budget,
    // No nightly runs here: no child import is ever looked up.
    workflows: { statusOf: async () => undefined },
    // The activities run without a workflow here, and none asks for a mapping lock.
    mappingLocks: { acquire: () => Promise.reject(new Error('no mapping lock is taken in this test')) },
    // No Temporal server: the records' own decisions, held in memory, with a short fence.
    jobRecord: new InMemoryJobRecordGate({ leaseMs: 1_500, lagMs: 100, deliveryBoundMs: 200, retryAfterMs: 100 }),
    settings: {
      maxFileBytes: 5 * 1024 ** 3,
      // The spec's 60 s poll ceiling in 40 ms: service time 1,500 times faster (the listing grace: 10 ms).
      poll: { scheduleMs: [20, 40], jitterRatio: 0 },
      timeCompression: 1_500,
      uploadIdleTimeoutMs: 10_000,
      partSizeBytes: 64 * 1024,
      parallelParts: 4,
      createSettleMs: 200,
    },
  });
  return { s3, sim, service, budget, clock, activities };
}

afterEach(async () => {
  await world.service.close();
  await world.sim.close();
  await world.s3.close();
});

async function putObject(key: string, body: Buffer): Promise<void> {
  await world.s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
}

let attemptsScheduled = 0;

/** Identity of one activity attempt, as Temporal would give it. */
function attempt(workflowId: string, runId: string, activityId: string, n = 1): Partial<Info> {
  return {
    activityId,
    attempt: n,
    // Later attempts are scheduled later, as Temporal schedules them: the job record orders them so.
    currentAttemptScheduledTimestampMs: ++attemptsScheduled,
    // The create's own limit (retry-policies.ts): its waits for an earlier create fit in it.
    startToCloseTimeoutMs: 10 * 60_000,
    workflowExecution: { workflowId, runId },
  } as Partial<Info>;
}

/** The importFile steps for one run of one workflow id, as the workflow sequences them. */
async function runImport(key: string, workflowId: string, runId: string) {
  const a = world.activities;
  const id = (step: string) => attempt(workflowId, runId, step);
  const inspected = await runActivity(a.inspectSource, inspectInput(key, MAPPINGS.mappings), id('1')).result;
  await runActivity(a.applyFieldMappings, { tenant: TENANT, set: MAPPINGS }, id('2')).result;
  const job = await runActivity(
    a.createImportJob,
    {
      tenant: TENANT,
      dataImportName: `accounts ${key}`,
      entityType: 'Account' as const,
      customSourceId: MAPPINGS.sourceId,
      // The object version's record answers the reset run as it answered the first.
      objectVersion: { bucket: BUCKET, key, etag: inspected.etag },
    },
    id('3'),
  ).result;
  const upload = await runActivity(
    a.uploadData,
    {
      tenant: TENANT,
      jobId: job.jobId,
      bucket: BUCKET,
      key,
      etag: inspected.etag,
      sizeBytes: inspected.sizeBytes,
      listAction: 'noop' as const,
    },
    id('4'),
  ).result;
  const done = await runActivity(a.awaitJobCompletion, { tenant: TENANT, jobId: job.jobId, timeoutMs: 60_000 }, id('5'))
    .result;
  return { inspected, job, upload, done };
}

describe('an import end to end', () => {
  beforeEach(async () => {
    world = await startWorld();
  });

  it('applies the mappings, creates one job, uploads the file byte for byte and sees it completed', async () => {
    const file = accountsCsv(20_000);
    await putObject('accounts.csv', file);

    const { inspected, job, upload, done } = await runImport('accounts.csv', 'import-accounts', 'run-1');

    expect(inspected.warnings.join(' ')).toContain('Employees');
    expect(world.sim.fieldMappings('1001', 'account')).toHaveLength(2);
    expect(job.reused).toBe(false);
    expect(upload).toMatchObject({ skipped: false, bytesSent: file.length });
    expect(done.state).toBe('completed');
    const record = world.sim.job(job.jobId);
    expect(record).toMatchObject({ state: 'completed', uploads: 1, bytesReceived: file.length, listAction: 'noop' });
    expect(record?.sha256).toBe(sha256(file));
    expect(world.sim.jobs()).toHaveLength(1);
  });

  it('rejects a file whose header lacks a mapped label before spending any service call', async () => {
    await putObject('wrong.csv', Buffer.from('Name,Domain\nA,a.example\n'));
    const failure = await failureOf(
      runActivity(world.activities.inspectSource, inspectInput('wrong.csv', MAPPINGS.mappings)).result,
    );
    expect(failure.type).toBe('MappingMismatch');
    expect(failure.message).toContain('Account Name');
    expect(world.sim.requests()).toEqual([]);
  });
});

describe('resuming after an interruption', () => {
  beforeEach(async () => {
    world = await startWorld();
  });

  it('a connection lost mid-upload: the retried attempt uploads exactly once into the same job', async () => {
    const file = accountsCsv(50_000);
    await putObject('big.csv', file);
    const a = world.activities;
    const inspected = await runActivity(a.inspectSource, inspectInput('big.csv')).result;
    const job = await runActivity(
      a.createImportJob,
      {
        tenant: TENANT,
        dataImportName: 'big',
        entityType: 'Account' as const,
        objectVersion: { bucket: BUCKET, key: 'big.csv', etag: inspected.etag },
      },
      attempt('import-big', 'run-1', '3'),
    ).result;
    const uploadInput = {
      tenant: TENANT,
      jobId: job.jobId,
      bucket: BUCKET,
      key: 'big.csv',
      etag: inspected.etag,
      sizeBytes: inspected.sizeBytes,
      listAction: 'insert' as const,
    };

    world.sim.resetUploadAfter(Math.floor(file.length / 3));
    const first = await failureOf(
      runActivity(a.uploadData, uploadInput, attempt('import-big', 'run-1', '4', 1)).result,
    );
    expect(first.nonRetryable).toBe(false);
    expect(world.sim.job(job.jobId)).toMatchObject({ state: 'new', uploads: 0 });

    const second = await runActivity(a.uploadData, uploadInput, attempt('import-big', 'run-1', '4', 2)).result;
    expect(second).toMatchObject({ skipped: false, bytesSent: file.length });
    expect(world.sim.job(job.jobId)).toMatchObject({ uploads: 1, bytesReceived: file.length });
    expect(world.sim.job(job.jobId)?.sha256).toBe(sha256(file));
    expect(world.sim.jobs()).toHaveLength(1);
  });

  it('an operator Reset after the upload was accepted: no second job, nothing uploaded again', async () => {
    const file = accountsCsv(5_000);
    await putObject('reset.csv', file);
    const firstRun = await runImport('reset.csv', 'import-reset', 'run-1');

    const resetRun = await runImport('reset.csv', 'import-reset', 'run-2-after-reset');

    expect(resetRun.job).toMatchObject({ jobId: firstRun.job.jobId, reused: true });
    expect(resetRun.upload).toMatchObject({ skipped: true, bytesSent: 0 });
    expect(resetRun.done.state).toBe('completed');
    expect(world.sim.jobs()).toHaveLength(1);
    expect(world.sim.job(firstRun.job.jobId)?.uploads).toBe(1);
    const puts = world.sim.requests().filter((r) => r.endpoint === 'submitData');
    expect(puts).toHaveLength(1);
  });

  it('the create response lost on the wire: the next attempt settles, finds the job and creates no second', async () => {
    const a = world.activities;
    const input = {
      tenant: TENANT,
      dataImportName: 'lost response',
      entityType: 'Person' as const,
      objectVersion: { bucket: BUCKET, key: 'lost.csv', etag: '"etag"' },
    };
    world.sim.applyThenDrop('createJob');
    const lost = await failureOf(runActivity(a.createImportJob, input, attempt('import-lost', 'r', '3', 1)).result);
    expect(lost.nonRetryable).toBe(false);
    const found = await runActivity(a.createImportJob, input, attempt('import-lost', 'r', '3', 2)).result;
    expect(found).toMatchObject({ reused: true, apiCalls: { listJobs: 1 } });
    expect(found.apiCalls.createJob).toBeUndefined();
    expect(world.sim.jobs()).toHaveLength(1);
  });
});

describe('a spent daily budget', () => {
  beforeEach(async () => {
    world = await startWorld({ createJob: 1 });
  });

  it('refuses the call with the reset instant, spends nothing at the service, and grants again after the reset', async () => {
    const a = world.activities;
    const create = (name: string) => ({
      tenant: TENANT,
      dataImportName: name,
      entityType: 'Account' as const,
      objectVersion: { bucket: BUCKET, key: `${name}.csv`, etag: '"etag"' },
    });
    await runActivity(a.createImportJob, create('first'), attempt('first', 'r', '3')).result;

    const refused = await failureOf(
      runActivity(a.createImportJob, create('second'), attempt('second', 'r', '3')).result,
    );
    expect(refused.type).toBe('BudgetExhausted');
    expect(refused.details?.[0]).toMatchObject({ endpoint: 'createJob', resetsAt: '2026-11-23T00:00:00.000Z' });
    expect(world.sim.requests().filter((r) => r.endpoint === 'createJob')).toHaveLength(1);

    world.clock.now = Date.parse('2026-11-23T00:00:30Z');
    const granted = await runActivity(a.createImportJob, create('second'), attempt('second', 'r', '3', 2)).result;
    expect(granted.reused).toBe(false);
    expect(world.sim.jobs()).toHaveLength(2);
  });
});
