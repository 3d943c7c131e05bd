/**
 * Loaders of the parts of configuration: each reads only the variables its
 * part needs, so a typo in a worker setting never blocks an operator's
 * `status`. `loadConfig` (in temporal.config.ts) puts the parts together.
 */
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { dailyLimitsByClass } from '../../workflows/contracts/endpoints.js';
import { CONFIG_VARIABLES, rawValue, readVariable } from './declarations.js';
import { ConfigError } from './errors.js';
import { hostAndPort } from './parsers.js';
import type {
  BudgetSettings,
  ClientConfig,
  Config,
  Env,
  InputDefaults,
  TemporalConfig,
  WorkerDeployment,
} from './types.js';

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

/** What `start` and the schedules put into the inputs they build when the operator's leave it out. */
export function loadInputDefaults(env: Env = process.env): InputDefaults {
  return { tenant: readVariable(env, 'IMPORT_TENANT'), jobTimeoutMs: readVariable(env, 'IMPORT_JOB_TIMEOUT') };
}

export function loadBudgetSettings(env: Env = process.env): BudgetSettings {
  return {
    limits: dailyLimitsByClass({
      write: readVariable(env, 'IMPORT_BUDGET_WRITE_DAILY'),
      read: readVariable(env, 'IMPORT_BUDGET_READ_DAILY'),
    }),
    headroomPercent: readVariable(env, 'IMPORT_BUDGET_HEADROOM_PERCENT'),
    resetMinuteUtc: readVariable(env, 'IMPORT_BUDGET_RESET_UTC'),
  };
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

const DEPLOYMENT_VARIABLES = ['WORKER_DEPLOYMENT_NAME', 'WORKER_BUILD_ID'] as const;

/** Both variables, or neither: one alone would leave the worker half in a deployment. */
export function loadWorkerDeployment(env: Env = process.env): WorkerDeployment | undefined {
  const given = DEPLOYMENT_VARIABLES.filter((name) => rawValue(env, name) !== undefined);
  if (given.length === 0) return undefined;
  if (given.length === 1) {
    const missing = DEPLOYMENT_VARIABLES.find((name) => name !== given[0]);
    throw new ConfigError(
      `WORKER_DEPLOYMENT_NAME and WORKER_BUILD_ID must be set together (Worker Versioning) or both left unset; ${given[0]} is set, ${missing} is not`,
    );
  }
  return {
    deploymentName: readVariable(env, 'WORKER_DEPLOYMENT_NAME') as string,
    buildId: readVariable(env, 'WORKER_BUILD_ID') as string,
  };
}

/** The notification webhook; a secret file with no webhook to sign for is a mistake worth a clear line. */
export function loadNotifyWebhook(env: Env = process.env): Config['worker']['notify'] {
  const url = readVariable(env, 'NOTIFY_WEBHOOK_URL');
  const secretFile = readVariable(env, 'NOTIFY_WEBHOOK_SECRET_FILE');
  if (url === undefined) {
    if (secretFile !== undefined) {
      throw new ConfigError(
        'NOTIFY_WEBHOOK_SECRET_FILE is set but NOTIFY_WEBHOOK_URL is not: set the webhook, or unset the secret file',
      );
    }
    return undefined;
  }
  return secretFile === undefined ? { url } : { url, secretFile };
}
