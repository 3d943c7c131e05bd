/**
 * The worker's own metrics, recorded on the Temporal runtime's meter so they
 * are served by the same Prometheus endpoint as the SDK's metrics.
 */
import type { MetricMeter } from '@temporalio/common';
import type { BudgetGate } from '../../activities/budget/gate.js';

export interface WorkerMetrics {
  bytesUploaded(bytes: number): void;
  apiCall(endpoint: string, status: number | 'error'): void;
  budgetRemaining(tenant: string, endpoint: string, remaining: number): void;
}

export function createWorkerMetrics(meter: MetricMeter): WorkerMetrics {
  const bytes = meter.createCounter('import_bytes_uploaded', 'bytes', 'Bytes streamed into import job data PUTs');
  const calls = meter.createCounter('import_api_calls', 'calls', 'Company Data Service calls by endpoint and status');
  const remaining = meter.createGauge('import_budget_remaining', 'int', 'Calls left in the daily window, per endpoint');
  return {
    bytesUploaded: (n) => bytes.add(n),
    apiCall: (endpoint, status) => calls.add(1, { endpoint, status: String(status) }),
    budgetRemaining: (tenant, endpoint, n) => remaining.set(n, { tenant, endpoint }),
  };
}

/** A BudgetGate that also records what each grant leaves. */
export function meteredBudgetGate(gate: BudgetGate, metrics: WorkerMetrics): BudgetGate {
  return {
    tenant: gate.tenant,
    async reserve(endpoint, requestId, alongWith) {
      const answer = await gate.reserve(endpoint, requestId, alongWith);
      metrics.budgetRemaining(gate.tenant, endpoint, answer.granted ? answer.remaining : 0);
      return answer;
    },
    release: (endpoint, requestId) => gate.release(endpoint, requestId),
    reportDailyLimit: (report) => {
      metrics.budgetRemaining(gate.tenant, report.endpoint, 0);
      return gate.reportDailyLimit(report);
    },
    usage: () => gate.usage(),
  };
}
