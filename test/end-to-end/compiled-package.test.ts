/**
 * The package as it ships: `npm run build` (tsc to dist/ plus the prebuilt
 * workflow bundle), what `npm pack` puts in the tarball, the installed bin,
 * and the compiled worker polling a real Temporal dev server with the
 * prebuilt bundle (no webpack, no tsx at start).
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../worker/demo/free-port.js';
import { findTemporalBinary } from '../../worker/demo/temporal-binaries.js';
import { lockDist } from '../support/dist-lock.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = resolve(ROOT, 'bin/import-worker.js');
const BUNDLE = resolve(ROOT, 'dist/workflow-bundle.js');

function npm(args: string[]): string {
  return execFileSync('npm', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...extra };
}

// Held from the build until the file ends: every test here reads dist/.
let unlockDist: () => void = () => {};
beforeAll(async () => {
  unlockDist = await lockDist(ROOT);
  npm(['run', '-s', 'build']);
}, 11 * 60_000);
afterAll(() => unlockDist());

describe('npm pack', () => {
  it('ships the compiled code, the prebuilt workflow bundle, the bin and the docs the README links to, and nothing of test/, .ci/, the demo or the test doubles', () => {
    const [pack] = JSON.parse(npm(['pack', '--dry-run', '--json', '--ignore-scripts'])) as [
      { files: { path: string }[] },
    ];
    const files = pack.files.map((f) => f.path);
    expect(files).toEqual(
      expect.arrayContaining([
        'bin/import-worker.js',
        'dist/worker/process/main.js',
        'dist/worker/cli/main.js',
        'dist/workflow-bundle.js',
        'dist/workflows/index.js',
        'package.json',
        'README.md',
      ]),
    );
    const linkedDocs = [...readFileSync(resolve(ROOT, 'README.md'), 'utf8').matchAll(/\]\((docs\/[^)#]+)/g)].map(
      (m) => m[1],
    );
    expect(linkedDocs.length).toBeGreaterThan(0);
    expect(files).toEqual(expect.arrayContaining([...new Set(linkedDocs)]));
    const unwanted = files.filter((f) =>
      /^(test|\.ci|worker|workflows|activities)\/|\.ts$|demo|setup-temporal|temporal-binaries/.test(f),
    );
    expect(unwanted).toEqual([]);
    // The in-memory stand-ins for the ledger and the job records exist for tests only.
    expect(files.filter((f) => /in-memory/.test(f))).toEqual([]);
  });
});

describe('the installed bin', () => {
  it('runs the compiled CLI', () => {
    const r = spawnSync(process.execPath, [BIN, '--version'], { env: cleanEnv({}), encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it('fails a usage error with exit code 2 and one line', () => {
    const r = spawnSync(process.execPath, [BIN, 'status'], { env: cleanEnv({}), encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr.split('\n').filter((l) => l.startsWith('error:'))).toEqual([
      "error: missing required argument 'workflowId'",
    ]);
  });
});

describe('the compiled worker', () => {
  const started: ChildProcess[] = [];
  afterAll(() => {
    for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
  });

  it('polls a real Temporal dev server with the prebuilt bundle, refuses a rounded id with a logged failure, then stops on SIGTERM', {
    timeout: 180_000,
  }, async () => {
    expect(existsSync(BUNDLE)).toBe(true);
    const binary = findTemporalBinary('dev-server');
    if (!binary) throw new Error('no Temporal dev server binary; run npm run setup:temporal');
    const port = await freePort();
    const server = spawn(
      binary.path,
      ['server', 'start-dev', '--headless', '--port', String(port), '--log-level', 'error'],
      {
        stdio: 'ignore',
      },
    );
    started.push(server);

    const worker = spawn(process.execPath, [resolve(ROOT, 'dist/worker/process/main.js')], {
      env: cleanEnv({
        TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
        COMPANY_DATA_BASE_URL: 'http://127.0.0.1:9',
        COMPANY_DATA_TOKEN: 'compiled-worker-test-token',
        WORKER_METRICS_PORT: '0',
        WORKER_HEALTH_PORT: '0',
      }),
    });
    started.push(worker);
    let stderr = '';
    const lines = () =>
      stderr
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { message: string; workflows?: string; workflowId?: string; error?: unknown });
    await new Promise<void>((done, fail) => {
      worker.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (lines().some((l) => l.message === 'Worker polling')) done();
      });
      worker.on('exit', (code) => fail(new Error(`worker exited ${code}:\n${stderr}`)));
    });
    expect(lines().find((l) => l.message === 'Worker starting')?.workflows).toBe(`bundle ${BUNDLE}`);

    // An id above 2^53 as a JSON number, as `temporal workflow start --input` would send it.
    const input = JSON.parse(
      '{"source":{"bucket":"b","key":"k.csv"},"dataImportName":"x","entityType":"Person","fieldMappings":{"sourceId":9007199254740993,"objectType":"person","mappings":[{"sourceFieldLabel":"E","serviceFieldName":"e","dataType":"string"}]}}',
    );
    const connection = await Connection.connect({ address: `127.0.0.1:${port}` });
    try {
      const client = new Client({ connection });
      const run = client.workflow.execute('importFile', {
        taskQueue: 'bulk-import',
        workflowId: 'rounded-id',
        args: [input],
      });
      const failure = await run.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      expect((failure as WorkflowFailedError).cause?.message).toMatch(
        /sourceId 9007199254740992 is a JSON number above 2\^53/,
      );
    } finally {
      await connection.close();
    }
    await new Promise<void>((done) => {
      const check = () => (lines().some((l) => l.message === 'Workflow failed') ? done() : setTimeout(check, 50));
      check();
    });
    expect(lines().find((l) => l.message === 'Workflow failed')).toMatchObject({
      workflowId: 'rounded-id',
      error: { message: expect.stringMatching(/above 2\^53/) },
    });

    const exited = new Promise<number | null>((done) => worker.on('exit', done));
    worker.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(lines().at(-1)?.message).toBe('Worker stopped');
    expect(stderr).not.toContain('compiled-worker-test-token');
  });
});
