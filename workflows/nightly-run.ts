/**
 * The state of one nightlyImport run and what it does per object: the
 * tally, the children still running and the budget allowance.
 * nightly-import.ts reads as the script.
 */
// The sandbox rejects a duplicate child start with common's class (the workflow package does not re-export it).
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  ApplicationFailure,
  ChildWorkflowFailure,
  condition,
  log,
  ParentClosePolicy,
  proxyActivities,
  sleep,
  startChild,
  TemporalFailure,
  WorkflowIdReusePolicy,
  workflowInfo,
} from '@temporalio/workflow';
import type { FeedObject, ListFeedObjectsResult, NightlyActivities } from './contracts/activities.js';
import { importInputProblems } from './contracts/import-input.js';
import {
  type ImportSpend,
  type NightlyFeed,
  type NightlyImportInput,
  type NightlyTally,
  objectImportWorkflowId,
} from './contracts/nightly.js';
import {
  callsPerImport,
  emptyTally,
  importAllowance,
  importInputForObject,
  recordFailure,
  rememberSpend,
  spendOfResult,
} from './nightly-policy.js';
import { notificationId, sendNotification } from './notify.js';
import { ACTIVITY_RETRY_POLICY, SHORT_CALL_TIMEOUT_MS } from './retry-policies.js';

const { listFeedObjects, readBudgetUsage, readImportStates } = proxyActivities<NightlyActivities>({
  startToCloseTimeout: SHORT_CALL_TIMEOUT_MS,
  retry: ACTIVITY_RETRY_POLICY,
});

export const LIST_PAGE_SIZE = 200;
/**
 * Start a fresh run (continue-as-new) at the first page boundary after this
 * many child starts: each costs a handful of history events, so a run stays
 * a few thousand events long however many objects the feed holds. Safe to
 * change: each run reads its own from its input.
 */
export const CHILD_STARTS_PER_RUN = 500;
const IMPORT_WORKFLOW_TYPE = 'importFile';

export class NightlyRun {
  readonly feedId: string;
  readonly feed: NightlyFeed;
  readonly tally: NightlyTally;
  private readonly childStartsPerRun: number;
  /** The budgeted calls of the night's most recently finished children. */
  private recentSpend: ImportSpend[];
  /** Workflow ids of the children started by this run that have not ended. */
  private readonly running = new Set<string>();
  private childStartsThisRun = 0;
  /** Children that may still start before the ledger is read again. */
  private allowance = 0;

  constructor(input: NightlyImportInput) {
    this.feedId = input.feedId;
    this.feed = input.feed;
    this.tally = input.tally ?? emptyTally();
    this.childStartsPerRun = input.childStartsPerRun ?? CHILD_STARTS_PER_RUN;
    this.recentSpend = input.recentSpend ?? [];
  }

  listPage(continuationToken: string | undefined): Promise<ListFeedObjectsResult> {
    return listFeedObjects({
      bucket: this.feed.bucket,
      prefix: this.feed.prefix,
      pattern: this.feed.pattern,
      continuationToken,
      maxKeys: LIST_PAGE_SIZE,
    });
  }

  /** The objects of a page that need a child: imported ones are counted, still-running ones counted apart. */
  async unfinished(objects: FeedObject[]): Promise<FeedObject[]> {
    const states = await readImportStates({ workflowIds: objects.map((o) => this.childIdOf(o)) });
    return objects.filter((object) => {
      const seen = states[this.childIdOf(object)];
      if (seen === 'completed') this.tally.skippedAlreadyImported += 1;
      else if (seen === 'running') this.tally.stillRunning = (this.tally.stillRunning ?? 0) + 1;
      else return true;
      return false;
    });
  }

  untilAChildMayStart(): Promise<void> {
    return condition(() => this.running.size < this.feed.maxConcurrentImports);
  }

