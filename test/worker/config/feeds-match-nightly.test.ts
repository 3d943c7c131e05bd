/**
 * A feed is refused in the same words when IMPORT_FEEDS_FILE is loaded and
 * when a night checks the importFile input it builds for one of the feed's
 * objects (nightlyImport runs importInputProblems on importInputForObject),
 * because configuration checks that very input.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, type FeedConfig, loadFeeds } from '../../../temporal.config.js';
import { nightlyFeed } from '../../../worker/cli/schedules.js';
import { importInputProblems } from '../../../workflows/contracts/import-input.js';
import { importInputForObject } from '../../../workflows/nightly-policy.js';

const feed = {
  id: 'accounts-nightly',
  bucket: 'crm-exports',
  prefix: 'accounts/',
  entityType: 'Account',
  listAction: 'insert',
};
const object = { key: 'accounts/2026-11-25.csv', etag: '"abc"', sizeBytes: 10, lastModified: '2026-11-25T02:00:00Z' };

/** One folder for the file, removed at its end: the system's temp folder keeps nothing. */
const scratch = mkdtempSync(join(tmpdir(), 'feeds-match-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function loadError(item: Record<string, unknown>): string {
  const path = join(scratch, 'feeds.json');
  writeFileSync(path, JSON.stringify([item]));
  try {
    loadFeeds({ IMPORT_FEEDS_FILE: path });
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('expected the feeds file to be refused');
}

/** What a night says of the feed: the problems of the child input it builds, as its InvalidInput failure joins them. */
function nightlyProblems(item: Record<string, unknown>): string {
  // The feed as a schedule carries it, skipping configuration's check (a schedule made by hand, or by an older worker).
  const carried = nightlyFeed({ ...item, maxConcurrentImports: 2 } as unknown as FeedConfig, {
    tenant: 'acme',
    jobTimeoutMs: 86_400_000,
  });
  return importInputProblems(importInputForObject(feed.id, carried, object)).join('; ');
}

describe('a bad feed field is refused in the same words by config loading and by a night', () => {
  it.each([
    ['listAction', { listAction: 'merge' }],
    ['tenant', { tenant: 'has space' }],
    ['activityTypeId', { entityType: 'Activity', activityTypeId: 0 }],
    ['fieldMappings', { fieldMappings: { sourceId: '1', objectType: 'company', mappings: [] } }],
  ])('%s', (_field, change) => {
    const bad = { ...feed, ...change };
    const words = nightlyProblems(bad);
    expect(words).not.toBe('');
    expect(loadError(bad)).toMatch(/^IMPORT_FEEDS_FILE \S+feeds\.json: feeds\[0\]: /);
    expect(loadError(bad).endsWith(`: feeds[0]: ${words}`)).toBe(true);
  });
});
