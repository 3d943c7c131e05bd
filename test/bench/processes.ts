/**
 * The benchmark's child processes: the simulator (as `npm run simulator`
 * runs it), one measurement script at a time, and the curl pipeline. Each
 * measurement runs alone in its own process, so its memory and CPU are its own.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSX = `${REPO_ROOT}node_modules/.bin/tsx`;

export interface RunningSimulator {
  url: string;
  stop(): Promise<void>;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

export async function startSimulatorProcess(): Promise<RunningSimulator> {
  // Jobs stay `processing` for a day: the benchmark inspects them, nothing completes them.
  const child = spawn(TSX, ['test/simulator/main.ts', '--port', '0', '--processing-ms', '86400000'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`the simulator exited with code ${code} before listening`);
  });
  const listening = (async () => {
    for await (const line of lines) {
      const m = /listening on (http:\/\/\S+)/.exec(line);
      if (m) return m[1]!;
    }
    throw new Error('the simulator closed its output before listening');
  })();
  try {
    const url = await Promise.race([listening, exited]);
    // Keep draining its output so it never blocks on a full pipe.
    child.stdout!.resume();
    return { url, stop: () => stopChild(child) };
  } catch (err) {
    await stopChild(child);
    throw err;
  }
}

/** Runs a measurement script and returns the JSON it printed last. */
export async function runMeasurement<T>(script: string, env: Record<string, string>): Promise<T> {
  const child = spawn(TSX, [script], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env, NODE_NO_WARNINGS: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d;
  });
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d;
  });
  const [code] = await once(child, 'exit');
  const last = stdout.trim().split('\n').at(-1) ?? '';
  if (code !== 0 || !last.startsWith('{')) {
    throw new Error(`${script} failed (exit ${code}): ${stderr.trim().split('\n').slice(-12).join(' | ')}`);
  }
  return JSON.parse(last) as T;
}

/** `curl GET | curl -T -` (chunked): the single-stream tools baseline. Returns seconds. */
export async function runCurlPipe(getUrl: string, putUrl: string, token: string): Promise<number> {
  const script =
    'set -o pipefail; curl -sS --fail "$GET_URL" | ' +
    'curl -sS --fail -o /dev/null -T - -X PUT -H "Authorization: Bearer $TOKEN" ' +
    '-H "Content-Type: application/octet-stream" "$PUT_URL"';
  const started = performance.now();
  const child = spawn('bash', ['-c', script], {
    env: { PATH: process.env.PATH, GET_URL: getUrl, PUT_URL: putUrl, TOKEN: token },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`the curl pipeline failed with exit code ${code}`);
  return (performance.now() - started) / 1000;
}
