import { describe, expect, it } from 'vitest';
import type { BudgetUsage } from '../../workflows/contracts/activities.js';
import { importInputProblems } from '../../workflows/contracts/import-input.js';
import { type NightlyFeed, objectImportWorkflowId } from '../../workflows/contracts/nightly.js';
import {
  callsPerImport,
  DEFAULT_CALLS_PER_IMPORT,
  emptyTally,
  importAllowance,
  importInputForObject,
  MAX_LISTED_FAILURES,
  nightlyImportName,
  RECENT_IMPORTS,
  recordFailure,
  rememberSpend,
  spendOfResult,
} from '../../workflows/nightly-policy.js';

const feed: NightlyFeed = {
  bucket: 'crm-drops',
  prefix: 'accounts/',
  entityType: 'Account',
  listAction: 'insert',
  maxConcurrentImports: 2,
  tenant: 'acme',
};
const object = {
  key: 'accounts/2026-11-22.csv',
  etag: 'abc123',
  sizeBytes: 10,
  lastModified: '2026-11-22T01:00:00.000Z',
};

function window(used: number, limit: number, resetsAt = '2026-11-23T00:00:00.000Z') {
  return { used, limit, remaining: limit - used, resetsAt };
}

/** A fixed cost per child (a job, an upload, an hour of polls), for the arithmetic of the allowance. */
const ESTIMATE = { createJob: 1, submitData: 1, jobStatus: 60 };

describe('objectImportWorkflowId', () => {
  it('is import-<fnv1a64 of bucket/key/etag>, 16 hex digits', () => {
    // FNV-1a 64 of "b/k.csv/e1", computed independently.
    expect(objectImportWorkflowId('b', 'k.csv', 'e1')).toBe(`import-${fnvReference('b/k.csv/e1')}`);
  });

  it('gives the same object the same id whether or not its ETag is quoted', () => {
    expect(objectImportWorkflowId('b', 'k', '"abc"')).toBe(objectImportWorkflowId('b', 'k', 'abc'));
  });

  it('gives a changed object (new ETag), another key or another bucket a new id', () => {
    const base = objectImportWorkflowId('b', 'k', 'e1');
    expect(objectImportWorkflowId('b', 'k', 'e2')).not.toBe(base);
    expect(objectImportWorkflowId('b', 'k2', 'e1')).not.toBe(base);
    expect(objectImportWorkflowId('b2', 'k', 'e1')).not.toBe(base);
  });
});

describe('importInputForObject', () => {
  it('builds a valid importFile input that fails (not waits) so the next night retries it', () => {
    const input = importInputForObject('accounts', feed, object);
    expect(importInputProblems(input)).toEqual([]);
    expect(input).toEqual({
      source: { bucket: 'crm-drops', key: 'accounts/2026-11-22.csv' },
      dataImportName: 'nightly accounts: accounts/2026-11-22.csv',
      entityType: 'Account',
      listAction: 'insert',
      tenant: 'acme',
      onFailure: 'fail',
      trigger: 'schedule',
    });
  });

  it('carries the activity type and mappings of the feed', () => {
    const fieldMappings = {
      sourceId: '9007199254740993',
      objectType: 'account' as const,
      mappings: [{ sourceFieldLabel: 'Name', serviceFieldName: 'name', dataType: 'string' }],
    };
    const activities = importInputForObject('acts', { ...feed, entityType: 'Activity', activityTypeId: 7 }, object);
    expect(activities.activityTypeId).toBe(7);
    expect(importInputProblems(activities)).toEqual([]);
    const accounts = importInputForObject('accounts', { ...feed, entityType: 'Account', fieldMappings }, object);
    expect(accounts.fieldMappings).toEqual(fieldMappings);
    expect(importInputProblems(accounts)).toEqual([]);
  });

  it("gives each import the feed's job timeout; a feed applied before it carried one leaves importFile's default", () => {
    const input = importInputForObject('accounts', { ...feed, jobTimeoutMs: 7_200_000 }, object);
    expect(input.jobTimeoutMs).toBe(7_200_000);
    expect(importInputProblems(input)).toEqual([]);
    expect(importInputForObject('accounts', feed, object)).not.toHaveProperty('jobTimeoutMs');
  });

  it('keeps a long key within the 200-character name limit, ending with the file name', () => {
    const key = `${'deep/'.repeat(60)}file-2026.csv`;
    const name = nightlyImportName('accounts', key);
    expect(name.length).toBeLessThanOrEqual(200);
    expect(name.endsWith('file-2026.csv')).toBe(true);
  });
});

