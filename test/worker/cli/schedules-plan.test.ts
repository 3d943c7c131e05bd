import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ScheduleDescription, ScheduleOptions, ScheduleUpdateOptions } from '@temporalio/client';
import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import type { FeedConfig } from '../../../temporal.config.js';
import {
  applySchedules,
  DEFAULT_APPLY_CONCURRENCY,
  DEFINITION_HASH_MEMO,
  desiredSchedule,
  desiredSchedules,
  planSchedules,
  type ScheduleApi,
  type ScheduleHandleApi,
} from '../../../worker/cli/schedules.js';

/** What the CLI reads from IMPORT_TENANT and IMPORT_JOB_TIMEOUT (the latter at its default). */
const inTenant = (tenant: string) => ({ tenant, jobTimeoutMs: 86_400_000 });

function feed(id: string, overrides: Partial<FeedConfig> = {}): FeedConfig {
  return {
    id,
    bucket: 'crm-drops',
    prefix: `${id}/`,
    entityType: 'Account',
    listAction: 'insert',
    maxConcurrentImports: 2,
    schedule: { time: '02:30', timeZone: 'Europe/Berlin', catchupWindowMs: 6 * 3_600_000, pauseOnFailure: false },
    ...overrides,
  };
}

/** An in-memory stand-in for the Temporal schedule client: the server cannot run here. */
class FakeScheduleClient implements ScheduleApi {
  readonly schedules = new Map<string, { options: ScheduleOptions; paused: boolean; note?: string }>();
  readonly calls: string[] = [];
  /** Schedules the list does not show yet: the server's list is eventually consistent. */
  readonly unlisted = new Set<string>();
  /** The most calls that were ever in flight together (each call takes one event-loop turn, like a round trip). */
  maxInFlight = 0;
  private inFlight = 0;

  private async roundTrip(): Promise<void> {
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    await nextTurn();
    this.inFlight -= 1;
  }

  async *list() {
    for (const scheduleId of this.schedules.keys()) if (!this.unlisted.has(scheduleId)) yield { scheduleId };
  }

  async create(options: ScheduleOptions) {
    await this.roundTrip();
    if (this.schedules.has(options.scheduleId)) {
      throw new ScheduleAlreadyRunning('Schedule already exists and is running', options.scheduleId);
    }
    this.calls.push(`create ${options.scheduleId}`);
    this.schedules.set(options.scheduleId, { options, paused: false });
  }

  getHandle(scheduleId: string): ScheduleHandleApi {
    const get = () => {
      const s = this.schedules.get(scheduleId);
      if (!s) throw new ScheduleNotFoundError(`schedule ${scheduleId} not found`, scheduleId);
      return s;
    };
    return {
      describe: async () => {
        await this.roundTrip();
        const s = get();
        return {
          action: s.options.action,
          state: { paused: s.paused, note: s.note },
        } as unknown as ScheduleDescription;
      },
      update: async (fn: (previous: ScheduleDescription) => ScheduleUpdateOptions) => {
        await this.roundTrip();
        const s = get();
        const next = fn({ action: s.options.action, state: { paused: s.paused, note: s.note } } as ScheduleDescription);
        this.calls.push(`update ${scheduleId}`);
        s.options = { ...s.options, spec: next.spec, action: next.action, policies: next.policies };
        const state = next.state as { paused?: boolean; note?: string };
        s.paused = state.paused ?? false;
        s.note = state.note;
      },
      delete: async () => {
        get();
        this.calls.push(`delete ${scheduleId}`);
        this.schedules.delete(scheduleId);
      },
      trigger: async () => {
        this.calls.push(`trigger ${scheduleId}`);
      },
    };
  }
}

const ids = (xs: { scheduleId: string }[]) => xs.map((x) => x.scheduleId);

