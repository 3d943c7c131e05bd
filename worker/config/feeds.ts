/**
 * The nightly feeds of IMPORT_FEEDS_FILE. A feed's own settings (id, bucket,
 * prefix, pattern, concurrency, schedule) are checked here; the fields that
 * become each night's importFile input are checked by that input's own rules,
 * on the very input the nightly builds (importInputForObject), so loading the
 * file and a night refuse the same feed in the same words.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { FeedObject } from '../../workflows/contracts/activities.js';
import { type FieldMappingSet, importInputProblems, LIST_ACTIONS } from '../../workflows/contracts/import-input.js';
import { integerLiteralFor } from '../../workflows/contracts/json-numbers.js';
import type { NightlyFeed } from '../../workflows/contracts/nightly.js';
import { importInputForObject } from '../../workflows/nightly-policy.js';
import { readVariable } from './declarations.js';
import { ConfigError, fail } from './errors.js';
import type { Env, FeedConfig } from './types.js';
import { parseDuration } from './units.js';

const durationSchema = z.string().refine((s) => parseDuration(s) !== undefined, 'a duration such as 1h or 30m');

const scheduleSchema = z
  .object({
    time: z
      .string()
      .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'HH:MM')
      .default('02:00'),
    timeZone: z
      .string()
      .refine((tz) => {
        try {
          new Intl.DateTimeFormat('en', { timeZone: tz });
          return true;
        } catch {
          return false;
        }
      }, 'an IANA time zone such as Europe/Berlin')
      .default('UTC'),
    catchupWindow: durationSchema.default('6h'),
    pauseOnFailure: z.boolean().default(false),
  })
  .prefault({});

const feedSchema = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, ".", "_" or "-" (at most 64)'),
    bucket: z.string().min(1),
    prefix: z.string().default(''),
    pattern: z
      .string()
      .refine((p) => {
        try {
          new RegExp(p);
          return true;
        } catch {
          return false;
        }
      }, 'a valid regular expression')
      .optional(),
    maxConcurrentImports: z.number().int().min(1).max(100).default(2),
    schedule: scheduleSchema,
    // Each night's importFile input: checked below by importInputProblems, not restated here.
    entityType: z.unknown().optional(),
    importSource: z.unknown().optional(),
    activityTypeId: z.unknown().optional(),
    listAction: z.unknown().optional(),
    fieldMappings: z.unknown().optional(),
    tenant: z.unknown().optional(),
    // How the feed's files are read and what happens to refused rows: { onRejectedRows, delimiter, encoding, rejectsPrefix }.
    rows: z.unknown().optional(),
  })
  .strict();

type ParsedFeed = z.infer<typeof feedSchema>;

/** Feeds must name their list action: the service's own default, replace, is destructive. */
const LIST_ACTION_REQUIRED = `required for feeds, one of ${LIST_ACTIONS.join(', ')} (replace and delete are destructive)`;

/** Stands for any object of a feed: its key and ETag only name the import, the feed's fields decide if it is valid. */
const ANY_OBJECT: FeedObject = {
  key: 'any-object.csv',
  etag: '"0"',
  sizeBytes: 1,
  lastModified: '1970-01-01T00:00:00Z',
};

/** The feed's settings as its nightly workflow receives them (the tenant still unresolved). */
function nightlySettings(feed: ParsedFeed): NightlyFeed {
  const { id: _id, schedule: _schedule, ...settings } = feed;
  return settings as NightlyFeed;
}

/** JSON numbers above 2^53 arrive rounded: show the digits the file holds, not the rounded value. */
function unsafeSourceIdProblem(item: unknown, text: string): string | undefined {
  const sourceId = (item as { fieldMappings?: { sourceId?: unknown } })?.fieldMappings?.sourceId;
  if (typeof sourceId !== 'number' || Number.isSafeInteger(sourceId)) return undefined;
  const written = integerLiteralFor(text, sourceId) ?? String(sourceId);
  return `fieldMappings.sourceId ${written} is too large for a JSON number (it would be rounded); write it as a string: "sourceId": "${written}"`;
}

/** The first thing wrong with feeds[i], as `where: what`; undefined when the feed is valid. */
function feedProblem(parsed: ReturnType<typeof feedSchema.safeParse>, i: number): string | undefined {
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return `${[`feeds[${i}]`, ...(issue?.path ?? [])].join('.')}: ${issue?.message ?? 'invalid'}`;
  }
  if (parsed.data.listAction === undefined) return `feeds[${i}].listAction: ${LIST_ACTION_REQUIRED}`;
  const problems = importInputProblems(importInputForObject(parsed.data.id, nightlySettings(parsed.data), ANY_OBJECT));
  return problems.length > 0 ? `feeds[${i}]: ${problems.join('; ')}` : undefined;
}

function feedConfig(feed: ParsedFeed): FeedConfig {
  const { schedule, fieldMappings, ...rest } = feed;
  const set = fieldMappings as FieldMappingSet | undefined;
  return {
    ...(rest as Omit<FeedConfig, 'schedule' | 'fieldMappings'>),
    fieldMappings: set && { ...set, sourceId: String(set.sourceId) },
    schedule: {
      time: schedule.time,
      timeZone: schedule.timeZone,
      catchupWindowMs: parseDuration(schedule.catchupWindow) as number,
      pauseOnFailure: schedule.pauseOnFailure,
    },
  };
}

/** The nightly feeds of IMPORT_FEEDS_FILE; none when it is unset. */
export function loadFeeds(env: Env = process.env): FeedConfig[] {
  const path = readVariable(env, 'IMPORT_FEEDS_FILE');
  if (!path) return [];
  let text: string;
  let data: unknown;
  try {
    text = readFileSync(path, 'utf8');
    data = JSON.parse(text);
  } catch (e) {
    fail('IMPORT_FEEDS_FILE', `a readable JSON file (${(e as Error).message})`, path);
  }
  const list = Array.isArray(data) ? data : (data as { feeds?: unknown })?.feeds;
  if (!Array.isArray(list)) fail('IMPORT_FEEDS_FILE', 'a JSON array of feeds, or { "feeds": [...] }', path);
  const feeds = list.map((item, i) => {
    const lostPrecision = unsafeSourceIdProblem(item, text);
    if (lostPrecision) throw new ConfigError(`IMPORT_FEEDS_FILE ${path}: feeds[${i}].${lostPrecision}`);
    const parsed = feedSchema.safeParse(item);
    const problem = feedProblem(parsed, i);
    if (problem || !parsed.success) throw new ConfigError(`IMPORT_FEEDS_FILE ${path}: ${problem}`);
    return feedConfig(parsed.data);
  });
  const seen = new Set<string>();
  for (const f of feeds) {
    if (seen.has(f.id)) throw new ConfigError(`IMPORT_FEEDS_FILE ${path}: feed id "${f.id}" appears twice`);
    seen.add(f.id);
  }
  return feeds;
}
