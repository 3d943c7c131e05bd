/**
 * The outcome metrics as a real worker process exports them, after real
 * imports on the full stack (Temporal dev server, s3rver, the simulator): one
 * completed (started as the CLI starts it), one failed, one abandoned by the
 * operator after waiting for them. Each outcome is counted once, by entity
 * type and trigger, and every metric the example alert rules
 * (deploy/prometheus/alerts.yaml) and the Grafana dashboard (deploy/grafana/)
 * read is one this worker really exports.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { freePort } from '../../worker/demo/free-port.js';
import type { ImportFileInput } from '../../workflows/contracts/import-input.js';
import { IMPORT_METRICS } from '../../workflows/contracts/import-metrics.js';
import { abandonSignal, progressQuery } from '../../workflows/contracts/messages.js';
import type { importFile } from '../../workflows/import-file.js';
import { accountsCsv } from '../support/accounts-csv.js';
import { type FullStack, startFullStack } from '../support/full-stack.js';
import { type WorkerPool, workerPool } from '../support/killable-worker.js';
import { ROOT } from './dockerfile.js';

/**
 * Prometheus makes `up` itself; the budget-wait series appear only once an
 * import waited for a daily budget, which takes a spent window (hours), so
 * they are checked against the names the workflow emits instead.
 */
const NOT_FROM_THE_WORKER = new Set(['up']);
const ONLY_AFTER_A_BUDGET_WAIT = new Set<string>([IMPORT_METRICS.budgetWaitsStarted, IMPORT_METRICS.budgetWaitSeconds]);

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseScrape(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

/** Metric names in a PromQL expression: identifiers not followed by `(` and not label names, keywords or units. */
function metricNamesIn(expr: string): string[] {
  const withoutLabels = expr.replace(/\{[^}]*\}/g, '').replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, '');
  const words = [...withoutLabels.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)]
    .filter((m) => !m[2])
    .map((m) => m[1]!);
  return words.filter((w) => w.includes('_') || w === 'up');
}

/** A histogram's or counter's family name, as the rules and the dashboard write it. */
function familyOf(name: string): string {
  return name.replace(/_(bucket|sum|count)$/, '');
}

function ruleExpressions(): string[] {
  const doc = parse(readFileSync(join(ROOT, 'deploy/prometheus/alerts.yaml'), 'utf8')) as {
    groups: { rules: { alert: string; expr: string }[] }[];
  };
  return doc.groups.flatMap((g) => g.rules.map((r) => r.expr));
}

function dashboardExpressions(): string[] {
  const doc = JSON.parse(readFileSync(join(ROOT, 'deploy/grafana/import-worker.json'), 'utf8')) as {
    panels: { targets?: { expr: string }[] }[];
  };
  return doc.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
}

describe('the outcome metrics a worker process exports', () => {
  let stack: FullStack;
  let workers: WorkerPool;
  let port: number;
  let scrape: Sample[];

  beforeAll(async () => {
    stack = await startFullStack({ bucket: 'observe', name: 'observe' });
    workers = workerPool(stack);
    port = await freePort();
    await stack.putObject('accounts.csv', accountsCsv(64 * 1024));
    await workers.start({
      env: { WORKER_METRICS_PORT: String(port), WORKER_HTTP_HOST: '127.0.0.1', IMPORT_POLL_SCHEDULE: '1s' },
    });
  }, 180_000);

  afterAll(async () => {
    await workers?.close();
    await stack?.close();
  });

  const start = (key: string, extra: Partial<ImportFileInput> = {}) => {
    const workflowId = `observe-${randomUUID()}`;
    return stack.env.client.workflow.start<typeof importFile>('importFile', {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [
        {
          source: { bucket: stack.bucket, key },
          dataImportName: `Observe ${workflowId}`,
          entityType: 'Account',
          listAction: 'insert',
          ...extra,
        },
      ],
    });
  };

  it('counts a completed, a failed and an abandoned import once each, by entity type and trigger', async () => {
    const completed = await start('accounts.csv', { trigger: 'cli' });
    await completed.result();
    const failed = await start('missing.csv');
    await expect(failed.result()).rejects.toBeInstanceOf(WorkflowFailedError);
    const waiting = await start('missing.csv', { onFailure: 'await-retry', trigger: 'cli' });
    for (;;) {
      if ((await waiting.query(progressQuery)).awaitingRetry) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await waiting.signal(abandonSignal);
    await expect(waiting.result()).rejects.toBeInstanceOf(WorkflowFailedError);

    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    scrape = parseScrape(text);
    const outcomes = scrape
      .filter((s) => s.name === IMPORT_METRICS.outcomes)
      .map((s) => [s.labels.outcome, s.labels.trigger, s.labels.entity_type, s.value])
      .sort();
    expect(outcomes).toEqual([
      ['abandoned', 'cli', 'Account', 1],
      ['completed', 'cli', 'Account', 1],
      ['failed', 'other', 'Account', 1],
    ]);
    const parts = scrape.filter((s) => s.name === IMPORT_METRICS.parts);
    expect(parts.map((s) => s.value)).toEqual([1]);
    const bytes = scrape.find((s) => s.name === `${IMPORT_METRICS.fileBytes}_sum`);
    expect(bytes?.value).toBe(accountsCsv(64 * 1024).length);
    const waits = scrape.filter((s) => s.name === IMPORT_METRICS.operatorWaitsStarted);
    expect(waits.map((s) => [s.labels.step, s.value])).toEqual([['inspectSource', 1]]);
    const ended = scrape.filter((s) => s.name === IMPORT_METRICS.operatorWaitsEnded);
    expect(ended.map((s) => [s.labels.resolution, s.value])).toEqual([['abandoned', 1]]);
    const durations = scrape.filter((s) => s.name === `${IMPORT_METRICS.durationSeconds}_count`);
    expect(durations.reduce((sum, s) => sum + s.value, 0)).toBe(3);
  }, 180_000);

  it('exports every metric the alert rules and the dashboard read', () => {
    expect(scrape, 'the first test scraped the worker').toBeDefined();
    const exported = new Set(scrape.map((s) => familyOf(s.name)));
    const emitted = new Set<string>(Object.values(IMPORT_METRICS));
    const read = new Set([...ruleExpressions(), ...dashboardExpressions()].flatMap(metricNamesIn).map(familyOf));
    expect(read.size).toBeGreaterThan(5);
    const missing = [...read].filter(
      (name) =>
        !NOT_FROM_THE_WORKER.has(name) &&
        !exported.has(name) &&
        !(ONLY_AFTER_A_BUDGET_WAIT.has(name) && emitted.has(name)),
    );
    expect(missing).toEqual([]);
  });
});
