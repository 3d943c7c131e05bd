/**
 * The one place configuration is read. Everything comes from the environment
 * (plus the files it names), is validated once, and is typed everywhere after.
 * A missing or malformed value stops start-up with one line naming the
 * variable and what it expects.
 */
import { readFileSync } from 'node:fs';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { z } from 'zod';
import { BUDGETED_ENDPOINTS, type BudgetedEndpoint } from './workflows/policy/endpoints.js';
import {
  ENTITY_TYPES,
  type FieldMappingSet,
  fieldMappingProblems,
  LIST_ACTIONS,
  TENANT_PATTERN,
} from './workflows/policy/import-input.js';
import type { NightlyFeed } from './workflows/policy/nightly.js';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** A secret that refuses to be printed, logged or serialised by accident. */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return '[redacted]';
  }
  toJSON(): string {
    return '[redacted]';
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return '[redacted]';
  }
}

export type TokenConfig = { kind: 'env'; token: Secret } | { kind: 'file'; path: string };

export interface ServiceConfig {
  baseUrl: string;
  token: TokenConfig;
  /** Whole-request limit for the short calls (status, create, mappings). */
  requestTimeoutMs: number;
  /** An upload fails when no byte has moved for this long. */
  uploadIdleTimeoutMs: number;
}

export interface FeedSchedule {
  /** Local time of day, HH:MM, in timeZone. */
  time: string;
  timeZone: string;
  catchupWindowMs: number;
  pauseOnFailure: boolean;
}

/** A feed as configured: the settings its nightly workflow carries, plus its id and schedule. */
export interface FeedConfig extends Omit<NightlyFeed, 'tenant'> {
  id: string;
  /** Falls back to IMPORT_TENANT when the schedule is applied. */
  tenant?: string;
  schedule: FeedSchedule;
}

export const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  temporal: {
    /** Connection options by the SDK's conventions (TEMPORAL_ADDRESS, TLS, API key, profiles). */
    connection: ReturnType<typeof loadClientConnectConfig>['connectionOptions'];
    namespace: string;
    taskQueue: string;
    uiUrl: string;
  };
  /** Absent unless the caller needs the service (the worker does, the CLI does not). */
  service?: ServiceConfig;
  s3: { endpoint?: string; region: string; forcePathStyle: boolean };
  tenant: string;
  budget: {
    limits: Record<BudgetedEndpoint, number>;
    /** Percent of each limit left unused for other clients of the same tenant. */
    headroomPercent: number;
    /** UTC time of day the daily windows reset, minutes after midnight. */
    resetMinuteUtc: number;
  };
  poll: { scheduleMs: number[]; jitterRatio: number; jobTimeoutMs: number };
  maxFileBytes: number;
  upload: { partSizeBytes: number; parallelParts: number };
  worker: {
    maxConcurrentUploads: number;
    maxConcurrentActivities: number;
    /** Job completion polls one worker runs at once: each mostly sleeps between GETs. */
    maxConcurrentPolls: number;
    /** 0 turns the Prometheus endpoint off. */
    metricsPort: number;
    /** A prebuilt workflow bundle (npm run build:workflows); absent: bundle from source. */
    workflowBundlePath?: string;
    logLevel: LogLevel;
  };
  feeds: FeedConfig[];
}

