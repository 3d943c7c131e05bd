/**
 * The real CLI as an operator runs it: a child process (worker/cli/main.ts,
 * from the run's transpiled copy of the sources: compiled-source.ts), its
 * exit code, and what it writes. Temporal is pointed at a closed port, so a command that got
 * as far as connecting says so.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import pLimit from 'p-limit';
import { describe, expect, it } from 'vitest';
import { nodeArgsFor } from '../../support/compiled-source.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const CLOSED_PORT_ADDRESS = '127.0.0.1:1';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(TEMPORAL_|IMPORT_|COMPANY_DATA_)/.test(k)) env[k] = v;
  }
  return { ...env, TEMPORAL_ADDRESS: CLOSED_PORT_ADDRESS, ...extra };
}

function run(args: string[], extraEnv: Record<string, string> = {}): Promise<Run> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [...nodeArgsFor('worker/cli/main.ts'), ...args],
      { cwd: ROOT, env: cleanEnv(extraEnv), timeout: 90_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

/** stderr without the runtime's own warnings (the AWS SDK's Node version notice). */
function errorLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.startsWith('error:') || l.startsWith('warning:') || /^\s+at /.test(l));
}

describe('import-worker as a child process', () => {
  it('prints help listing every command and exits 0', { timeout: 120_000 }, async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    for (const command of ['start', 'status', 'list', 'retry', 'abandon', 'cancel', 'budget', 'schedules']) {
      expect(r.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
  });

  it('has --help on every command', { timeout: 300_000 }, async () => {
    const commands = [
      ['start'],
      ['status'],
      ['list'],
      ['retry'],
      ['abandon'],
      ['cancel'],
      ['budget'],
      ['schedules'],
      ['schedules', 'apply'],
      ['schedules', 'list'],
      ['schedules', 'trigger'],
    ];
    // Two at a time: nine CLI processes at once, each compiling the CLI, outran their limit on a busy 2-core machine.
    const twoAtATime = pLimit(2);
    const runs = await Promise.all(commands.map((c) => twoAtATime(() => run([...c, '--help']))));
    runs.forEach((r, i) => {
      expect(r.code, `${commands[i]?.join(' ')} --help`).toBe(0);
      expect(r.stdout).toContain(`Usage: import-worker ${commands[i]?.join(' ')}`);
    });
  });

  it('prints its version and exits 0', { timeout: 120_000 }, async () => {
    const r = await run(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it('rejects an invalid import input in one line with the usage exit code, before connecting to Temporal', {
    timeout: 120_000,
  }, async () => {
    const r = await run(['start', '--bucket', 'b', '--key', 'calls.csv', '--entity-type', 'Activity']);
    expect(r.code).toBe(2);
    expect(errorLines(r.stderr)).toEqual([
      'error: invalid import input: --activity-type-id: activityTypeId is required when entityType is Activity',
    ]);
    expect(r.stdout).toBe('');
  });

  it('rejects a value outside the choices in one line', { timeout: 120_000 }, async () => {
    const r = await run(['start', '--bucket', 'b', '--key', 'k.csv', '--entity-type', 'Company']);
    expect(r.code).toBe(2);
    expect(errorLines(r.stderr)).toEqual([
      "error: option '--entity-type <type>' argument 'Company' is invalid. Allowed choices are Account, Opportunity, Person, Activity.",
    ]);
  });

  it('reports bad configuration by variable in one line', { timeout: 120_000 }, async () => {
    const r = await run(['budget'], { IMPORT_TASK_QUEUE: 'not a queue!' });
    expect(r.code).toBe(2);
    expect(errorLines(r.stderr)).toEqual(['error: IMPORT_TASK_QUEUE must be a task queue name; got "not a queue!"']);
  });

  it('is not blocked by a typo in a variable only the worker reads', { timeout: 120_000 }, async () => {
    const r = await run(['status', 'import-x'], { UPLOAD_PART_SIZE: '8mb', LOG_LEVEL: 'loud' });
    expect(r.code).toBe(1);
    expect(errorLines(r.stderr)).toEqual([
      expect.stringMatching(/^error: cannot reach Temporal at 127\.0\.0\.1:1 \(.*\); set TEMPORAL_ADDRESS/),
    ]);
  });

  it('refuses schedules apply --prune with no feed configured, before connecting', { timeout: 120_000 }, async () => {
    const r = await run(['schedules', 'apply', '--prune']);
    expect(r.code).toBe(2);
    expect(errorLines(r.stderr)).toEqual([
      'error: refusing --prune: IMPORT_FEEDS_FILE is unset, so it would delete every nightly schedule; set IMPORT_FEEDS_FILE, or pass --prune-all to delete them all',
    ]);
    expect(r.stdout).toBe('');
  });

  it('refuses to trigger a feed that is not configured, before connecting', { timeout: 120_000 }, async () => {
    const r = await run(['schedules', 'trigger', 'nosuchfeed']);
    expect(r.code).toBe(2);
    expect(errorLines(r.stderr)).toEqual([
      'error: no feed nosuchfeed in IMPORT_FEEDS_FILE (IMPORT_FEEDS_FILE lists no feeds)',
    ]);
  });

  it('warns about a destructive list action, then says in one line that Temporal cannot be reached', {
    timeout: 120_000,
  }, async () => {
    const r = await run([
      'start',
      '--bucket',
      'b',
      '--key',
      'k.csv',
      '--entity-type',
      'Account',
      '--list-action',
      'replace',
      // Without it the command reads the object's ETag from S3 first, to name the import.
      '--workflow-id',
      'import-k',
    ]);
    expect(r.code).toBe(1);
    const lines = errorLines(r.stderr);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe('warning: listAction replace removes every member of the target list before adding the file');
    expect(lines[1]).toMatch(/^error: cannot reach Temporal at 127\.0\.0\.1:1 \(.*\); set TEMPORAL_ADDRESS/);
  });
});
