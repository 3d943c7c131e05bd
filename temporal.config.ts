/**
 * The one place configuration is read. Everything comes from the environment
 * (plus the files it names), is validated once, and is typed everywhere after.
 * A missing or malformed value stops start-up with one line naming the
 * variable, what it expects and what it got.
 *
 * Start here: `loadConfig` below shows every part and the variables it comes
 * from. The pieces live in worker/config/, one idea a file:
 *   declarations.ts  each variable once: documented text, default, parser and range
 *   parsers.ts, units.ts  reading a variable's text (durations, sizes, URLs, ...)
 *   load.ts          the Temporal connection, the tenant, budgets, S3, the Worker Deployment,
 *                    what the CLI writes into the inputs it builds (tenant, job timeout)
 *   service.ts       the service URL and its one token source
 *   feeds.ts         IMPORT_FEEDS_FILE, checked by the import input's own rules
 *   secret.ts, errors.ts, types.ts
 * Loaders read only the variables their caller uses, so a typo in a worker
 * setting never blocks an operator's `status`.
 */
import { readVariable } from './worker/config/declarations.js';
import { loadFeeds } from './worker/config/feeds.js';
import {
  loadBudgetSettings,
  loadClientConfig,
  loadNotifyWebhook,
  loadS3Config,
  loadWorkerDeployment,
} from './worker/config/load.js';
import { readServiceConfig } from './worker/config/service.js';
import type { Config, Env } from './worker/config/types.js';

export {
  CONFIG_VARIABLES,
  declaredDefault,
  documentedDefault,
  type VariableName,
} from './worker/config/declarations.js';
export { ConfigError } from './worker/config/errors.js';
export { loadFeeds } from './worker/config/feeds.js';
export {
  loadBudgetSettings,
  loadClientConfig,
  loadInputDefaults,
  loadS3Config,
  loadTemporalConfig,
  loadWorkerDeployment,
} from './worker/config/load.js';
export { Secret } from './worker/config/secret.js';
export type {
  Config,
  FeedConfig,
  InputDefaults,
  LogLevel,
  TemporalConfig,
  TokenConfig,
  WorkerDeployment,
} from './worker/config/types.js';
export { parseDuration, parseParallelParts, parseSize } from './worker/config/units.js';

interface LoadConfigOptions {
  /** Read and require the service URL and token (the worker); the CLI does without. */
  needsService?: boolean;
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
    },
    maxFileBytes: readVariable(env, 'IMPORT_MAX_FILE_BYTES'),
    maxPartBytes: readVariable(env, 'IMPORT_MAX_PART_BYTES'),
    jobRecord: {
      leaseMs: readVariable(env, 'IMPORT_RECORD_LEASE'),
      lagMs: readVariable(env, 'IMPORT_RECORD_LAG'),
      deliveryBoundMs: readVariable(env, 'IMPORT_DELIVERY_BOUND'),
      releaseCheckMs: readVariable(env, 'IMPORT_RECORD_RELEASE_CHECK'),
    },
    upload: {
      partSizeBytes: readVariable(env, 'UPLOAD_PART_SIZE'),
      parallelParts: readVariable(env, 'UPLOAD_PARALLEL_PARTS'),
    },
    worker: {
      maxConcurrentUploads: readVariable(env, 'WORKER_MAX_CONCURRENT_UPLOADS'),
      maxConcurrentActivities: readVariable(env, 'WORKER_MAX_CONCURRENT_ACTIVITIES'),
      maxConcurrentPolls: readVariable(env, 'WORKER_MAX_CONCURRENT_POLLS'),
      metricsPort: readVariable(env, 'WORKER_METRICS_PORT'),
      healthPort: readVariable(env, 'WORKER_HEALTH_PORT'),
      httpHost: readVariable(env, 'WORKER_HTTP_HOST'),
      workflowBundlePath: readVariable(env, 'WORKFLOW_BUNDLE_PATH'),
      connectTimeoutMs: readVariable(env, 'WORKER_CONNECT_TIMEOUT'),
      heartbeatThrottleMs: readVariable(env, 'WORKER_HEARTBEAT_THROTTLE'),
      logLevel: readVariable(env, 'LOG_LEVEL'),
      deployment: loadWorkerDeployment(env),
      notify: loadNotifyWebhook(env),
      otlpEndpoint: readVariable(env, 'OTEL_EXPORTER_OTLP_ENDPOINT'),
    },
    feeds: loadFeeds(env),
  };
}