describe('importAllowance', () => {
  const now = Date.parse('2026-11-22T12:00:00.000Z');

  it('allows the smaller of the createJob and submitData remainders, minus running children', () => {
    const usage: BudgetUsage = {
      createJob: window(1190, 1200),
      submitData: window(1195, 1200),
      jobStatus: window(0, 3600),
    };
    expect(importAllowance(usage, 0, now, ESTIMATE)).toEqual({ allowed: 5 });
    expect(importAllowance(usage, 2, now, ESTIMATE)).toEqual({ allowed: 3 });
  });

  it('allows nothing and says when the window reopens once a budget is spent', () => {
    const usage: BudgetUsage = { createJob: window(1200, 1200), submitData: window(10, 1200) };
    expect(importAllowance(usage, 0, now, ESTIMATE)).toEqual({
      allowed: 0,
      reopensAtMs: Date.parse('2026-11-23T00:00:00.000Z'),
    });
  });

  it('holds back the status polls of every started child: three long jobs cannot spend the 3,600 polls', () => {
    const usage: BudgetUsage = {
      createJob: window(0, 1200),
      submitData: window(0, 1200),
      jobStatus: window(3500, 3600),
    };
    expect(importAllowance(usage, 0, now, ESTIMATE).allowed).toBe(1);
    expect(importAllowance(usage, 1, now, ESTIMATE).allowed).toBe(0);
    expect(importAllowance(usage, 1, now, ESTIMATE).reopensAtMs).toBe(Date.parse('2026-11-23T00:00:00.000Z'));
  });

  it('counts running children against what is left', () => {
    expect(importAllowance({ createJob: window(1198, 1200) }, 2, now, ESTIMATE).allowed).toBe(0);
  });

  it('allows nothing while the service refuses (429 before the ledger ran out), until the later instant', () => {
    const usage: BudgetUsage = {
      createJob: { ...window(3, 1200, '2026-11-23T00:00:00.000Z'), exhaustedUntil: '2026-11-23T00:05:00.000Z' },
    };
    expect(importAllowance(usage, 0, now, ESTIMATE)).toEqual({
      allowed: 0,
      reopensAtMs: Date.parse('2026-11-23T00:05:00.000Z'),
    });
  });

  it('ignores a refusal that has already expired', () => {
    const usage: BudgetUsage = { createJob: { ...window(3, 1200), exhaustedUntil: '2026-11-22T00:00:00.000Z' } };
    expect(importAllowance(usage, 0, now, ESTIMATE).allowed).toBe(1197);
  });

  it('does not limit when the ledger tracks neither endpoint', () => {
    expect(importAllowance({}, 0, now, ESTIMATE).allowed).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('importAllowance by recent spend', () => {
  const now = Date.parse('2026-11-22T12:00:00.000Z');
  const watched = { createJob: 1, submitData: 1, jobStatus: 2, listJobs: 0 };

  it('admits by what finished children spent: 2 status reads each, not the 60-poll estimate', () => {
    const usage: BudgetUsage = {
      createJob: window(0, 1200),
      submitData: window(0, 1200),
      jobStatus: window(3500, 3600),
      listJobs: window(0, 3600),
    };
    // The estimate holds back 60 reads a child: one start, then none while it runs.
    expect(importAllowance(usage, 1, now, ESTIMATE).allowed).toBe(0);
    const costs = callsPerImport([watched, watched]);
    expect(importAllowance(usage, 1, now, costs).allowed).toBe(49);
  });

  it('counts the list calls children made: a night of searching creates stops at the list budget', () => {
    const usage: BudgetUsage = {
      createJob: window(0, 1200),
      submitData: window(0, 1200),
      jobStatus: window(0, 3600),
      listJobs: window(3596, 3600),
    };
    const searching = { ...watched, listJobs: 5 };
    expect(importAllowance(usage, 0, now, callsPerImport([searching]))).toEqual({
      allowed: 0,
      reopensAtMs: Date.parse('2026-11-23T00:00:00.000Z'),
    });
  });

  it('is the mean of the recent children, never below a job and an upload each', () => {
    const reused = { createJob: 0, submitData: 0, jobStatus: 1 };
    expect(callsPerImport([watched, { ...watched, jobStatus: 6, listJobs: 2 }, reused])).toEqual({
      createJob: 1,
      submitData: 1,
      jobStatus: 3,
      listJobs: 2 / 3,
    });
  });

  it('falls back to the conservative default before any child has finished', () => {
    expect(callsPerImport([])).toEqual({ createJob: 1, submitData: 1, jobStatus: 60, listJobs: 1 });
    expect(callsPerImport([])).toEqual(DEFAULT_CALLS_PER_IMPORT);
  });

  it("keeps the most recent children's spend only", () => {
    let recent: ReturnType<typeof rememberSpend> = [];
    for (let i = 1; i <= RECENT_IMPORTS + 5; i++) recent = rememberSpend(recent, { ...watched, jobStatus: i });
    expect(recent).toHaveLength(RECENT_IMPORTS);
    expect(recent[0]?.jobStatus).toBe(6);
  });

  it("reads a child's budgeted calls from its result, leaving out the unbudgeted ones", () => {
    const result = { jobId: '1', apiCalls: { createJob: 1, listJobs: 2, jobStatus: 3, tokenExchange: 1 } };
    expect(spendOfResult(result)).toEqual({ createJob: 1, listJobs: 2, jobStatus: 3 });
    expect(spendOfResult({ jobId: 1 })).toBeUndefined();
    expect(spendOfResult(undefined)).toBeUndefined();
  });
});

describe('importAllowance of files split into several jobs', () => {
  const now = Date.parse('2026-11-22T12:00:00.000Z');
  const fresh: BudgetUsage = {
    createJob: window(0, 1200),
    submitData: window(0, 1200),
    jobStatus: window(0, 3600),
    listJobs: window(0, 3600),
  };

  it('counts each part a finished child reported: one creation and one upload per part', () => {
    // A child whose file went as 3 jobs reports 3 creations and 3 uploads in its result.
    const split = spendOfResult({ jobId: '1', apiCalls: { createJob: 3, submitData: 3, jobStatus: 3 } })!;
    const usage: BudgetUsage = { ...fresh, createJob: window(1170, 1200), submitData: window(1170, 1200) };
    expect(callsPerImport([split])).toMatchObject({ createJob: 3, submitData: 3 });
    expect(importAllowance(usage, 0, now, callsPerImport([split])).allowed).toBe(10);
    // Each running child is held to a split child's cost too.
    expect(importAllowance(usage, 4, now, callsPerImport([split])).allowed).toBe(6);
  });

  it('before any child finished, admits at most 60 on a fresh day: the estimate bounds what parts can cost', () => {
    // Parts are not known up front; the estimate's 60 status reads bind first, so 60 children of up to 20 parts
    // each fit in the 1,200 creations, and past that the ledger holds a child's next part until the reset.
    expect(importAllowance(fresh, 0, now, callsPerImport([])).allowed).toBe(60);
  });
});

describe('importAllowance after a short block', () => {
  const now = Date.parse('2026-11-22T12:00:00.000Z');
  const blocked = (until: string) => ({ ...window(100, 1200), exhaustedUntil: until });

  it('reopens when a 15-minute block ends, not at the reset, when the count has calls left', () => {
    const usage: BudgetUsage = { createJob: blocked('2026-11-22T12:15:00.000Z'), submitData: window(100, 1200) };
    expect(importAllowance(usage, 0, now, ESTIMATE)).toEqual({
      allowed: 0,
      reopensAtMs: Date.parse('2026-11-22T12:15:00.000Z'),
    });
  });

  it('reopens at the reset when the block ends on a spent count, and at the later of two blocks', () => {
    const spent: BudgetUsage = {
      createJob: { ...window(1200, 1200), exhaustedUntil: '2026-11-22T12:15:00.000Z' },
    };
    expect(importAllowance(spent, 0, now, ESTIMATE).reopensAtMs).toBe(Date.parse('2026-11-23T00:00:00.000Z'));
    const two: BudgetUsage = {
      createJob: blocked('2026-11-22T12:15:00.000Z'),
      submitData: blocked('2026-11-22T12:45:00.000Z'),
    };
    expect(importAllowance(two, 0, now, ESTIMATE).reopensAtMs).toBe(Date.parse('2026-11-22T12:45:00.000Z'));
  });

  it('reopens at the reset when running children hold what a block would leave', () => {
    const usage: BudgetUsage = { createJob: { ...window(1198, 1200), exhaustedUntil: '2026-11-22T12:15:00.000Z' } };
    expect(importAllowance(usage, 2, now, ESTIMATE).reopensAtMs).toBe(Date.parse('2026-11-23T00:00:00.000Z'));
  });
});

describe('recordFailure', () => {
  it('lists the first failures and counts them all', () => {
    const tally = emptyTally();
    for (let i = 0; i < MAX_LISTED_FAILURES + 5; i++) {
      recordFailure(tally, { key: `k${i}`, workflowId: `w${i}`, reason: 'JobFailed: x' });
    }
    expect(tally.failed).toHaveLength(MAX_LISTED_FAILURES);
    expect(tally.failedCount).toBe(MAX_LISTED_FAILURES + 5);
  });
});

function fnvReference(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (const b of Buffer.from(text, 'utf8')) {
    h ^= BigInt(b);
    h = BigInt.asUintN(64, h * 0x100000001b3n);
  }
  return h.toString(16).padStart(16, '0');
}
