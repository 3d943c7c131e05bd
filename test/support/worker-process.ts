/**
 * The worker as `npm start` runs it, in its own OS process, configured only
 * by environment variables; started through test/support/worker-main.ts so
 * that the test's compression of service time reaches it (run from the run's
 * transpiled copy, compiled-source.ts). A test can wait until it polls,
 * kill it with SIGKILL (no graceful anything), or stop it with SIGTERM.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { nodeArgsFor } from './compiled-source.js';

const MAIN = fileURLToPath(new URL('./worker-main.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface WorkerProcess {
  readonly pid: number;
  /** The identity the Temporal SDK gives this process's workers (`pid@host`), as histories record it. */
  readonly identity: string;
  /** Everything the process wrote to stderr (its JSON log lines). */
  output(): string;
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/** The inherited environment without any of the product's own variables, plus `env`. */
function processEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(TEMPORAL_|IMPORT_|COMPANY_DATA_|WORKER_|UPLOAD_|S3_|AWS_|LOG_LEVEL)/.test(k)) out[k] = v;
  }
  return { ...out, ...env };
}

/** What a test may shorten in a worker process; each left out keeps the product's. */
export interface TestWorkerTimings {
  /** How long a claimed sweep round is left to its holder. */
  sweepLeaseMs?: number;
  /** How long a task of a workflow cached in the process waits for it before any worker may take it. */
  stickyQueueTimeoutMs?: number;
}

/**
 * Starts the worker process and resolves once its workers poll; rejects if it
 * exits first. `timeCompression`: service time runs that many times faster (1: not at all).
 */
export async function startWorkerProcess(
  env: Record<string, string>,
  timeCompression = 1,
  timings: TestWorkerTimings = {},
): Promise<WorkerProcess> {
  const arg = (ms: number | undefined) => (ms === undefined ? '-' : String(ms));
  const args = [String(timeCompression), arg(timings.sweepLeaseMs), arg(timings.stickyQueueTimeoutMs)];
  const child = spawn(process.execPath, [...nodeArgsFor(MAIN), ...args], {
    cwd: ROOT,
    env: processEnv({ LOG_LEVEL: 'INFO', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const onData = () => {
      if (output.includes('Worker polling')) {
        child.stderr?.off('data', onData);
        child.off('exit', onExit);
        resolve();
      }
    };
    const onExit = (code: number | null) =>
      reject(new Error(`worker process exited (${code}) before polling:\n${output.slice(-2000)}`));
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
  });
  const pid = child.pid as number;
  return {
    pid,
    identity: `${pid}@${hostname()}`,
    output: () => output,
    kill: () => signalAndWait(child, 'SIGKILL', exited),
    stop: () => signalAndWait(child, 'SIGTERM', exited),
  };
}

async function signalAndWait(child: ChildProcess, signal: NodeJS.Signals, exited: Promise<void>): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  await exited;
}