describe('desiredSchedule', () => {
  it('runs nightlyImport at the feed time in its zone, skipping overlaps, carrying the feed settings', () => {
    const d = desiredSchedule(feed('accounts', { pattern: '\\.csv$' }), 'bulk-import', inTenant('acme'));
    expect(d.scheduleId).toBe('nightly-accounts');
    expect(d.options.spec).toEqual({
      calendars: [{ hour: 2, minute: 30, comment: 'feed accounts' }],
      timezone: 'Europe/Berlin',
    });
    expect(d.options.policies).toEqual({
      overlap: ScheduleOverlapPolicy.SKIP,
      catchupWindow: 6 * 3_600_000,
      pauseOnFailure: false,
    });
    expect(d.options.action).toMatchObject({
      type: 'startWorkflow',
      workflowType: 'nightlyImport',
      taskQueue: 'bulk-import',
      workflowId: 'nightly-accounts',
      memo: { [DEFINITION_HASH_MEMO]: d.definitionHash },
    });
    expect(d.options.action.args).toEqual([
      {
        feedId: 'accounts',
        feed: {
          bucket: 'crm-drops',
          prefix: 'accounts/',
          pattern: '\\.csv$',
          entityType: 'Account',
          listAction: 'insert',
          maxConcurrentImports: 2,
          tenant: 'acme',
          jobTimeoutMs: 86_400_000,
        },
      },
    ]);
  });

  it("carries IMPORT_JOB_TIMEOUT to the night's imports, so a changed timeout changes the schedule", () => {
    const d = desiredSchedule(feed('a'), 'q', { tenant: 't', jobTimeoutMs: 7_200_000 });
    expect(d.options.action.args?.[0]).toMatchObject({ feed: { jobTimeoutMs: 7_200_000 } });
    expect(d.definitionHash).not.toBe(desiredSchedule(feed('a'), 'q', inTenant('t')).definitionHash);
  });

  it("uses the feed's own tenant over the default", () => {
    const d = desiredSchedule(feed('a', { tenant: 'other' }), 'q', inTenant('acme'));
    expect(d.options.action.args?.[0]).toMatchObject({ feed: { tenant: 'other' } });
  });

  it('hashes equal definitions equally and any change to spec, policy or action differently', () => {
    const base = desiredSchedule(feed('a'), 'q', inTenant('t')).definitionHash;
    expect(desiredSchedule(feed('a'), 'q', inTenant('t')).definitionHash).toBe(base);
    const changed = [
      desiredSchedule(feed('a', { schedule: { ...feed('a').schedule, time: '03:30' } }), 'q', inTenant('t')),
      desiredSchedule(feed('a', { schedule: { ...feed('a').schedule, pauseOnFailure: true } }), 'q', inTenant('t')),
      desiredSchedule(feed('a', { listAction: 'replace' }), 'q', inTenant('t')),
      desiredSchedule(feed('a'), 'other-queue', inTenant('t')),
    ];
    for (const d of changed) expect(d.definitionHash).not.toBe(base);
  });
});

describe('planSchedules', () => {
  const a = desiredSchedule(feed('a'), 'q', inTenant('t'));
  const b = desiredSchedule(feed('b'), 'q', inTenant('t'));
  const c = desiredSchedule(feed('c'), 'q', inTenant('t'));

  it('creates missing, updates changed, leaves equal ones alone, and deletes nothing without prune', () => {
    const plan = planSchedules(
      [a, b, c],
      [
        { scheduleId: 'nightly-b', definitionHash: 'stale' },
        { scheduleId: 'nightly-c', definitionHash: c.definitionHash },
        { scheduleId: 'nightly-gone' },
      ],
      { prune: false },
    );
    expect(ids(plan.create)).toEqual(['nightly-a']);
    expect(ids(plan.update)).toEqual(['nightly-b']);
    expect(ids(plan.unchanged)).toEqual(['nightly-c']);
    expect(plan.delete).toEqual([]);
  });

  it('with prune deletes only schedules with the nightly- prefix that no feed wants', () => {
    const plan = planSchedules([a], [{ scheduleId: 'nightly-gone' }, { scheduleId: 'billing-report' }], {
      prune: true,
    });
    expect(plan.delete).toEqual(['nightly-gone']);
  });

  it('updates a schedule that carries no definition hash (made by hand)', () => {
    expect(ids(planSchedules([a], [{ scheduleId: 'nightly-a' }], { prune: false }).update)).toEqual(['nightly-a']);
  });
});

