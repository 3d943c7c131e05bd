/**
 * One feed's nightly run: list the feed's prefix page by page and start one
 * child importFile per object, at most maxConcurrentImports at once, never
 * more than the daily budget allows (the rest wait durably for the window to
 * reset). Objects already imported are skipped by their workflow id: each
 * page's candidates are looked up first, so an imported object needs no
 * budget and one still running from an earlier night is counted apart.
 */
// The sandbox rejects a duplicate child start with common's class (the workflow package does not re-export it).
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  ApplicationFailure,
  ChildWorkflowFailure,
  condition,
  continueAsNew,
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
import type { FeedObject, NightlyActivities } from './policy/activity-contracts.js';
import { importInputProblems } from './policy/import-input.js';
import {
  emptyTally,
  feedObjectWorkflowId,
  importAllowance,
  importInputForObject,
  type NightlyImportInput,
  type NightlyImportResult,
  objectImportWorkflowId,
  recordFailure,
} from './policy/nightly.js';
import { ACTIVITY_RETRY_POLICY, SHORT_CALL_TIMEOUT_MS } from './policy/retry-policies.js';

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

export async function nightlyImport(input: NightlyImportInput): Promise<NightlyImportResult> {
  const { feedId, feed } = input;
  const tally = input.tally ?? emptyTally();
  const childStartsPerRun = input.childStartsPerRun ?? LEGACY_CHILD_STARTS_PER_RUN;
  const checksCandidatesFirst = patched(CHECK_CANDIDATES_FIRST_PATCH);
  const countPolls = patched(COUNT_POLLS_PATCH);
  const oneIdPerObject = patched(ONE_ID_PER_OBJECT_PATCH);
  const legacyIdOf = (o: FeedObject) => feedObjectWorkflowId(feedId, feed.bucket, o.key, o.etag);
  const childIdOf = (o: FeedObject) =>
    oneIdPerObject ? objectImportWorkflowId(feed.bucket, o.key, o.etag) : legacyIdOf(o);
  const running = new Set<string>();
  let childStartsThisRun = 0;
  let allowance = 0;
  let token = input.continuationToken;

  /** Waits until a child import may start without overrunning a daily budget; counts the wait. */
  async function takeBudget(deferOnWait: () => void): Promise<void> {
    while (allowance <= 0) {
      const usage = await readBudgetUsage({ tenant: feed.tenant });
      const now = Date.now();
      const next = importAllowance(usage, running.size, now, { countPolls });
      allowance = next.allowed;
      if (allowance > 0) break;
      if (running.size > 0) {
        // A finishing child has spent what it will spend: read the ledger again then.
        const before = running.size;
        await condition(() => running.size < before);
      } else {
        deferOnWait();
        const wakeAt = next.reopensAtMs ?? now + 60_000;
        log.info('Daily budget spent: waiting for the window to reset', {
          feedId,
          resetsAt: new Date(wakeAt).toISOString(),
        });
        await sleep(Math.max(1_000, wakeAt - now));
      }
    }
    allowance -= 1;
  }

  function watch(workflowId: string, key: string, result: Promise<unknown>): void {
    running.add(workflowId);
    result
      .then(
        () => {
          tally.succeeded += 1;
        },
        (err: unknown) => recordFailure(tally, { key, workflowId, reason: failureReason(err) }),
      )
      .finally(() => running.delete(workflowId));
  }

  async function startImport(object: FeedObject): Promise<void> {
    const workflowId = childIdOf(object);
    const importInput = importInputForObject(feedId, feed, object);
    const problems = importInputProblems(importInput);
    if (problems.length > 0) {
      throw ApplicationFailure.nonRetryable(`Feed ${feedId} is misconfigured: ${problems.join('; ')}`, 'InvalidInput');
    }
    childStartsThisRun += 1;
    try {
      const child = await startChild(IMPORT_WORKFLOW_TYPE, {
        workflowId,
        args: [importInput],
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
        parentClosePolicy: ParentClosePolicy.ABANDON,
      });
      tally.started += 1;
      watch(workflowId, object.key, child.result());
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      // Imported already (or still running from an earlier night): no budget spent.
      tally.skippedAlreadyImported += 1;
      allowance += 1;
    }
  }

  /** The objects of a page that need a child: imported ones are counted, still-running ones counted apart. */
  async function unfinished(objects: FeedObject[]): Promise<FeedObject[]> {
    // An object imported under the per-feed id of older nights counts as imported too.
    const idsOf = (o: FeedObject) => [...new Set([childIdOf(o), legacyIdOf(o)])];
    const states = await readImportStates({ workflowIds: objects.flatMap(idsOf) });
    return objects.filter((object) => {
      const seen = idsOf(object).map((id) => states[id]);
      if (seen.includes('completed')) tally.skippedAlreadyImported += 1;
      else if (seen.includes('running')) tally.stillRunning = (tally.stillRunning ?? 0) + 1;
      else return true;
      return false;
    });
  }

  do {
    const page = await listFeedObjects({
      bucket: feed.bucket,
      prefix: feed.prefix,
      pattern: feed.pattern,
      continuationToken: token,
      maxKeys: LIST_PAGE_SIZE,
    });
    const candidates = checksCandidatesFirst ? await unfinished(page.objects) : page.objects;
    let deferredThrough = 0;
    for (const [i, object] of candidates.entries()) {
      await condition(() => running.size < feed.maxConcurrentImports);
      await takeBudget(() => {
        // Every candidate of this page not yet counted waits for the reset.
        tally.deferredForBudget += candidates.length - Math.max(i, deferredThrough);
        deferredThrough = candidates.length;
      });
      await startImport(object);
    }
    token = page.nextContinuationToken;
    if (token !== undefined && (childStartsThisRun >= childStartsPerRun || workflowInfo().continueAsNewSuggested)) {
      // Children are abandoned on continue-as-new; wait for them so their outcomes are counted.
      await condition(() => running.size === 0);
      await continueAsNew<typeof nightlyImport>({
        feedId,
        feed,
        tally,
        continuationToken: token,
        childStartsPerRun: CHILD_STARTS_PER_RUN,
      });
    }
  } while (token !== undefined);

  await condition(() => running.size === 0);
  return tally;
}

function failureReason(err: unknown): string {
  const cause = err instanceof ChildWorkflowFailure ? (err.cause ?? err) : err;
  if (cause instanceof ApplicationFailure && cause.type) return `${cause.type}: ${cause.message}`;
  if (cause instanceof TemporalFailure || cause instanceof Error) return cause.message || cause.name;
  return String(cause);
}