  /** Waits until a child import may start without overrunning a daily budget; counts the wait. */
  async takeBudget(deferOnWait: () => void): Promise<void> {
    while (this.allowance <= 0) {
      const usage = await readBudgetUsage({ tenant: this.feed.tenant });
      const now = Date.now();
      const next = importAllowance(usage, this.running.size, now, callsPerImport(this.recentSpend));
      this.allowance = next.allowed;
      if (this.allowance > 0) break;
      if (this.running.size > 0) {
        // A finishing child has spent what it will spend: read the ledger again then (or when a block ends).
        const before = this.running.size;
        const reopensInMs = next.reopensAtMs === undefined ? undefined : Math.max(1_000, next.reopensAtMs - now);
        if (reopensInMs !== undefined) {
          await condition(() => this.running.size < before, reopensInMs);
        } else {
          await condition(() => this.running.size < before);
        }
      } else {
        deferOnWait();
        const wakeAt = next.reopensAtMs ?? now + 60_000;
        log.info('Daily budget spent or blocked: waiting until it reopens', {
          feedId: this.feedId,
          reopensAt: new Date(wakeAt).toISOString(),
        });
        await sleep(Math.max(1_000, wakeAt - now));
      }
    }
    this.allowance -= 1;
  }

  async startImport(object: FeedObject): Promise<void> {
    const workflowId = this.childIdOf(object);
    const importInput = importInputForObject(this.feedId, this.feed, object);
    const problems = importInputProblems(importInput);
    if (problems.length > 0) {
      throw ApplicationFailure.nonRetryable(
        `Feed ${this.feedId} is misconfigured: ${problems.join('; ')}`,
        'InvalidInput',
      );
    }
    this.childStartsThisRun += 1;
    try {
      const child = await startChild(IMPORT_WORKFLOW_TYPE, {
        workflowId,
        args: [importInput],
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
        parentClosePolicy: ParentClosePolicy.ABANDON,
      });
      this.tally.started += 1;
      this.watch(workflowId, object.key, child.result());
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      // Imported already (or still running from an earlier night): no budget spent.
      this.tally.skippedAlreadyImported += 1;
      this.allowance += 1;
    }
  }

  /** Whether this run has started its share of children, or Temporal suggests a fresh one. */
  isFull(): boolean {
    return this.childStartsThisRun >= this.childStartsPerRun || workflowInfo().continueAsNewSuggested;
  }

  runningImports(): string[] {
    return [...this.running];
  }

  untilAllChildrenEnd(): Promise<void> {
    return condition(() => this.running.size === 0);
  }

  /** The next run's input: it carries on from `continuationToken` with this run's tally. */
  nextRunInput(continuationToken: string): NightlyImportInput {
    return {
      feedId: this.feedId,
      feed: this.feed,
      tally: this.tally,
      continuationToken,
      childStartsPerRun: CHILD_STARTS_PER_RUN,
      recentSpend: this.recentSpend,
    };
  }

  /** Tells the operator's webhook when the night ended with failures: one event per night, whatever its runs. */
  async reportFailures(): Promise<void> {
    const { failedCount, failed, started, succeeded } = this.tally;
    if (failedCount === 0) return;
    const info = workflowInfo();
    await sendNotification({
      // The first run's id: the same night through every continue-as-new.
      id: notificationId('nightly-failures', info.firstExecutionRunId),
      kind: 'nightly-failures',
      text: `Nightly import of feed ${this.feedId}: ${failedCount} of ${started} imports failed.`,
      fields: {
        workflowId: info.workflowId,
        feed: this.feedId,
        started: String(started),
        succeeded: String(succeeded),
        failed: String(failedCount),
        firstFailures: failed
          .slice(0, 5)
          .map((f) => `${f.key} (${f.reason})`)
          .join('; '),
      },
    });
  }

  private childIdOf(o: FeedObject): string {
    return objectImportWorkflowId(this.feed.bucket, o.key, o.etag);
  }

  private watch(workflowId: string, key: string, result: Promise<unknown>): void {
    this.running.add(workflowId);
    result
      .then(
        (result) => {
          this.tally.succeeded += 1;
          const spend = spendOfResult(result);
          if (spend) this.recentSpend = rememberSpend(this.recentSpend, spend);
        },
        (err: unknown) => recordFailure(this.tally, { key, workflowId, reason: failureReason(err) }),
      )
      .finally(() => this.running.delete(workflowId));
  }
}

function failureReason(err: unknown): string {
  const cause = err instanceof ChildWorkflowFailure ? (err.cause ?? err) : err;
  if (cause instanceof ApplicationFailure && cause.type) return `${cause.type}: ${cause.message}`;
  if (cause instanceof TemporalFailure || cause instanceof Error) return cause.message || cause.name;
  return String(cause);
}
