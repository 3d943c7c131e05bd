/**
 * The one place configuration is read. Everything comes from the environment
 * (plus the files it names), is validated once, and is typed everywhere after.
 * A missing or malformed value stops start-up with one line naming the
 * variable and what it expects.
 *
 * Each variable is declared once, in CONFIG_VARIABLES: its README text, its
 * default and its parser (which holds its range). Loaders read only the
 * variables their caller uses, so a typo in a worker setting never blocks an
 * operator's `status`.
 */
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { z } from 'zod';
import type { ParallelParts } from './activities/s3/ranged-reader.js';
import { BUDGETED_ENDPOINTS, type BudgetedEndpoint } from './workflows/policy/endpoints.js';
import {
  ENTITY_TYPES,
  type FieldMappingSet,
  fieldMappingProblems,
  LIST_ACTIONS,
  TENANT_PATTERN,
} from './workflows/policy/import-input.js';
import { integerLiteralFor } from './workflows/policy/json-numbers.js';
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

export type TokenConfig =
  | { kind: 'env'; token: Secret }
  | { kind: 'file'; path: string }
  | {
      kind: 'client-credentials';
      /** The exchange's URL: the service's base URL + /auth/v1/token. */
      tokenUrl: string;
      clientId: string;
      /** The secret itself, or a file holding it (re-read at every exchange, so it can be rotated). */
      clientSecret: { value: Secret } | { file: string };
    };

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

export interface TemporalConfig {
  /** Connection options by the SDK's conventions (TEMPORAL_ADDRESS, TLS, API key, profiles). */
  connection: ReturnType<typeof loadClientConnectConfig>['connectionOptions'] & { address: string };
  namespace: string;
  taskQueue: string;
  uiUrl: string;
}

export interface BudgetSettings {
  limits: Record<BudgetedEndpoint, number>;
  /** Percent of each limit left unused for other clients of the same tenant. */
  headroomPercent: number;
  /** UTC time of day the daily windows reset, minutes after midnight. */
  resetMinuteUtc: number;
}

/** What every client of Temporal needs: the worker, the CLI, the demo. */
export interface ClientConfig {
  temporal: TemporalConfig;
  tenant: string;
}

export interface Config extends ClientConfig {
  /** Absent unless the caller needs the service (the worker does, the CLI does not). */
  service?: ServiceConfig;
  s3: { endpoint?: string; region: string; forcePathStyle: boolean };
  budget: BudgetSettings;
  poll: { scheduleMs: number[]; jitterRatio: number; jobTimeoutMs: number };
  maxFileBytes: number;
  upload: { partSizeBytes: number; parallelParts: ParallelParts };
  worker: {
    maxConcurrentUploads: number;
    maxConcurrentActivities: number;
    /** Job completion polls one worker runs at once: each mostly sleeps between GETs. */
    maxConcurrentPolls: number;
    /** 0 turns the Prometheus endpoint off. */
    metricsPort: number;
    /** A prebuilt workflow bundle; absent: the one npm run build wrote beside the compiled worker, else bundled from source. */
    workflowBundlePath?: string;
    /** How long a starting worker keeps retrying to reach Temporal; 0 tries once. */
    connectTimeoutMs: number;
    logLevel: LogLevel;
  };
  feeds: FeedConfig[];
}

type Env = Record<string, string | undefined>;

// ---------------------------------------------------------------------------
// Units and parsers. A parser turns the variable's text into its value or
// fails naming the variable, what it expects and what it got.

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

type Parse<T> = (text: string, name: string) => T;

const matching =
  (pattern: RegExp, expected: string): Parse<string> =>
  (text, name) =>
    pattern.test(text) ? text : fail(name, expected, text);

const wholeNumber =
  (min: number, max: number): Parse<number> =>
  (text, name) => {
    const n = Number(text);
    return /^\d+$/.test(text) && n >= min && n <= max ? n : fail(name, `a whole number from ${min} to ${max}`, text);
  };

const decimal =
  (min: number, max: number): Parse<number> =>
  (text, name) => {
    const n = Number(text);
    return Number.isFinite(n) && n >= min && n <= max ? n : fail(name, `a number from ${min} to ${max}`, text);
  };

const boolean: Parse<boolean> = (text, name) => {
  if (/^(true|1|yes)$/i.test(text)) return true;
  if (/^(false|0|no)$/i.test(text)) return false;
  return fail(name, 'true or false', text);
};

