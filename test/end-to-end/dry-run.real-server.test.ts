/**
 * `start --dry-run` and `schedules trigger <feed> --dry-run` on the whole
 * stack (real Temporal dev server, the real worker, s3rver, the service
 * simulator), run through the CLI's own entry (`main`) for its exit codes.
 * The simulator's record is the witness: a dry run creates no job, writes no
 * mapping and uploads nothing, and the only requests it makes are the reads
 * its report lists, each budgeted one reserved with the ledger. Which job an
 * import would use comes from the object version's job record, read without
 * a list call: Temporal's record of the job record is the other witness (no
 * record started, none written to).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../worker/cli/main.js';
import { startCommand } from '../../worker/cli/start-command.js';
import type { StartFlags } from '../../worker/cli/start-input.js';
import { ledgerWorkflowId } from '../../workflows/contracts/budget.js';
import type { DryRunFeedReport, DryRunImportReport } from '../../workflows/contracts/dry-run.js';
import type { FieldMapping } from '../../workflows/contracts/import-input.js';
import { type JobRecordView, jobRecordWorkflowId } from '../../workflows/contracts/job-record.js';
import { jobRecordQuery, usageQuery } from '../../workflows/contracts/messages.js';
import type { RequestRecord } from '../simulator/types.js';
import { cliContext } from '../support/operator-actions.js';
import { accountsCsv, type OperatorStack, STACK_BUCKET, startOperatorStack } from '../support/operator-stack.js';
import { requestsPerEndpoint, simJobs, simRequests } from '../support/sim-inspect.js';

const FEED_ID = 'dry';
const GOOD = 'dry/2026-11-20.csv';
const IMPORTED = 'dry/2026-11-21.csv';
const BAD_HEADER = 'dry/2026-11-22.csv';
const WITH_JOB = 'dry/2026-11-23.csv';
/** Imported through the job record under ids of the operator's own, outside the feed's prefix. */
const RECORD_DONE = 'by-hand/done.csv';
const RECORD_OPEN = 'by-hand/open.csv';
const MAPPINGS: FieldMapping[] = [
  { sourceFieldLabel: 'Account Name', serviceFieldName: 'name', dataType: 'string' },
  { sourceFieldLabel: 'Account Domain', serviceFieldName: 'domain', dataType: 'string' },
];
const WRITES = ['createJob', 'submitData', 'putFieldMappings'];

