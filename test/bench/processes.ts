/**
 * The benchmark's child processes: the simulator (as `npm run simulator`
 * runs it), one measurement script at a time, and the curl pipeline. Each
 * measurement runs alone in its own process, so its memory and CPU are its own.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSX = `${REPO_ROOT}node_modules/.bin/tsx`;

interface RunningSimulator {
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

/**
 * `BENCH_CPU_PROF=dir`: each measurement child writes a V8 CPU profile there
 * (open it in Chrome's DevTools): where a run's CPU goes, in its own process.
 */
function profiling(): string[] {
  const dir = process.env.BENCH_CPU_PROF;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

/** Runs a measurement script and returns the JSON it printed last. */
export async function runMeasurement<T>(script: string, env: Record<string, string>): Promise<T> {
  const child = spawn(TSX, [...profiling(), script], {
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

export interface CurlRun {
  seconds: number;
  /** CPU of the pipeline's processes (user + system), from the shell's `times`. */
  cpuSeconds: number;
}

interface CurlTarget {
  /** Where the bytes come from: an S3 URL, or this many zero bytes from memory (the PUT's link alone). */
  getUrl: string | { zeroBytes: number };
  /** Without it, the GET alone into /dev/null. */
  putUrl?: string;
  /** A shell pipeline between the GET and the PUT (gzip -d, iconv ...): its CPU counts with curl's. */
  filter?: string;
  token: string;
  /** The private CA to trust, for links with TLS. */
  caCertPath?: string;
}

/** `curl GET [| filter] | curl -T -` (chunked): the single-stream tools baseline; or the GET alone. */
export async function runCurl(target: CurlTarget): Promise<CurlRun> {
  const ca = target.caCertPath ? '--cacert "$CA_CERT" ' : '';
  const get = `curl -sS --fail ${ca}`;
  const source =
    typeof target.getUrl === 'string' ? `${get}"$GET_URL"` : `head -c ${target.getUrl.zeroBytes} /dev/zero`;
  const filtered = target.filter ? `${source} | ${target.filter}` : source;
  const transfer = target.putUrl
    ? `${filtered} | curl -sS --fail ${ca}-o /dev/null -T - -X PUT -H "Authorization: Bearer $TOKEN" ` +
      '-H "Content-Type: application/octet-stream" "$PUT_URL"'
    : `${get}-o /dev/null "$GET_URL"`;
  // `times` prints the shell's CPU, then its children's: the second line is curl's.
  const script = `set -o pipefail; ${transfer} || exit $?; times`;
  const started = performance.now();
  const child = spawn('bash', ['-c', script], {
    env: {
      PATH: process.env.PATH,
      GET_URL: typeof target.getUrl === 'string' ? target.getUrl : '',
      PUT_URL: target.putUrl ?? '',
      TOKEN: target.token,
      CA_CERT: target.caCertPath ?? '',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d;
  });
  const [code] = await once(child, 'exit');
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`the curl run failed with exit code ${code}`);
  const children = out.trim().split('\n').at(-1) ?? '';
  const times = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  if (times.length !== 2) throw new Error(`could not read curl's CPU time from ${JSON.stringify(out)}`);
  return { seconds, cpuSeconds: times[0]! + times[1]! };
}

/** The whole machine's CPU ticks, busy and in all, from /proc/stat. */
export function machineTicks(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = fields[3]! + fields[4]!;
  return { busy: total - idle, total };
}

/** Share of the machine's CPU that was busy since `before` (every process: the harness's too), in percent. */
export function machineBusyPercentSince(before: { busy: number; total: number }): number {
  const now = machineTicks();
  const total = now.total - before.total;
  return total > 0 ? (100 * (now.busy - before.busy)) / total : 0;
}