/** The SDK reads only `true` and `1` as on; anything else would silently mean off. */
const sdkBoolean: Parse<boolean> = (text, name) => {
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  return fail(name, 'true, false, 1 or 0', text);
};

const duration =
  ({ allowZero = false } = {}): Parse<number> =>
  (text, name) => {
    const ms = text === '0' && allowZero ? 0 : parseDuration(text);
    return ms !== undefined && (ms > 0 || allowZero) ? ms : fail(name, 'a duration such as 30s, 5m, 24h', text);
  };

const durationList: Parse<number[]> = (text, name) => {
  const delays = text.split(',').map((part) => parseDuration(part));
  if (delays.some((d) => d === undefined || d <= 0)) {
    fail(name, 'comma-separated durations such as 5s,10s,20s,40s,60s', text);
  }
  return delays as number[];
};

const size: Parse<number> = (text, name) => {
  const bytes = parseSize(text);
  return bytes !== undefined && bytes > 0 ? bytes : fail(name, 'a size such as 1048576, 8MiB or 5GiB', text);
};

const httpUrl: Parse<string> = (text, name) => {
  try {
    const u = new URL(text);
    if (u.protocol === 'http:' || u.protocol === 'https:') return text.replace(/\/+$/, '');
  } catch {}
  return fail(name, 'an http(s) URL', text);
};

const readableFile =
  (what: string): Parse<string> =>
  (path, name) => {
    try {
      accessSync(path, constants.R_OK);
      if (statSync(path).isFile()) return path;
    } catch {}
    return fail(name, `a readable file (${what})`, path);
  };

const utcMinuteOfDay: Parse<number> = (text, name) => {
  const m = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(text);
  return m ? Number(m[1]) * 60 + Number(m[2]) : fail(name, 'a UTC time HH:MM', text);
};

/** host:port, [ipv6]:port; the SDK would otherwise report a bad address as "cannot reach". */
const hostAndPort: Parse<string> = (text, name) => {
  const m = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})$/.exec(text);
  const port = Number(m?.[1]);
  return m && port >= 1 && port <= 65535 ? text : fail(name, 'host:port, e.g. temporal.internal:7233', text);
};

const anyText: Parse<string> = (text) => text;

// ---------------------------------------------------------------------------
// Every variable, declared once.

interface Variable<T> {
  /** The README's description (the default is added from `default`). */
  doc: string;
  /** The default as an operator would write it; absent means unset is allowed and means "none". */
  default?: string;
  /** When the default depends on another variable, the README says so instead. */
  defaultNote?: string;
  parse: Parse<T>;
}

function variable<T>(doc: string, defaultText: string, parse: Parse<T>): Variable<T> & { default: string } {
  return { doc, default: defaultText, parse };
}

function optional<T>(doc: string, parse: Parse<T>, defaultNote?: string): Variable<T> {
  return { doc, parse, defaultNote };
}

/** The service's upload limit per file: 5 GB, decimal. */
const SERVICE_MAX_FILE_BYTES = 5_000_000_000;

const TENANT_TEXT = '1-64 letters, digits, ".", "_" or "-"';

