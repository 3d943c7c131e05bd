import { describe, expect, it } from 'vitest';
import type { EndpointUsage } from '../../workflows/contracts/activities.js';
import type { DryRunJob } from '../../workflows/contracts/dry-run.js';
import {
  budgetChecks,
  existingJobProblem,
  importCost,
  jobWarnings,
  noImportReason,
  verdictOf,
} from '../../workflows/dry-run-verdict.js';

const NOW = Date.parse('2026-11-25T12:00:00Z');
const window = (remaining: number, extra: Partial<EndpointUsage> = {}): EndpointUsage => ({
  used: 100 - remaining,
  limit: 100,
  remaining,
  resetsAt: '2026-11-26T00:00:00.000Z',
  ...extra,
});

describe('importCost', () => {
  it('counts a fresh import: a create, an upload, the search pages and the status polls', () => {
    expect(importCost({ entityType: 'Account' }, undefined)).toEqual({
      listJobs: { calls: 1, bound: 'at-least' },
      createJob: { calls: 1 },
      submitData: { calls: 1 },
      jobStatus: { calls: 61, bound: 'estimate' },
    });
  });

  it('leaves out the create for a job found, and the upload too once the job holds data', () => {
    expect(importCost({ entityType: 'Account' }, { jobId: '7', state: 'new' })).not.toHaveProperty('createJob');
    const done = importCost({ entityType: 'Account' }, { jobId: '7', state: 'Completed' });
    expect(done).not.toHaveProperty('submitData');
    expect(done.jobStatus).toEqual({ calls: 2 });
  });

  it('counts a create, an upload and the status reads per part of a split file, whatever the version’s record holds', () => {
    expect(importCost({ entityType: 'Account' }, { jobId: '7', state: 'Completed' }, 3)).toEqual({
      listJobs: { calls: 1, bound: 'at-least' },
      createJob: { calls: 3 },
      submitData: { calls: 3 },
      jobStatus: { calls: 183, bound: 'estimate' },
    });
  });

  it('adds the reference reads an import source and an activity type need, at most once each', () => {
    const cost = importCost({ entityType: 'Activity', activityTypeId: 3, importSource: 'CSV' }, undefined);
    expect(cost.listSources).toEqual({ calls: 1, bound: 'at-most' });
    expect(cost.activityFields).toEqual({ calls: 1, bound: 'at-most' });
  });
});

describe('budgetChecks', () => {
  it('says an endpoint with too little left waits for its reset; status polls need only their first call now', () => {
    const checks = budgetChecks(
      { createJob: { calls: 1 }, jobStatus: { calls: 61, bound: 'estimate' } },
      { createJob: window(0), jobStatus: window(5) },
      NOW,
    );
    expect(checks).toEqual([
      { endpoint: 'createJob', calls: 1, remaining: 0, resetsAt: '2026-11-26T00:00:00.000Z', waits: true },
      { endpoint: 'jobStatus', calls: 61, remaining: 5, resetsAt: '2026-11-26T00:00:00.000Z', waits: false },
    ]);
  });

  it('treats an endpoint the service refuses (a reported daily 429) as empty until then', () => {
    const [check] = budgetChecks(
      { submitData: { calls: 1 } },
      { submitData: window(50, { exhaustedUntil: '2026-11-25T13:00:00.000Z' }) },
      NOW,
    );
    expect(check).toMatchObject({ remaining: 0, resetsAt: '2026-11-25T13:00:00.000Z', waits: true });
  });

  it('marks a floor, and gives no remaining when the ledger limits nothing', () => {
    expect(budgetChecks({ listJobs: { calls: 1, bound: 'at-least' } }, undefined, NOW)).toEqual([
      { endpoint: 'listJobs', calls: 1, atLeast: true, waits: false },
    ]);
  });
});

describe('verdictOf', () => {
  it('fails on any problem, and otherwise follows what Temporal holds for the id', () => {
    const problem = { check: 'inspectSource', type: 'SourceNotFound', message: 'no' };
    expect(verdictOf([problem], 'completed', true)).toBe('fail');
    expect(verdictOf([], 'completed', true)).toBe('already-imported');
    expect(verdictOf([], 'running', true)).toBe('running');
    expect(verdictOf([], 'ended-otherwise', true)).toBe('import');
    // An operator's own --workflow-id may be reused once its import completed.
    expect(verdictOf([], 'completed', false)).toBe('import');
    expect(verdictOf([], 'running', false)).toBe('running');
  });

  it('words why nothing would be imported', () => {
    const source = { bucket: 'b', key: 'k.csv' };
    expect(noImportReason({ verdict: 'running', workflowId: 'import-1', source })).toBe(
      'workflow import-1 is importing s3://b/k.csv now; start would refuse it',
    );
    expect(noImportReason({ verdict: 'import', workflowId: 'import-1', source })).toBeUndefined();
  });
});

describe('the job the record holds', () => {
  const job = (extra: Partial<DryRunJob>): DryRunJob => ({
    name: '[import:<key>] a.csv',
    keyNote: 'k',
    lookup: 'job-record',
    record: { workflowId: 'job-record-t-1', status: 'running' },
    ...extra,
  });

  it('fails the import on a job the service failed while its record still names it', () => {
    expect(existingJobProblem({ jobId: '7', state: 'Failed', recordedState: 'processing' })).toEqual({
      check: 'awaitJobCompletion',
      type: 'JobFailed',
      message: expect.stringMatching(
        /^the service failed job 7 .*\(it last heard processing\): the import would reuse it/,
      ),
    });
    expect(existingJobProblem({ jobId: '7', state: 'processing', recordedState: 'new' })).toBeUndefined();
    expect(existingJobProblem(undefined)).toBeUndefined();
  });

  it('says a completed job means nothing is sent, and an ended record a new job', () => {
    expect(jobWarnings(job({ existing: { jobId: '7', state: 'completed' } }))).toEqual([
      'job 7 of this version completed already (job record job-record-t-1): the import would send nothing and report it done',
    ]);
    expect(jobWarnings(job({ record: { workflowId: 'job-record-t-1', status: 'ended' } }))).toEqual([
      expect.stringMatching(
        /^job record job-record-t-1 of this version ended without completing .* creates a new one$/,
      ),
    ]);
    expect(jobWarnings(job({ existing: { jobId: '7', state: 'new', recordedState: 'new' } }))).toEqual([]);
    expect(jobWarnings(job({ record: { workflowId: 'job-record-t-1', status: 'absent' } }))).toEqual([]);
  });
});
