/**
 * One feed's nightly run: list the feed's prefix page by page and start one
 * child importFile per object, at most maxConcurrentImports at once, never
 * more than the daily budget allows (the rest wait durably for the window to
 * reset). Objects already imported are skipped by their workflow id: each
 * page's candidates are looked up first, so an imported object needs no
 * budget and one still running from an earlier night is counted apart.
 * The run's state and what it does per object are in nightly-run.ts.
 * Under Worker Versioning a night is pinned: it, its next runs and its
 * children stay on the release that started it (see versioning.ts).
 */
import { continueAsNew, setHandler } from '@temporalio/workflow';
import { nightlyProgressQuery } from './contracts/messages.js';
import type { NightlyImportInput, NightlyImportResult } from './contracts/nightly.js';
import { NightlyRun } from './nightly-run.js';

export async function nightlyImport(input: NightlyImportInput): Promise<NightlyImportResult> {
  const run = new NightlyRun(input);
  setHandler(nightlyProgressQuery, () => ({ tally: run.tally, runningImports: run.runningImports() }));
  let token = input.continuationToken;
  do {
    const page = await run.listPage(token);
    const candidates = await run.unfinished(page.objects);
    let deferredThrough = 0;
    for (const [i, object] of candidates.entries()) {
      await run.untilAChildMayStart();
      await run.takeBudget(() => {
        // Every candidate of this page not yet counted waits for the reset.
        run.tally.deferredForBudget += candidates.length - Math.max(i, deferredThrough);
        deferredThrough = candidates.length;
      });
      await run.startImport(object);
    }
    token = page.nextContinuationToken;
    if (token !== undefined && run.isFull()) {
      // Children are abandoned on continue-as-new; wait for them so their outcomes are counted.
      await run.untilAllChildrenEnd();
      await continueAsNew<typeof nightlyImport>(run.nextRunInput(token));
    }
  } while (token !== undefined);

  await run.untilAllChildrenEnd();
  await run.reportFailures();
  return run.tally;
}
