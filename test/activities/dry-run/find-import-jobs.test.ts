/**
 * The dry run's job lookup against the simulator, with the job records'
 * own decisions held in memory (InMemoryJobRecordGate): the record of the
 * object version says which job its import would use, read without a claim
 * or a start, and never through the service's job list. A job the record has
 * not seen end is refreshed by one status read, reserved with the budget
 * like any call.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeCreateImportJob } from '../../../activities/create-job/create-import-job.js';
import { makeFindImportJobs } from '../../../activities/dry-run/find-import-jobs.js';
import type { CreateImportJobResult } from '../../../workflows/contracts/activities.js';
import type { DryRunStep, FindImportJobsInput, FindImportJobsResult } from '../../../workflows/contracts/dry-run.js';
import { jobRecordWorkflowId } from '../../../workflows/contracts/job-record.js';
import type { ObjectVersion } from '../../../workflows/contracts/object-version.js';
import { runActivity } from '../../support/activities.js';
import type { InMemoryBudgetGate } from '../../support/in-memory-budget-gate.js';
import { InMemoryJobRecordGate } from '../../support/in-memory-job-record-gate.js';
import { budgetWith, type ServiceWorld, startServiceWorld } from '../environment.js';

const TENANT = 't1';
const CSV = Buffer.from('Account Name,Account Domain\nAcme,acme.example\n');

describe('findImportJobs: the job record answers, never the job list', () => {
  let w: ServiceWorld;
  let budget: InMemoryBudgetGate;
  let gate: InMemoryJobRecordGate;
  let n = 0;
  beforeAll(async () => {
    w = await startServiceWorld({ processingMs: 20 });
  });
  afterAll(() => w.close());
  beforeEach(() => {
    w.sim.setJobOutcome('completed');
    budget = budgetWith({}, TENANT);
    gate = new InMemoryJobRecordGate();
  });

  const version = (): ObjectVersion => {
    n += 1;
    return { bucket: 'drops', key: `accounts-${n}.csv`, etag: `"etag-${n}"` };
  };
  const recordOf = (v: ObjectVersion) => jobRecordWorkflowId({ ...v, tenant: TENANT });

  /** The version's job, made as an import makes it: createImportJob through the record. */
  async function importedThroughRecord(v: ObjectVersion): Promise<string> {
    const created = runActivity<Parameters<ReturnType<typeof makeCreateImportJob>>[0], CreateImportJobResult>(
      makeCreateImportJob({ service: w.service, budget, jobRecord: gate }),
      {
        tenant: TENANT,
        dataImportName: v.key,
        entityType: 'Account',
        objectVersion: v,
      },
      {
        activityId: '4',
        workflowExecution: { workflowId: `import-${v.key}`, runId: 'run-1' },
        currentAttemptScheduledTimestampMs: 1_000,
        startToCloseTimeoutMs: 60_000,
      },
    );
    return (await created.result).jobId;
  }
  /** What the upload and the job wait tell the record, as they would. */
  const tellRecord = (v: ObjectVersion, jobId: string, state: string) =>
    gate
      .session(
        { ...v, tenant: TENANT },
        { workflowId: `import-${v.key}`, runId: 'run-1', activityId: '6', scheduledMs: 2_000 },
      )
      .noteJobState(jobId, state);

  /** One dry-run lookup; what reached the service and what the record was told while it ran. */
  async function lookUp(...versions: ObjectVersion[]) {
    const requestsBefore = w.sim.requests().length;
    const messagesBefore = gate.messages.length;
    const recordsBefore = [...gate.records.keys()];
    const reservedBefore = budget.requests.length;
    const answer = await runActivity<FindImportJobsInput, DryRunStep<FindImportJobsResult>>(
      makeFindImportJobs({ service: w.service, budget, records: gate }),
      { tenant: TENANT, lookups: versions.map((v) => ({ version: v })) },
    ).result;
    return {
      answer,
      requests: w.sim.requests().slice(requestsBefore),
      reserved: budget.requests.slice(reservedBefore).map((r) => r.endpoint),
      recordMessages: gate.messages.slice(messagesBefore),
      newRecords: [...gate.records.keys()].filter((id) => !recordsBefore.includes(id)),
    };
  }

  it('reports the completed job of a version imported through the record with no service call at all', async () => {
    const v = version();
    const jobId = await importedThroughRecord(v);
    await tellRecord(v, jobId, 'processing');
    await tellRecord(v, jobId, 'completed');

    const run = await lookUp(v);
    expect(run.answer).toEqual({
      ok: true,
      value: {
        via: 'job-record',
        jobs: [{ jobId, state: 'completed' }],
        records: [{ workflowId: recordOf(v), status: 'running' }],
      },
      apiCalls: {},
    });
    expect(run.requests).toEqual([]);
    expect(run.reserved).toEqual([]);
    expect(run.recordMessages).toEqual([]);
  });

  it('refreshes a job the record has not seen end with one status read, reserved, and no list call', async () => {
    const v = version();
    const jobId = await importedThroughRecord(v);
    // The service took the file meanwhile (an import that was cut off before it told the record).
    await w.service.submitData(jobId, [CSV], { listAction: 'insert', contentLength: CSV.length });
    while (w.sim.job(jobId)?.state !== 'completed') await new Promise((r) => setTimeout(r, 10));

    const run = await lookUp(v);
    expect(run.answer).toMatchObject({
      ok: true,
      value: { via: 'job-record', jobs: [{ jobId, state: 'completed', recordedState: 'new' }] },
      apiCalls: { jobStatus: 1 },
    });
    expect(run.requests.map((r) => [r.method, r.endpoint, r.path])).toEqual([
      ['GET', 'jobStatus', `/import/v1/job/${jobId}`],
    ]);
    expect(run.reserved).toEqual(['jobStatus']);
    expect(run.recordMessages).toEqual([]);
  });

  it('reports a job the service failed while the record still names it, as the import would meet it', async () => {
    const v = version();
    const jobId = await importedThroughRecord(v);
    w.sim.setJobOutcome('failed');
    await w.service.submitData(jobId, [CSV], { listAction: 'insert', contentLength: CSV.length });
    await tellRecord(v, jobId, 'processing');
    while (w.sim.job(jobId)?.state !== 'failed') await new Promise((r) => setTimeout(r, 10));

    const run = await lookUp(v);
    expect(run.answer).toMatchObject({
      ok: true,
      value: { jobs: [{ jobId, state: 'failed', recordedState: 'processing' }] },
      apiCalls: { jobStatus: 1 },
    });
    expect(run.recordMessages).toEqual([]);
  });

  it('finds no job where no record exists, and starts none: nothing is called, claimed or created', async () => {
    const v = version();
    const run = await lookUp(v);
    expect(run.answer).toEqual({
      ok: true,
      value: { via: 'job-record', jobs: [null], records: [{ workflowId: recordOf(v), status: 'absent' }] },
      apiCalls: {},
    });
    expect(run.requests).toEqual([]);
    expect(run.recordMessages).toEqual([]);
    expect(run.newRecords).toEqual([]);
  });

  it('answers many versions in order, reading only the jobs whose end the record has not seen', async () => {
    const [done, open, none] = [version(), version(), version()];
    const doneJob = await importedThroughRecord(done);
    await tellRecord(done, doneJob, 'completed');
    const openJob = await importedThroughRecord(open);
    await tellRecord(open, openJob, 'processing');

    const run = await lookUp(done, open, none);
    expect(run.answer).toMatchObject({
      ok: true,
      value: {
        jobs: [
          { jobId: doneJob, state: 'completed' },
          // The simulator never got the file: the job is still new, whatever the record last heard.
          { jobId: openJob, state: 'new', recordedState: 'processing' },
          null,
        ],
        records: [recordOf(done), recordOf(open), recordOf(none)].map((workflowId, i) => ({
          workflowId,
          status: i < 2 ? 'running' : 'absent',
        })),
      },
      apiCalls: { jobStatus: 1 },
    });
    expect(run.requests.map((r) => r.endpoint)).toEqual(['jobStatus']);
  });

  it('refuses another tenant before any call, as the import would', async () => {
    const answer = await runActivity<FindImportJobsInput, DryRunStep<FindImportJobsResult>>(
      makeFindImportJobs({ service: w.service, budget, records: gate }),
      { tenant: 'someone-else', lookups: [{ version: version() }] },
    ).result;
    expect(answer).toMatchObject({ ok: false, type: 'TenantMismatch', apiCalls: {} });
  });
});