/** Every variable this module reads: the README's configuration reference is checked against it. */
export const CONFIG_VARIABLES = {
  TEMPORAL_ADDRESS: variable(
    'Temporal frontend host:port (read by the SDK, which also reads `TEMPORAL_TLS_*` client certificate variables and `TEMPORAL_PROFILE`)',
    'localhost:7233',
    hostAndPort,
  ),
  TEMPORAL_NAMESPACE: variable('Temporal namespace', 'default', matching(/^\S{1,255}$/, 'a namespace name')),
  TEMPORAL_API_KEY: optional('API key for Temporal Cloud; turns TLS on. Never logged', anyText),
  TEMPORAL_TLS: optional(
    '`true` or `false` (also `1`/`0`): TLS to the Temporal frontend',
    sdkBoolean,
    'off, on with an API key',
  ),
  TEMPORAL_CONFIG_FILE: optional(
    'TOML profile file of the Temporal SDKs (profiles picked by `TEMPORAL_PROFILE`); must exist when set',
    readableFile('the Temporal client configuration TOML'),
  ),
  IMPORT_TASK_QUEUE: variable(
    'Task queue the worker polls and the CLI starts workflows on (uploads run on `<queue>-uploads`)',
    'bulk-import',
    matching(/^[A-Za-z0-9._-]{1,200}$/, 'a task queue name'),
  ),
  TEMPORAL_UI_URL: variable('Base URL of the Temporal Web UI, for links', 'http://localhost:8233', httpUrl),
  COMPANY_DATA_BASE_URL: optional(
    'Base URL of the Company Data Service; must be https unless it is a loopback address. Required by the worker',
    httpUrl,
  ),
  COMPANY_DATA_TOKEN: optional(
    'Bearer token for the service. The worker needs exactly one token source: this, `COMPANY_DATA_TOKEN_FILE` or `COMPANY_DATA_CLIENT_ID` (two or none stop start-up)',
    (text) => new Secret(text),
  ),
  COMPANY_DATA_TOKEN_FILE: optional(
    'File holding the token, re-read whenever it changes, so a sidecar can rotate the 8-hour tokens without a restart',
    readableFile('holding the bearer token'),
  ),
  COMPANY_DATA_CLIENT_ID: optional(
    "Client id for the built-in client-credentials exchange (`POST /auth/v1/token` on the service's host): the worker gets its own 8-hour token, exchanges again 5 minutes before it expires and once after a 401; concurrent activities share one exchange. No sidecar needed",
    anyText,
  ),
  COMPANY_DATA_CLIENT_SECRET: optional(
    'The client secret for `COMPANY_DATA_CLIENT_ID`; as secret as the token: never logged, redacted from errors. Set this or `COMPANY_DATA_CLIENT_SECRET_FILE`',
    (text) => new Secret(text),
  ),
  COMPANY_DATA_CLIENT_SECRET_FILE: optional(
    'File holding the client secret, re-read at every exchange (so it can be rotated)',
    readableFile('holding the client secret'),
  ),
  COMPANY_DATA_REQUEST_TIMEOUT: variable('Timeout of one short service call', '30s', duration()),
  UPLOAD_IDLE_TIMEOUT: variable(
    "An upload attempt fails (and is retried) when no byte moved for this long while sending. Once every byte is sent it no longer applies: the worker waits up to 5 min for the service's answer, and never sends the file again before the job's state is known",
    '60s',
    duration(),
  ),
  S3_ENDPOINT: optional(
    'S3-compatible endpoint URL; unset means AWS. Credentials come from the AWS default chain (`AWS_ACCESS_KEY_ID`, profiles, instance roles)',
    httpUrl,
  ),
  AWS_REGION: variable('S3 region', 'us-east-1', matching(/^[a-z0-9-]{1,40}$/, 'an AWS region such as eu-west-1')),
  S3_FORCE_PATH_STYLE: optional(
    '`true` for path-style S3 URLs (s3rver, MinIO)',
    boolean,
    '`false`, `true` when `S3_ENDPOINT` is set',
  ),
  IMPORT_TENANT: variable(
    'Tenant whose daily budgets the calls count against',
    'default',
    matching(TENANT_PATTERN, TENANT_TEXT),
  ),
  IMPORT_BUDGET_WRITE_DAILY: variable(
    'Daily limit of `POST /import/v1/job` and of `PUT /import/v1/job/{id}/data`, each',
    '1200',
    wholeNumber(1, 1_000_000),
  ),
  IMPORT_BUDGET_READ_DAILY: variable('Daily limit of each import GET endpoint', '3600', wholeNumber(1, 1_000_000)),
  IMPORT_BUDGET_HEADROOM_PERCENT: variable(
    'Percent of every limit left unused for other clients of the same tenant',
    '0',
    decimal(0, 90),
  ),
  IMPORT_BUDGET_RESET_UTC: variable(
    'UTC time of day the daily windows reset, `HH:MM` (the service does not publish its import reset time)',
    '00:00',
    utcMinuteOfDay,
  ),
  IMPORT_POLL_SCHEDULE: variable(
    'Job status poll delays, comma-separated; the last one repeats',
    '5s,10s,20s,40s,60s',
    durationList,
  ),
  IMPORT_POLL_JITTER: variable('Random extra on each poll delay, as a fraction', '0.2', decimal(0, 1)),
  IMPORT_JOB_TIMEOUT: variable('How long to wait for a job to finish', '24h', duration()),
  // The spec's limit is 5 GB in decimal bytes; 5 GiB would let 368 MB too many pass preflight.
  IMPORT_MAX_FILE_BYTES: variable(
    'Largest file accepted (bytes, or with a unit: `500MB`), at most the service limit `5GB` (5,000,000,000 bytes)',
    '5GB',
    (text, name) => {
      const bytes = parseSize(text);
      return bytes !== undefined && bytes > 0 && bytes <= SERVICE_MAX_FILE_BYTES
        ? bytes
        : fail(name, 'a size from 1 byte to 5GB (the service limit), such as 500MB', text);
    },
  ),
  UPLOAD_PART_SIZE: variable('Size of each ranged S3 read of an upload', '8MiB', size),
  UPLOAD_PARALLEL_PARTS: variable(
    'Ranged S3 reads in flight per upload: `auto` starts with one and adds more whenever the PUT waited on S3 for more than 5% of its time (looked at every 2 MiB), in proportion to that wait, up to 8; a number from 1 (one sequential GET) to 32 fixes it. Parts read ahead of the PUT hold at most 16 MiB, whatever the number and the part size; an S3 that ignores Range gets one sequential GET',
    'auto',
    (text, name) => parseParallelParts(text) ?? fail(name, '`auto` or a whole number from 1 to 32', text),
  ),
  WORKER_MAX_CONCURRENT_UPLOADS: variable('Uploads one worker process runs at once', '2', wholeNumber(1, 64)),
  WORKER_MAX_CONCURRENT_ACTIVITIES: variable(
    'Short activities (status, create, mappings) one worker runs at once',
    '50',
    wholeNumber(1, 1000),
  ),
  WORKER_MAX_CONCURRENT_POLLS: variable(
    'Job completion polls one worker runs at once, on their own task queue `<queue>-polls`',
    '200',
    wholeNumber(1, 10000),
  ),
  WORKER_METRICS_PORT: variable(
    'Port of the Prometheus `/metrics` endpoint; `0` turns it off',
    '9464',
    wholeNumber(0, 65535),
  ),
  WORKER_CONNECT_TIMEOUT: variable(
    'How long a starting worker keeps trying to reach Temporal (backoff 1 s doubling to 15 s, each try logged); `0` tries once',
    '2m',
    duration({ allowZero: true }),
  ),
  WORKFLOW_BUNDLE_PATH: optional(
    'A prebuilt workflow bundle; unset: the one `npm run build` wrote beside the compiled worker, or (under tsx) bundled from source at start',
    readableFile('a workflow bundle written by npm run build'),
  ),
  LOG_LEVEL: variable(
    '`TRACE`, `DEBUG`, `INFO`, `WARN` or `ERROR`, in any case. Logs are JSON lines when stderr is not a terminal',
    'INFO',
    // Any case: `info` is as clear as `INFO`.
    (text, name) =>
      (LOG_LEVELS as readonly string[]).includes(text.toUpperCase())
        ? (text.toUpperCase() as LogLevel)
        : fail(name, `one of ${LOG_LEVELS.join(', ')}`, text),
  ),
  IMPORT_FEEDS_FILE: optional(
    'JSON file listing the nightly feeds (see [Nightly imports](#nightly-imports))',
    anyText,
    'no feeds',
  ),
} as const;

