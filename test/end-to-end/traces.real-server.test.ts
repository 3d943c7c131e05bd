/**
 * Traces on the full stack: a worker in this process with tracing into an
 * in-memory exporter, and a client with the same tracing plugin, import a
 * real file. The client's start, the workflow's run and each step's activity
 * (scheduled by the run, run by the worker) are one trace, each span a child
 * of the one before; the entity workflows the steps update make no workflow
 * spans; and no span carries the service token. A night and the imports it
 * starts are one trace as well. An import's history, its job record's and
 * the ledger's replay on workers with tracing on and off. (In-memory instead of an
 * OTLP collector: none runs here; the exporter is the only part swapped.)
 */
import { randomUUID } from 'node:crypto';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTracing, type Tracing } from '../../worker/process/tracing.js';
import { ledgerWorkflowId } from '../../workflows/contracts/budget.js';
import { jobRecordWorkflowId } from '../../workflows/contracts/job-record.js';
import type { NightlyImportInput } from '../../workflows/contracts/nightly.js';
import type { importFile } from '../../workflows/import-file.js';
import type { nightlyImport } from '../../workflows/nightly-import.js';
import { DEMO_TOKENS } from '../simulator/server.js';
import { accountsCsv } from '../support/accounts-csv.js';
import { type FullStack, startFullStack } from '../support/full-stack.js';
import { bundleWorkflows } from '../support/workflow-bundle.js';

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
    await finishedSpan('RunWorkflow:importFile');
    const all = exporter.getFinishedSpans();
    const ofThisImport = all.filter((s) => Object.values(s.attributes).includes(workflowId));
    const start = only(ofThisImport, 'StartWorkflow:importFile');
    const traceId = start.spanContext().traceId;
    expect(ofThisImport.length).toBeGreaterThan(2 * STEPS.length);
    expect(new Set(ofThisImport.map((s) => s.spanContext().traceId))).toEqual(new Set([traceId]));

    const spans = all.filter((s) => s.spanContext().traceId === traceId);
    const run = only(spans, 'RunWorkflow:importFile');
    expect(run.parentSpanId, 'the run is a child of the start').toBe(start.spanContext().spanId);
    for (const step of STEPS) {
      const scheduled = only(spans, `StartActivity:${step}`);
      const ran = spans.filter((s) => s.name === `RunActivity:${step}`);
      expect(ran.length, step).toBeGreaterThan(0);
      expect(scheduled.parentSpanId, `${step} is scheduled by the run`).toBe(run.spanContext().spanId);
      for (const attempt of ran) expect(attempt.parentSpanId, step).toBe(scheduled.spanContext().spanId);
    }

    // The ledger and the job record (the steps send them Updates) keep their exact command order: they have
    // no workflow interceptors, so no span of theirs, in this trace or another.
    const entitySpans = all.filter((s) => /^(HandleUpdate|ValidateUpdate):/.test(s.name));
    expect(entitySpans.map((s) => s.name)).toEqual([]);

    const text = JSON.stringify(
      all.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status })),
    );
    expect(text).toContain(workflowId);
    expect(text).not.toContain(DEMO_TOKENS.importer);
  }, 120_000);

  it('puts a night and the imports it starts into one trace', async () => {
    await stack.putObject('nightly/a.csv', accountsCsv(1024));
    const client = new Client({ connection: stack.env.connection, namespace: stack.namespace, ...tracing.client });
    const workflowId = `traces-nightly-${randomUUID()}`;
    const feed: NightlyImportInput = {
      feedId: 'traces',
      feed: {
        bucket: stack.bucket,
        prefix: 'nightly/',
        entityType: 'Account',
        listAction: 'insert',
        maxConcurrentImports: 1,
        tenant: 'default',
      },
    };
    const tally = await client.workflow.execute<typeof nightlyImport>('nightlyImport', {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [feed],
    });
    expect(tally).toMatchObject({ started: 1, succeeded: 1 });
    const night = await finishedSpan('RunWorkflow:nightlyImport');
    const traceId = night.spanContext().traceId;
    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    const startsChild = only(spans, 'StartChildWorkflow:importFile');
    expect(startsChild.parentSpanId, 'the night starts the import').toBe(night.spanContext().spanId);
    const child = only(spans, 'RunWorkflow:importFile');
    expect(child.parentSpanId, 'the import runs under the night').toBe(startsChild.spanContext().spanId);
    const childSteps = spans.filter(
      (s) => s.name.startsWith('StartActivity:') && s.parentSpanId === child.spanContext().spanId,
    );
    expect(childSteps.map((s) => s.name)).toEqual(expect.arrayContaining(STEPS.map((step) => `StartActivity:${step}`)));
  }, 120_000);

  it('replays the import, its job record and the ledger on a worker with tracing on and on one with it off', async () => {
    await stack.putObject('replayed.csv', accountsCsv(1024));
    const client = new Client({ connection: stack.env.connection, namespace: stack.namespace, ...tracing.client });
    const workflowId = `traces-replayed-${randomUUID()}`;
    await client.workflow.execute<typeof importFile>('importFile', {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [
        {
          source: { bucket: stack.bucket, key: 'replayed.csv' },
          dataImportName: `Traces ${workflowId}`,
          entityType: 'Account',
          listAction: 'insert',
          trigger: 'cli',
        },
      ],
    });
    const { ETag } = await stack.s3.client.send(new HeadObjectCommand({ Bucket: stack.bucket, Key: 'replayed.csv' }));
    const version = { tenant: 'default', bucket: stack.bucket, key: 'replayed.csv', etag: ETag! };
    // The bundle the worker ran: the import workflows' tracing interceptors are in it, whatever the settings.
    const code = await bundleWorkflows();
    for (const id of [workflowId, jobRecordWorkflowId(version), ledgerWorkflowId('default')]) {
      const history = await client.workflow.getHandle(id).fetchHistory();
      for (const worker of [tracing.worker, createTracing(undefined).worker]) {
        await Worker.runReplayHistory({ workflowBundle: { code }, ...worker }, history, id);
      }
    }
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
