/**
 * The health endpoints of a real worker process (worker/process/main.ts) on
 * the full stack: `/healthz` answers while the process runs; `/readyz` is
 * ready once the worker polls a real Temporal dev server, names the check
 * that fails when the worker is cut off from Temporal (a TCP proxy between
 * them, the service and S3 still reachable), and is ready again once the
 * link returns. Also before any Temporal server exists: alive, not ready.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBudgetSettings } from '../../../temporal.config.js';
import { freePort } from '../../../worker/demo/free-port.js';
import type { CheckName, ReadinessReport } from '../../../worker/process/readiness.js';
import {
  LEDGER_MAX_HISTORY_EVENTS,
  LEDGER_WORKFLOW_TYPE,
  type LedgerInput,
  ledgerWorkflowId,
} from '../../../workflows/contracts/budget.js';
import { DEMO_TOKENS } from '../../simulator/server.js';
import { closedPort } from '../../support/closed-port.js';
import { nodeArgsFor } from '../../support/compiled-source.js';
import { type FullStack, startFullStack } from '../../support/full-stack.js';
import { type KillableWorker, type WorkerPool, workerPool } from '../../support/killable-worker.js';
import { simRequests } from '../../support/sim-inspect.js';

const MAIN = fileURLToPath(new URL('../../../worker/process/main.ts', import.meta.url));

interface Answer {
  status: number;
  body: ReadinessReport & { alive?: boolean; error?: string };
}

async function get(port: number, path: string): Promise<Answer> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: (await res.json()) as Answer['body'] };
}

/** Asks again every 250 ms until `accept` takes an answer; the test's own timeout bounds the wait. */
async function until(port: number, path: string, accept: (a: Answer) => boolean): Promise<Answer> {
  for (;;) {
    const answer = await get(port, path);
    if (accept(answer)) return answer;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const failed = (a: Answer): CheckName[] =>
  (Object.entries(a.body.checks) as [CheckName, { ok: boolean }][]).filter(([, c]) => !c.ok).map(([name]) => name);

describe('the health endpoints of a worker process on the full stack', () => {
  let stack: FullStack;
  let workers: WorkerPool;
  let worker: KillableWorker;
  let port: number;
  const dir = mkdtempSync(join(tmpdir(), 'health-test-'));
  const tokenFile = join(dir, 'token');
  // A tenant of its own: on a shared server (TEMPORAL_ADDRESS) another file may have started `default`'s ledger.
  const tenant = `health-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    writeFileSync(tokenFile, DEMO_TOKENS.importer);
    stack = await startFullStack({ bucket: 'health', name: 'health' });
    workers = workerPool(stack);
    port = await freePort();
    worker = await workers.start({
      behindProxy: true,
      // Blank counts as unset: the token comes from the file only.
      env: {
        COMPANY_DATA_TOKEN: '',
        COMPANY_DATA_TOKEN_FILE: tokenFile,
        IMPORT_TENANT: tenant,
        WORKER_HEALTH_PORT: String(port),
        WORKER_HTTP_HOST: '127.0.0.1',
      },
    });
  }, 180_000);

  afterAll(async () => {
    await workers?.close();
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('is ready when it polls: every check passes, none spends a service call', { timeout: 60_000 }, async () => {
    const ready = await until(port, '/readyz', (a) => a.status === 200);
    expect(ready.body).toEqual({
      ready: true,
      checks: {
        temporal: { ok: true, detail: 'the frontend answered' },
        pollers: { ok: true, detail: 'main, uploads and polls workers polling' },
        token: { ok: true, detail: `token file ${tokenFile} holds a token` },
        budgetLedger: { ok: true, detail: `no ledger for tenant ${tenant} yet (the first reservation starts it)` },
      },
    });
    expect(await get(port, '/healthz')).toEqual({ status: 200, body: { alive: true } });
    expect((await get(port, '/metrics')).status).toBe(404);
    // No service call at all: the simulator saw none (the worker got no import to run).
    expect(await simRequests(stack.sim.baseUrl)).toEqual([]);
  });

  it('asks a running ledger, which this worker serves, for its usage', { timeout: 60_000 }, async () => {
    const input: LedgerInput = {
      tenant,
      settings: loadBudgetSettings({}),
      maxHistoryEvents: LEDGER_MAX_HISTORY_EVENTS,
    };
    await stack.env.client.workflow.start(LEDGER_WORKFLOW_TYPE, {
      workflowId: ledgerWorkflowId(tenant),
      taskQueue: stack.taskQueue,
      args: [input],
    });
    const answered = await until(port, '/readyz', (a) => a.body.checks.budgetLedger.detail.includes('answered'));
    expect(answered.status).toBe(200);
    expect(answered.body.checks.budgetLedger).toEqual({ ok: true, detail: `the ledger of tenant ${tenant} answered` });
  });

  it('names the token when its file is emptied, and is ready again once it holds one', {
    timeout: 60_000,
  }, async () => {
    writeFileSync(tokenFile, '');
    const empty = await until(port, '/readyz', (a) => a.status === 503);
    expect(failed(empty)).toEqual(['token']);
    expect(empty.body.checks.token.detail).toBe(`token file ${tokenFile} is empty; it must hold the bearer token`);
    writeFileSync(tokenFile, DEMO_TOKENS.importer);
    await until(port, '/readyz', (a) => a.status === 200);
    expect(JSON.stringify(empty.body)).not.toContain(DEMO_TOKENS.importer);
  });

  it('says Temporal is the failed check while cut off, stays alive, and is ready again once the link returns', {
    timeout: 120_000,
  }, async () => {
    await until(port, '/readyz', (a) => a.status === 200);
    worker.cutOff();
    const cut = await until(port, '/readyz', (a) => a.status === 503);
    expect(cut.body.ready).toBe(false);
    expect(failed(cut)).toContain('temporal');
    expect(cut.body.checks.temporal.detail).not.toMatch(/tonic|transport::/);
    expect(cut.body.checks.token.ok).toBe(true);
    expect(await get(port, '/healthz')).toEqual({ status: 200, body: { alive: true } });

    worker.reconnect();
    const back = await until(port, '/readyz', (a) => a.status === 200);
    expect(failed(back)).toEqual([]);
  });
});

describe('a worker process waiting for its Temporal server', () => {
  it('is alive and not ready, naming Temporal', { timeout: 120_000 }, async () => {
    const port = await freePort();
    const nobody = await closedPort();
    const child = spawn(process.execPath, nodeArgsFor(MAIN), {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        TEMPORAL_ADDRESS: `127.0.0.1:${nobody}`,
        COMPANY_DATA_BASE_URL: 'http://127.0.0.1:9',
        COMPANY_DATA_TOKEN: 'health-test-token',
        WORKER_CONNECT_TIMEOUT: '2m',
        WORKER_METRICS_PORT: '0',
        WORKER_HEALTH_PORT: String(port),
        WORKER_HTTP_HOST: '127.0.0.1',
      },
      stdio: 'ignore',
    });
    try {
      expect(await untilAnswering(port, '/healthz')).toEqual({ status: 200, body: { alive: true } });
      const notReady = await get(port, '/readyz');
      expect(notReady.status).toBe(503);
      expect(notReady.body.checks).toEqual({
        temporal: { ok: false, detail: 'not connected yet' },
        pollers: { ok: false, detail: 'workers not started yet' },
        token: { ok: true, detail: 'COMPANY_DATA_TOKEN, checked at start' },
        budgetLedger: { ok: false, detail: 'not connected yet' },
      });
    } finally {
      child.kill('SIGKILL');
    }
  });
});

/** The first answer once the process listens (it takes seconds to load). */
async function untilAnswering(port: number, path: string): Promise<Answer> {
  for (;;) {
    try {
      return await get(port, path);
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
