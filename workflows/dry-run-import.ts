/**
 * Dry runs: what an import (dryRunImport) or a feed's nightly (dryRunFeed)
 * would do, found out without doing it. They run the import's own checks
 * through read-only activities: the preflight against S3 and the service's
 * reference reads, the field-mapping diff (no write, no lock), the job the
 * object version's job record holds (read, never claimed or started; no
 * list call), Temporal's record of the object version's import, and the
 * ledger's budgets. Nothing is created, written or uploaded; every read
 * is reserved with the ledger like any call and reported in `spent`.
 *
 * They run on the worker, so the service token stays there, and are
 * short-lived: a step that keeps failing for a passing reason is tried a few
 * times, then reported as "could not check", never waited out.
 */
import { log, proxyActivities } from '@temporalio/workflow';
import type {
  BudgetUsage,
  FeedObject,
  ImportActivities,
  ImportState,
  NightlyActivities,
} from './contracts/activities.js';
import type {
  DryRunActivities,
  DryRunFeedInput,
  DryRunFeedReport,
  DryRunImportInput,
  DryRunImportReport,
  DryRunJob,
  DryRunProblem,
  DryRunStep,
  ExistingJob,
  JobLookupVia,
  MappingDiff,
  ObjectDryRun,
  PreflightFacts,
  RecordFinding,
} from './contracts/dry-run.js';
import { type ApiCallCounts, addApiCalls } from './contracts/endpoints.js';
import {
  type ImportFileInput,
  importInputProblems,
  inspectSourceInput,
  normaliseImportInput,
} from './contracts/import-input.js';
import { jobNameWithKey } from './contracts/job-key.js';
import { objectImportWorkflowId } from './contracts/nightly.js';
import { budgetChecks, existingJobProblem, importCost, jobWarnings, verdictOf } from './dry-run-verdict.js';
import { failureMessageOf, failureTypeOf } from './failure-classification.js';
import { callsPerImport, importAllowance, importInputForObject } from './nightly-policy.js';
import { ACTIVITY_RETRY_POLICY, SHORT_CALL_TIMEOUT_MS } from './retry-policies.js';

type DryRunCalls = DryRunActivities &
  Pick<ImportActivities, 'readBudgetUsage'> &
  Pick<NightlyActivities, 'readImportStates' | 'listFeedObjects'>;

/** A few tries, quickly: a dry run answers in seconds or says what it could not check. */
const DRY_RUN_RETRY = { ...ACTIVITY_RETRY_POLICY, maximumAttempts: 3, maximumInterval: '5s' };
const short = proxyActivities<DryRunCalls>({ startToCloseTimeout: SHORT_CALL_TIMEOUT_MS, retry: DRY_RUN_RETRY });
/** The job lookup reads a record (and at most one job) per object, up to a feed's 200, heartbeating as it goes. */
const records = proxyActivities<DryRunCalls>({
  startToCloseTimeout: 10 * 60 * 1000,
  heartbeatTimeout: 2 * 60 * 1000,
  retry: DRY_RUN_RETRY,
});

/** S3 keys listed per page, and pages at most, while collecting a feed's first objects. */
const LIST_PAGE_SIZE = 200;
const MAX_LIST_PAGES = 5;
/** Preflights of a feed's objects run this many at a time. */
const PREFLIGHTS_AT_ONCE = 8;

/** What one dry run spent and could not check, gathered as it goes. */
class Findings {
  readonly spent: ApiCallCounts = {};

  /** A read-only step's value; its problem (or why it could not run) goes to `problems`. */
  async step<T>(check: string, problems: DryRunProblem[], call: () => Promise<DryRunStep<T>>): Promise<T | undefined> {
    const answer = await this.plain(check, problems, call);
    if (answer === undefined) return undefined;
    addApiCalls(this.spent, answer.apiCalls);
    if (answer.ok) return answer.value;
    problems.push({ check, type: answer.type, message: answer.message });
    return undefined;
  }

