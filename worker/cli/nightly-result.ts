/** How `status` shows what a nightly run did: its tally in one line, then each failure it lists. */
import type { NightlyImportResult } from '../../workflows/contracts/nightly.js';

export function describeNightlyResult(tally: NightlyImportResult): string[] {
  const listed = tally.failed ?? [];
  const lines = [
    `completed: ${tally.started} started (${tally.succeeded} succeeded, ${tally.failedCount} failed), ` +
      `${tally.skippedAlreadyImported} already imported, ${tally.stillRunning ?? 0} still running from an earlier night, ` +
      `${tally.deferredForBudget} deferred for the daily budget`,
    ...listed.map((f) => `failed    ${f.key} (${f.workflowId}): ${f.reason}`),
  ];
  // The result lists the first MAX_LISTED_FAILURES; failedCount counts them all.
  const unlisted = tally.failedCount - listed.length;
  if (unlisted > 0) lines.push(`failed    ${unlisted} more, not listed`);
  return lines;
}
