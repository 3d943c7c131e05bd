/**
 * OpenTelemetry traces through the Temporal SDK's interceptors: the client's
 * start of an import and each activity it runs (workflows are not traced,
 * see TRACING_WORKFLOW_MODULES), exported
 * over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set and dropped
 * otherwise. Spans carry the SDK's attributes (workflow and activity types,
 * workflow and run ids), never an argument or a result, so the service token
 * cannot reach one.
 *
 * The workflow interceptors are in every workflow bundle (a prebuilt bundle
 * cannot take them at start), so the workflow span sink is always given:
 * with tracing off it feeds a processor that drops every span. The activity
 * and client spans use the global tracer provider, which only an enabled
 * tracing registers; unregistered, those spans cost nothing.
 */
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, NoopSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { ClientInterceptors } from '@temporalio/client';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  type OpenTelemetrySinks,
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { InjectedSinks, WorkerOptions } from '@temporalio/worker';

/**
 * The workflow interceptors bundled into every workflow bundle: none. The
 * SDK's OpenTelemetry workflow interceptors wrap every handler in awaits of
 * their own, which moves an Update's completion relative to the timers the
 * same activation starts or cancels: the budget ledger's recorded histories
 * then failed to replay (a Timer or Update machine met the other's event).
 * Until replays are proven with them, workflows are not traced; the client's
 * start and each activity are.
 */
export const TRACING_WORKFLOW_MODULES: string[] = [];

export const SERVICE_NAME = 'import-worker';

export interface Tracing {
  /** For each Worker.create: the activity interceptors and the workflow span sink. */
  worker: Pick<WorkerOptions, 'sinks'> & {
    activityInterceptors: NonNullable<WorkerOptions['interceptors']>['activity'];
  };
  /** For a Client: the start of a workflow opens its trace. */
  client: ClientInterceptors;
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
  let provider: NodeTracerProvider | undefined;
  if (processor) {
    // The Node provider, for its async-local context: without it a span is never the active one, and
    // neither the client's start nor an activity's run would join the workflow's trace.
    provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
    provider.register();
  }
  const sinks: InjectedSinks<OpenTelemetrySinks> = {
    exporter: makeWorkflowExporter(processor ?? new NoopSpanProcessor(), resource),
  };
  return {
    worker: {
      sinks: sinks as WorkerOptions['sinks'],
      activityInterceptors: processor
        ? [
            (ctx) => ({
              inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
              outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
            }),
          ]
        : [],
    },
    client: processor ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : {},
    shutdown: async () => {
      await provider?.shutdown();
    },
  };
}

/** The OTLP/HTTP exporter for an endpoint such as http://collector:4318 (spans go to /v1/traces). */
export function otlpProcessor(endpoint: string): SpanProcessor {
  return new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` }));
}
