/**
 * Two worker processes (as `npm start` runs them, two OS processes), one tenant, twenty
 * imports at once, and daily limits far below what twenty imports need, on a
 * real Temporal dev server. The budget is shared through the tenant's ledger
 * workflow, not held in a process, so:
 * - the calls the service sees per budgeted endpoint never exceed its limit
 *   (the simulator never has to refuse one);
 * - every call the service saw was granted first, and the ledger counts
 *   beyond them only what the processes still hold in their allowances
 *   (none lost, none doubled in the burst of reservations);
 * - nothing is lost: every import either completes (one job, the file's exact
 *   bytes) or waits durably for the next window.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetCommand } from '../../worker/cli/budget-command.js';
import { nextResetMs } from '../../workflows/budget-window.js';
import type { LedgerUsage } from '../../workflows/contracts/budget.js';
import { BUDGETED_ENDPOINT_NAMES, type BudgetedEndpoint } from '../../workflows/contracts/endpoints.js';
import type { ImportFileResult } from '../../workflows/contracts/import-workflow.js';
import { progressQuery } from '../../workflows/contracts/messages.js';
import type { importFile } from '../../workflows/import-file.js';
import { activityWorkers, cliContext, waitFor } from '../support/operator-actions.js';
import {
  accountsCsv,
  type OperatorStack,
  STACK_BUCKET,
  sha256,
  startOperatorStack,
} from '../support/operator-stack.js';
import { jobsNamed, requestsPerEndpoint, simRequests } from '../support/sim-inspect.js';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.js';

type ImportHandle = WorkflowHandle<typeof importFile>;

const IMPORTS = 20;
const WRITE_LIMIT = 12;
const READ_LIMIT = 28;
const LIMITS = Object.fromEntries(
  BUDGETED_ENDPOINT_NAMES.map((e) => [e, e === 'createJob' || e === 'submitData' ? WRITE_LIMIT : READ_LIMIT]),
) as Record<BudgetedEndpoint, number>;
const TENANT = `shared-${randomUUID()}`;
const file = accountsCsv(256 * 1024);

/** Where one import stands once the system is quiet. */
type Outcome =
  | { kind: 'completed'; result: ImportFileResult }
  | { kind: 'waiting-for-budget'; until: string }
  | { kind: 'failed'; reason: string };