describe('dry runs, on the whole stack', () => {
  let stack: OperatorStack;
  let dir: string;
  let ctx: ReturnType<typeof cliContext>;
  let mappingsFile: string;

  beforeAll(async () => {
    stack = await startOperatorStack();
    await stack.putObject(GOOD, accountsCsv(20_000));
    await stack.putObject(IMPORTED, accountsCsv(21_000));
    await stack.putObject(BAD_HEADER, accountsCsv(22_000, 'Name Only'));
    await stack.putObject(WITH_JOB, accountsCsv(23_000));
    await stack.putObject(RECORD_DONE, accountsCsv(24_000));
    await stack.putObject(RECORD_OPEN, accountsCsv(25_000));
    dir = mkdtempSync(join(tmpdir(), 'dry-run-'));
    mappingsFile = join(dir, 'mappings.json');
    writeFileSync(mappingsFile, JSON.stringify({ sourceId: '1001', objectType: 'account', mappings: MAPPINGS }));
    const feedsFile = join(dir, 'feeds.json');
    const feed = { id: FEED_ID, bucket: STACK_BUCKET, prefix: 'dry/', entityType: 'Account', listAction: 'insert' };
    writeFileSync(feedsFile, JSON.stringify({ feeds: [{ ...feed, schedule: { time: '02:00', timeZone: 'UTC' } }] }));
    ctx = cliContext(stack.workerEnv({ IMPORT_FEEDS_FILE: feedsFile }));
    await stack.startWorker();
    // One real import: a version already imported for the dry runs to find, and a running budget ledger
    // (a ledger's start reads the service's record of its window once, a read no dry run makes).
    await startCommand({ bucket: STACK_BUCKET, key: IMPORTED, entityType: 'Account', wait: true }, ctx);
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Runs the CLI; returns its exit code, what it printed, and the requests the simulator saw meanwhile. */
  async function cli(...args: string[]) {
    const before = (await simRequests(stack.sim.baseUrl)).length;
    const jobsBefore = (await simJobs(stack.sim.baseUrl)).length;
    const serviceRecordBefore = stack.sim.record();
    const mappingsBefore = stack.sim.fieldMappings('1001', 'account');
    ctx.printed.length = 0;
    ctx.warned.length = 0;
    const code = await main(['node', 'import-worker', ...args], ctx);
    const requests: RequestRecord[] = (await simRequests(stack.sim.baseUrl)).slice(before);
    expect((await simJobs(stack.sim.baseUrl)).length).toBe(jobsBefore);
    expect(requests.filter((r) => WRITES.includes(r.endpoint))).toEqual([]);
    expect(requests.filter((r) => r.method !== 'GET')).toEqual([]);
    // No job, no accepted body, no mapping set: what the service committed is as it was.
    expect(stack.sim.record()).toEqual(serviceRecordBefore);
    expect(stack.sim.fieldMappings('1001', 'account')).toEqual(mappingsBefore);
    return { code, out: ctx.printed.join('\n'), err: ctx.warned.join('\n'), requests };
  }
  const recordHandle = (workflowId: string) => stack.env.client.workflow.getHandle(workflowId);
  /** The record's run and its history's length: a dry run must leave both as they were. */
  async function recordTrace(workflowId: string) {
    const handle = recordHandle(workflowId);
    const described = await handle.describe();
    return { runId: described.runId, events: (await handle.fetchHistory()).events?.length };
  }
  /** An import of the version under an id of the operator's: the version's own id stays unused. */
  const importByHand = (flags: StartFlags) =>
    startCommand({ workflowId: `by-hand-${randomUUID()}`, wait: true, ...flags }, ctx);
  const flagsFor = (key: string): StartFlags => ({ bucket: STACK_BUCKET, key, entityType: 'Account' });
  /** The version's record id, named from S3's ETag as the worker names it (its tenant is the stack's). */
  const recordIdOf = async (key: string) => {
    const head = await stack.s3.client.send(new HeadObjectCommand({ Bucket: STACK_BUCKET, Key: key }));
    return jobRecordWorkflowId({ tenant: 'default', bucket: STACK_BUCKET, key, etag: head.ETag as string });
  };
  const jobOf = async (key: string) => {
    const name = key.slice(key.lastIndexOf('/') + 1);
    const jobs = (await simJobs(stack.sim.baseUrl)).filter((j) => j.dataImportName.endsWith(` ${name}`));
    expect(jobs).toHaveLength(1);
    return String(jobs[0]?.id);
  };
  const ledgerUsage = () => stack.env.client.workflow.getHandle(ledgerWorkflowId('default')).query(usageQuery);
  const startArgs = (key: string) => ['start', '--bucket', STACK_BUCKET, '--key', key, '--entity-type', 'Account'];

  it('reports an import that would go ahead, spending only the reads it lists, each reserved with the ledger', async () => {
    const reservedBefore = (await ledgerUsage()).listSources.used;
    const run = await cli(...startArgs(GOOD), '--import-source', 'CSV', '--dry-run', '--json');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.out) as DryRunImportReport & { ok: boolean };
    expect(report.ok).toBe(true);
    expect(report.object).toMatchObject({
      verdict: 'import',
      problems: [],
      importState: 'absent',
      source: { bucket: STACK_BUCKET, key: GOOD },
      object: { header: ['Account Name', 'Account Domain'] },
      job: {
        lookup: 'job-record',
        record: { status: 'absent' },
        name: expect.stringMatching(/^\[import:<key>\] 2026-11-20\.csv$/),
      },
    });
    expect(report.object.job?.existing).toBeUndefined();
    expect(report.object.workflowId).toMatch(/^import-[0-9a-f]{16}$/);
    expect(report.object.budget.map((b) => b.endpoint)).toEqual([
      'createJob',
      'submitData',
      'jobStatus',
      'listJobs',
      'listSources',
    ]);
    expect(report.object.budget.every((b) => b.remaining !== undefined && !b.waits)).toBe(true);
    // Exactly the reads the report lists reached the service: the source list.
    expect(report.spent).toEqual({ listSources: 1 });
    expect(requestsPerEndpoint(run.requests)).toEqual(report.spent);
    expect((await ledgerUsage()).listSources.used).toBe(reservedBefore + 1);

    // With field mappings: the set's diff, and the custom source the job would be created on, by name.
    const mapped = await cli(...startArgs(GOOD), '--mappings-file', mappingsFile, '--dry-run', '--json');
    expect(mapped.code).toBe(0);
    const mappedReport = JSON.parse(mapped.out) as DryRunImportReport & { ok: boolean };
    expect(mappedReport.object).toMatchObject({
      verdict: 'import',
      fieldMappings: {
        sourceId: '1001',
        sourceName: 'Salesforce CRM',
        objectType: 'account',
        inPlace: false,
        missing: MAPPINGS,
        unexpected: [],
      },
    });
    expect(mappedReport.spent).toEqual({ getFieldMappings: 1, getCustomSource: 1 });
    expect(requestsPerEndpoint(mapped.requests)).toEqual(mappedReport.spent);
    // Reading a record that does not exist started none.
    const recordId = await recordIdOf(GOOD);
    expect(report.object.job?.record?.workflowId).toBe(recordId);
    await expect(recordHandle(recordId).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
  });

  it('reports the completed job of a version imported through its record, with no call to the service at all', async () => {
    await importByHand(flagsFor(RECORD_DONE));
    const jobId = await jobOf(RECORD_DONE);
    const recordId = await recordIdOf(RECORD_DONE);
    const trace = await recordTrace(recordId);

    const run = await cli(...startArgs(RECORD_DONE), '--dry-run', '--json');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.out) as DryRunImportReport & { ok: boolean };
    // The version's own id was never used: start would go ahead, and its import would find the job done.
    expect(report.object).toMatchObject({
      verdict: 'import',
      importState: 'absent',
      job: { lookup: 'job-record', record: { workflowId: recordId, status: 'completed' } },
    });
    expect(report.object.job?.existing).toEqual({ jobId, state: 'completed' });
    expect(report.object.warnings).toContainEqual(expect.stringContaining(`job ${jobId} of this version completed`));
    expect(report.object.budget.map((b) => b.endpoint)).not.toContain('createJob');
    expect(report.object.budget.map((b) => b.endpoint)).not.toContain('submitData');
    expect(report.spent).toEqual({});
    expect(run.requests).toEqual([]);
    expect(await recordTrace(recordId)).toEqual(trace);

    const printed = await cli(...startArgs(RECORD_DONE), '--dry-run');
    expect(printed.out).toContain(
      `"[import:<key>] done.csv": reuses job ${jobId} (completed, as its record saw it end)`,
    );
    expect(printed.out).toContain(`  record    ${recordId} (completed with its job)`);
    expect(printed.out).toContain('  spent     no service calls');
  });

  it('refreshes a job its record has not seen end with one status read, reserved with the ledger, and no list call', async () => {
    // The job outlasts the import's job timeout: the import fails, its record still says processing.
    stack.sim.setProcessingMs(3_600_000);
    const inputFile = join(dir, 'open-input.json');
    writeFileSync(
      inputFile,
      JSON.stringify({
        source: { bucket: STACK_BUCKET, key: RECORD_OPEN },
        dataImportName: 'open.csv',
        entityType: 'Account',
        jobTimeoutMs: 1,
      }),
    );
    try {
      await expect(importByHand({ input: inputFile })).rejects.toThrow(/JobTimedOut/);
    } finally {
      stack.sim.setProcessingMs(200);
    }
    const jobId = await jobOf(RECORD_OPEN);
    const recordId = await recordIdOf(RECORD_OPEN);
    expect((await recordHandle(recordId).query<JobRecordView>(jobRecordQuery)).job).toMatchObject({
      jobId,
      state: 'processing',
    });
    const trace = await recordTrace(recordId);

    const run = await cli(...startArgs(RECORD_OPEN), '--dry-run', '--json');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.out) as DryRunImportReport & { ok: boolean };
    expect(report.object.job).toMatchObject({
      lookup: 'job-record',
      record: { workflowId: recordId, status: 'running' },
      existing: { jobId, state: 'processing', recordedState: 'processing' },
    });
    // The import would follow the job: no create, no upload.
    expect(report.object.budget.map((b) => b.endpoint)).not.toContain('createJob');
    expect(report.object.budget.map((b) => b.endpoint)).not.toContain('submitData');
    expect(report.spent).toEqual({ jobStatus: 1 });
    expect(requestsPerEndpoint(run.requests)).toEqual({ jobStatus: 1 });
    // Reserved with the ledger: every status read the service has seen is counted there (a worker
    // process spends reads from an allowance it reserved, so the count may run ahead of them).
    const served = requestsPerEndpoint(await simRequests(stack.sim.baseUrl)).jobStatus ?? 0;
    expect(served).toBeLessThanOrEqual((await ledgerUsage()).jobStatus.used);
    expect(await recordTrace(recordId)).toEqual(trace);
  });

  it('prints a readable report and exits 1 with the reasons when the preflight fails', async () => {
    const missing = await cli(...startArgs('dry/no-such.csv'), '--dry-run');
    expect(missing.code).toBe(1);
    expect(missing.out).toContain(`dry run of s3://${STACK_BUCKET}/dry/no-such.csv: would FAIL`);
    expect(missing.out).toMatch(/problem +\[inspectSource\] SourceNotFound: /);
    expect(missing.err).toMatch(/^error: dry run: the import would not go ahead: inspectSource: SourceNotFound: /);
    expect(missing.requests).toEqual([]);

    const header = await cli(...startArgs(BAD_HEADER), '--dry-run', '--json');
    expect(header.code).toBe(1);
    const report = JSON.parse(header.out) as DryRunImportReport & { ok: boolean };
    expect(report).toMatchObject({ ok: false, spent: {}, object: { verdict: 'fail' } });
    expect(report.object.problems).toEqual([
      { check: 'inspectSource', type: 'InvalidCsvHeader', message: expect.stringContaining('Account Name') },
    ]);
    expect(header.requests).toEqual([]);
  });

  it('says an object version already imported needs no import, as start would refuse it', async () => {
    const run = await cli(...startArgs(IMPORTED), '--dry-run');
    expect(run.code).toBe(1);
    expect(run.out).toContain('already imported: nothing to do');
    expect(run.err).toMatch(/was already imported by workflow import-[0-9a-f]{16}; start would refuse it/);
    expect(run.requests).toEqual([]);
  });

  it("lists each object's verdict for a feed, reports the job an object's record holds, and exits 1 for the failing one", async () => {
    const first = await cli('schedules', 'trigger', FEED_ID, '--dry-run', '--json');
    const before = JSON.parse(first.out) as DryRunFeedReport & { ok: boolean };
    const withJob = before.objects.find((o) => o.source.key === WITH_JOB);
    expect(withJob?.job).toMatchObject({ lookup: 'job-record', record: { status: 'absent' } });
    expect(withJob?.job?.existing).toBeUndefined();

    // The object's version imported through its record by hand, as an operator's start with its own id leaves it:
    // the night's id for the object stays unused, so the night would start it.
    await importByHand(flagsFor(WITH_JOB));
    const jobId = await jobOf(WITH_JOB);

    const run = await cli('schedules', 'trigger', FEED_ID, '--dry-run', '--json', '--limit', '3');
    expect(run.code).toBe(1);
    const report = JSON.parse(run.out) as DryRunFeedReport & { ok: boolean };
    expect(report).toMatchObject({ ok: false, feedId: FEED_ID, listed: 3, more: true, maxObjects: 3, problems: [] });
    expect(report.objects.map((o) => [o.source.key, o.verdict])).toEqual([
      [GOOD, 'import'],
      [IMPORTED, 'already-imported'],
      [BAD_HEADER, 'fail'],
    ]);
    expect(run.err).toMatch(
      new RegExp(`1 object\\(s\\) of feed ${FEED_ID} would fail: ${BAD_HEADER}: inspectSource: InvalidCsvHeader`),
    );
    expect(report.objects[0]?.job).toMatchObject({ lookup: 'job-record', record: { status: 'absent' } });
    expect(requestsPerEndpoint(run.requests)).toEqual(report.spent);

    const all = await cli('schedules', 'trigger', FEED_ID, '--dry-run', '--json');
    const allReport = JSON.parse(all.out) as DryRunFeedReport;
    const found = allReport.objects.find((o) => o.source.key === WITH_JOB);
    expect(found?.job).toMatchObject({ lookup: 'job-record', record: { status: 'completed' } });
    expect(found?.job?.existing).toEqual({ jobId, state: 'completed' });
    expect(found?.budget.map((b) => b.endpoint)).not.toContain('createJob');
    // The record answered for every object: no list call, and no read for a job that completed.
    expect(allReport.spent).toEqual({});
    expect(all.requests).toEqual([]);
  });

  it('prints the feed report for a person: the bound, the verdicts and each object', async () => {
    const run = await cli('schedules', 'trigger', FEED_ID, '--dry-run', '--limit', '2');
    expect(run.code).toBe(0);
    expect(run.out).toContain(
      `dry run of feed ${FEED_ID} (s3://${STACK_BUCKET}/dry/): 2 object(s) checked, the first 2; the feed holds more`,
    );
    expect(run.out).toContain('verdicts  1 import, 0 fail, 1 already-imported, 0 running');
    expect(run.out).toContain(`${GOOD}: would import`);
  });
});
