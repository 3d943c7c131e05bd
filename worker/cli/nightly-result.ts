/**
 * How `status` shows what a nightly run did: its tally in one line, then each
 * failure it lists. Every object of the feed is counted once, as started,
 * already imported or still running from an earlier night; the objects whose
 * start waited for the daily budget are among those, so they are said apart
 * ("of them"), never added to the rest.
 */
import type { NightlyTally } from '../../workflows/contracts/nightly.js';

export function describeNightlyResult(tally: NightlyTally, when: 'completed' | 'so far'): string[] {
  const listed = tally.failed ?? [];
  const stillRunning = tally.stillRunning ?? 0;
  const objects = tally.started + tally.skippedAlreadyImported + stillRunning;
  const waited = tally.deferredForBudget > 0 ? `; ${tally.deferredForBudget} of them waited for the daily budget` : '';
  const lines = [
    `${when}: ${objects} object(s): ${tally.started} started (${tally.succeeded} succeeded, ${tally.failedCount} failed), ` +
      `${tally.skippedAlreadyImported} already imported, ${stillRunning} still running from an earlier night${waited}`,
    ...listed.map((f) => `${f.key} (${f.workflowId}): ${f.reason}`),
  ];
  // The result lists the first MAX_LISTED_FAILURES; failedCount counts them all.
  const unlisted = tally.failedCount - listed.length;
  if (unlisted > 0) lines.push(`${unlisted} more, not listed`);
  return lines;
}
