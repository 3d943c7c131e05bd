/**
 * What `import-worker status` reports of a workflow, by its type: an import's
 * phase, bytes and waits; a night's tally and running imports; a budget
 * ledger's usage; a job record's job; a mapping lock's holders. Each type is
 * asked its own query, so a workflow a worker runs is never taken for one
 * nobody runs. Gathered here as data; status-command.ts prints it as text or JSON.
 */
import type { WorkflowExecutionDescription, WorkflowHandle } from '@temporalio/client';
import type { UploadProgress } from '../../workflows/contracts/activities.js';
import { LEDGER_WORKFLOW_TYPE, type LedgerUsage } from '../../workflows/contracts/budget.js';
import type { ImportFileResult, ImportProgress } from '../../workflows/contracts/import-workflow.js';
import { JOB_RECORD_WORKFLOW_TYPE, type JobRecordView } from '../../workflows/contracts/job-record.js';
import { MAPPING_LOCK_WORKFLOW_TYPE, type MappingLockHolder } from '../../workflows/contracts/mapping-lock.js';
import {
  jobRecordQuery,
  mappingLockHoldersQuery,
  nightlyProgressQuery,
  progressQuery,
  usageQuery,
} from '../../workflows/contracts/messages.js';
import {
  NIGHTLY_WORKFLOW_TYPE,
  type NightlyImportResult,
  type NightlyProgress,
} from '../../workflows/contracts/nightly.js';
import { retryingStepsOf, uploadProgressOf } from './import-progress.js';
import { describeJobFreshness, jobFreshnessOf } from './job-freshness.js';
import { hasWorkflowPoller } from './task-queue-pollers.js';
import { failureReason } from './watch-import.js';

export const IMPORT_WORKFLOW_TYPE = 'importFile';

/** The statuses of a workflow that ended without doing its work: `status` exits 1 for them. */
export const UNSUCCESSFUL_STATUSES = ['FAILED', 'TERMINATED', 'TIMED_OUT', 'CANCELLED'] as const;

export type Details =
  | {
      kind: 'import';
      progress: ImportProgress;
      upload?: UploadProgress;
      freshness?: string;
      retrying: ReturnType<typeof retryingStepsOf>;
    }
  | { kind: 'nightly'; progress: NightlyProgress }
  | { kind: 'ledger'; usage: LedgerUsage }
  | { kind: 'jobRecord'; record: JobRecordView }
  | { kind: 'mappingLock'; holders: MappingLockHolder[] };

export interface StatusReport {
  workflowId: string;
  type: string;
  status: string;
  taskQueue: string;
  startedAt: string;
  closedAt?: string;
  /** Whether a worker polls the workflow's task queue; asked of running workflows only. */
  worker?: 'polling' | 'none';
  /** What the workflow's own query answered, while it runs. */
  details?: Details;
  /** Why there are no details for a running workflow a worker polls for. */
  detailsUnavailable?: string;
  /** How it ended: the result of a completed run. */
  result?: unknown;
  /** How it ended: why a failed run failed. */
  failure?: string;
  ui: string;
}

type Ask = (handle: WorkflowHandle, description: WorkflowExecutionDescription, nowMs: number) => Promise<Details>;

/** The query each workflow type answers while it runs. */
const QUERIES: Record<string, Ask> = {
  [IMPORT_WORKFLOW_TYPE]: async (handle, description, nowMs) => {
    const freshness = jobFreshnessOf(description);
    const upload = uploadProgressOf(description);
    return {
      kind: 'import',
      progress: await handle.query(progressQuery),
      ...(upload ? { upload } : {}),
      ...(freshness ? { freshness: describeJobFreshness(freshness, nowMs) } : {}),
      retrying: retryingStepsOf(description),
    };
  },
  [NIGHTLY_WORKFLOW_TYPE]: async (handle) => ({ kind: 'nightly', progress: await handle.query(nightlyProgressQuery) }),
  [LEDGER_WORKFLOW_TYPE]: async (handle) => ({ kind: 'ledger', usage: await handle.query(usageQuery) }),
  [JOB_RECORD_WORKFLOW_TYPE]: async (handle) => ({ kind: 'jobRecord', record: await handle.query(jobRecordQuery) }),
  [MAPPING_LOCK_WORKFLOW_TYPE]: async (handle) => ({
    kind: 'mappingLock',
    holders: await handle.query(mappingLockHoldersQuery),
  }),
};

export async function statusReport(handle: WorkflowHandle, ui: string, nowMs: number): Promise<StatusReport> {
  const description = await handle.describe();
  const status = description.status.name;
  const report: StatusReport = {
    workflowId: handle.workflowId,
    type: description.type,
    status,
    taskQueue: description.taskQueue,
    startedAt: description.startTime.toISOString(),
    ...(description.closeTime ? { closedAt: description.closeTime.toISOString() } : {}),
    ui,
  };
  if (status === 'RUNNING') await addRunningDetails(report, handle, description, nowMs);
  else if (status === 'COMPLETED') report.result = await handle.result();
  else if (isUnsuccessful(status)) report.failure = await handle.result().then(() => 'none', failureReason);
  return report;
}

async function addRunningDetails(
  report: StatusReport,
  handle: WorkflowHandle,
  description: WorkflowExecutionDescription,
  nowMs: number,
): Promise<void> {
  // Without a worker on its queue a query would only wait for its timeout. A failed check claims nothing.
  const polling = await hasWorkflowPoller(handle.client, description.taskQueue).catch(() => true);
  report.worker = polling ? 'polling' : 'none';
  if (!polling) return;
  const ask = QUERIES[description.type];
  if (!ask) {
    report.detailsUnavailable = `a ${description.type} workflow answers no query status knows`;
    return;
  }
  try {
    report.details = await ask(handle, description, nowMs);
  } catch (err) {
    report.detailsUnavailable = `its ${description.type} query was not answered (${(err as Error).message.split('\n')[0]})`;
  }
}

export function isUnsuccessful(status: string): boolean {
  return (UNSUCCESSFUL_STATUSES as readonly string[]).includes(status);
}

export function isImportResult(type: string, result: unknown): result is ImportFileResult {
  return type === IMPORT_WORKFLOW_TYPE && typeof result === 'object' && result !== null;
}

export function isNightlyResult(type: string, result: unknown): result is NightlyImportResult {
  return type === NIGHTLY_WORKFLOW_TYPE && typeof result === 'object' && result !== null;
}
