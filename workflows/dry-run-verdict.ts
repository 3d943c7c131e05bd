/**
 * The dry run's decisions, pure so they run in the workflow sandbox and in
 * unit tests alike: what an import would spend of each daily budget, whether
 * the ledger has it, and what the findings add up to (import, fail, or
 * nothing to do because the version was imported already or is importing).
 */
import type { BudgetUsage } from './contracts/activities.js';
import type {
  BudgetCheck,
  DryRunJob,
  DryRunProblem,
  DryRunVerdict,
  ExistingJob,
  ObjectDryRun,
} from './contracts/dry-run.js';
import { BUDGETED_ENDPOINT_NAMES, type BudgetedEndpoint } from './contracts/endpoints.js';
import type { ImportFileInput } from './contracts/import-input.js';
import { DEFAULT_CALLS_PER_IMPORT } from './nightly-policy.js';

export interface EndpointCost {
  calls: number;
  /** at-least: list pages grow with the jobs the service lists; estimate: status polls grow with the job's run time. */
  bound?: 'at-least' | 'at-most' | 'estimate';
}

/**
 * What one import would spend, by endpoint: its reference reads (at most:
 * the worker may have them cached), the job list (at least a page: the job
 * wait's sweep, which the imports a worker waits on share, or a search after
 * an uncertain create), the create and the upload unless the job its record
 * holds makes them unnecessary, and the status reads (the upload's check,
 * then the polls the nightly budgets for, an hour at the slowest rate).
 * A file split into several jobs costs each part its own create, upload and
 * status reads (each part's record is its own: the version's says nothing).
 */
export function importCost(
  input: Pick<ImportFileInput, 'importSource' | 'entityType' | 'activityTypeId'>,
  existing: ExistingJob | undefined,
  parts = 1,
): Partial<Record<BudgetedEndpoint, EndpointCost>> {
  if (parts > 1) return splitImportCost(input, parts);
  const cost: Partial<Record<BudgetedEndpoint, EndpointCost>> = {};
  if (input.importSource !== undefined) cost.listSources = { calls: 1, bound: 'at-most' };
  if (input.entityType === 'Activity' && input.activityTypeId !== undefined) {
    cost.activityFields = { calls: 1, bound: 'at-most' };
  }
  cost.listJobs = { calls: 1, bound: 'at-least' };
  const state = existing?.state.toLowerCase();
  if (existing === undefined) cost.createJob = { calls: 1 };
  if (state === undefined || state === 'new') cost.submitData = { calls: 1 };
  // A completed job needs the upload's one status read and one poll; anything else polls until it ends.
  cost.jobStatus =
    state === 'completed' ? { calls: 2 } : { calls: 1 + (DEFAULT_CALLS_PER_IMPORT.jobStatus ?? 0), bound: 'estimate' };
  return cost;
}

function splitImportCost(
  input: Pick<ImportFileInput, 'importSource' | 'entityType' | 'activityTypeId'>,
  parts: number,
): Partial<Record<BudgetedEndpoint, EndpointCost>> {
  const cost = importCost(input, undefined);
  cost.createJob = { calls: parts };
  cost.submitData = { calls: parts };
  cost.jobStatus = { calls: parts * (1 + (DEFAULT_CALLS_PER_IMPORT.jobStatus ?? 0)), bound: 'estimate' };
  return cost;
}

/**
 * The job the version's record holds, as the import would meet it: one the
 * service failed while the record still names it (no import told it yet)
 * fails the import, which then tells the record; the next import creates a
 * new job.
 */
export function existingJobProblem(existing: ExistingJob | undefined): DryRunProblem | undefined {
  if (existing?.state.toLowerCase() !== 'failed') return undefined;
  return {
    check: 'awaitJobCompletion',
    type: 'JobFailed',
    message:
      `the service failed job ${existing.jobId} of this object version, and its job record still names it` +
      `${existing.recordedState ? ` (it last heard ${existing.recordedState})` : ''}: the import would reuse it and fail; ` +
      'the import after it creates a new job',
  };
}

/** What the record's answer means for an import that goes ahead, worded for the report. */
export function jobWarnings(job: DryRunJob): string[] {
  const existing = job.existing;
  if (existing?.state.toLowerCase() === 'completed') {
    return [
      `job ${existing.jobId} of this version completed already (job record ${job.record?.workflowId ?? '?'}): ` +
        'the import would send nothing and report it done',
    ];
  }
  if (!existing && job.record?.status === 'ended') {
    return [
      `job record ${job.record.workflowId} of this version ended without completing (failed, terminated or timed out): ` +
        'the import starts it afresh, knowing no job, and creates a new one',
    ];
  }
  return [];
}

/** Each costed endpoint against what the ledger has left now; a short one means a durable wait, not a failure. */
export function budgetChecks(
  cost: Partial<Record<BudgetedEndpoint, EndpointCost>>,
  usage: BudgetUsage | undefined,
  nowMs: number,
): BudgetCheck[] {
  const checks: BudgetCheck[] = [];
  for (const endpoint of BUDGETED_ENDPOINT_NAMES) {
    const c = cost[endpoint];
    if (!c) continue;
    const window = usage?.[endpoint];
    const check: BudgetCheck = { endpoint, calls: c.calls, waits: false };
    if (c.bound === 'at-least') check.atLeast = true;
    if (window) {
      const blocked = window.exhaustedUntil !== undefined && Date.parse(window.exhaustedUntil) > nowMs;
      check.remaining = blocked ? 0 : window.remaining;
      check.resetsAt = blocked ? (window.exhaustedUntil as string) : window.resetsAt;
      // Status polls beyond what is left wait for the reset mid-import; only the first calls must be there now.
      const neededNow = c.bound === 'estimate' ? 1 : c.calls;
      check.waits = check.remaining < neededNow;
    }
    checks.push(check);
  }
  return checks;
}

/**
 * The verdict: any problem fails it; otherwise an object version whose
 * import completed or still runs needs none (`start` refuses it, the
 * nightly skips it); else it would import.
 */
export function verdictOf(
  problems: DryRunProblem[],
  importState: string | undefined,
  byVersion: boolean,
): DryRunVerdict {
  if (problems.length > 0) return 'fail';
  if (byVersion && importState === 'completed') return 'already-imported';
  if (importState === 'running') return 'running';
  return 'import';
}

/** Why a verdict other than `import` or `fail` stops the import, worded for the report. */
export function noImportReason(object: Pick<ObjectDryRun, 'verdict' | 'workflowId' | 'source'>): string | undefined {
  const where = `s3://${object.source.bucket}/${object.source.key}`;
  if (object.verdict === 'already-imported') {
    return `${where} in this version was already imported by workflow ${object.workflowId}; start would refuse it (a new version, or --workflow-id, imports again)`;
  }
  if (object.verdict === 'running') {
    return `workflow ${object.workflowId} is importing ${where} now; start would refuse it`;
  }
  return undefined;
}
