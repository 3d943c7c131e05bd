/**
 * `npm run demo` stopped the ways a newcomer stops it: Ctrl-C in the terminal
 * (SIGINT to the whole process group: npm, sh, tsx, the demo, the Temporal dev
 * server, s3rver); and a run on a shared server where a deployment's worker
 * polls the default task queue, which must not take the demo's import. Every
 * process of the group ends on its own and the local S3's temporary folder is gone.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEnvironment } from '../../support/temporal-server.js';
import { workflowBundleFile } from '../../support/workflow-bundle.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const FOREIGN_WORKFLOWS = resolve(import.meta.dirname, '../../support/foreign-import-workflow.ts');

interface DemoProcess {
  child: ChildProcess;
  /** The process group npm leads, as a terminal's job. */
  group: number;
  tmp: string;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

const started: DemoProcess[] = [];

/**
 * The product's workflow bundle (this run's, when npm test built one), which every demo's worker loads
 * through WORKFLOW_BUNDLE_PATH instead of running webpack at its start (seconds of CPU each): what is
 * tested here is how the demo stops. A worker bundling at its start is main-process.test.ts's.
 */
const bundleDir = mkdtempSync(join(tmpdir(), 'demo-stop-bundle-'));
let bundlePath = '';
beforeAll(async () => {
  bundlePath = await workflowBundleFile(bundleDir);
}, 120_000);
afterAll(() => rmSync(bundleDir, { recursive: true, force: true }));

function withoutTemporalVariables(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TEMPORAL_')) env[k] = v;
  return env;
}

/** `npm run demo` in a process group of its own, as a shell runs a job; TMPDIR shows what it leaves behind. */
function startDemo(args: string[], env: Record<string, string> = {}): DemoProcess {
  const tmp = mkdtempSync(join(tmpdir(), 'demo-stop-'));
  const child = spawn('npm', ['run', '-s', 'demo', '--', ...args], {
    cwd: ROOT,
    env: { ...withoutTemporalVariables(), TMPDIR: tmp, WORKFLOW_BUNDLE_PATH: bundlePath, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const demo = { child, group: child.pid as number, tmp, stdout: () => out, stderr: () => err, exited };
  started.push(demo);
  return demo;
}

function groupAlive(group: number): boolean {
  try {
    process.kill(-group, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(what: string, probe: () => boolean, timeoutMs: number, demo: DemoProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) {
      throw new Error(`${what}: not within ${timeoutMs} ms\nstdout:\n${demo.stdout()}\nstderr:\n${demo.stderr()}`);
    }
    await sleep(200);
  }
}

/** Folders the local S3 made under TMPDIR and did not remove. */
const s3Leftovers = (demo: DemoProcess) => readdirSync(demo.tmp).filter((name) => name.startsWith('s3rver-'));

afterEach(() => {
  for (const demo of started.splice(0)) {
    if (groupAlive(demo.group)) process.kill(-demo.group, 'SIGKILL');
    rmSync(demo.tmp, { recursive: true, force: true });
  }
});

describe('npm run demo, stopped with Ctrl-C', () => {
  it('after the import: every process of the group ends and the local S3 folder is removed', {
    timeout: 240_000,
  }, async () => {
    const demo = startDemo(['--rows', '200']);
    await until('the demo waits for Ctrl-C', () => demo.stdout().includes('Press Ctrl-C to stop.'), 180_000, demo);
    expect(s3Leftovers(demo)).toHaveLength(1);
    // The status line it suggests links to the demo's own Web UI, not the default port.
    const ui = /, Web UI (http:\/\/127\.0\.0\.1:\d+)$/m.exec(demo.stdout())?.[1];
    expect(demo.stdout()).toContain(`TEMPORAL_UI_URL=${ui} npm run cli -- status demo-accounts-`);

    process.kill(-demo.group, 'SIGINT');
    await until('every process of the group ends', () => !groupAlive(demo.group), 45_000, demo);
    expect(demo.stdout()).toContain('Stopping.');
    expect(s3Leftovers(demo)).toEqual([]);
  });

  it('during the import: it says so, and leaves no process and no folder', { timeout: 240_000 }, async () => {
    // Rows enough that the import is still running when the signal comes.
    const demo = startDemo(['--rows', '200000']);
    await until('the import starts', () => /^Import {8}demo-accounts-/m.test(demo.stdout()), 180_000, demo);

    process.kill(-demo.group, 'SIGINT');
    await until('every process of the group ends', () => !groupAlive(demo.group), 45_000, demo);
    expect(demo.stderr()).toContain('demo: stopped before the import ended');
    expect(s3Leftovers(demo)).toEqual([]);
  });
});

describe("npm run demo -- --exit, on a shared server where a deployment's worker polls bulk-import", () => {
  let env: TestWorkflowEnvironment;
  let foreign: Worker;
  let foreignRun: Promise<void>;

  beforeAll(async () => {
    env = await createEnvironment();
    foreign = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: 'bulk-import',
      workflowsPath: FOREIGN_WORKFLOWS,
    });
    foreignRun = foreign.run();
  }, 120_000);

  afterAll(async () => {
    if (foreign?.getState() === 'RUNNING') foreign.shutdown();
    await foreignRun;
    await env?.teardown();
  });

  // The deployment's worker fails every import it takes: the demo's import completes only on a queue of its own.
  it('imports on a task queue and tenant of its own, exits 0 and leaves no process and no folder', {
    timeout: 240_000,
  }, async () => {
    const demo = startDemo(['--exit', '--rows', '200'], { TEMPORAL_ADDRESS: env.address });
    await until('every process of the group ends', () => !groupAlive(demo.group), 180_000, demo);
    expect(demo.stderr()).not.toMatch(/^demo: /m);
    expect(await demo.exited).toBe(0);
    expect(demo.stdout()).toMatch(/^Worker {8}task queue demo-[0-9a-f]{8}, tenant demo \(the demo's own\)$/m);
    expect(demo.stdout()).toMatch(/^completed: job \d+/m);
    // The import starts once the demo's own worker polls: its progress never says nobody does.
    expect(demo.stderr()).not.toContain('no worker polls');
    expect(s3Leftovers(demo)).toEqual([]);
    // No run of the demo's import went to the deployment's queue.
    for await (const run of env.client.workflow.list({ query: "TaskQueue = 'bulk-import'" })) {
      expect(run.workflowId).not.toMatch(/^demo-accounts-/);
    }
  });
});
