import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeArgsFor } from '../support/compiled-source.js';
import { DEMO_TOKENS } from './server.js';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const REPO = fileURLToPath(new URL('../../', import.meta.url));
let child: ChildProcess | undefined;

function run(args: string[]): ChildProcess {
  // From the run's transpiled copy of the sources (compiled-source.ts), as the worker and the CLI are.
  child = spawn(process.execPath, [...nodeArgsFor(MAIN), ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  return child;
}

/**
 * Resolves once stdout matches `pattern`; the test's own timeout bounds the wait.
 * It keeps reading after the match so that the child never writes to a closed pipe.
 */
function waitForOutput(proc: ChildProcess, pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (chunk) => {
      out += chunk;
      const match = pattern.exec(out);
      if (match) resolve(match);
    });
    proc.once('close', () => reject(new Error(`process ended before printing ${pattern}; stdout: ${out}`)));
  });
}

afterEach(() => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
});

describe('npm run simulator (main.ts)', () => {
  it('prints its base URL and the demo tokens, serves, and exits 0 on SIGTERM', async () => {
    const proc = run(['--port', '0', '--processing-ms', '10', '--reset-utc', '07:30']);
    const [, baseUrl] = await waitForOutput(
      proc,
      /listening on (http:\/\/127\.0\.0\.1:\d+)\n[\s\S]*sim-token-expired.*\n/,
    );
    const res = await fetch(`${baseUrl}/import/v1/jobs`, {
      headers: { authorization: `Bearer ${DEMO_TOKENS.importer}` },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ totalCount: 0, data: [] });
    proc.kill('SIGTERM');
    const [code] = await once(proc, 'exit');
    expect(code).toBe(0);
  });

  it('names every demo token and its permission', async () => {
    const proc = run(['--port', '0']);
    const [text] = await waitForOutput(proc, /listening[\s\S]*sim-token-expired.*\n/);
    expect(text).toMatch(/sim-token-import-data\s+permissions: Import Data/);
    expect(text).toMatch(/sim-token-no-permissions\s+permissions: \(none\)/);
    expect(text).toMatch(/sim-token-expired\s+expired/);
    proc.kill('SIGINT');
    expect((await once(proc, 'exit'))[0]).toBe(0);
  });

  it('prints usage and exits 0 for --help', async () => {
    const proc = run(['--help']);
    const exited = once(proc, 'exit');
    const [usage] = await waitForOutput(proc, /Usage:[\s\S]*--reset-utc/);
    expect(usage).toContain('--processing-ms');
    expect((await exited)[0]).toBe(0);
  });

  it.each([
    [['--port', 'eighty'], '--port must be an integer from 0 to 65535, got "eighty"'],
    [['--reset-utc', '7:30'], '--reset-utc must be a UTC time of day HH:MM'],
    [['--colour'], "Unknown option '--colour'"],
  ])('exits 2 with a one-line error for %j', async (args, message) => {
    const proc = run(args);
    let err = '';
    proc.stderr!.on('data', (chunk) => {
      err += chunk;
    });
    const [code] = await once(proc, 'exit');
    expect(code).toBe(2);
    expect(err.trim().split('\n')).toEqual([expect.stringContaining(message)]);
  });
});