export type VariableName = keyof typeof CONFIG_VARIABLES;
type Declared = (typeof CONFIG_VARIABLES)[VariableName];
type ValueOf<K extends VariableName> = (typeof CONFIG_VARIABLES)[K] extends Variable<infer T> & { default: string }
  ? T
  : ReturnType<(typeof CONFIG_VARIABLES)[K]['parse']> | undefined;

/** The README line's "Default ..." text of a variable, or undefined when it has none. */
export function documentedDefault(name: VariableName): string | undefined {
  const v: Declared = CONFIG_VARIABLES[name];
  if ('default' in v && v.default !== undefined) return `\`${v.default}\``;
  return v.defaultNote;
}

/** A variable's text, blank counted as unset. */
function rawValue(env: Env, name: VariableName): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

/** A variable's value: its text (or its default) through its parser. */
export function readVariable<K extends VariableName>(env: Env, name: K): ValueOf<K> {
  const declared: Declared = CONFIG_VARIABLES[name];
  const text = rawValue(env, name) ?? ('default' in declared ? declared.default : undefined);
  return (text === undefined ? undefined : declared.parse(text, name)) as ValueOf<K>;
}

// ---------------------------------------------------------------------------
// Loaders: each reads only the variables its part needs.

export function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function readServiceConfig(env: Env): ServiceConfig {
  const baseUrl = readVariable(env, 'COMPANY_DATA_BASE_URL');
  if (!baseUrl) fail('COMPANY_DATA_BASE_URL', 'the service base URL, e.g. https://api.example.com');
  if (!baseUrl.startsWith('https:') && !isLoopbackUrl(baseUrl)) {
    fail('COMPANY_DATA_BASE_URL', 'https (plain http is allowed only for loopback addresses)', baseUrl);
  }
  const token = readTokenConfig(env, baseUrl);
  return {
    baseUrl,
    token,
    requestTimeoutMs: readVariable(env, 'COMPANY_DATA_REQUEST_TIMEOUT'),
    uploadIdleTimeoutMs: readVariable(env, 'UPLOAD_IDLE_TIMEOUT'),
  };
}