/** Every variable this module reads, with its meaning and default: the README's reference. */
export const CONFIG_VARIABLES = {
  TEMPORAL_ADDRESS:
    'Temporal frontend host:port (SDK convention; also TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS*, TEMPORAL_PROFILE). Default localhost:7233',
  TEMPORAL_NAMESPACE: 'Temporal namespace. Default default',
  IMPORT_TASK_QUEUE: 'Task queue the worker polls and the CLI starts workflows on. Default bulk-import',
  TEMPORAL_UI_URL: 'Base URL of the Temporal Web UI, for links. Default http://localhost:8233',
  COMPANY_DATA_BASE_URL: 'Base URL of the Company Data Service (https unless loopback). Required by the worker',
  COMPANY_DATA_TOKEN: 'Bearer token for the service. Required by the worker unless COMPANY_DATA_TOKEN_FILE is set',
  COMPANY_DATA_TOKEN_FILE: 'File holding the token, re-read when it changes (for a sidecar that rotates 8-hour tokens)',
  COMPANY_DATA_REQUEST_TIMEOUT: 'Timeout of one short service call. Default 30s',
  UPLOAD_IDLE_TIMEOUT: 'An upload fails (and is retried) when no byte moved for this long. Default 60s',
  S3_ENDPOINT: 'S3-compatible endpoint URL; unset means AWS. Credentials come from the AWS default chain',
  AWS_REGION: 'S3 region. Default us-east-1',
  S3_FORCE_PATH_STYLE: 'true for path-style S3 URLs (s3rver, MinIO). Default false, true when S3_ENDPOINT is set',
  IMPORT_TENANT: 'Tenant whose daily budgets the calls count against. Default default',
  IMPORT_BUDGET_WRITE_DAILY: 'Daily limit of POST /import/v1/job and of PUT .../data, each. Default 1200',
  IMPORT_BUDGET_READ_DAILY: 'Daily limit of each import GET endpoint. Default 3600',
  IMPORT_BUDGET_HEADROOM_PERCENT: 'Percent of every limit left for other clients of the tenant. Default 0',
  IMPORT_BUDGET_RESET_UTC: 'UTC time of day the daily windows reset, HH:MM. Default 00:00',
  IMPORT_POLL_SCHEDULE:
    'Job status poll delays, comma-separated durations; the last repeats. Default 5s,10s,20s,40s,60s',
  IMPORT_POLL_JITTER: 'Random jitter on each poll delay, as a fraction. Default 0.2',
  IMPORT_JOB_TIMEOUT: 'How long to wait for a job to finish. Default 24h',
  IMPORT_MAX_FILE_BYTES: 'Largest file accepted, in bytes or with a unit (5GiB). Default 5GiB',
  UPLOAD_PART_SIZE: 'Size of each ranged S3 read. Default 8MiB',
  UPLOAD_PARALLEL_PARTS: 'Ranged S3 reads in flight per upload (1 = one sequential GET). Default 1',
  WORKER_MAX_CONCURRENT_UPLOADS: 'Uploads one worker runs at once. Default 2',
  WORKER_MAX_CONCURRENT_ACTIVITIES: 'Short activities (status, create, mappings) one worker runs at once. Default 50',
  WORKER_MAX_CONCURRENT_POLLS: 'Job completion polls one worker runs at once. Default 200',
  WORKER_METRICS_PORT: 'Port of the Prometheus /metrics endpoint; 0 turns it off. Default 9464',
  WORKFLOW_BUNDLE_PATH: 'Prebuilt workflow bundle (npm run build:workflows); unset: bundle from source at start',
  LOG_LEVEL: 'TRACE, DEBUG, INFO, WARN or ERROR. Default INFO. Logs are JSON lines when stderr is not a terminal',
  IMPORT_FEEDS_FILE: 'JSON file listing the nightly feeds (see README). Default: no feeds',
} as const;

type Env = Record<string, string | undefined>;

const DURATION_UNITS_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const SIZE_UNITS = { B: 1, KB: 1e3, MB: 1e6, GB: 1e9, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 } as const;

/** Parses 500ms, 30s, 5m, 24h, 7d. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  if (!m) return undefined;
  return Math.round(Number(m[1]) * DURATION_UNITS_MS[m[2] as keyof typeof DURATION_UNITS_MS]);
}

/** Parses 1048576, 64KiB, 8MiB, 5GiB, 5GB. */
export function parseSize(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|KiB|MiB|GiB)?$/.exec(text.trim());
  if (!m) return undefined;
  const bytes = Number(m[1]) * SIZE_UNITS[(m[2] ?? 'B') as keyof typeof SIZE_UNITS];
  return Number.isSafeInteger(Math.round(bytes)) ? Math.round(bytes) : undefined;
}

