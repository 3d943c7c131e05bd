/**
 * The import's outcome metrics, emitted from the workflow through the SDK's
 * workflow metric meter: the worker serves them on its Prometheus endpoint
 * beside the SDK's own, tagged with namespace, task queue and workflow type.
 * The SDK skips these emissions while a workflow replays, so a worker that
 * takes over an import (after a crash or an evicted cache) never counts its
 * outcome or its waits twice, and nothing here touches the history.
 *
 * Every series carries `entity_type` and `trigger` (who started the import:
 * `cli`, `schedule`, `reset` for a run an operator's Reset made, `other`).
 * The names are the ones deploy/prometheus/alerts.yaml and the Grafana
 * dashboard read; test/deploy/observability.real-server.test.ts checks them
 * against a real worker's /metrics.
 */
import type { MetricTags } from '@temporalio/common';
import { metricMeter, type WorkflowInfo } from '@temporalio/workflow';
import type { ImportFileInput } from './contracts/import-input.js';
import { IMPORT_METRICS } from './contracts/import-metrics.js';

/** How an import ended: `abandoned` is an operator's abandon signal, `cancelled` a cancel request. */
export type ImportOutcome = 'completed' | 'failed' | 'abandoned' | 'cancelled';
/** How an operator wait ended. */
export type OperatorWaitEnd = 'retried' | 'abandoned' | 'timed-out';

/** Who started this run: the input's word, else a nightly parent, and a Reset above both. */
export function triggerOf(input: ImportFileInput, info: WorkflowInfo): string {
  // A Reset starts a new run but keeps the started event's original run id.
  if (info.originalExecutionRunId !== info.runId) return 'reset';
  if (input.trigger) return input.trigger;
  return info.parent ? 'schedule' : 'other';
}

export class ImportMetrics {
  private readonly meter;

  constructor(tags: { entity_type: string; trigger: string }) {
    this.meter = metricMeter.withTags(tags as MetricTags);
  }

  ended(outcome: ImportOutcome, durationMs: number): void {
    this.meter.createCounter(IMPORT_METRICS.outcomes, 'imports', 'Imports that ended, by outcome').add(1, { outcome });
    this.meter
      .createHistogram(IMPORT_METRICS.durationSeconds, 'float', 's', 'From the start of the import to its end')
      .record(durationMs / 1000, { outcome });
  }

  /** What a completed import moved: its file's bytes and the parts it was sent in. */
  delivered(bytes: number, parts: number): void {
    this.meter.createHistogram(IMPORT_METRICS.fileBytes, 'int', 'bytes', 'Size of each imported file').record(bytes);
    this.meter.createCounter(IMPORT_METRICS.parts, 'parts', 'Parts sent by completed imports').add(parts);
  }

  operatorWaitStarted(step: string, failureType: string): void {
    this.meter
      .createCounter(IMPORT_METRICS.operatorWaitsStarted, 'waits', 'Imports that began waiting for an operator')
      .add(1, { step, failure_type: failureType });
  }

  operatorWaitEnded(how: OperatorWaitEnd): void {
    this.meter
      .createCounter(IMPORT_METRICS.operatorWaitsEnded, 'waits', 'Operator waits that ended, by how')
      .add(1, { resolution: how });
  }

  budgetWaitStarted(endpoint: string): void {
    this.meter
      .createCounter(IMPORT_METRICS.budgetWaitsStarted, 'waits', 'Imports that began waiting for a daily budget')
      .add(1, { endpoint });
  }

  budgetWaitEnded(endpoint: string, waitedMs: number): void {
    this.meter
      .createHistogram(IMPORT_METRICS.budgetWaitSeconds, 'float', 's', 'Length of each ended budget wait')
      .record(waitedMs / 1000, { endpoint });
  }
}