/** The Temporal connection by the SDK's conventions, with every value it would silently misread refused first. */
export function loadTemporalConfig(env: Env = process.env): TemporalConfig {
  // Validated here because the SDK reads them leniently: TEMPORAL_TLS=maybe would mean "off", a missing
  // TEMPORAL_CONFIG_FILE would mean "no profile".
  readVariable(env, 'TEMPORAL_TLS');
  readVariable(env, 'TEMPORAL_CONFIG_FILE');
  let connect: ReturnType<typeof loadClientConnectConfig>;
  try {
    connect = loadClientConnectConfig({ overrideEnvVars: env } as Parameters<typeof loadClientConnectConfig>[0]);
  } catch (e) {
    throw new ConfigError(
      `Temporal connection settings (TEMPORAL_* or the profile file) are invalid: ${(e as Error).message}`,
    );
  }
  const address = connect.connectionOptions.address ?? CONFIG_VARIABLES.TEMPORAL_ADDRESS.default;
  const namespace = connect.namespace ?? CONFIG_VARIABLES.TEMPORAL_NAMESPACE.default;
  return {
    connection: { ...connect.connectionOptions, address: hostAndPort(address, 'TEMPORAL_ADDRESS') },
    namespace: CONFIG_VARIABLES.TEMPORAL_NAMESPACE.parse(namespace, 'TEMPORAL_NAMESPACE'),
    taskQueue: readVariable(env, 'IMPORT_TASK_QUEUE'),
    uiUrl: readVariable(env, 'TEMPORAL_UI_URL'),
  };
}

/** What the operator CLI needs for every command: Temporal and the default tenant. */
export function loadClientConfig(env: Env = process.env): ClientConfig {
  return { temporal: loadTemporalConfig(env), tenant: readVariable(env, 'IMPORT_TENANT') };
}

export function loadBudgetSettings(env: Env = process.env): BudgetSettings {
  const write = readVariable(env, 'IMPORT_BUDGET_WRITE_DAILY');
  const read = readVariable(env, 'IMPORT_BUDGET_READ_DAILY');
  const limits = Object.fromEntries(
    (Object.keys(BUDGETED_ENDPOINTS) as BudgetedEndpoint[]).map((e) => [
      e,
      BUDGETED_ENDPOINTS[e].defaultDailyLimit === 1200 ? write : read,
    ]),
  ) as Record<BudgetedEndpoint, number>;
  return {
    limits,
    headroomPercent: readVariable(env, 'IMPORT_BUDGET_HEADROOM_PERCENT'),
    resetMinuteUtc: readVariable(env, 'IMPORT_BUDGET_RESET_UTC'),
  };
}

const TOKEN_SOURCES = ['COMPANY_DATA_TOKEN', 'COMPANY_DATA_TOKEN_FILE', 'COMPANY_DATA_CLIENT_ID'] as const;

/** Exactly one token source: two would leave a reader guessing which one the worker uses. */
function readTokenConfig(env: Env, baseUrl: string): TokenConfig {
  const given = TOKEN_SOURCES.filter((name) => rawValue(env, name) !== undefined);
  if (given.length !== 1) {
    throw new ConfigError(
      `exactly one of ${TOKEN_SOURCES.join(', ')} must be set: the worker needs one way to get its service token; ${given.length === 0 ? 'none is set' : `${given.join(' and ')} are set`}`,
    );
  }
  const tokenFile = readVariable(env, 'COMPANY_DATA_TOKEN_FILE');
  if (tokenFile) return { kind: 'file', path: tokenFile };
  const clientId = readVariable(env, 'COMPANY_DATA_CLIENT_ID');
  if (!clientId) return { kind: 'env', token: readVariable(env, 'COMPANY_DATA_TOKEN') as Secret };
  return {
    kind: 'client-credentials',
    tokenUrl: `${baseUrl}/auth/v1/token`,
    clientId,
    clientSecret: readClientSecret(env),
  };
}

