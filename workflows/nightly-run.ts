/**
 * The state of one nightlyImport run and what it does per object: the
 * tally, the children still running, the budget allowance, and the patch
 * markers it was started under. nightly-import.ts reads as the script.
 *
 * Child outcomes are counted in promise callbacks that interleave with the
 * script, so every async method keeps the awaits it had when the recorded
 * histories ran: an extra async layer could change which of them sees a
 * finished child first (and with it the allowance).
 */
// The sandbox rejects a duplicate child start with common's class (the workflow package does not re-export it).
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  ApplicationFailure,
  ChildWorkflowFailure,
  condition,
  log,
  ParentClosePolicy,
  patched,
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
  feedObjectWorkflowId,
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
/** What every run started before the threshold travelled in the input used: never change it. */
const LEGACY_CHILD_STARTS_PER_RUN = 500;
const IMPORT_WORKFLOW_TYPE = 'importFile';
/** Runs with this marker look each page's candidates up before starting any child. */
const CHECK_CANDIDATES_FIRST_PATCH = 'nightly-checks-candidates-first';
/** Runs with this marker hold back the status polls each started child needs. */
const COUNT_POLLS_PATCH = 'nightly-counts-status-polls';
/** Runs with this marker start each child under the object version's own id, not a per-feed one. */
const ONE_ID_PER_OBJECT_PATCH = 'nightly-one-id-per-object-version';
/**
 * Runs with this marker admit children by what the night's recent children
 * spent (their results' calls per endpoint, list calls included), not by the
 * fixed estimate, and carry that spend across continue-as-new.
 */
const ADMIT_BY_RECENT_SPEND_PATCH = 'nightly-admits-by-recent-spend';
/**
 * Runs with this marker wake when a short block (the service's own 429 on an
 * endpoint with calls left) ends, not at the window's reset, also while
 * children run.
 */
const WAKE_AT_BLOCK_END_PATCH = 'nightly-wakes-when-a-block-ends';

export class NightlyRun {
  readonly feedId: string;
  readonly feed: NightlyFeed;
  readonly tally: NightlyTally;
  readonly checksCandidatesFirst: boolean;
  private readonly childStartsPerRun: number;
  private readonly countPolls: boolean;
  private readonly oneIdPerObject: boolean;
  private readonly admitsByRecentSpend: boolean;
  private readonly wakesAtBlockEnd: boolean;
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
    this.childStartsPerRun = input.childStartsPerRun ?? LEGACY_CHILD_STARTS_PER_RUN;
    this.checksCandidatesFirst = patched(CHECK_CANDIDATES_FIRST_PATCH);
    this.countPolls = patched(COUNT_POLLS_PATCH);
    this.oneIdPerObject = patched(ONE_ID_PER_OBJECT_PATCH);
    this.admitsByRecentSpend = patched(ADMIT_BY_RECENT_SPEND_PATCH);
    this.wakesAtBlockEnd = patched(WAKE_AT_BLOCK_END_PATCH);
    this.recentSpend = this.admitsByRecentSpend ? (input.recentSpend ?? []) : [];
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
    // An object imported under the per-feed id of older nights counts as imported too.
    const idsOf = (o: FeedObject) => [...new Set([this.childIdOf(o), this.legacyIdOf(o)])];
    const states = await readImportStates({ workflowIds: objects.flatMap(idsOf) });
    return objects.filter((object) => {
      const seen = idsOf(object).map((id) => states[id]);
      if (seen.includes('completed')) this.tally.skippedAlreadyImported += 1;
      else if (seen.includes('running')) this.tally.stillRunning = (this.tally.stillRunning ?? 0) + 1;
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
      const next = importAllowance(usage, this.running.size, now, {
        countPolls: this.countPolls,
        ...(this.admitsByRecentSpend ? { costs: callsPerImport(this.recentSpend) } : {}),
        wakeAtBlockEnd: this.wakesAtBlockEnd,
      });
      this.allowance = next.allowed;
      if (this.allowance > 0) break;
      if (this.running.size > 0) {
        // A finishing child has spent what it will spend: read the ledger again then (or when a block ends).
        const before = this.running.size;
        const reopensInMs = next.reopensAtMs === undefined ? undefined : Math.max(1_000, next.reopensAtMs - now);
        if (this.wakesAtBlockEnd && reopensInMs !== undefined) {
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
      ...(this.admitsByRecentSpend ? { recentSpend: this.recentSpend } : {}),
    };
  }

  private legacyIdOf(o: FeedObject): string {
    return feedObjectWorkflowId(this.feedId, this.feed.bucket, o.key, o.etag);
  }

  private childIdOf(o: FeedObject): string {
    return this.oneIdPerObject ? objectImportWorkflowId(this.feed.bucket, o.key, o.etag) : this.legacyIdOf(o);
  }

  private watch(workflowId: string, key: string, result: Promise<unknown>): void {
    this.running.add(workflowId);
    result
      .then(
        (result) => {
          this.tally.succeeded += 1;
          const spend = this.admitsByRecentSpend ? spendOfResult(result) : undefined;
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
