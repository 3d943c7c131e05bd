/**
 * The workflow bundle's tracing: the Temporal SDK's OpenTelemetry workflow
 * interceptors, for the import workflows only. They open the run's span from
 * the trace context the starter put in the headers, and put the run's own
 * context into the headers of every activity and child import it schedules,
 * so the start, the run, its steps and a night's imports are one trace.
 *
 * The long-lived entities (budget ledger, job record, sweep board, mapping
 * lock) get none: the SDK's interceptors wrap an Update handler in awaits of
 * their own, which moves the Update's completion relative to the timers the
 * same activation starts or cancels, and the ledger's histories then fail to
 * replay. The import workflows receive no Update, and their activity and
 * child commands are issued in the same turn as without the interceptors.
 *
 * Always bundled, whether or not a collector is configured, so a workflow's
 * commands never depend on the worker's tracing settings; with tracing off
 * their spans go to a sink that drops them.
 */
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow/index.js';
import { type WorkflowInterceptorsFactory, workflowInfo } from '@temporalio/workflow';
import { NIGHTLY_WORKFLOW_TYPE } from './contracts/nightly.js';

/** The workflow types traced: an import of one file, and the night that starts them. */
export const TRACED_WORKFLOW_TYPES: ReadonlySet<string> = new Set(['importFile', NIGHTLY_WORKFLOW_TYPE]);

export const interceptors: WorkflowInterceptorsFactory = () => {
  if (!TRACED_WORKFLOW_TYPES.has(workflowInfo().workflowType)) return {};
  return {
    inbound: [new OpenTelemetryInboundInterceptor()],
    outbound: [new OpenTelemetryOutboundInterceptor()],
    internals: [new OpenTelemetryInternalsInterceptor()],
  };
};