function fail(variable: string, expected: string, got?: string): never {
  const shown = got === undefined ? 'it is not set' : `got ${JSON.stringify(got)}`;
  throw new ConfigError(`${variable} must be ${expected}; ${shown}`);
}

class Reader {
  constructor(private readonly env: Env) {}

  raw(name: string): string | undefined {
    const v = this.env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  }

  string(name: string, fallback: string, pattern?: RegExp, expected = 'a string'): string {
    const v = this.raw(name) ?? fallback;
    if (pattern && !pattern.test(v)) fail(name, expected, v);
    return v;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const v = this.raw(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!/^\d+$/.test(v) || n < min || n > max) fail(name, `a whole number from ${min} to ${max}`, v);
    return n;
  }

  number(name: string, fallback: number, min: number, max: number): number {
    const v = this.raw(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isFinite(n) || n < min || n > max) fail(name, `a number from ${min} to ${max}`, v);
    return n;
  }

  bool(name: string, fallback: boolean): boolean {
    const v = this.raw(name);
    if (v === undefined) return fallback;
    if (/^(true|1|yes)$/i.test(v)) return true;
    if (/^(false|0|no)$/i.test(v)) return false;
    return fail(name, 'true or false', v);
  }

  duration(name: string, fallback: string): number {
    const v = this.raw(name) ?? fallback;
    const ms = parseDuration(v);
    if (ms === undefined || ms <= 0) fail(name, 'a duration such as 30s, 5m, 24h', v);
    return ms;
  }

  size(name: string, fallback: string): number {
    const v = this.raw(name) ?? fallback;
    const bytes = parseSize(v);
    if (bytes === undefined || bytes <= 0) fail(name, 'a size such as 1048576, 8MiB or 5GiB', v);
    return bytes;
  }

  url(name: string, fallback?: string): string | undefined {
    const v = this.raw(name) ?? fallback;
    if (v === undefined) return undefined;
    try {
      const u = new URL(v);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('protocol');
      return v.replace(/\/+$/, '');
    } catch {
      return fail(name, 'an http(s) URL', v);
    }
  }
}

export function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function readServiceConfig(r: Reader): ServiceConfig {
  const baseUrl = r.url('COMPANY_DATA_BASE_URL');
  if (!baseUrl) fail('COMPANY_DATA_BASE_URL', 'the service base URL, e.g. https://api.example.com');
  if (!baseUrl.startsWith('https:') && !isLoopbackUrl(baseUrl)) {
    fail('COMPANY_DATA_BASE_URL', 'https (plain http is allowed only for loopback addresses)', baseUrl);
  }
  const tokenFile = r.raw('COMPANY_DATA_TOKEN_FILE');
  const tokenValue = r.raw('COMPANY_DATA_TOKEN');
  let token: TokenConfig;
  if (tokenFile) {
    try {
      readFileSync(tokenFile);
    } catch {
      fail('COMPANY_DATA_TOKEN_FILE', 'a readable file holding the bearer token', tokenFile);
    }
    token = { kind: 'file', path: tokenFile };
  } else if (tokenValue) {
    token = { kind: 'env', token: new Secret(tokenValue) };
  } else {
    throw new ConfigError(
      'COMPANY_DATA_TOKEN or COMPANY_DATA_TOKEN_FILE must be set: the worker needs a service token',
    );
  }
  return {
    baseUrl,
    token,
    requestTimeoutMs: r.duration('COMPANY_DATA_REQUEST_TIMEOUT', '30s'),
    uploadIdleTimeoutMs: r.duration('UPLOAD_IDLE_TIMEOUT', '60s'),
  };
}

