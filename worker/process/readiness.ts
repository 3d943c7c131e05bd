/**
 * What `/readyz` checks, each cheaply and without a service call or a budget
 * reservation, so a probe every few seconds costs nothing that counts:
 * - temporal: the frontend answers GetSystemInfo on the worker's connection
 *   (one small RPC; the same call the SDK makes when it connects);
 * - pollers: the three workers (main, uploads, polls) run, and each of their
 *   task pollers is polling (none shut down or failed);
 * - token: the service token can be had without a service call: the token
 *   file holds one token now (stat, and a read only when it changed, as a
 *   request does), the client secret file is not empty; a token from the
 *   environment was checked at start;
 * - budgetLedger: the tenant's ledger answers its usage query (a read: no
 *   Update, no history event), or does not exist yet (the first reservation
 *   starts it).
 * Each check has its own deadline; concurrent probes share one run.
 */
import { readFile } from 'node:fs/promises';
import type { Client } from '@temporalio/client';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { readLedgerUsage } from '../../activities/budget/temporal-gate.js';
import { createTokenSource } from '../../activities/service/token-source.js';
import type { Config, TokenConfig } from '../../temporal.config.js';
import { transportFailureReason } from '../shared/transport-errors.js';

export type CheckName = 'temporal' | 'pollers' | 'token' | 'budgetLedger';

export interface CheckResult {
  ok: boolean;
  /** What was seen: why it failed, or what passed. Never a secret. */
  detail: string;
}

export interface ReadinessReport {
  ready: boolean;
  checks: Record<CheckName, CheckResult>;
}

/** The workers runWorker polls with, by the task queue each serves. */
export interface PollingWorkers {
  main: Worker;
  uploads: Worker;
  polls: Worker;
}

/** What the checks look at; the worker process fills it in as it starts. */
export interface ReadinessTargets {
  connection?: NativeConnection;
  client?: Client;
  workers?: PollingWorkers;
}

/** Each check's deadline: well inside the probe timeouts of deploy/kubernetes (5 s). */
const CHECK_TIMEOUT_MS = 3_000;

export class Readiness {
  readonly #targets: ReadinessTargets = {};
  readonly #token: () => Promise<string>;
  readonly #config: Config;
  #running: Promise<ReadinessReport> | undefined;

  constructor(config: Config) {
    this.#config = config;
    this.#token = tokenCheck(config.service?.token);
  }

  /** The connection and client, once the worker reached Temporal. */
  connected(connection: NativeConnection, client: Client): void {
    this.#targets.connection = connection;
    this.#targets.client = client;
  }

  /** The workers, once they poll. */
  polling(workers: PollingWorkers): void {
    this.#targets.workers = workers;
  }

  check(): Promise<ReadinessReport> {
    this.#running ??= this.run().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  private async run(): Promise<ReadinessReport> {
    const { connection, client, workers } = this.#targets;
    const [temporal, pollers, token, budgetLedger] = await Promise.all([
      settle(() => (connection ? temporalAnswers(connection) : notYet('not connected yet'))),
      settle(async () => (workers ? pollersRunning(workers) : notYet('workers not started yet'))),
      settle(this.#token),
      settle(() => (client ? ledgerAnswers(client, this.#config) : notYet('not connected yet'))),
    ]);
    const checks = { temporal, pollers, token, budgetLedger };
    return { ready: Object.values(checks).every((c) => c.ok), checks };
  }
}

async function temporalAnswers(connection: NativeConnection): Promise<string> {
  await connection
    .withDeadline(Date.now() + CHECK_TIMEOUT_MS, () => connection.workflowService.getSystemInfo({}))
    .catch(asTransportFailure);
  return 'the frontend answered';
}

function pollersRunning(workers: PollingWorkers): string {
  const problems: string[] = [];
  for (const [name, worker] of Object.entries(workers)) {
    const status = worker.getStatus();
    if (status.runState !== 'RUNNING') {
      problems.push(`${name} worker ${status.runState}`);
      continue;
    }
    if (status.activityPollerState !== 'POLLING')
      problems.push(`${name} activity poller ${status.activityPollerState}`);
    // Only the main worker runs workflows; the others' workflow pollers are shut down by design.
    if (name === 'main' && status.workflowPollerState !== 'POLLING') {
      problems.push(`main workflow poller ${status.workflowPollerState}`);
    }
  }
  if (problems.length > 0) throw new Error(problems.join('; '));
  return 'main, uploads and polls workers polling';
}

async function ledgerAnswers(client: Client, config: Config): Promise<string> {
  const { ledgerExists } = await client
    .withDeadline(Date.now() + CHECK_TIMEOUT_MS, () => readLedgerUsage(client, config.tenant, config.budget))
    .catch(asTransportFailure);
  return ledgerExists
    ? `the ledger of tenant ${config.tenant} answered`
    : `no ledger for tenant ${config.tenant} yet (the first reservation starts it)`;
}

function tokenCheck(token: TokenConfig | undefined): () => Promise<string> {
  if (!token) return async () => notYet('no service configured');
  if (token.kind === 'env') return async () => 'COMPANY_DATA_TOKEN, checked at start';
  if (token.kind === 'file') {
    // One source for every probe: it re-reads the file only when the file changed, as a request does.
    const source = createTokenSource(token);
    return async () => {
      await source.current();
      return `token file ${token.path} holds a token`;
    };
  }
  const secret = token.clientSecret;
  if (!('file' in secret)) return async () => 'client credentials (the exchange itself is a service call: not made)';
  return async () => {
    if ((await readFile(secret.file, 'utf8')).trim() === '')
      throw new Error(`client secret file ${secret.file} is empty`);
    return `client secret file ${secret.file} is not empty (the exchange itself is a service call: not made)`;
  };
}

/** The SDK's transport errors carry Rust debug output: the reason an operator reads instead. */
function asTransportFailure(err: unknown): never {
  throw new Error(transportFailureReason(err));
}

function notYet(detail: string): never {
  throw new Error(detail);
}

/** A check's outcome, within its deadline, whatever it threw; the reason as an operator reads it. */
async function settle(check: () => Promise<string>): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    return { ok: true, detail: await Promise.race([check(), deadline]) };
  } catch (err) {
    return { ok: false, detail: (err as Error)?.message ?? String(err) };
  } finally {
    clearTimeout(timer);
  }
}
