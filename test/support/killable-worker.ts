/**
 * Worker processes that a test kills (SIGKILL), freezes (SIGSTOP) or cuts
 * off from Temporal while they still reach the service and S3, and the one
 * way to start an import for them. The pool remembers what it did to each
 * process, so `close()` thaws, reconnects and kills whatever is left: a frozen
 * worker never outlives its test, and a test cannot forget one.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { ImportFileInput } from '../../workflows/contracts/import-input.js';
import type { importFile } from '../../workflows/import-file.js';
import type { FullStack } from './full-stack.js';
import { simRequests } from './sim-inspect.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';
import { startWorkerProcess, type WorkerProcess } from './worker-process.js';

export type ImportHandle = WorkflowHandle<typeof importFile>;

export interface KillableWorker extends WorkerProcess {
  /** SIGSTOP: to Temporal and the service alike, the process simply stops answering. */
  freeze(): void;
  /** SIGCONT. */
  thaw(): void;
  /** Drops its connections to Temporal and refuses new ones (a worker started `behindProxy` only). */
  cutOff(): void;
  reconnect(): void;
}

export interface WorkerStartOptions {
  /** Worker variables on top of the stack's. */
  env?: Record<string, string>;
  /** Reach Temporal only through a proxy the test can cut (the service and S3 stay reachable). */
  behindProxy?: boolean;
  /** How long a claimed sweep round is left to its holder (default: the pool's, else the real minute). */
  sweepLeaseMs?: number;
  /** How long a task of a workflow cached in the process waits for it (default: the SDK's). */
  stickyQueueTimeoutMs?: number;
}

export interface WorkerPool {
  start(options?: WorkerStartOptions): Promise<KillableWorker>;
  /** Thaws, reconnects and kills every process started here; closes the proxies. */
  close(): Promise<void>;
}

/** `sweepLeaseMs`: how long a claimed sweep round is left to its holder in every process (default: the product's). */
export function workerPool(stack: FullStack, settings: { sweepLeaseMs?: number } = {}): WorkerPool {
  const started: { worker: KillableWorker; proxy?: TcpProxy }[] = [];
  return {
    async start(options = {}) {
      const proxy = options.behindProxy ? await startTcpProxy(portOf(stack.env.address)) : undefined;
      const env = { ...options.env, ...(proxy ? { TEMPORAL_ADDRESS: `127.0.0.1:${proxy.port}` } : {}) };
      const timings = {
        sweepLeaseMs: options.sweepLeaseMs ?? settings.sweepLeaseMs,
        stickyQueueTimeoutMs: options.stickyQueueTimeoutMs,
      };
      const child = await startWorkerProcess(stack.workerEnv(env), stack.timeCompression, timings).catch(
        async (err: unknown) => {
          await proxy?.close();
          throw err;
        },
      );
      const worker = killable(child, proxy);
      started.push({ worker, proxy });
      return worker;
    },
    async close() {
      for (const { worker, proxy } of started) {
        proxy?.restore();
        worker.thaw();
      }
      await Promise.allSettled(started.map(({ worker }) => worker.kill()));
      await Promise.allSettled(started.map(({ proxy }) => proxy?.close()));
    },
  };
}

function killable(child: WorkerProcess, proxy: TcpProxy | undefined): KillableWorker {
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(child.pid, name);
    } catch {
      // Already gone.
    }
  };
  const needProxy = (): TcpProxy => {
    if (!proxy) throw new Error('this worker reaches Temporal directly: start it with behindProxy to cut it off');
    return proxy;
  };
  return {
    pid: child.pid,
    identity: child.identity,
    output: () => child.output(),
    kill: () => child.kill(),
    stop: () => child.stop(),
    freeze: () => signal('SIGSTOP'),
    thaw: () => signal('SIGCONT'),
    cutOff: () => needProxy().cut(),
    reconnect: () => needProxy().restore(),
  };
}

function portOf(address: string): number {
  const port = Number(address.slice(address.lastIndexOf(':') + 1));
  if (!Number.isInteger(port) || port <= 0) throw new Error(`no port in the Temporal address ${address}`);
  return port;
}

/**
 * Starts an import of an accounts file of the stack's bucket. The workflow id
 * (`<name>-<key>-<uuid>`) also stands in the job's name, so jobsNamed finds
 * its jobs. No tenant in the input: it counts against the workers' own.
 */
export function startImport(stack: FullStack, key: string, name: string): Promise<ImportHandle> {
  const workflowId = `${name}-${key}-${randomUUID()}`;
  return stack.env.client.workflow.start<typeof importFile>('importFile', {
    taskQueue: stack.taskQueue,
    workflowId,
    args: [
      {
        source: { bucket: stack.bucket, key },
        dataImportName: `${name} ${workflowId}`,
        entityType: 'Account',
        listAction: 'insert',
      } satisfies ImportFileInput,
    ],
  });
}

/** Every data PUT the service saw for one job, in order, whatever it answered. */
export async function putsTo(stack: FullStack, jobId: string) {
  return (await simRequests(stack.sim.baseUrl)).filter((r) => r.path === `/import/v1/job/${jobId}/data`);
}