const durationSchema = z.string().refine((s) => parseDuration(s) !== undefined, 'a duration such as 1h or 30m');

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
    entityType: z.enum(ENTITY_TYPES),
    importSource: z.string().min(1).optional(),
    activityTypeId: z.number().int().positive().optional(),
    listAction: z.enum(LIST_ACTIONS, {
      error: `required for feeds, one of ${LIST_ACTIONS.join(', ')} (replace and delete are destructive)`,
    }),
    fieldMappings: z.unknown().optional(),
    maxConcurrentImports: z.number().int().min(1).max(100).default(2),
    tenant: z.string().regex(TENANT_PATTERN).optional(),
    schedule: z
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
      .prefault({}),
  })
  .strict()
  .superRefine((feed, ctx) => {
    if (feed.entityType === 'Activity' && feed.activityTypeId === undefined) {
      ctx.addIssue({ code: 'custom', path: ['activityTypeId'], message: 'required when entityType is Activity' });
    }
    if (feed.fieldMappings !== undefined) {
      for (const problem of fieldMappingProblems(feed.fieldMappings)) {
        ctx.addIssue({ code: 'custom', path: [], message: problem });
      }
    }
  });

function readFeeds(r: Reader): FeedConfig[] {
  const path = r.raw('IMPORT_FEEDS_FILE');
  if (!path) return [];
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    fail('IMPORT_FEEDS_FILE', `a readable JSON file (${(e as Error).message})`, path);
  }
  const list = Array.isArray(data) ? data : (data as { feeds?: unknown })?.feeds;
  if (!Array.isArray(list)) fail('IMPORT_FEEDS_FILE', 'a JSON array of feeds, or { "feeds": [...] }', path);
  const feeds = list.map((item, i) => {
    const parsed = feedSchema.safeParse(item);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = [`feeds[${i}]`, ...(issue?.path ?? [])].join('.');
      throw new ConfigError(`IMPORT_FEEDS_FILE ${path}: ${where}: ${issue?.message ?? 'invalid'}`);
    }
    const { schedule, fieldMappings, ...rest } = parsed.data;
    const feed: FeedConfig = {
      ...rest,
      fieldMappings: fieldMappings as FieldMappingSet | undefined,
      schedule: {
        time: schedule.time,
        timeZone: schedule.timeZone,
        catchupWindowMs: parseDuration(schedule.catchupWindow) as number,
        pauseOnFailure: schedule.pauseOnFailure,
      },
    };
    if (feed.fieldMappings)
      feed.fieldMappings = { ...feed.fieldMappings, sourceId: String(feed.fieldMappings.sourceId) };
    return feed;
  });
  const seen = new Set<string>();
  for (const f of feeds) {
    if (seen.has(f.id)) throw new ConfigError(`IMPORT_FEEDS_FILE ${path}: feed id "${f.id}" appears twice`);
    seen.add(f.id);
  }
  return feeds;
}

function readTemporal(env: Env, r: Reader): Config['temporal'] {
  let connect: ReturnType<typeof loadClientConnectConfig>;
  try {
    connect = loadClientConnectConfig({ overrideEnvVars: env } as Parameters<typeof loadClientConnectConfig>[0]);
  } catch (e) {
    throw new ConfigError(
      `Temporal connection settings (TEMPORAL_* or the profile file) are invalid: ${(e as Error).message}`,
    );
  }
  return {
    connection: { ...connect.connectionOptions, address: connect.connectionOptions.address ?? 'localhost:7233' },
    namespace: connect.namespace ?? 'default',
    taskQueue: r.string('IMPORT_TASK_QUEUE', 'bulk-import', /^[A-Za-z0-9._-]{1,200}$/, 'a task queue name'),
    uiUrl: r.url('TEMPORAL_UI_URL', 'http://localhost:8233') as string,
  };
}

