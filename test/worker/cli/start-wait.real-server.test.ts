/**
 * `import-worker start --wait` as an operator runs it, in a child process, on
 * a real Temporal dev server where no worker polls the import's task queue
 * (a typo in IMPORT_TASK_QUEUE): it says so instead of showing `starting`
 * forever, and Ctrl-C stops the command, not the import, says how to follow
 * it, and gives the terminal its cursor and line wrapping back.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nodeArgsFor } from '../../support/compiled-source.js';
import { createEnvironment } from '../../support/temporal-server.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const TYPO_QUEUE = 'bulk-imprt';
const NO_WORKER = `no worker polls task queue "${TYPO_QUEUE}"`;

const children: ChildProcess[] = [];

function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(TEMPORAL_|IMPORT_|COMPANY_DATA_)/.test(k)) env[k] = v;
  }
  return { ...env, ...extra };
}

/** The CLI's node arguments (from the run's transpiled copy of the sources, compiled-source.ts). */
const startArgs = (workflowId: string) => [
  ...nodeArgsFor('worker/cli/main.ts'),
  'start',
  '--bucket',
  'crm-drops',
  '--key',
  'accounts.csv',
  '--entity-type',
  'Account',
  '--workflow-id',
  workflowId,
  '--wait',
];

interface Run {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

function track(child: ChildProcess): Run {
  children.push(child);
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return { child, output: () => output, exited };
}

async function until(run: Run, text: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!run.output().includes(text)) {
    if (Date.now() > deadline) throw new Error(`no "${text}" within ${timeoutMs} ms:\n${run.output()}`);
    await sleep(100);
  }
}

describe('start --wait with no worker on the task queue', () => {
  let env: TestWorkflowEnvironment;
  let cliEnv: NodeJS.ProcessEnv;

  beforeAll(async () => {
    env = await createEnvironment();
    cliEnv = cleanEnv({ TEMPORAL_ADDRESS: env.address, IMPORT_TASK_QUEUE: TYPO_QUEUE });
  }, 120_000);

  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  });

  afterAll(async () => {
    await env?.teardown();
  });

  it('says no worker polls the queue; Ctrl-C exits 130 saying the import goes on', { timeout: 120_000 }, async () => {
    const run = track(spawn(process.execPath, startArgs('no-worker-pipe'), { cwd: ROOT, env: cliEnv }));
    await until(run, NO_WORKER);
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(130);
    expect(run.output()).toContain(
      'stopped following no-worker-pipe; the import goes on. Follow it with: import-worker status no-worker-pipe',
    );
    const { status } = await env.client.workflow.getHandle('no-worker-pipe').describe();
    expect(status.name).toBe('RUNNING');
  });

  it('on a terminal, Ctrl-C restores the cursor and line wrapping the progress bar took', {
    timeout: 120_000,
  }, async () => {
    // script(1) gives the command a terminal; a ^C written to it is the terminal's Ctrl-C (SIGINT).
    const command = ['exec', process.execPath, ...startArgs('no-worker-tty')].join(' ');
    const run = track(spawn('script', ['-qefc', command, '/dev/null'], { cwd: ROOT, env: cliEnv }));
    await until(run, NO_WORKER);
    run.child.stdin?.write('\x03');
    expect(await run.exited).toBe(130);
    const out = run.output();
    expect(out).toContain('the import goes on. Follow it with: import-worker status no-worker-tty');
    expect(out.lastIndexOf('\x1b[?25h'), 'cursor shown again').toBeGreaterThan(out.lastIndexOf('\x1b[?25l'));
    expect(out.lastIndexOf('\x1b[?7h'), 'line wrapping on again').toBeGreaterThan(out.lastIndexOf('\x1b[?7l'));
  });
});
