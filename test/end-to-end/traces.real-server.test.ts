/**
 * Traces on the full stack: a worker in this process with tracing into an
 * in-memory exporter, and a client with the same tracing plugin, import a
 * real file. The client's start, the workflow's run and each step's activity
 * (scheduled by the run, run by the worker) are one trace, each span a child
 * of the one before; the entity workflows the steps update make no workflow
 * spans; and no span carries the service token. (In-memory instead of an
 * OTLP collector: none runs here; the exporter is the only part swapped.)
 */
import { randomUUID } from 'node:crypto';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTracing, type Tracing } from '../../worker/process/tracing.js';
import type { importFile } from '../../workflows/import-file.js';
import { DEMO_TOKENS } from '../simulator/server.js';
import { accountsCsv } from '../support/accounts-csv.js';
import { type FullStack, startFullStack } from '../support/full-stack.js';

const STEPS = ['inspectSource', 'createImportJob', 'uploadData', 'awaitJobCompletion'];

describe('one trace per import', () => {
  let stack: FullStack;
  let tracing: Tracing;
  const exporter = new InMemorySpanExporter();

  beforeAll(async () => {
    tracing = createTracing(new SimpleSpanProcessor(exporter));
    stack = await startFullStack({ bucket: 'traces', name: 'traces' });
    await stack.putObject('accounts.csv', accountsCsv(64 * 1024));
    await stack.startWorker({ IMPORT_POLL_SCHEDULE: '1s' }, tracing);
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
    await tracing?.shutdown();
  });

  it('puts the start, the workflow and each step of an import into one trace, without the token', async () => {
    const client = new Client({ connection: stack.env.connection, namespace: stack.namespace, ...tracing.client });
    const workflowId = `traces-${randomUUID()}`;
    await client.workflow.execute<typeof importFile>('importFile', {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [
        {
          source: { bucket: stack.bucket, key: 'accounts.csv' },
          dataImportName: `Traces ${workflowId}`,
          entityType: 'Account',
          listAction: 'insert',
          trigger: 'cli',
        },
      ],
    });
    // The workflow's spans reach the exporter through a sink after the task that completes the run.
    const run = await finishedSpan('RunWorkflow:importFile');
    const spans = exporter.getFinishedSpans();
    const start = only(spans, 'StartWorkflow:importFile');
    const traceId = start.spanContext().traceId;

    expect(run.spanContext().traceId).toBe(traceId);
    expect(run.parentSpanId, 'the run is a child of the start').toBe(start.spanContext().spanId);
    for (const step of STEPS) {
      const scheduled = only(spans, `StartActivity:${step}`);
      const ran = spans.filter((s) => s.name === `RunActivity:${step}`);
      expect(ran.length, step).toBeGreaterThan(0);
      expect(scheduled.parentSpanId, `${step} is scheduled by the run`).toBe(run.spanContext().spanId);
      for (const attempt of ran) expect(attempt.parentSpanId, step).toBe(scheduled.spanContext().spanId);
    }
    const ofThisImport = spans.filter((s) => Object.values(s.attributes).includes(workflowId));
    expect(ofThisImport.length).toBeGreaterThan(2 * STEPS.length);
    expect(new Set(ofThisImport.map((s) => s.spanContext().traceId))).toEqual(new Set([traceId]));

    // The ledger and the job record keep their exact command order: no workflow interceptors, so no spans.
    const runs = new Set(spans.filter((s) => s.name.startsWith('RunWorkflow:')).map((s) => s.name));
    expect(runs).toEqual(new Set(['RunWorkflow:importFile']));
    expect(spans.filter((s) => s.name.startsWith('HandleUpdate:'))).toEqual([]);

    const text = JSON.stringify(
      spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status })),
    );
    expect(text).toContain(workflowId);
    expect(text).not.toContain(DEMO_TOKENS.importer);
  }, 120_000);

  /** The one span of that name, failing the test if there are none or several. */
  function only(spans: ReadableSpan[], name: string): ReadableSpan {
    const named = spans.filter((s) => s.name === name);
    expect(named.map((s) => s.name)).toEqual([name]);
    return named[0]!;
  }

  /** The span once exported; the bound only stops a wait for a span that never comes. */
  async function finishedSpan(name: string): Promise<ReadableSpan> {
    for (let waited = 0; waited < 30_000; waited += 50) {
      const span = exporter.getFinishedSpans().find((s) => s.name === name);
      if (span) return span;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no ${name} span was exported`);
  }
});