function readClientSecret(env: Env): { value: Secret } | { file: string } {
  const value = readVariable(env, 'COMPANY_DATA_CLIENT_SECRET');
  const file = readVariable(env, 'COMPANY_DATA_CLIENT_SECRET_FILE');
  if ((value === undefined) === (file === undefined)) {
    throw new ConfigError(
      `exactly one of COMPANY_DATA_CLIENT_SECRET or COMPANY_DATA_CLIENT_SECRET_FILE must be set with COMPANY_DATA_CLIENT_ID; ${value === undefined ? 'neither is set' : 'both are set'}`,
    );
  }
  return value === undefined ? { file: file as string } : { value };
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
    activityTypeId: z.number().int().positive().max(2147483647).optional(),
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

/** JSON numbers above 2^53 arrive rounded: show the digits the file holds, not the rounded value. */
function unsafeSourceIdProblem(item: unknown, text: string): string | undefined {
  const sourceId = (item as { fieldMappings?: { sourceId?: unknown } })?.fieldMappings?.sourceId;
  if (typeof sourceId !== 'number' || Number.isSafeInteger(sourceId)) return undefined;
  const written = integerLiteralFor(text, sourceId) ?? String(sourceId);
  return `fieldMappings.sourceId ${written} is too large for a JSON number (it would be rounded); write it as a string: "sourceId": "${written}"`;
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

/** `auto`, or a whole number of ranged reads from 1 to 32; undefined for anything else. */
export function parseParallelParts(text: string): ParallelParts | undefined {
  const trimmed = text.trim();
  if (trimmed === 'auto') return 'auto';
  const n = Number(trimmed);
  return /^\d+$/.test(trimmed) && n >= 1 && n <= 32 ? n : undefined;
}

export interface LoadConfigOptions {
  /** Read and require the service URL and token (the worker); the CLI does without. */
  needsService?: boolean;
}

/** Where the source files are read from (the worker, and the CLI's `start` to name an import by its object version). */
export function loadS3Config(env: Env = process.env): Config['s3'] {
  const s3Endpoint = readVariable(env, 'S3_ENDPOINT');
  return {
    endpoint: s3Endpoint,
    region: readVariable(env, 'AWS_REGION'),
    forcePathStyle: readVariable(env, 'S3_FORCE_PATH_STYLE') ?? s3Endpoint !== undefined,
  };
}

/** Everything the worker reads. */
export function loadConfig(env: Env = process.env, options: LoadConfigOptions = {}): Config {
  return {
    ...loadClientConfig(env),
    service: options.needsService ? readServiceConfig(env) : undefined,
    s3: loadS3Config(env),
    budget: loadBudgetSettings(env),
    poll: {
      scheduleMs: readVariable(env, 'IMPORT_POLL_SCHEDULE'),
      jitterRatio: readVariable(env, 'IMPORT_POLL_JITTER'),
      jobTimeoutMs: readVariable(env, 'IMPORT_JOB_TIMEOUT'),
    },
    maxFileBytes: readVariable(env, 'IMPORT_MAX_FILE_BYTES'),
    upload: {
      partSizeBytes: readVariable(env, 'UPLOAD_PART_SIZE'),
      parallelParts: readVariable(env, 'UPLOAD_PARALLEL_PARTS'),
    },
    worker: {
      maxConcurrentUploads: readVariable(env, 'WORKER_MAX_CONCURRENT_UPLOADS'),
      maxConcurrentActivities: readVariable(env, 'WORKER_MAX_CONCURRENT_ACTIVITIES'),
      maxConcurrentPolls: readVariable(env, 'WORKER_MAX_CONCURRENT_POLLS'),
      metricsPort: readVariable(env, 'WORKER_METRICS_PORT'),
      workflowBundlePath: readVariable(env, 'WORKFLOW_BUNDLE_PATH'),
      connectTimeoutMs: readVariable(env, 'WORKER_CONNECT_TIMEOUT'),
      logLevel: readVariable(env, 'LOG_LEVEL'),
    },
    feeds: loadFeeds(env),
  };
}