describe('two worker processes sharing one tenant budget', () => {
  let stack: OperatorStack;
  const processes: WorkerProcess[] = [];

  beforeAll(async () => {
    stack = await startOperatorStack({
      simulator: { processingMs: 300, dailyLimits: LIMITS },
      workerEnv: {
        IMPORT_TENANT: TENANT,
        IMPORT_BUDGET_WRITE_DAILY: String(WRITE_LIMIT),
        IMPORT_BUDGET_READ_DAILY: String(READ_LIMIT),
      },
    });
    await stack.putObject('accounts.csv', file);
    processes.push(
      ...(await Promise.all([
        startWorkerProcess(stack.workerEnv(), stack.timeCompression),
        startWorkerProcess(stack.workerEnv(), stack.timeCompression),
      ])),
    );
  }, 180_000);

  afterAll(async () => {
    await Promise.allSettled(processes.map((p) => p.stop()));
    await stack?.close();
  });

  /** Completed, failed, or running and asleep until a budget window resets; undefined while still moving. */
  async function outcomeOf(handle: ImportHandle): Promise<Outcome | undefined> {
    const { status } = await handle.describe();
    if (status.name === 'COMPLETED') return { kind: 'completed', result: await handle.result() };
    if (status.name !== 'RUNNING') {
      const reason = await handle.result().then(
        () => status.name,
        (e: Error) => `${status.name}: ${(e.cause as Error | undefined)?.message ?? e.message}`,
      );
      return { kind: 'failed', reason };
    }
    const progress = await handle.query(progressQuery);
    return progress.waitingForBudgetUntil
      ? { kind: 'waiting-for-budget', until: progress.waitingForBudgetUntil }
      : undefined;
  }

  /** `import-worker budget --json`: per endpoint, the calls the tenant's ledger granted and those still held. */
  async function budgetShownByCli(): Promise<LedgerUsage> {
    const ctx = cliContext(stack.workerEnv());
    await budgetCommand({ json: true }, ctx);
    expect(ctx.warned).toEqual([]);
    return JSON.parse(ctx.printed.join('\n')).endpoints;
  }

  it('never lets the service see more calls than a limit allows, and every import completes or waits for the window', async () => {
    const handles = await Promise.all(
      // Each import its own copy of the file: one object version has one job, and each import here needs its own.
      Array.from({ length: IMPORTS }, (_, i) => `shared-${i}-${randomUUID()}`).map(async (workflowId) => {
        await stack.putObject(`${workflowId}.csv`, file);
        return stack.env.client.workflow.start<typeof importFile>('importFile', {
          taskQueue: stack.taskQueue,
          workflowId,
          args: [
            {
              source: { bucket: STACK_BUCKET, key: `${workflowId}.csv` },
              dataImportName: `shared budget ${workflowId}`,
              entityType: 'Account',
              listAction: 'insert',
              tenant: TENANT,
            },
          ],
        });
      }),
    );

    const outcomes = await waitFor(async () => {
      const all = await Promise.all(handles.map(outcomeOf));
      return all.every((o) => o !== undefined) ? (all as Outcome[]) : undefined;
    }, 500);

    const requests = await simRequests(stack.sim.baseUrl);
    const seen = requestsPerEndpoint(requests);
    for (const endpoint of BUDGETED_ENDPOINT_NAMES) {
      expect(seen[endpoint] ?? 0, `${endpoint} calls the service saw`).toBeLessThanOrEqual(LIMITS[endpoint]);
    }
    expect(requests.filter((r) => r.status === 429)).toEqual([]);
    const granted = await budgetShownByCli();
    for (const endpoint of BUDGETED_ENDPOINT_NAMES) {
      // Every call the service saw was granted first, none counted twice in the burst: the ledger counts
      // beyond them only what the processes still hold in their allowances.
      const { used, held = 0 } = granted[endpoint];
      expect(seen[endpoint] ?? 0, `${endpoint} calls the service saw`).toBeLessThanOrEqual(used);
      expect(used - held, `${endpoint} calls the ledger granted, less those held`).toBeLessThanOrEqual(
        seen[endpoint] ?? 0,
      );
    }

    expect(outcomes.filter((o) => o.kind === 'failed')).toEqual([]);
    const windowEnds = nextResetMs(Date.now());
    const completed = outcomes.flatMap((o, i) => (o.kind === 'completed' ? [{ o, handle: handles[i]! }] : []));
    const waiting = outcomes.flatMap((o) => (o.kind === 'waiting-for-budget' ? [o] : []));
    expect(completed.length + waiting.length).toBe(IMPORTS);
    // Twenty imports need twenty job creations; the window allows twelve.
    expect(waiting.length).toBeGreaterThanOrEqual(IMPORTS - WRITE_LIMIT);
    for (const w of waiting) expect(Date.parse(w.until)).toBeGreaterThanOrEqual(windowEnds);
    for (const { o, handle } of completed) {
      if (o.kind !== 'completed') continue;
      const jobs = await jobsNamed(stack.sim.baseUrl, handle.workflowId);
      expect(jobs).toEqual([expect.objectContaining({ id: o.result.jobId, state: 'completed', uploads: 1 })]);
      expect(jobs[0]?.sha256).toBe(sha256(file));
    }
    for (const handle of handles) {
      expect((await jobsNamed(stack.sim.baseUrl, handle.workflowId)).length).toBeLessThanOrEqual(1);
    }

    // Both processes did the work, not one of them.
    const identities = new Set<string>();
    for (const handle of handles) {
      const history = await handle.fetchHistory();
      for (const type of ['inspectSource', 'createImportJob', 'uploadData', 'awaitJobCompletion']) {
        for (const identity of activityWorkers(history, type)) identities.add(identity);
      }
    }
    expect([...identities].sort()).toEqual(processes.map((p) => p.identity).sort());
  }, 240_000);
});
