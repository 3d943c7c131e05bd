/**
 * The whole product for the browser tests, as an operator meets it: the full
 * stack (test/support/full-stack.ts) with the dev server's Web UI and one
 * in-process worker. The test asks the simulator what it received over its /__sim/
 * HTTP inspection API, as an operator's tooling would.
 */
import type { Client } from '@temporalio/client';
import type { LocalS3 } from '../../worker/demo/local-s3.js';
import type { ChaosOptions, JobRecord, RequestRecord, ServiceRecord } from '../simulator/server.js';
import { startFullStack } from '../support/full-stack.js';

export const BUCKET = 'crm-drops';

export interface UiStack {
  temporal: { uiUrl: string };
  client: Client;
  namespace: string;
  taskQueue: string;
  s3: LocalS3;
  sim: SimulatorInspection;
  stop(): Promise<void>;
}

/** The simulator as seen from outside its process: GET and POST under /__sim/. */
interface SimulatorInspection {
  baseUrl: string;
  jobs(): Promise<JobRecord[]>;
  requests(): Promise<RequestRecord[]>;
  /** What it committed: per job the complete bodies it accepted, per name key the jobs made. */
  record(): Promise<ServiceRecord>;
  /** Any queued fault of test/simulator/faults.ts, e.g. `{ kind: 'delayNext', endpoint: 'createJob', ms: 20000 }`. */
  fault(fault: { kind: string } & Record<string, unknown>): Promise<void>;
  /** Seeded random faults for every request (test/simulator/chaos.ts); null turns them off. */
  chaos(options: ChaosOptions | null): Promise<void>;
  failNext(endpoint: string, status: number): Promise<void>;
  clearFaults(): Promise<void>;
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
    fault: async (fault) => void (await call('POST', 'faults', fault)),
    chaos: async (options) => void (await call('POST', 'chaos', { chaos: options })),
    failNext: async (endpoint, status) => void (await call('POST', 'faults', { kind: 'failNext', endpoint, status })),
    clearFaults: async () => void (await call('POST', 'reset-faults')),
  };
}

interface StackOptions {
  /** Time from an accepted upload to a completed job in the simulator. */
  processingMs: number;
  /** Worker settings of this file on top of the ones every browser test gets. */
  workerEnv?: Record<string, string>;
}

export async function startStack(options: StackOptions): Promise<UiStack> {
  // The failures these tests cause on purpose would each log a WARN with a stack: the SDK logs errors only.
  const stack = await startFullStack({
    bucket: BUCKET,
    name: 'ui',
    webUi: true,
    sdkLogLevel: 'ERROR',
    simulator: { processingMs: options.processingMs },
    // The spec's 60 s poll ceiling is the 1 s schedule's last delay.
    timeCompression: 60,
    workerEnv: {
      IMPORT_POLL_SCHEDULE: '500ms,1s',
      LOG_LEVEL: 'WARN',
      // An operator's pause or reset reaches the running attempt within a second (docs/operating.md "Activity controls").
      WORKER_HEARTBEAT_THROTTLE: '1s',
      ...options.workerEnv,
    },
  });
  try {
    await stack.startWorker();
  } catch (err) {
    await stack.close();
    throw err;
  }
  return {
    temporal: { uiUrl: stack.uiUrl as string },
    client: stack.env.client,
    namespace: stack.namespace,
    taskQueue: stack.taskQueue,
    s3: stack.s3,
    sim: inspection(stack.sim.baseUrl),
    stop: () => stack.close(),
  };
}