function readPollSchedule(r: Reader): number[] {
  const text = r.raw('IMPORT_POLL_SCHEDULE') ?? '5s,10s,20s,40s,60s';
  const delays = text.split(',').map((part) => parseDuration(part));
  if (delays.length === 0 || delays.some((d) => d === undefined || d <= 0)) {
    fail('IMPORT_POLL_SCHEDULE', 'comma-separated durations such as 5s,10s,20s,40s,60s', text);
  }
  return delays as number[];
}

export interface LoadConfigOptions {
  /** Read and require the service URL and token (the worker); the CLI does without. */
  needsService?: boolean;
}

export function loadConfig(env: Env = process.env, options: LoadConfigOptions = {}): Config {
  const r = new Reader(env);
  const write = r.int('IMPORT_BUDGET_WRITE_DAILY', 1200, 1, 1_000_000);
  const read = r.int('IMPORT_BUDGET_READ_DAILY', 3600, 1, 1_000_000);
  const limits = Object.fromEntries(
    (Object.keys(BUDGETED_ENDPOINTS) as BudgetedEndpoint[]).map((e) => [
      e,
      BUDGETED_ENDPOINTS[e].defaultDailyLimit === 1200 ? write : read,
    ]),
  ) as Record<BudgetedEndpoint, number>;
  const reset = r.string('IMPORT_BUDGET_RESET_UTC', '00:00', /^([01]\d|2[0-3]):[0-5]\d$/, 'a UTC time HH:MM');
  const [hh, mm] = reset.split(':').map(Number) as [number, number];
  const s3Endpoint = r.url('S3_ENDPOINT');

  return {
    temporal: readTemporal(env, r),
    service: options.needsService ? readServiceConfig(r) : undefined,
    s3: {
      endpoint: s3Endpoint,
      region: r.string('AWS_REGION', 'us-east-1', /^[a-z0-9-]{1,40}$/, 'an AWS region such as eu-west-1'),
      forcePathStyle: r.bool('S3_FORCE_PATH_STYLE', s3Endpoint !== undefined),
    },
    tenant: r.string('IMPORT_TENANT', 'default', TENANT_PATTERN, '1-64 letters, digits, ".", "_" or "-"'),
    budget: {
      limits,
      headroomPercent: r.number('IMPORT_BUDGET_HEADROOM_PERCENT', 0, 0, 90),
      resetMinuteUtc: hh * 60 + mm,
    },
    poll: {
      scheduleMs: readPollSchedule(r),
      jitterRatio: r.number('IMPORT_POLL_JITTER', 0.2, 0, 1),
      jobTimeoutMs: r.duration('IMPORT_JOB_TIMEOUT', '24h'),
    },
    maxFileBytes: r.size('IMPORT_MAX_FILE_BYTES', '5GiB'),
    upload: {
      partSizeBytes: r.size('UPLOAD_PART_SIZE', '8MiB'),
      parallelParts: r.int('UPLOAD_PARALLEL_PARTS', 1, 1, 32),
    },
    worker: {
      maxConcurrentUploads: r.int('WORKER_MAX_CONCURRENT_UPLOADS', 2, 1, 64),
      maxConcurrentActivities: r.int('WORKER_MAX_CONCURRENT_ACTIVITIES', 50, 1, 1000),
      maxConcurrentPolls: r.int('WORKER_MAX_CONCURRENT_POLLS', 200, 1, 10000),
      metricsPort: r.int('WORKER_METRICS_PORT', 9464, 0, 65535),
      workflowBundlePath: r.raw('WORKFLOW_BUNDLE_PATH'),
      logLevel: r.string(
        'LOG_LEVEL',
        'INFO',
        /^(TRACE|DEBUG|INFO|WARN|ERROR)$/,
        'one of TRACE, DEBUG, INFO, WARN, ERROR',
      ) as LogLevel,
    },
    feeds: readFeeds(r),
  };
}
