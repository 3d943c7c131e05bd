/**
 * Every environment variable, declared once: its documented text, its
 * default and its parser (which holds its range). The configuration table in
 * docs/configuration.md is checked against these entries, defaults included,
 * and nothing else in the product writes a default of its own: other code
 * reads `declaredDefault`.
 */

import { TENANT_PATTERN } from '../../workflows/contracts/import-input.js';
import { DEFAULT_JOB_TIMEOUT_MS } from '../../workflows/contracts/import-workflow.js';
import { DEFAULT_JOB_RECORD_SETTINGS } from '../../workflows/contracts/job-record.js';
import { DEFAULT_POLL_SCHEDULE_MS } from '../../workflows/poll-schedule.js';
import { fail } from './errors.js';
import {
  anyText,
  boolean,
  decimal,
  duration,
  durationList,
  durationWithin,
  hostAndPort,
  httpUrl,
  ipAddress,
  matching,
  type Parse,
  readableFile,
  sdkBoolean,
  size,
  utcMinuteOfDay,
  wholeNumber,
} from './parsers.js';
import { Secret } from './secret.js';
import { tokenFile, tokenText } from './token-check.js';
import { type Env, LOG_LEVELS, type LogLevel } from './types.js';
import { durationText, parseParallelParts, parseSize } from './units.js';

