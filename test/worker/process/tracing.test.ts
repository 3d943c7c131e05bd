/**
 * The tracing plugin the worker and its client take when a collector is set:
 * the SDK's OpenTelemetryPlugin, keeping its client and activity interceptors
 * and its workflow span sink, but not its workflow interceptor module (which
 * would trace every workflow type, the budget ledger's included, and only on
 * workers with tracing on). The bundle's own module stays as given.
 */
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { BundlerPlugin, WorkerOptions } from '@temporalio/worker';
import { afterAll, describe, expect, it } from 'vitest';
import { createTracing } from '../../../worker/process/tracing.js';
import { WORKFLOW_INTERCEPTOR_MODULES, WORKFLOWS_SOURCE } from '../../../worker/process/workflow-source.js';

const tracing = createTracing(new SimpleSpanProcessor(new InMemorySpanExporter()));
const plugin = tracing.worker.plugins![0]!;

afterAll(() => tracing.shutdown());

describe('the tracing plugin', () => {
  const given = {
    taskQueue: 'q',
    workflowsPath: WORKFLOWS_SOURCE,
    interceptors: { workflowModules: WORKFLOW_INTERCEPTOR_MODULES },
  } satisfies WorkerOptions;

  it('adds the activity interceptors and the workflow span sink, and keeps the workflow modules as given', async () => {
    const configured = await plugin.configureWorker!(given);
    expect(configured.interceptors?.activity).toHaveLength(1);
    expect(configured.sinks).toHaveProperty('exporter');
    expect(configured.interceptors?.workflowModules).toEqual(WORKFLOW_INTERCEPTOR_MODULES);
  });

  it('keeps them as given on a replay worker and in a bundle too', async () => {
    const replaying = await plugin.configureReplayWorker!(given);
    expect(replaying.interceptors?.workflowModules).toEqual(WORKFLOW_INTERCEPTOR_MODULES);
    expect(replaying.sinks).toHaveProperty('exporter');
    const bundle = { workflowsPath: WORKFLOWS_SOURCE, workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES };
    expect((plugin as BundlerPlugin).configureBundler!(bundle).workflowInterceptorModules).toEqual(
      WORKFLOW_INTERCEPTOR_MODULES,
    );
  });

  it('is the one a client takes too', () => {
    expect(tracing.client.plugins).toEqual([plugin]);
  });

  it('is absent with tracing off, which leaves only the sink that drops workflow spans', () => {
    const off = createTracing(undefined);
    expect(off.worker.plugins).toBeUndefined();
    expect(off.client.plugins).toBeUndefined();
    expect(off.worker.sinks).toHaveProperty('exporter');
  });
});
