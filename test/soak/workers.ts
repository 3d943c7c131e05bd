/**
 * The compiled worker (`node dist/worker/process/main.js`, as `npm start` runs it, from the
 * soak's own copy of dist/) in
 * several OS processes, configured only by environment variables, each
 * reaching Temporal through its own cuttable proxy. The soak kills them with
 * SIGKILL (and starts them again), freezes them with SIGSTOP (and thaws them
 * with SIGCONT). Every process's stderr goes to its own log file.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TcpProxy } from '../support/tcp-proxy.js';

export const ROOT = join(import.meta.dirname, '..', '..');

export interface SoakWorker {
  readonly index: number;
  readonly proxy: TcpProxy;
  readonly running: boolean;
  readonly stopped: boolean;
  readonly logFiles: string[];
  start(): Promise<void>;
  kill(): Promise<void>;
  freeze(): void;
  thaw(): void;
}

/** Only what the soak sets, plus PATH and HOME: nothing of the caller's TEMPORAL_* or AWS_* leaks in. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...extra };
}

export function createWorker(
  index: number,
  proxy: TcpProxy,
  env: Record<string, string>,
  logDir: string,
  compiled: string,
): SoakWorker {
  const main = join(compiled, 'worker', 'process', 'main.js');
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let stopped = false;
  let generation = 0;
  const logFiles: string[] = [];
  const alive = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  return {
    index,
    proxy,
    get running() {
      return alive();
    },
    get stopped() {
      return stopped;
    },
    logFiles,
    async start() {
      if (alive()) return;
      generation += 1;
      const file = join(logDir, `worker-${index}.${generation}.log`);
      logFiles.push(file);
      const log = createWriteStream(file);
      const started = spawn(process.execPath, [main], {
        cwd: ROOT,
        env: cleanEnv({ ...env, TEMPORAL_ADDRESS: `127.0.0.1:${proxy.port}` }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child = started;
      stopped = false;
      started.stdout?.pipe(log, { end: false });
      started.stderr?.pipe(log, { end: false });
      exited = new Promise((resolve) =>
        started.once('exit', () => {
          log.end();
          resolve();
        }),
      );
      await waitForPolling(started);
    },
    async kill() {
      if (!alive()) return;
      child?.kill('SIGKILL');
      stopped = false;
      await exited;
    },
    freeze() {
      if (alive() && !stopped) {
        child?.kill('SIGSTOP');
        stopped = true;
      }
    },
    thaw() {
      if (alive() && stopped) child?.kill('SIGCONT');
      stopped = false;
    },
  };
}

/** Resolves once the process logs `Worker polling`, or after 60 s (a worker behind a cut proxy keeps trying). */
async function waitForPolling(child: ChildProcess): Promise<void> {
  let seen = '';
  const polling = new Promise<void>((resolve) => {
    const onData = (chunk: Buffer) => {
      seen = (seen + chunk.toString()).slice(-4096);
      if (seen.includes('Worker polling')) {
        child.stderr?.off('data', onData);
        resolve();
      }
    };
    child.stderr?.on('data', onData);
    child.once('exit', () => resolve());
  });
  await Promise.race([polling, sleep(60_000)]);
}
