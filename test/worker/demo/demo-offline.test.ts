/**
 * `npm run demo` as a user runs it: end to end on the Temporal dev server the
 * project installs (npm run setup:temporal), and, where no server can be had,
 * a failure in one line that says how to get one, not a hang or a stack.
 */
import { execFile } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DemoSetupError, NO_SERVER_HINT, startLocalTemporal } from '../../../worker/demo/local-temporal.js';

const ROOT = resolve(import.meta.dirname, '../../..');

interface DemoRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runDemo(extraEnv: Record<string, string>, args: string[] = []): Promise<DemoRun> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TEMPORAL_')) env[k] = v;
  return new Promise((done) => {
    // A generous limit only so that a hang fails the test instead of stalling the run. tsx as a loader
    // (not its CLI, which runs a second process) so that the limit ends the demo itself.
    execFile(
      process.execPath,
      ['--import', 'tsx', 'worker/demo/main.ts', '--exit', ...args],
      { cwd: ROOT, env: { ...env, ...extraEnv }, timeout: 240_000 },
      (err, stdout, stderr) => {
        done({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr });
      },
    );
  });
}

/** Lines the demo wrote (its failures and any stack trace), without what the libraries print. */
function demoLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.startsWith('demo:') || /^\s+at /.test(l));
}

const canDownload = await lookup('temporal.download').then(
  () => true,
  () => false,
);

const scratch = mkdtempSync(join(tmpdir(), 'demo-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('npm run demo', () => {
  it('runs one import end to end with --exit and exits 0, showing where the server came from, the summary and the UI link', {
    timeout: 300_000,
  }, async () => {
    const r = await runDemo({}, ['--rows', '2000']);
    expect(demoLines(r.stderr)).toEqual([]);
    expect(r.code).toBe(0);
    // The import starts once the demo's own worker polls, and the AWS SDK's Node-version notice is silenced.
    expect(r.stderr).not.toContain('no worker polls');
    expect(r.stderr).not.toContain('NodeVersionSupportWarning');
    const out = r.stdout;
    expect(out).toMatch(/^Temporal {6}dev-server: \S+ \(from (TEMPORAL_SERVER_PATH|the project install|PATH)/m);
    const server = /^ {14}127\.0\.0\.1:\d+ \(namespace default\), Web UI (http:\/\/127\.0\.0\.1:\d+)$/m.exec(out);
    expect(server, out).not.toBeNull();
    expect(out).toMatch(/^S3 \(s3rver\) {3}http:\/\/127\.0\.0\.1:\d+ {2}s3:\/\/demo-imports\/\S+ \(2000 rows, /m);
    expect(out).toMatch(/^completed: job \d+, [\d.]+ KiB uploaded$/m);
    expect(out).toMatch(/^ {2}service calls: .*createJob 1, .*submitData 1/m);
    expect(out).toMatch(
      /^ {2}simulator: job \d+ completed, received [\d.]+ KiB, header Account Name, Account Domain$/m,
    );
    expect(out).toContain(`  Temporal UI: ${server?.[1]}/namespaces/default/workflows/demo-accounts-`);
  });

  it('fails with one line when TEMPORAL_SERVER_PATH names a file that is not executable', async () => {
    const notExecutable = join(scratch, 'temporal');
    writeFileSync(notExecutable, '#!/bin/sh\n', { mode: 0o644 });
    const r = await runDemo({ TEMPORAL_SERVER_PATH: notExecutable });
    expect(demoLines(r.stderr)).toEqual([
      `demo: TEMPORAL_SERVER_PATH=${notExecutable} is not an executable file; ${NO_SERVER_HINT}`,
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
  });

  it('fails with one line when TEMPORAL_SERVER_PATH names no file', async () => {
    const r = await runDemo({ TEMPORAL_SERVER_PATH: '/nonexistent/temporal' });
    expect(demoLines(r.stderr)).toEqual([
      `demo: TEMPORAL_SERVER_PATH=/nonexistent/temporal is not an executable file; ${NO_SERVER_HINT}`,
    ]);
    expect(r.code).toBe(1);
  });

  it('exits 2 on a usage error, as every command does, before starting anything', async () => {
    const r = await runDemo({}, ['--rows', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("error: option '--rows <n>' argument '0' is invalid. expected a positive whole number");
    expect(r.stdout).toBe('');
  });

  it('fails with one line when TEMPORAL_ADDRESS names no server', async () => {
    const r = await runDemo({ TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(r.code).toBe(1);
    const lines = demoLines(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^demo: cannot reach Temporal at TEMPORAL_ADDRESS=127\.0\.0\.1:1 /);
  });

  // The project's install is always found from the demo's own folder, so the download path is
  // reached here in-process with a finder that finds nothing: the SDK's real download then fails offline.
  it.skipIf(canDownload)(
    'with no binary installed and none downloadable, fails with one line saying how to get a server',
    { timeout: 120_000 },
    async () => {
      const err = await startLocalTemporal({}, () => undefined).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DemoSetupError);
      expect((err as Error).message).toBe(
        `cannot start a local Temporal server: none is installed and its binary could not be downloaded (no network?); ${NO_SERVER_HINT}`,
      );
    },
  );
});
