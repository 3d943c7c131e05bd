/**
 * Traces on the full stack: a worker in this process with tracing into an
 * in-memory exporter, and a client with the tracing client interceptor,
 * import a real file. The client's start and every step's activity run are
 * traced, each naming the import's workflow, and no span carries the
 * service token (workflows themselves are not traced: tracing.ts says why). (In-memory instead of an OTLP collector: none runs here; the
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

  it('traces the start and each step of an import, naming its workflow, without the token', async () => {
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
    // Workflows are not traced (worker/process/tracing.ts says why): the client's start and every step's
    // activity are, each span naming the import's workflow id.
    let spans: ReadableSpan[] = [];
    const lastStep = `RunActivity:${STEPS.at(-1)}`;
    for (;;) {
      spans = exporter.getFinishedSpans();
      if (spans.some((s) => s.name === lastStep)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(spans.find((s) => s.name === 'StartWorkflow:importFile')).toBeDefined();
    const ofThisImport = spans.filter((s) => Object.values(s.attributes).includes(workflowId));
    const names = new Set(ofThisImport.map((s) => s.name));
    for (const step of STEPS) expect(names, step).toContain(`RunActivity:${step}`);
    const text = JSON.stringify(
      spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status })),
    );
    expect(text).not.toContain(DEMO_TOKENS.importer);
  }, 120_000);
});