describe('applySchedules against a fake schedule client', () => {
  it('creates every schedule the first time and changes nothing the second time', async () => {
    const client = new FakeScheduleClient();
    const desired = desiredSchedules([feed('a'), feed('b')], 'q', inTenant('t'));
    const first = await applySchedules(client, desired, { prune: false, dryRun: false });
    expect(ids(first.create)).toEqual(['nightly-a', 'nightly-b']);
    const second = await applySchedules(client, desired, { prune: false, dryRun: false });
    expect(ids(second.unchanged)).toEqual(['nightly-a', 'nightly-b']);
    expect(client.calls).toEqual(['create nightly-a', 'create nightly-b']);
  });

  it('updates a changed feed, keeps an operator pause, and prunes a removed feed', async () => {
    const client = new FakeScheduleClient();
    await applySchedules(client, desiredSchedules([feed('a'), feed('b')], 'q', inTenant('t')), {
      prune: false,
      dryRun: false,
    });
    const stored = client.schedules.get('nightly-a');
    if (stored) stored.paused = true;
    const changedA = feed('a', { schedule: { ...feed('a').schedule, time: '04:00' } });
    const plan = await applySchedules(client, desiredSchedules([changedA], 'q', inTenant('t')), {
      prune: true,
      dryRun: false,
    });
    expect(ids(plan.update)).toEqual(['nightly-a']);
    expect(plan.delete).toEqual(['nightly-b']);
    expect(client.schedules.get('nightly-a')?.options.spec.calendars).toEqual([
      { hour: 4, minute: 0, comment: 'feed a' },
    ]);
    expect(client.schedules.get('nightly-a')?.paused).toBe(true);
    expect([...client.schedules.keys()]).toEqual(['nightly-a']);
  });

  it('describes, creates and updates a hundred schedules a bounded number at a time, not one by one', async () => {
    const client = new FakeScheduleClient();
    const feeds = Array.from({ length: 100 }, (_, i) => feed(`f${i}`));
    await applySchedules(client, desiredSchedules(feeds, 'q', inTenant('t')), { prune: false, dryRun: false });
    expect(client.schedules.size).toBe(100);
    expect(client.maxInFlight).toBe(DEFAULT_APPLY_CONCURRENCY);

    const moved = feeds.map((f) => ({ ...f, schedule: { ...f.schedule, time: '05:00' } }));
    const fresh = new FakeScheduleClient();
    for (const [id, s] of client.schedules) fresh.schedules.set(id, s);
    const plan = await applySchedules(fresh, desiredSchedules(moved, 'q', inTenant('t')), {
      prune: false,
      dryRun: false,
    });
    expect(plan.update).toHaveLength(100);
    expect(fresh.maxInFlight).toBe(DEFAULT_APPLY_CONCURRENCY);
  });

  it('updates a schedule its create finds existing (the list did not show it yet), and reports what it did', async () => {
    const client = new FakeScheduleClient();
    await applySchedules(client, desiredSchedules([feed('a'), feed('b')], 'q', inTenant('t')), {
      prune: false,
      dryRun: false,
    });
    client.unlisted.add('nightly-a').add('nightly-b');
    const changedB = feed('b', { schedule: { ...feed('b').schedule, time: '04:00' } });
    const done = await applySchedules(client, desiredSchedules([feed('a'), changedB], 'q', inTenant('t')), {
      prune: false,
      dryRun: false,
    });
    expect(ids(done.create)).toEqual([]);
    expect(ids(done.unchanged)).toEqual(['nightly-a']);
    expect(ids(done.update)).toEqual(['nightly-b']);
    expect(client.schedules.get('nightly-b')?.options.spec.calendars).toEqual([
      { hour: 4, minute: 0, comment: 'feed b' },
    ]);
  });

  it('counts a schedule another apply deleted first as deleted, and one gone before its describe as absent', async () => {
    const client = new FakeScheduleClient();
    await applySchedules(client, desiredSchedules([feed('a'), feed('b')], 'q', inTenant('t')), {
      prune: false,
      dryRun: false,
    });
    const handleOf = client.getHandle.bind(client);
    client.getHandle = (id) => ({
      ...handleOf(id),
      // Another apply pruned nightly-b after this one listed it, and nightly-a after this one described it.
      describe: () =>
        id === 'nightly-b' ? Promise.reject(new ScheduleNotFoundError('gone', id)) : handleOf(id).describe(),
      delete: () => Promise.reject(new ScheduleNotFoundError('gone', id)),
    });
    const done = await applySchedules(client, [], { prune: true, dryRun: false });
    expect(done.delete).toEqual(['nightly-a']);
  });

  it('with dry-run reports the plan and touches nothing', async () => {
    const client = new FakeScheduleClient();
    const plan = await applySchedules(client, desiredSchedules([feed('a')], 'q', inTenant('t')), {
      prune: true,
      dryRun: true,
    });
    expect(ids(plan.create)).toEqual(['nightly-a']);
    expect(client.calls).toEqual([]);
  });
});
