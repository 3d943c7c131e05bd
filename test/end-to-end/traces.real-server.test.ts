/**
 * Traces on the full stack: a worker in this process with tracing into an
 * in-memory exporter, and a client with the tracing client interceptor,
 * import a real file. The client's start, the workflow's run and every step's
 * activity (scheduled and run) are one trace, and no span carries the
 * service token. (In-memory instead of an OTLP collector: none runs here; the
 * exporter is the only part swapped.)
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
    const client = new Client({
      connection: stack.env.connection,
      namespace: stack.namespace,
      interceptors: tracing.client,
    });
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
    // The workflow's own spans reach the exporter through a sink once its last task completes.
    let spans: ReadableSpan[] = [];
    for (;;) {
      spans = exporter.getFinishedSpans();
      if (spans.some((s) => s.name === 'RunWorkflow:importFile')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const start = spans.find((s) => s.name === 'StartWorkflow:importFile');
    expect(start, 'the client opened the trace').toBeDefined();
    const trace = spans.filter((s) => s.spanContext().traceId === start!.spanContext().traceId);
    const names = new Set(trace.map((s) => s.name));
    expect(names).toContain('RunWorkflow:importFile');
    for (const step of STEPS) {
      expect(names, step).toContain(`StartActivity:${step}`);
      expect(names, step).toContain(`RunActivity:${step}`);
    }
    // Every span of this import's workflow id is in that one trace.
    const ofThisImport = spans.filter((s) => Object.values(s.attributes).includes(workflowId));
    expect(ofThisImport.length).toBeGreaterThan(STEPS.length);
    expect(new Set(ofThisImport.map((s) => s.spanContext().traceId)).size).toBe(1);
    const text = JSON.stringify(
      spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status })),
    );
    expect(text).not.toContain(DEMO_TOKENS.importer);
  }, 120_000);
});
