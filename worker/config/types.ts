/**
 * What configuration looks like once loaded: the typed values every part of
 * the product reads, never the environment's text.
 */
import type { loadClientConnectConfig } from '@temporalio/envconfig';
import type { ParallelParts } from '../../activities/s3/ranged-reader.js';
import type { BudgetedEndpoint } from '../../workflows/contracts/endpoints.js';
import type { NightlyFeed } from '../../workflows/contracts/nightly.js';
import type { Secret } from './secret.js';

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

interface FeedSchedule {
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

/** The Worker Deployment version a worker joins (Worker Versioning); absent: the worker is unversioned. */
export interface WorkerDeployment {
  deploymentName: string;
  buildId: string;
}

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

/**
 * What the CLI writes into the workflow inputs it builds (a manual start, a
 * feed's schedule) where the operator's input leaves it out: a workflow
 * cannot read configuration, and the worker never sees the input being made.
 */
export interface InputDefaults {
  tenant: string;
  jobTimeoutMs: number;
}

export interface Config extends ClientConfig {
  /** Absent unless the caller needs the service (the worker does, the CLI does not). */
  service?: ServiceConfig;
  s3: { endpoint?: string; region: string; forcePathStyle: boolean };
  budget: BudgetSettings;
  poll: { scheduleMs: number[]; jitterRatio: number };
  /** IMPORT_MAX_FILE_BYTES: absent, any size is taken (and split into parts). */
  maxFileBytes?: number;
  /** IMPORT_MAX_PART_BYTES: the most one job receives. */
  maxPartBytes: number;
  /**
   * The job records' fence (IMPORT_RECORD_LEASE, IMPORT_RECORD_LAG, IMPORT_DELIVERY_BOUND) and how often a
   * waiting record looks for a new current release (IMPORT_RECORD_RELEASE_CHECK): given to each record the worker starts.
   */
  jobRecord: { leaseMs: number; lagMs: number; deliveryBoundMs: number; releaseCheckMs: number };
  upload: { partSizeBytes: number; parallelParts: ParallelParts };
  worker: {
    maxConcurrentUploads: number;
    maxConcurrentActivities: number;
    /** Job completion polls one worker runs at once: each mostly sleeps between GETs. */
    maxConcurrentPolls: number;
    /** 0 turns the Prometheus endpoint off. */
    metricsPort: number;
    /** 0 turns /healthz and /readyz off. */
    healthPort: number;
    /** The IP address the metrics and health endpoints listen on. */
    httpHost: string;
    /** A prebuilt workflow bundle; absent: the one npm run build wrote beside the compiled worker, else bundled from source. */
    workflowBundlePath?: string;
    /** How long a starting worker keeps retrying to reach Temporal; 0 tries once. */
    connectTimeoutMs: number;
    /** maxHeartbeatThrottleInterval: how soon a pause or reset from the Temporal UI reaches a running attempt. */
    heartbeatThrottleMs: number;
    logLevel: LogLevel;
    /** Set: the worker polls as this deployment version; absent: as today, unversioned. */
    deployment?: WorkerDeployment;
    /** The operator's webhook for failures and operator waits; absent: no notifications. */
    notify?: { url: string; secretFile?: string };
    /** The OpenTelemetry collector's OTLP/HTTP endpoint; absent: no traces. */
    otlpEndpoint?: string;
  };
  feeds: FeedConfig[];
}

/** The environment as loaders read it: the process environment, or a test's own. */
export type Env = Record<string, string | undefined>;
