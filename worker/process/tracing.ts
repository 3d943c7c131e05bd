/**
 * OpenTelemetry traces through the Temporal SDK's OpenTelemetry plugin, one
 * trace per import: the client's start, the import workflow's run (its
 * interceptors are in every workflow bundle, workflows/tracing-interceptors.ts),
 * and each activity it runs. Exported over OTLP/HTTP when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set, dropped otherwise. Spans carry the
 * SDK's attributes (workflow and activity types, ids, the workflow's info),
 * never an argument or a result, so the service token cannot reach one.
 */
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, NoopSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { ClientOptions } from '@temporalio/client';
import {
  makeWorkflowExporter,
  OpenTelemetryPlugin,
  type OpenTelemetrySinks,
} from '@temporalio/interceptors-opentelemetry';
import type { BundleOptions, InjectedSinks, ReplayWorkerOptions, WorkerOptions } from '@temporalio/worker';

export const SERVICE_NAME = 'import-worker';

export interface Tracing {
  /** For each Worker.create and replay: the plugin when tracing is on, else the sink that drops workflow spans. */
  worker: Pick<WorkerOptions, 'plugins' | 'sinks'>;
  /** For a Client: the plugin when tracing is on (the start of a workflow opens its trace). */
  client: Pick<ClientOptions, 'plugins'>;
  /** Sends what is still buffered; call before the process exits. */
  shutdown(): Promise<void>;
}

/**
 * Tracing into `processor` (the OTLP exporter in production, an in-memory
 * one in tests), registered as the process's global tracer provider; none
 * given: off.
 */
export function createTracing(processor: SpanProcessor | undefined): Tracing {
  const resource = new Resource({ 'service.name': SERVICE_NAME });
  if (!processor) {
    // The import workflows' interceptors are bundled either way and send their spans to this sink.
    const sinks: InjectedSinks<OpenTelemetrySinks> = {
      exporter: makeWorkflowExporter(new NoopSpanProcessor(), resource),
    };
    return { worker: { sinks: sinks as WorkerOptions['sinks'] }, client: {}, shutdown: async () => {} };
  }
  // The Node provider, for its async-local context: without it a span is never the active one, and neither
  // the client's start nor an activity's run would carry its trace on. The plugin's client and activity
  // interceptors use this global provider; its workflow span sink feeds `processor` directly.
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  provider.register();
  const plugin = new ImportTracingPlugin({ resource, spanProcessor: processor });
  return {
    worker: { plugins: [plugin] },
    client: { plugins: [plugin] },
    shutdown: () => provider.shutdown(),
  };
}

/**
 * The SDK's plugin without its workflow interceptor module, which would trace
 * every workflow type, the budget ledger's included, and only on workers with
 * tracing on. The bundle has its own module instead, for the import workflows
 * only and whatever the tracing settings, so that a workflow's commands never
 * depend on them. The plugin's client and activity interceptors and its
 * workflow span sink stay.
 */
class ImportTracingPlugin extends OpenTelemetryPlugin {
  override configureWorker(options: WorkerOptions): WorkerOptions {
    return withWorkflowModulesOf(options, super.configureWorker(options));
  }

  override configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    return withWorkflowModulesOf(options, super.configureReplayWorker(options));
  }

  override configureBundler(options: BundleOptions): BundleOptions {
    return options;
  }
}

function withWorkflowModulesOf<O extends Pick<WorkerOptions, 'interceptors'>>(given: O, configured: O): O {
  return {
    ...configured,
    interceptors: { ...configured.interceptors, workflowModules: given.interceptors?.workflowModules },
  };
}

/** The OTLP/HTTP exporter for an endpoint such as http://collector:4318 (spans go to /v1/traces). */
export function otlpProcessor(endpoint: string): SpanProcessor {
  return new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` }));
}
