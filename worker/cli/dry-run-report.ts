/**
 * A dry run's report as an operator reads it: the verdict first, then each
 * finding on its own line, then what the dry run itself spent. Pure, so the
 * wording is tested without a server.
 */

import type {
  BudgetCheck,
  DryRunFeedReport,
  DryRunImportReport,
  DryRunJob,
  DryRunProblem,
  ObjectDryRun,
  RowSample,
} from '../../workflows/contracts/dry-run.js';
import type { ApiCallCounts } from '../../workflows/contracts/endpoints.js';
import type { JobRecordStatus } from '../../workflows/contracts/job-record.js';
import { noImportReason } from '../../workflows/dry-run-verdict.js';
import { formatBytes } from './import-progress.js';

const VERDICT_TEXT: Record<ObjectDryRun['verdict'], string> = {
  import: 'would import',
  fail: 'would FAIL',
  'already-imported': 'already imported: nothing to do',
  running: 'being imported now: nothing to do',
};

export function importReportLines(report: DryRunImportReport): string[] {
  const o = report.object;
  return [
    `dry run of ${where(o)}: ${VERDICT_TEXT[o.verdict]}`,
    ...objectLines(o, '  '),
    `  spent     ${calls(report.spent)}`,
  ];
}

export function feedReportLines(report: DryRunFeedReport): string[] {
  const lines = [
    `dry run of feed ${report.feedId} (s3://${report.bucket}/${report.prefix}): ${report.listed} object(s) checked` +
      (report.more ? `, the first ${report.maxObjects}; the feed holds more, not checked (--limit)` : ''),
  ];
  for (const p of report.problems) lines.push(`  ${problemLine(p)}`);
  if (report.fieldMappings) lines.push(`  mappings  ${mappingText(report.fieldMappings)}`);
  const toImport = report.objects.filter((o) => o.verdict === 'import').length;
  const counts = (['import', 'fail', 'already-imported', 'running'] as const)
    .map((v) => `${report.objects.filter((o) => o.verdict === v).length} ${v}`)
    .join(', ');
  lines.push(`  verdicts  ${counts}`);
  if (report.allowedNow !== undefined && report.allowedNow < toImport) {
    lines.push(
      `  budget    allows ${report.allowedNow} of the ${toImport} import(s) now; the rest wait for the reset${report.reopensAt ? ` at ${report.reopensAt}` : ''}`,
    );
  }
  for (const o of report.objects) {
    lines.push(`  ${o.source.key}: ${VERDICT_TEXT[o.verdict]}`);
    lines.push(...objectLines(o, '    ', { feed: true }));
  }
  lines.push(`  spent     ${calls(report.spent)}`);
  return lines;
}

/** The reasons an import would not go ahead, for the one error line (empty when it would). */
export function reasonsOf(o: ObjectDryRun): string[] {
  const reason = noImportReason(o);
  if (reason) return [reason];
  return o.problems.map((p) => `${p.check}: ${p.type}: ${p.message}`);
}

function objectLines(o: ObjectDryRun, indent: string, options: { feed?: boolean } = {}): string[] {
  const lines: string[] = [];
  const add = (label: string, text: string) => lines.push(`${indent}${label.padEnd(10)}${text}`);
  if (o.object) {
    const header = options.feed
      ? `${o.object.header.length} columns`
      : `header ${o.object.header.map((h) => JSON.stringify(h)).join(', ')}`;
    add('object', `ETag ${o.object.etag}, ${formatBytes(o.object.sizeBytes)}, ${header}`);
    if (o.object.dialect) add('format', o.object.dialect);
    if (o.object.rowSample) add('rows', rowSampleText(o.object.rowSample));
  }
  if (o.workflowId) add('workflow', `${o.workflowId} (${o.importState ?? 'unknown'})`);
  if (o.fieldMappings && !options.feed) add('mappings', mappingText(o.fieldMappings));
  if (o.job) {
    add('job', `${JSON.stringify(o.job.name)}: ${jobText(o.job)}`);
    add('', `<key>: ${o.job.keyNote}`);
    if (o.job.record) add('record', `${o.job.record.workflowId} (${RECORD_STATUS_TEXT[o.job.record.status]})`);
  }
  if (o.budget.length > 0) add('budget', o.budget.map(budgetText).join(', '));
  for (const w of o.warnings) add('warning', w);
  for (const p of o.problems) lines.push(`${indent}${problemLine(p)}`);
  return lines;
}

