/**
 * The names of the import outcome metrics the workflow emits
 * (workflows/import-metrics.ts), and the histogram buckets the worker's
 * Prometheus exporter gives them (the exporter's defaults are for
 * milliseconds of an RPC, not hours of an import).
 */
export const IMPORT_METRICS = {
  outcomes: 'import_outcomes_total',
  durationSeconds: 'import_duration_seconds',
  fileBytes: 'import_file_bytes',
  parts: 'import_parts_total',
  operatorWaitsStarted: 'import_operator_waits_started_total',
  operatorWaitsEnded: 'import_operator_waits_ended_total',
  budgetWaitsStarted: 'import_budget_waits_started_total',
  budgetWaitSeconds: 'import_budget_wait_seconds',
} as const;

const HOUR = 3600;

export const IMPORT_HISTOGRAM_BUCKETS: Record<string, number[]> = {
  [IMPORT_METRICS.durationSeconds]: [
    10,
    30,
    60,
    300,
    900,
    1800,
    HOUR,
    2 * HOUR,
    6 * HOUR,
    12 * HOUR,
    24 * HOUR,
    48 * HOUR,
  ],
  [IMPORT_METRICS.budgetWaitSeconds]: [60, 300, 900, HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, 24 * HOUR],
  [IMPORT_METRICS.fileBytes]: [1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 5e9],
};
