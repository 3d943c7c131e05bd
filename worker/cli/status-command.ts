/**
 * `import-worker status <workflowId> [--json]`: where a workflow of the
 * pipeline is (an import, a night, a budget ledger, a job record, a mapping
 * lock), or how it ended. Exits 1 when it ended without doing its work
 * (failed, cancelled, terminated, timed out), so a script can tell.
 */
import { loadTemporalConfig } from '../../temporal.config.js';
import { CliError } from './cli-error.js';
import { workflowUiLink } from './connect.js';
import { type CliContext, withClient } from './context.js';
import { guardBandAt, guardBandText } from './guard-band.js';
import { describeRows, formatBytes, waitingNote } from './import-progress.js';
import { describeNightlyResult } from './nightly-result.js';
import { describeResult } from './start-command.js';
import {
  type Details,
  isImportResult,
  isNightlyResult,
  isUnsuccessful,
  type StatusReport,
  statusReport,
} from './status-report.js';
import { noWorkerNote } from './task-queue-pollers.js';

export async function statusCommand(workflowId: string, options: { json?: boolean }, ctx: CliContext): Promise<void> {
  const temporal = loadTemporalConfig(ctx.env);
  const report = await withClient(ctx, temporal, ({ client }) =>
    statusReport(client.workflow.getHandle(workflowId), workflowUiLink(temporal, workflowId), ctx.now().getTime()),
  );
  if (options.json) ctx.print(JSON.stringify(report, null, 2));
  else printReport(report, ctx);
  if (isUnsuccessful(report.status)) {
    throw new CliError(`workflow ${workflowId} ended ${report.status}${report.failure ? `: ${report.failure}` : ''}`);
  }
}

function printReport(report: StatusReport, ctx: CliContext): void {
  const line = (label: string, text: string) => ctx.print(`${label.padEnd(9)} ${text}`);
  line('workflow', `${report.workflowId} (${report.type})`);
  line('status', report.status);
  line('started', report.startedAt);
  if (report.closedAt) line('closed', report.closedAt);
  if (report.worker === 'none') ctx.warn(noWorkerNote(report.taskQueue));
  if (report.detailsUnavailable) ctx.warn(`details unavailable: ${report.detailsUnavailable}`);
  if (report.details) for (const [label, text] of detailLines(report, ctx.now().getTime())) line(label, text);
  for (const [label, text] of endLines(report)) line(label, text);
  line('ui', report.ui);
}

function detailLines(report: StatusReport, nowMs: number): [string, string][] {
  const details = report.details as Details;
  switch (details.kind) {
    case 'import': {
      const { progress, upload } = details;
      const lines: [string, string][] = [['phase', progress.phase]];
      if (progress.part) lines.push(['part', `${progress.part.number} of ${progress.part.of}`]);
      if (progress.jobId !== undefined)
        lines.push(['job', `${progress.jobId} (${progress.jobState ?? 'state unknown'})`]);
      if (details.freshness) lines.push(['freshness', details.freshness]);
      if (upload) lines.push(['uploaded', `${formatBytes(upload.bytesSent)} of ${formatBytes(upload.totalBytes)}`]);
      else if (progress.totalBytes !== undefined) lines.push(['size', formatBytes(progress.totalBytes)]);
      if (progress.rows) lines.push(['rows', describeRows(progress.rows)]);
      const note = waitingNote(progress, report.workflowId, nowMs);
      if (note) lines.push(['waiting', note]);
      for (const r of details.retrying) {
        const next = r.nextAttemptAt ? `, next attempt ${r.nextAttemptAt}` : '';
        lines.push(['retrying', `${r.activity}: attempt ${r.attempt}${next}; last failure ${r.lastFailure}`]);
      }
      if (progress.lastError) {
        const e = progress.lastError;
        lines.push(['last error', `${e.step}: ${e.type}: ${e.message}`]);
      }
      return lines;
    }
    case 'nightly': {
      const { tally, runningImports } = details.progress;
      const [counts] = describeNightlyResult(tally, 'so far');
      return [
        ['tally', counts ?? ''],
        ['running', runningImports.length === 0 ? 'no import' : runningImports.join(', ')],
      ];
    }
    case 'ledger': {
      const entries = Object.entries(details.usage);
      const lines: [string, string][] = entries.map(([endpoint, u]) => [
        'budget',
        `${endpoint}: ${u.used} of ${u.limit} used, ${u.remaining} left, resets ${u.resetsAt}${u.exhaustedUntil ? `, service refuses until ${u.exhaustedUntil}` : ''}`,
      ]);
      const band = entries[0] ? guardBandAt(entries[0][1].resetsAt, nowMs) : undefined;
      if (band) lines.push(['guard', guardBandText(band)]);
      return lines;
    }
    case 'jobRecord': {
      const { record } = details;
      const job = record.job
        ? `${record.job.jobId} (${record.job.terminal ?? record.job.state ?? 'state unknown'})`
        : 'none yet';
      return [
        ['object', `s3://${record.version.bucket}/${record.version.key} (ETag ${record.version.etag})`],
        ['job', job],
        ['failed', record.failedJobs.length === 0 ? 'no failed job' : record.failedJobs.join(', ')],
        ['intents', `${record.openIntents.length} open`],
      ];
    }
    case 'mappingLock':
      return [
        [
          'holders',
          details.holders.length === 0
            ? 'none'
            : details.holders.map((h) => `${h.workflowId} (set ${h.setKey})`).join(', '),
        ],
      ];
  }
}

function endLines(report: StatusReport): [string, string][] {
  if (report.failure !== undefined) return [['failure', report.failure]];
  if (report.status !== 'COMPLETED') return [];
  if (isNightlyResult(report.type, report.result)) {
    const [tally, ...failures] = describeNightlyResult(report.result, 'completed');
    return [['result', tally ?? ''], ...failures.map((f): [string, string] => ['failed', f])];
  }
  if (isImportResult(report.type, report.result)) {
    const { rows } = report.result;
    // The progress query shows the rows while a worker answers; the result keeps them after.
    const rowsLine: [string, string][] = rows && !report.details ? [['rows', describeRows(rows)]] : [];
    return [['result', describeResult(report.result)], ...rowsLine];
  }
  return report.result === undefined ? [] : [['result', JSON.stringify(report.result)]];
}