  /** An activity without a finding of its own: a failure after its tries is a problem ("could not check"). */
  async plain<T>(check: string, problems: DryRunProblem[], call: () => Promise<T>): Promise<T | undefined> {
    try {
      return await call();
    } catch (err) {
      const type = failureTypeOf(err) ?? 'Unknown';
      problems.push({ check, type, message: `could not check: ${failureMessageOf(err)}` });
      log.warn(`dry run: ${check} could not be checked`, { type });
      return undefined;
    }
  }
}

export async function dryRunImport(request: DryRunImportInput): Promise<DryRunImportReport> {
  const findings = new Findings();
  const inputProblems = importInputProblems(request.input);
  const source = { bucket: request.input.source?.bucket, key: request.input.source?.key };
  if (inputProblems.length > 0) {
    const problem = { check: 'input', type: 'InvalidInput', message: inputProblems.join('; ') };
    return { object: { source, verdict: 'fail', problems: [problem], warnings: [], budget: [] }, spent: {} };
  }
  const input = normaliseImportInput(request.input);
  const problems: DryRunProblem[] = [];
  const mappings = input.fieldMappings
    ? await findings.step('applyFieldMappings', problems, () =>
        short.diffFieldMappings({ tenant: input.tenant, set: input.fieldMappings! }),
      )
    : undefined;
  const facts = await preflight(findings, input, problems);
  const workflowId =
    request.workflowId ?? (facts && objectImportWorkflowId(input.source.bucket, input.source.key, facts.etag));
  const states = workflowId
    ? await findings.plain('start', problems, () => short.readImportStates({ workflowIds: [workflowId] }))
    : undefined;
  const importState = workflowId ? states?.[workflowId] : undefined;
  const goesOn = problems.length === 0 && verdictOf([], importState, request.workflowId === undefined) === 'import';
  const found =
    facts && goesOn ? (await lookupJobs(findings, input.tenant, [versionOf(input, facts)], problems))?.[0] : undefined;
  const jobProblem = existingJobProblem(found?.existing);
  if (jobProblem) problems.push(jobProblem);
  const usage = await readUsage(findings, input.tenant, problems);
  const object = objectReport({
    input,
    facts,
    mappings,
    problems,
    workflowId,
    importState,
    byVersion: request.workflowId === undefined,
    job: jobReport(input, found),
    usage,
  });
  return { object, spent: findings.spent };
}

export async function dryRunFeed(request: DryRunFeedInput): Promise<DryRunFeedReport> {
  const { feedId, feed, maxObjects } = request;
  const findings = new Findings();
  const problems: DryRunProblem[] = [];
  const report: DryRunFeedReport = {
    feedId,
    bucket: feed.bucket,
    prefix: feed.prefix,
    listed: 0,
    more: false,
    maxObjects,
    objects: [],
    spent: findings.spent,
    problems,
  };
  const listing = await findings.plain('listFeedObjects', problems, () => firstObjects(request));
  if (!listing) return report;
  report.listed = listing.objects.length;
  report.more = listing.more;
  const stateOf = await feedImportStates(findings, request, listing.objects, problems);
  if (!stateOf) return report;
  const candidates = listing.objects.filter((o) => verdictOf([], stateOf(o), true) === 'import');
  const mappingProblems: DryRunProblem[] = [];
  if (feed.fieldMappings && candidates.length > 0) {
    const set = feed.fieldMappings;
    report.fieldMappings = await findings.step('applyFieldMappings', mappingProblems, () =>
      short.diffFieldMappings({ tenant: feed.tenant, set }),
    );
  }
  const inputs = new Map(listing.objects.map((o) => [o.key, importInputForObject(feedId, feed, o)]));
  const checked = await preflightCandidates(findings, candidates, inputs, mappingProblems);
  const jobOf = await lookupReadyJobs(findings, request, candidates, inputs, checked, problems);
  const usage = await readUsage(findings, feed.tenant, problems);
  report.objects = listing.objects.map((o) => {
    const input = inputs.get(o.key) as ImportFileInput;
    const c = checked.get(o.key);
    return objectReport({
      input,
      facts: c?.facts,
      mappings: report.fieldMappings,
      problems: c?.problems ?? [],
      workflowId: objectImportWorkflowId(feed.bucket, o.key, o.etag),
      importState: stateOf(o),
      byVersion: true,
      job: c ? jobReport(input, jobOf.get(o.key)) : undefined,
      usage: c ? usage : undefined,
    });
  });
  if (usage) Object.assign(report, allowanceNow(usage));
  return report;
}

