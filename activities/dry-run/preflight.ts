/**
 * The dry run's preflight: inspectSource's own checks of the S3 object and
 * the service's reference reads (the same code, the same per-worker cache),
 * then the row check on a sample of the file's first rows,
 * answering with what they spent also when a check fails.
 */
import { Context } from '@temporalio/activity';
import type { InspectSourceInput } from '../../workflows/contracts/activities.js';
import type { DryRunStep, PreflightFacts, RowSample } from '../../workflows/contracts/dry-run.js';
import { checkReferences, type InspectSourceDeps, lookAtFile } from '../inspect-source.js';
import { describeDialect } from '../rows/index.js';
import { ServiceCalls } from '../service-calls.js';
import { rowSample } from './row-sample.js';
import { dryRunStep, refusedStep } from './step.js';

export interface DryRunPreflightDeps extends InspectSourceDeps {
  /** IMPORT_MAX_PART_BYTES: how many jobs the file would make. */
  maxPartBytes: number;
}

export function makeDryRunPreflight(deps: DryRunPreflightDeps) {
  return async function dryRunPreflight(input: InspectSourceInput): Promise<DryRunStep<PreflightFacts>> {
    let calls: ServiceCalls;
    try {
      calls = ServiceCalls.forCurrentActivity(deps, input.tenant);
    } catch (err) {
      return refusedStep(err);
    }
    Context.current().heartbeat();
    return dryRunStep(calls, async () => {
      const facts = await lookAtFile(deps, input);
      await checkReferences(deps, input, facts.header, calls);
      const sample = await rowSample(deps.s3, { ...input, ...facts }, deps.maxPartBytes);
      return {
        sizeBytes: facts.sizeBytes,
        etag: facts.etag,
        header: facts.header,
        warnings: [...facts.warnings, ...sampleWarnings(sample)],
        dialect: describeDialect(facts.dialect),
        rowSample: sample,
      };
    });
  };
}

/** Refused rows in the sample decide the import under the default `onRejectedRows: 'fail'`: say so. */
function sampleWarnings(sample: RowSample): string[] {
  if (sample.rejected === 0) return [];
  return [
    `${sample.rejected} row(s) ${sample.wholeFile ? 'of the file' : 'of the sample'} would be refused by the service: the import fails on them before any job unless rows.onRejectedRows is skip`,
  ];
}
