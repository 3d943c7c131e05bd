/** `import-worker status <workflowId>`: where an import is, or how it ended. */

import { loadTemporalConfig } from '../../temporal.config.js';
import type { ImportFileResult } from '../../workflows/contracts/import-workflow.js';
import { NIGHTLY_WORKFLOW_TYPE, type NightlyImportResult } from '../../workflows/contracts/nightly.js';
import { workflowUiLink } from './connect.js';
import { type CliContext, withClient } from './context.js';
import {
  describeRows,
  formatBytes,
  queryProgress,
  retryingStepsOf,
  uploadProgressOf,
  waitingNote,
} from './import-progress.js';
import { describeJobFreshness, jobFreshnessOf } from './job-freshness.js';
import { describeNightlyResult } from './nightly-result.js';
import { describeResult } from './start-command.js';
import { hasWorkflowPoller, noWorkerNote } from './task-queue-pollers.js';
import { failureReason } from './watch-import.js';

export async function statusCommand(workflowId: string, ctx: CliContext): Promise<void> {
  const temporal = loadTemporalConfig(ctx.env);
  await withClient(ctx, temporal, async ({ client }) => {
    const handle = client.workflow.getHandle(workflowId);
    const description = await handle.describe();
    const status = description.status.name;
    ctx.print(`workflow  ${workflowId} (${description.type})`);
    ctx.print(`status    ${status}`);
    ctx.print(`started   ${description.startTime.toISOString()}`);
    if (description.closeTime) ctx.print(`closed    ${description.closeTime.toISOString()}`);

    // Without a worker on its queue the query would only wait for its timeout.
    const noWorker =
      status === 'RUNNING' && !(await hasWorkflowPoller(client.workflow, description.taskQueue).catch(() => true));
    const progress = noWorker ? undefined : await queryProgress(handle);
    if (noWorker) {
      ctx.warn(noWorkerNote(description.taskQueue));
    } else if (progress) {
      ctx.print(`phase     ${progress.phase}`);
      if (progress.jobId !== undefined)
        ctx.print(`job       ${progress.jobId} (${progress.jobState ?? 'state unknown'})`);
      const freshness = jobFreshnessOf(description);
      if (freshness) ctx.print(`freshness ${describeJobFreshness(freshness, ctx.now().getTime())}`);
      const upload = uploadProgressOf(description);
      if (upload) ctx.print(`uploaded  ${formatBytes(upload.bytesSent)} of ${formatBytes(upload.totalBytes)}`);
      else if (progress.totalBytes !== undefined) ctx.print(`size      ${formatBytes(progress.totalBytes)}`);
      if (progress.rows) ctx.print(`rows      ${describeRows(progress.rows)}`);
      const note = waitingNote(progress, workflowId);
      if (note) ctx.print(`waiting   ${note}`);
      for (const r of retryingStepsOf(description)) {
        const next = r.nextAttemptAt ? `, next attempt ${r.nextAttemptAt}` : '';
        ctx.print(`retrying  ${r.activity}: attempt ${r.attempt}${next}; last failure ${r.lastFailure}`);
      }
      if (progress.lastError) {
        ctx.print(`last error ${progress.lastError.step}: ${progress.lastError.type}: ${progress.lastError.message}`);
      }
    } else if (status === 'RUNNING') {
      ctx.warn('progress unavailable: no worker answered the progress query (is a worker running on the task queue?)');
    }

    if (status === 'COMPLETED' && description.type === NIGHTLY_WORKFLOW_TYPE) {
      const [tally, ...failures] = describeNightlyResult((await handle.result()) as NightlyImportResult);
      ctx.print(`result    ${tally}`);
      for (const line of failures) ctx.print(line);
    } else if (status === 'COMPLETED') {
      const result = (await handle.result()) as ImportFileResult;
      ctx.print(`result    ${describeResult(result)}`);
      // The progress query shows the same line while a worker answers; the result keeps it after.
      if (result.rows && !progress?.rows) ctx.print(`rows      ${describeRows(result.rows)}`);
    } else if (status === 'FAILED') {
      ctx.print(`failure   ${await handle.result().then(() => 'none', failureReason)}`);
    }
    ctx.print(`ui        ${workflowUiLink(temporal, workflowId)}`);
  });
}
