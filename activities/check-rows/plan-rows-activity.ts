/**
 * The planRows activity: reads the whole (pinned) object once before any job
 * exists, through the row stage. Rows the service would refuse are written to
 * the rejects report in S3, once per object version and settings (a retry
 * finds it there and leaves it); the plan it returns is recorded by the
 * workflow, and every upload attempt regenerates exactly the same body from it.
 *
 * It decides before anything is created: under `onRejectedRows: 'fail'` a
 * refused row fails the import (RowsRejected); a file with nothing left to
 * send is refused (EmptyFile). A body over the part limit is planned as
 * several parts, each the body of a job of its own.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Context, log } from '@temporalio/activity';
import type { PlanRowsInput, PlanRowsResult } from '../../workflows/contracts/activities.js';
import type { RowCounts } from '../../workflows/contracts/import-workflow.js';
import { failure } from '../failures.js';
import { HEARTBEAT_PULSE_MS, withHeartbeatPulse } from '../heartbeat-pulse.js';
import { describeDialect, planVerdict, type RowPlan, RowStageError } from '../rows/index.js';
import { SourceObjectChanged, SourceObjectMissing, s3Url } from '../s3/errors.js';
import type { S3Source } from '../s3/source.js';
import { planObject } from './plan-object.js';
import { type ReportLocation, rejectsReportLocation } from './rejects-location.js';

/** The service's limit on one job's file: 5 GB, decimal. */
export const SERVICE_MAX_PART_BYTES = 5_000_000_000;

export interface PlanRowsDeps {
  s3: S3Source;
  /** The most bytes one job's body may hold (IMPORT_MAX_PART_BYTES): a larger body is split. */
  maxPartBytes: number;
}

export function makePlanRows(deps: PlanRowsDeps) {
  return async function planRowsActivity(input: PlanRowsInput): Promise<PlanRowsResult> {
    const ctx = Context.current();
    const where = s3Url(input.bucket, input.key);
    const report = rejectsReportLocation({
      ...input,
      settings: { dialect: input.dialect, entityType: input.entityType, mappings: input.fieldMappings },
    });
    const written = await deps.s3.exists(report.bucket, report.key, ctx.cancellationSignal);
    const dir = await mkdtemp(join(tmpdir(), 'rejects-'));
    try {
      const reportPath = join(dir, 'rejects.csv');
      const plan = await withHeartbeatPulse(
        () => ctx.heartbeat(),
        HEARTBEAT_PULSE_MS,
        () => readPlan(deps, input, written ? undefined : reportPath),
      );
      if (plan.rowsRejected > 0 && !written) {
        const { size } = await stat(reportPath);
        await deps.s3.putFile(report.bucket, report.key, reportPath, size, 'text/csv; charset=utf-8');
      }
      const rows = rowCounts(plan, plan.rowsRejected > 0 ? report : undefined);
      log.info('Rows checked', { source: where, ...rows });
      decide(where, input, plan, rows);
      return { plan, rows };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
}

async function readPlan(deps: PlanRowsDeps, input: PlanRowsInput, reportPath: string | undefined): Promise<RowPlan> {
  const signal = Context.current().cancellationSignal;
  try {
    const options = {
      dialect: input.dialect,
      checks: { entityType: input.entityType, fieldMappings: input.fieldMappings },
      maxPartBytes: deps.maxPartBytes,
      rejects: reportPath === undefined ? undefined : createWriteStream(reportPath),
    };
    return await planObject(deps.s3, input, options, signal);
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    throw readFailure(s3Url(input.bucket, input.key), err);
  }
}

function rowCounts(plan: RowPlan, report: ReportLocation | undefined): RowCounts {
  return {
    dialect: describeDialect(plan.dialect),
    body: plan.body,
    read: plan.rowsRead,
    sent: plan.rowsSent,
    rejected: plan.rowsRejected,
    ...(plan.parts.length > 1 ? { parts: plan.parts.length } : {}),
    ...(report ? { rejectsReport: s3Url(report.bucket, report.key) } : {}),
  };
}

/** Send, or fail before any job: the operator's choice on refused rows, or an empty body. */
function decide(where: string, input: PlanRowsInput, plan: RowPlan, rows: RowCounts): void {
  const verdict = planVerdict(plan, input.onRejectedRows);
  const report = rows.rejectsReport ? `; the rejects report is ${rows.rejectsReport}` : '';
  if (verdict.outcome === 'refused') {
    throw failure('RowsRejected', `${where}: ${verdict.message}${report}; no job was created`, rows);
  }
  if (verdict.outcome === 'nothing-to-send') {
    throw failure('EmptyFile', `${where}: ${verdict.message}${report}; no job was created`, rows);
  }
}

function readFailure(where: string, err: unknown): unknown {
  if (err instanceof RowStageError) {
    return failure('UnreadableFile', `${where}: ${err.message}`, { code: err.code });
  }
  if (err instanceof SourceObjectChanged) return failure('SourceChanged', `${err.message}; inspect the file again`);
  if (err instanceof SourceObjectMissing) {
    return failure('SourceChanged', `${err.message}: it was removed after it was inspected`);
  }
  return err;
}
