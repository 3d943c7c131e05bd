/**
 * The demo on a machine that cannot download a Temporal server (this one):
 * it must fail at once with one line saying how to point it at a server or a
 * binary, not hang and not print a stack.
 */
import { execFile } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const TSX = resolve(ROOT, 'node_modules/.bin/tsx');

function runDemo(extraEnv: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TEMPORAL_')) env[k] = v;
  return new Promise((done) => {
    // A generous limit only so that a hang fails the test instead of stalling the run.
    execFile(
      TSX,
      ['worker/demo.ts', '--exit'],
      { cwd: ROOT, env: { ...env, ...extraEnv }, timeout: 120_000 },
      (err, stdout, stderr) => {
        done({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr });
      },
    );
  });
}

/** Lines the demo wrote, without the runtime's own notices (the AWS SDK's Node version warning). */
function demoLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.startsWith('demo:') || /^\s+at /.test(l));
}

const canDownload = await lookup('temporal.download').then(
  () => true,
  () => false,
);

describe('npm run demo without a Temporal server', () => {
  it.skipIf(canDownload)(
    'fails with one line naming TEMPORAL_ADDRESS and TEMPORAL_SERVER_PATH when the server cannot be downloaded',
    { timeout: 150_000 },
    async () => {
      const r = await runDemo({});
      expect(r.code).toBe(1);
      expect(demoLines(r.stderr)).toEqual([
        'demo: cannot start a local Temporal server: its binary could not be downloaded (no network?); point the demo at a running server with TEMPORAL_ADDRESS=host:7233, or at a Temporal CLI binary with TEMPORAL_SERVER_PATH=/path/to/temporal',
      ]);
      expect(r.stdout).toBe('');
    },
  );

  it('fails with one line when TEMPORAL_SERVER_PATH names no binary', { timeout: 150_000 }, async () => {
    const r = await runDemo({ TEMPORAL_SERVER_PATH: '/nonexistent/temporal' });
    expect(r.code).toBe(1);
    const lines = demoLines(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^demo: cannot start the Temporal server at TEMPORAL_SERVER_PATH=\/nonexistent\/temporal \(.*does not exist/,
    );
  });

  it('fails with one line when TEMPORAL_ADDRESS names no server', { timeout: 150_000 }, async () => {
    const r = await runDemo({ TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(r.code).toBe(1);
    const lines = demoLines(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^demo: cannot reach Temporal at TEMPORAL_ADDRESS=127\.0\.0\.1:1 /);
  });
});