/** Each object's import state as the nightly counts it, by the object version's workflow id. */
async function feedImportStates(
  findings: Findings,
  { feed }: DryRunFeedInput,
  objects: FeedObject[],
  problems: DryRunProblem[],
): Promise<((o: FeedObject) => ImportState) | undefined> {
  const childIdOf = (o: FeedObject) => objectImportWorkflowId(feed.bucket, o.key, o.etag);
  const ids = objects.map(childIdOf);
  const states = await findings.plain('start', problems, () => short.readImportStates({ workflowIds: ids }));
  if (!states) return undefined;
  return (o) => states[childIdOf(o)] ?? 'absent';
}

type Checked = Map<string, { problems: DryRunProblem[]; facts?: PreflightFacts }>;

/** The preflight of every candidate, a few at a time, each with its own problems. */
async function preflightCandidates(
  findings: Findings,
  candidates: FeedObject[],
  inputs: Map<string, ImportFileInput>,
  mappingProblems: DryRunProblem[],
): Promise<Checked> {
  const checked: Checked = new Map();
  for (let i = 0; i < candidates.length; i += PREFLIGHTS_AT_ONCE) {
    await Promise.all(
      candidates.slice(i, i + PREFLIGHTS_AT_ONCE).map(async (o) => {
        const input = inputs.get(o.key) as ImportFileInput;
        const own: DryRunProblem[] = [...mappingProblems];
        const invalid = importInputProblems(input);
        if (invalid.length > 0) own.push({ check: 'input', type: 'InvalidInput', message: invalid.join('; ') });
        const facts = invalid.length > 0 ? undefined : await preflight(findings, input, own);
        checked.set(o.key, { problems: own, facts });
      }),
    );
  }
  return checked;
}

/** One lookup for every candidate that passed its preflight; a job its import would meet failed fails it. */
async function lookupReadyJobs(
  findings: Findings,
  { feed }: DryRunFeedInput,
  candidates: FeedObject[],
  inputs: Map<string, ImportFileInput>,
  checked: Checked,
  problems: DryRunProblem[],
): Promise<Map<string, JobFinding>> {
  const ready = candidates.flatMap((o) => {
    const c = checked.get(o.key);
    return c?.facts && c.problems.length === 0 ? [{ key: o.key, c, facts: c.facts }] : [];
  });
  const versions = ready.map((r) => versionOf(inputs.get(r.key) as ImportFileInput, r.facts));
  const found = ready.length > 0 ? await lookupJobs(findings, feed.tenant, versions, problems) : undefined;
  const jobOf = new Map<string, JobFinding>();
  ready.forEach((r, i) => {
    const finding = found?.[i];
    if (!finding) return;
    jobOf.set(r.key, finding);
    const jobProblem = existingJobProblem(finding.existing);
    if (jobProblem) r.c.problems.push(jobProblem);
  });
  return jobOf;
}

/** How many imports the budgets allow now, and when they reopen, as the nightly decides before a child finished. */
function allowanceNow(usage: BudgetUsage): Pick<DryRunFeedReport, 'allowedNow' | 'reopensAt'> {
  const allowance = importAllowance(usage, 0, Date.now(), callsPerImport([]));
  return {
    ...(Number.isFinite(allowance.allowed) ? { allowedNow: allowance.allowed } : {}),
    ...(allowance.reopensAtMs !== undefined ? { reopensAt: new Date(allowance.reopensAtMs).toISOString() } : {}),
  };
}

function preflight(findings: Findings, input: ImportFileInput, problems: DryRunProblem[]) {
  return findings.step('inspectSource', problems, () => short.dryRunPreflight(inspectSourceInput(input)));
}

/** What the lookup found for one object version. */
interface JobFinding {
  via: JobLookupVia;
  record?: RecordFinding;
  existing?: ExistingJob;
}

/** The object version an import names to its job record (the ETag as inspected). */
function versionOf(input: ImportFileInput, facts: PreflightFacts) {
  return { bucket: input.source.bucket, key: input.source.key, etag: facts.etag };
}