/** What the row check found, saying whether it read the whole file or a sample of it. */
function rowSampleText(sample: RowSample): string {
  const scope = sample.wholeFile
    ? `the whole file (${sample.read} rows)`
    : `a sample: the first ${sample.read} rows (${formatBytes(sample.bytes)}); the import checks every row`;
  const refused = sample.rejected === 0 ? 'none would be refused' : `${sample.rejected} would be refused`;
  const examples = sample.examples.map((e) => `row ${e.row}: ${e.reason}`).join('; ');
  return `checked ${scope}: ${refused}${examples ? ` (${examples})` : ''}${partsText(sample)}`;
}

/** A body too large for one job: how many it makes, counted or estimated. */
function partsText(sample: RowSample): string {
  if (sample.parts === undefined || sample.parts <= 1) return '';
  const how = sample.wholeFile ? '' : 'about ';
  return `; split into ${how}${sample.parts} jobs (IMPORT_MAX_PART_BYTES)`;
}

const RECORD_STATUS_TEXT: Record<JobRecordStatus, string> = {
  absent: 'none yet: the import starts it',
  running: 'running',
  completed: 'completed with its job',
  abandoned: 'abandoned when idle: the import starts it again from what it knew',
  ended: 'ended without completing: the import starts it afresh',
};

function jobText(job: DryRunJob): string {
  const existing = job.existing;
  if (existing) {
    const heard =
      existing.recordedState === undefined
        ? 'as its record saw it end'
        : `read now; its record last heard ${existing.recordedState}`;
    return `reuses job ${existing.jobId} (${existing.state}, ${heard})`;
  }
  if (job.lookup === 'none') return 'not looked up: the import stops before its job';
  return 'creates a new job (the record holds none)';
}

function where(o: ObjectDryRun): string {
  return `s3://${o.source.bucket}/${o.source.key}`;
}

function mappingText(m: NonNullable<ObjectDryRun['fieldMappings']>): string {
  const name = m.sourceName === undefined ? '' : `, job source ${JSON.stringify(m.sourceName)}`;
  const source = `custom source ${m.sourceId} (${m.objectType})${name}`;
  if (m.inPlace) return `${source}: the wanted set is in place, nothing to write`;
  const show = (list: typeof m.missing) =>
    list.map((x) => `${JSON.stringify(x.sourceFieldLabel)}->${x.serviceFieldName}`).join(', ');
  const parts = [];
  if (m.missing.length > 0) parts.push(`adds ${show(m.missing)}`);
  if (m.unexpected.length > 0) parts.push(`removes ${show(m.unexpected)}`);
  return `${source}: the import would replace the set (${parts.join('; ')})`;
}

function budgetText(b: BudgetCheck): string {
  const cost = `${b.endpoint} ${b.atLeast ? '>=' : ''}${b.calls}`;
  if (b.remaining === undefined) return cost;
  const wait = b.waits ? `, WAITS until ${b.resetsAt}` : '';
  return `${cost} (${b.remaining} left${wait})`;
}

function problemLine(p: DryRunProblem): string {
  return `problem   [${p.check}] ${p.type}: ${p.message}`;
}

function calls(counts: ApiCallCounts): string {
  const entries = Object.entries(counts).filter(([, n]) => (n ?? 0) > 0);
  return entries.length === 0 ? 'no service calls' : entries.map(([e, n]) => `${e} ${n}`).join(', ');
}
