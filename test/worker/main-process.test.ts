/**
 * `npm run worker` as an operator meets it: the real entry point in a child
 * process. Bad configuration stops it with one line and exit code 2; a
 * Temporal server it cannot reach, with one line and exit code 1; the token
 * shows up in neither.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const MAIN = fileURLToPath(new URL('../../worker/main.ts', import.meta.url));
const TOKEN = 'worker-main-test-token-do-not-print';

function runWorker(env: Record<string, string>) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', MAIN], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    encoding: 'utf8',
    timeout: 120_000,
  });
  const lines = `${result.stdout}${result.stderr}`.split('\n').filter((l) => l.trim() !== '');
  return { status: result.status, lines, output: `${result.stdout}${result.stderr}` };
}

describe('the worker entry point', () => {
  it('stops with one line naming the variable when the configuration is missing', () => {
    const run = runWorker({ COMPANY_DATA_TOKEN: TOKEN });
    expect(run.status).toBe(2);
    expect(run.lines).toEqual([
      'COMPANY_DATA_BASE_URL must be the service base URL, e.g. https://api.example.com; it is not set',
    ]);
  });

  it('stops with one line when a value is malformed, without printing the token', () => {
    const run = runWorker({
      COMPANY_DATA_BASE_URL: 'http://api.example.com',
      COMPANY_DATA_TOKEN: TOKEN,
    });
    expect(run.status).toBe(2);
    expect(run.lines).toHaveLength(1);
    expect(run.lines[0]).toMatch(/^COMPANY_DATA_BASE_URL must be https/);
    expect(run.output).not.toContain(TOKEN);
  });

  it('says which Temporal address it cannot reach, and never prints the token', () => {
    const run = runWorker({
      COMPANY_DATA_BASE_URL: 'http://127.0.0.1:9',
      COMPANY_DATA_TOKEN: TOKEN,
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      WORKER_METRICS_PORT: '0',
      LOG_LEVEL: 'DEBUG',
    });
    expect(run.status).toBe(1);
    expect(run.lines.at(-1)).toBe(
      'Worker failed: cannot reach the Temporal server at 127.0.0.1:1 (connection refused); set TEMPORAL_ADDRESS',
    );
    expect(run.output).not.toContain(TOKEN);
  });
});
