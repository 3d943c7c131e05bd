/**
 * The whole product for the browser tests, as an operator meets it: a Temporal
 * dev server with its Web UI (the binary found as the demo finds it), s3rver,
 * the service simulator and the real worker (runWorker, configuration from
 * loadConfig). The test asks the simulator what it received over its /__sim/
 * HTTP inspection API, as an operator's tooling would.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '../../temporal.config.js';
import { type LocalS3, S3RVER_CREDENTIALS, startLocalS3 } from '../../worker/demo/local-s3.js';
import { type LocalTemporal, startDevServer } from '../../worker/demo/local-temporal.js';
import { runWorker } from '../../worker/process/run-worker.js';
import {
  type ChaosOptions,
  DEMO_TOKENS,
  type JobRecord,
  type RequestRecord,
  type ServiceRecord,
  startSimulator,
} from '../simulator/server.js';

export const BUCKET = 'crm-drops';

export interface UiStack {
  temporal: LocalTemporal & { uiUrl: string };
  client: Client;
  namespace: string;
  taskQueue: string;
  s3: LocalS3;
  sim: SimulatorInspection;
  stop(): Promise<void>;
}

/** The simulator as seen from outside its process: GET and POST under /__sim/. */
export interface SimulatorInspection {
  baseUrl: string;
  jobs(): Promise<JobRecord[]>;
  requests(): Promise<RequestRecord[]>;
  /** What it committed: per job the complete bodies it accepted, per name key the jobs made. */
  record(): Promise<ServiceRecord>;
  failNext(endpoint: string, status: number): Promise<void>;
  /** Any queued fault of test/simulator/faults.ts, e.g. `{ kind: 'delayNext', endpoint: 'createJob', ms: 20000 }`. */
  fault(fault: { kind: string } & Record<string, unknown>): Promise<void>;
  clearFaults(): Promise<void>;
  /** Seeded random faults for every request (test/simulator/chaos.ts); null turns them off. */
  chaos(options: ChaosOptions | null): Promise<void>;
}

function inspection(baseUrl: string): SimulatorInspection {
  const call = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const res = await fetch(`${baseUrl}/__sim/${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`simulator ${method} /__sim/${path} answered ${res.status}: ${await res.text()}`);
    return res.status === 204 ? undefined : res.json();
  };
  return {
    baseUrl,
    jobs: () => call('GET', 'jobs') as Promise<JobRecord[]>,
    requests: () => call('GET', 'requests') as Promise<RequestRecord[]>,
    record: () => call('GET', 'record') as Promise<ServiceRecord>,
    failNext: async (endpoint, status) => void (await call('POST', 'faults', { kind: 'failNext', endpoint, status })),
    fault: async (fault) => void (await call('POST', 'faults', fault)),
    chaos: async (options) => void (await call('POST', 'chaos', { chaos: options })),
    clearFaults: async () => void (await call('POST', 'reset-faults')),
  };
}

export interface StackOptions {
  /** Time from an accepted upload to a completed job in the simulator. */
  processingMs: number;
}

let runtimeInstalled = false;

/** The failures these tests cause on purpose would each log a WARN with a stack: log errors only. */
function installQuietRuntime(): void {
  if (runtimeInstalled) return;
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  runtimeInstalled = true;
}

export async function startStack(options: StackOptions): Promise<UiStack> {
  installQuietRuntime();
  const stops: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  try {
    const temporal = await startDevServer(process.env);
    stops.push(() => temporal.env.teardown());
    const s3 = await startLocalS3({ buckets: [BUCKET] });
    stops.push(() => s3.close());
    const simulator = await startSimulator({ processingMs: options.processingMs });
    stops.push(() => simulator.close());

    // The worker reads S3 credentials from the AWS default chain, as in production.
    process.env.AWS_ACCESS_KEY_ID = S3RVER_CREDENTIALS.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = S3RVER_CREDENTIALS.secretAccessKey;
    const taskQueue = `ui-${randomUUID()}`;
    const config = loadConfig(
      {
        TEMPORAL_ADDRESS: temporal.address,
        TEMPORAL_NAMESPACE: temporal.namespace,
        COMPANY_DATA_BASE_URL: simulator.baseUrl,
        COMPANY_DATA_TOKEN: DEMO_TOKENS.importer,
        S3_ENDPOINT: s3.endpoint,
        IMPORT_TASK_QUEUE: taskQueue,
        IMPORT_POLL_SCHEDULE: '500ms,1s',
        WORKER_METRICS_PORT: '0',
        // An operator's pause or reset reaches the running attempt within a second (README "Activity controls").
        WORKER_HEARTBEAT_THROTTLE: '1s',
        LOG_LEVEL: 'WARN',
      },
      { needsService: true },
    );
    const stopWorker = new AbortController();
    const worker = runWorker({
      config,
      connection: temporal.env.nativeConnection,
      client: temporal.env.client,
      signal: stopWorker.signal,
    });
    stops.push(async () => {
      stopWorker.abort();
      await worker;
    });
    return {
      temporal,
      client: temporal.env.client,
      namespace: temporal.namespace,
      taskQueue,
      s3,
      sim: inspection(simulator.baseUrl),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