/**
 * One lookup for all the given versions: each one's job record answers, as
 * it answers the import (whatever its workflow id or feed).
 */
async function lookupJobs(
  findings: Findings,
  tenant: string | undefined,
  versions: { bucket: string; key: string; etag: string }[],
  problems: DryRunProblem[],
): Promise<JobFinding[] | undefined> {
  const answer = await findings.step('createImportJob', problems, () =>
    records.findImportJobs({ tenant, lookups: versions.map((version) => ({ version })) }),
  );
  if (!answer) return undefined;
  return versions.map((_, i) => {
    const record = answer.records?.[i];
    const existing = answer.jobs[i];
    return { via: answer.via, ...(record ? { record } : {}), ...(existing ? { existing } : {}) };
  });
}

function jobReport(input: ImportFileInput, found: JobFinding | undefined): DryRunJob {
  return {
    name: jobNameWithKey(input.dataImportName, '<key>'),
    keyNote: "a fresh key for each create, given by the object version's job record",
    lookup: found?.via ?? 'none',
    ...(found?.record ? { record: found.record } : {}),
    ...(found?.existing ? { existing: found.existing } : {}),
  };
}

function readUsage(findings: Findings, tenant: string | undefined, problems: DryRunProblem[]) {
  // The tenant check already failed the preflight; the ledger would refuse the same way.
  if (problems.some((p) => p.type === 'TenantMismatch')) return Promise.resolve(undefined);
  return findings.plain('budget', problems, () => short.readBudgetUsage({ tenant }));
}

/** The first `maxObjects` objects of the feed, in listing order, reading at most MAX_LIST_PAGES pages. */
async function firstObjects({ feed, maxObjects }: DryRunFeedInput): Promise<{ objects: FeedObject[]; more: boolean }> {
  const objects: FeedObject[] = [];
  let token: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const listed = await short.listFeedObjects({
      bucket: feed.bucket,
      prefix: feed.prefix,
      pattern: feed.pattern,
      continuationToken: token,
      maxKeys: LIST_PAGE_SIZE,
    });
    objects.push(...listed.objects);
    token = listed.nextContinuationToken;
    if (token === undefined || objects.length > maxObjects) break;
  }
  return { objects: objects.slice(0, maxObjects), more: objects.length > maxObjects || token !== undefined };
}

interface ObjectParts {
  input: ImportFileInput;
  facts?: PreflightFacts;
  mappings?: MappingDiff;
  problems: DryRunProblem[];
  workflowId?: string;
  importState?: string;
  byVersion: boolean;
  job?: DryRunJob;
  usage?: BudgetUsage;
}

function objectReport(p: ObjectParts): ObjectDryRun {
  const verdict = verdictOf(p.problems, p.importState, p.byVersion);
  const warnings = [...(p.facts?.warnings ?? [])];
  if (p.mappings && !p.mappings.inPlace) {
    warnings.push(
      `the import would replace the mapping set of custom source ${p.mappings.sourceId} (${p.mappings.objectType}): ` +
        `${p.mappings.missing.length} to add, ${p.mappings.unexpected.length} to remove`,
    );
  }
  if (verdict === 'import' && p.job) warnings.push(...jobWarnings(p.job));
  if (p.importState === 'ended-otherwise') {
    warnings.push(
      `an earlier import of this version (workflow ${p.workflowId}) did not complete; this one runs it again`,
    );
  }
  const report: ObjectDryRun = {
    source: { bucket: p.input.source.bucket, key: p.input.source.key },
    verdict,
    problems: p.problems,
    warnings,
    budget: [],
  };
  if (p.workflowId !== undefined) report.workflowId = p.workflowId;
  if (p.importState !== undefined) report.importState = p.importState;
  if (p.facts) {
    const { etag, sizeBytes, header, dialect, rowSample } = p.facts;
    report.object = { etag, sizeBytes, header, dialect, rowSample };
  }
  if (p.mappings) report.fieldMappings = p.mappings;
  if (verdict === 'import' || verdict === 'fail') {
    if (p.job) report.job = p.job;
    const parts = p.facts?.rowSample.parts;
    report.budget = budgetChecks(importCost(p.input, p.job?.existing, parts), p.usage, Date.now());
  }
  return report;
}