interface Variable<T> {
  /** The description in docs/configuration.md (the default is added from `default`). */
  doc: string;
  /** The default as an operator would write it; absent means unset is allowed and means "none". */
  default?: string;
  /** When the default depends on another variable, the docs say so instead. */
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

/** Every variable configuration reads: docs/configuration.md is checked against it. */
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
    tokenText,
  ),
  COMPANY_DATA_TOKEN_FILE: optional(
    'File holding the token, re-read whenever it changes, so a sidecar can rotate the 8-hour tokens without a restart. A file that is empty, unreadable or holds more than one token stops start-up',
    tokenFile,
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
  // The workflow sandbox cannot read configuration, yet needs this schedule (its length places a resumed
  // poll at the slowest rate): the numbers live in the workflow's policy, and the declaration shows them.
  IMPORT_POLL_SCHEDULE: variable(
    'Job status poll delays, comma-separated; the last one repeats',
    DEFAULT_POLL_SCHEDULE_MS.map(durationText).join(','),
    durationList,
  ),
  IMPORT_POLL_JITTER: variable('Random extra on each poll delay, as a fraction', '0.2', decimal(0, 1)),
  // Read by the CLI, never by the worker: a workflow cannot read configuration, so `start` and the schedules
  // write it into the inputs they build. Its default is importFile's own for an input that names none.
  IMPORT_JOB_TIMEOUT: variable(
    "How long an import waits for its job to finish before it fails `JobTimedOut`. Read by `import-worker start` and `schedules apply`, which write it into the inputs they build (`jobTimeoutMs`, unless the input names one; for a feed, every night's imports); the worker does not read it, so an import started any other way (`temporal workflow start`) waits as its input says, or the default",
    durationText(DEFAULT_JOB_TIMEOUT_MS),
    duration(),
  ),
  IMPORT_MAX_FILE_BYTES: optional(
    'Largest source object accepted (bytes, or with a unit: `20GB`); a larger one is refused before any call (`FileTooLarge`). Unset, any size is taken: a body larger than `IMPORT_MAX_PART_BYTES` is split into several jobs, so this only bounds how many',
    (text, name) => {
      const bytes = parseSize(text);
      return bytes !== undefined && bytes > 0 ? bytes : fail(name, 'a size of at least 1 byte, such as 20GB', text);
    },
  ),
  // The spec's limit is 5 GB in decimal bytes; 5 GiB would let 368 MB too many into one job.
  IMPORT_MAX_PART_BYTES: variable(
    'Most bytes one job receives (bytes, or with a unit: `500MB`), at most the service limit `5GB` (5,000,000,000 bytes). A file whose body (after decompression and conversion) is larger is split at row boundaries into parts of at most this size, each with the header, each its own job',
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
  // The fence's two times: a record keeps the ones of the worker that started it (see the record's settings).
  IMPORT_RECORD_LEASE: variable(
    "How long a confirm from an object version's job record lets one attempt send the last bytes of a create or an upload; an attempt that takes over waits this plus `IMPORT_DELIVERY_BOUND` and `IMPORT_RECORD_LAG` after the last confirm. A record keeps the value of the worker that started it. From 2s (the fence keeps 1 s in hand) to 10m",
    durationText(DEFAULT_JOB_RECORD_SETTINGS.leaseMs),
    durationWithin(2_000, 10 * 60_000, '2s to 10m'),
  ),
  IMPORT_RECORD_LAG: variable(
    'How late the service may commit what it received and, again, list a job it made: an upload that takes over waits it once, the search after an uncertain create twice. A record keeps the value of the worker that started it. From 0 to 1h',
    durationText(DEFAULT_JOB_RECORD_SETTINGS.lagMs),
    durationWithin(0, 60 * 60_000, '0 to 1h'),
  ),
  IMPORT_DELIVERY_BOUND: variable(
    "The fence's one assumption: bytes that left a worker (its socket, the kernel's retransmissions, a proxy, a slow reader at the service) reach the service within this long or never. Every takeover of a create or an upload whose last bytes may have left waits it, on top of `IMPORT_RECORD_LEASE` and `IMPORT_RECORD_LAG`. The default covers Linux's TCP retransmissions (given up after about 15.4 min); set it above the longest a proxy on the way may hold a request. A record keeps the value of the worker that started it. From 0 to 1h",
    `${DEFAULT_JOB_RECORD_SETTINGS.deliveryBoundMs / 60_000}m`,
    durationWithin(0, 60 * 60_000, '0 to 1h'),
  ),
  IMPORT_RECORD_RELEASE_CHECK: variable(
    "Under Worker Versioning, how often an object version's job record that waits (its job failed or not yet done) wakes to see whether another release became current, and moves to it: the longest it keeps an old release from draining. A record keeps the value of the worker that started it. From 1s to 1d",
    durationText(DEFAULT_JOB_RECORD_SETTINGS.releaseCheckMs),
    durationWithin(1_000, 86_400_000, '1s to 1d'),
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
  WORKER_HEALTH_PORT: variable(
    'Port of the `/healthz` (alive) and `/readyz` (ready: Temporal, pollers, token, budget ledger) endpoints; `0` turns them off. Must differ from `WORKER_METRICS_PORT`',
    '9465',
    wholeNumber(0, 65535),
  ),
  WORKER_HTTP_HOST: variable(
    'IP address the metrics and health endpoints listen on: `0.0.0.0` every IPv4 interface (what a container needs), `127.0.0.1` this machine only, `::` every interface',
    '0.0.0.0',
    ipAddress,
  ),
  WORKER_CONNECT_TIMEOUT: variable(
    'How long a starting worker keeps trying to reach Temporal (backoff 1 s doubling to 15 s, each try logged); `0` tries once',
    '2m',
    duration({ allowZero: true }),
  ),
  // The SDK holds heartbeats for up to min(0.8 x heartbeat timeout, this): an operator's pause or reset in the
  // Temporal UI reaches a running attempt only with its next sent heartbeat, 48 s later with the SDK's 60 s.
  WORKER_HEARTBEAT_THROTTLE: variable(
    'Longest a running activity holds back its heartbeat; a pause or reset from the Temporal UI reaches a running upload, create or job wait within this (see [Activity controls in the Temporal UI](operating.md#activity-controls-in-the-temporal-ui)). Shorter means more heartbeat calls to Temporal',
    '5s',
    duration(),
  ),
  WORKFLOW_BUNDLE_PATH: optional(
    'A prebuilt workflow bundle; unset: the one `npm run build` wrote beside the compiled worker, or (under tsx) bundled from source at start',
    readableFile('a workflow bundle written by npm run build'),
  ),
  // Worker Versioning: both or neither (checked together by loadWorkerDeployment). The server refuses a
  // deployment name with '.' or ':' and either name starting with '__'.
  WORKER_DEPLOYMENT_NAME: optional(
    'Worker Deployment this worker joins, with `WORKER_BUILD_ID` (set both or neither): imports and nights stay on the version that started them, the ledger and the mapping lock move to the current version when they continue as new; see [Deploy a new version](deploying.md#deploy-a-new-version)',
    matching(
      /^(?!__)[A-Za-z0-9_-]{1,200}$/,
      '1-200 letters, digits, "_" or "-" (no "." or ":"), not starting with "__"',
    ),
    'unversioned',
  ),
  WORKER_BUILD_ID: optional(
    "This release's build id within `WORKER_DEPLOYMENT_NAME` (an image tag, a git sha); a release whose workflow code differs needs a new one",
    matching(/^(?!__)[A-Za-z0-9._+-]{1,200}$/, '1-200 letters, digits, ".", "_", "+" or "-", not starting with "__"'),
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
  NOTIFY_WEBHOOK_URL: optional(
    'Webhook that gets a notification when an import fails, an import waits for an operator, or a night ends with failures: Slack-compatible JSON, sent at least once, a repeat carrying the same `event.id` and `Idempotency-Key`. Unset: no notifications. Never logged (a Slack URL is itself a secret)',
    httpUrl,
    'no notifications',
  ),
  NOTIFY_WEBHOOK_SECRET_FILE: optional(
    'File holding a shared secret: each notification then carries `X-Signature-256: sha256=<HMAC-SHA256 of the body>`. Re-read at every send, so it can be rotated; never sent',
    readableFile('holding the webhook secret'),
    'unsigned',
  ),
  OTEL_EXPORTER_OTLP_ENDPOINT: optional(
    'OTLP/HTTP endpoint of an OpenTelemetry collector (e.g. `http://collector:4318`; spans go to `/v1/traces`): each import is then one trace across the client start, the workflow and its activities. Unset: no traces',
    httpUrl,
    'no traces',
  ),
  IMPORT_FEEDS_FILE: optional(
    'JSON file listing the nightly feeds (see [Nightly imports](operating.md#nightly-imports))',
    anyText,
    'no feeds',
  ),
} as const;

export type VariableName = keyof typeof CONFIG_VARIABLES;
type Declared = (typeof CONFIG_VARIABLES)[VariableName];
type ValueOf<K extends VariableName> = (typeof CONFIG_VARIABLES)[K] extends Variable<infer T> & { default: string }
  ? T
  : ReturnType<(typeof CONFIG_VARIABLES)[K]['parse']> | undefined;
/** The variables that have a default (the others mean "none" when unset). */
type DefaultedName = {
  [K in VariableName]: (typeof CONFIG_VARIABLES)[K] extends { default: string } ? K : never;
}[VariableName];

/** The docs' "Default ..." text of a variable, or undefined when it has none. */
export function documentedDefault(name: VariableName): string | undefined {
  const v: Declared = CONFIG_VARIABLES[name];
  if ('default' in v && v.default !== undefined) return `\`${v.default}\``;
  return v.defaultNote;
}

/** A variable's text, blank counted as unset. */
export function rawValue(env: Env, name: VariableName): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

/** A variable's value: its text (or its default) through its parser. */
export function readVariable<K extends VariableName>(env: Env, name: K): ValueOf<K> {
  const declared: Declared = CONFIG_VARIABLES[name];
  const text = rawValue(env, name) ?? ('default' in declared ? declared.default : undefined);
  return (text === undefined ? undefined : declared.parse(text, name)) as ValueOf<K>;
}

/** A variable's default as its parsed value, for code that runs without configuration (tests, a bare client). */
export function declaredDefault<K extends DefaultedName>(name: K): ValueOf<K> {
  return readVariable({}, name);
}
