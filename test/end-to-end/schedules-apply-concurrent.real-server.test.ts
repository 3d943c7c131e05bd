/**
 * `import-worker schedules apply` as deploy steps run it: twice at once (two
 * pipelines, a retry), on a real Temporal dev server whose schedule list is
 * eventually consistent. Both succeed; each schedule is created once and the
 * other apply finds it as it wants it. And `--prune` with no feed configured
 * refuses, where deleting every nightly schedule takes `--prune-all`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../worker/cli/cli-error.js';
import { schedulesApplyCommand } from '../../worker/cli/schedule-commands.js';
import { NIGHTLY_ID_PREFIX } from '../../workflows/contracts/nightly.js';
import { cliContext, waitFor } from '../support/operator-actions.js';
import { createEnvironment } from '../support/temporal-server.js';

const FEEDS = 20;

describe('schedules apply run twice at once', () => {
  let env: TestWorkflowEnvironment;
  let dir: string;
  let feedsFile: string;

  beforeAll(async () => {
    env = await createEnvironment();
    dir = mkdtempSync(join(tmpdir(), 'schedules-apply-'));
    feedsFile = join(dir, 'feeds.json');
    const feed = (i: number) => ({
      id: `feed-${i}`,
      bucket: 'crm-drops',
      prefix: `feed-${i}/`,
      entityType: 'Account',
      listAction: 'insert',
      schedule: { time: '02:00', timeZone: 'UTC' },
    });
    writeFileSync(feedsFile, JSON.stringify({ feeds: Array.from({ length: FEEDS }, (_, i) => feed(i)) }));
  }, 120_000);

  afterAll(async () => {
    await env?.teardown();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const context = (extra: Record<string, string> = {}) => cliContext({ TEMPORAL_ADDRESS: env.address, ...extra });

  const nightlySchedules = async () => {
    const ids: string[] = [];
    for await (const s of env.client.schedule.list())
      if (s.scheduleId.startsWith(NIGHTLY_ID_PREFIX)) ids.push(s.scheduleId);
    return ids.sort();
  };

  it('both succeed, and each schedule is created by exactly one of them', async () => {
    const [a, b] = [context({ IMPORT_FEEDS_FILE: feedsFile }), context({ IMPORT_FEEDS_FILE: feedsFile })];
    await Promise.all([schedulesApplyCommand({}, a), schedulesApplyCommand({}, b)]);

    const lines = [...a.printed, ...b.printed];
    expect(lines).toHaveLength(2 * FEEDS);
    for (let i = 0; i < FEEDS; i += 1) {
      const about = lines.filter((l) => l.includes(` nightly-feed-${i} `));
      expect(about.map((l) => l.split(' ')[0]).sort(), `lines of nightly-feed-${i}`).toEqual(['created', 'unchanged']);
    }
    // The list catches up: every schedule is there, once.
    const expected = Array.from({ length: FEEDS }, (_, i) => `nightly-feed-${i}`).sort();
    await waitFor(async () => ((await nightlySchedules()).length === FEEDS ? true : undefined), 200);
    expect(await nightlySchedules()).toEqual(expected);
  });

  it('--prune with no feed configured refuses and deletes nothing; --prune-all deletes every nightly schedule', async () => {
    const unset = context();
    const refused = await schedulesApplyCommand({ prune: true }, unset).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(UsageError);
    expect((refused as UsageError).exitCode).toBe(2);
    expect((refused as Error).message).toBe(
      'refusing --prune: IMPORT_FEEDS_FILE is unset, so it would delete every nightly schedule; set IMPORT_FEEDS_FILE, or pass --prune-all to delete them all',
    );
    expect(await nightlySchedules()).toHaveLength(FEEDS);

    // Two at once here too: a schedule the other apply deleted first counts as deleted.
    const [a, b] = [context(), context()];
    await Promise.all([schedulesApplyCommand({ pruneAll: true }, a), schedulesApplyCommand({ pruneAll: true }, b)]);
    expect(a.printed.every((l) => l.startsWith('deleted  nightly-feed-'))).toBe(true);
    await waitFor(async () => ((await nightlySchedules()).length === 0 ? true : undefined), 200);
  });
});
