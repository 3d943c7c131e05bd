/**
 * The upload's fault matrix (lost answers, early answers, short bodies, S3 faults): each fault runs
 * through the retries Temporal would make (up to 4 attempts, each resuming
 * from the last heartbeat) against the simulator, s3rver and a Range-ignoring
 * proxy on real sockets, and one table row says what the service saw.
 *
 *   npx tsx test/activities/upload/fault-matrix.ts
 *
 * Not a test (it asserts nothing): the tests in this folder assert the
 * outcomes; this prints the before/after table for the note.
 */
import { ApplicationFailure } from '@temporalio/common';
import { makeAwaitJobCompletion } from '../../../activities/await-job-completion.js';
import { S3Source } from '../../../activities/s3/source.js';
import { loadConfig } from '../../../temporal.config.js';
import { s3ClientFor } from '../../../worker/demo/local-s3.js';
import type { UploadDataInput } from '../../../workflows/contracts/activities.js';
import { runActivity } from '../../support/activities.js';
import { budgetWith, type ServiceWorld, startServiceWorld } from '../environment.js';
import { startS3Proxy } from '../s3/s3-proxy.js';
import {
  BUCKET,
  csvBytes,
  dataPutsTo,
  etagOf,
  GatedS3Source,
  prepareUpload,
  type RetriedUpload,
  runUpload,
  sha256,
  startWorld,
  type UploadWorld,
  uploadDeps,
  uploadWithRetries,
} from './environment.js';

const IDLE_MS = 300;
const MiB = 1024 * 1024;
const rows: string[][] = [];

/** Set while a scenario runs: an uncaught error (a crashed worker process) ends that scenario, not the matrix. */
let onCrash: ((e: unknown) => void) | undefined;
process.on('uncaughtException', (e) => {
  if (!onCrash) throw e;
  onCrash(e);
});

/** Runs one scenario and prints its row; a crash becomes the row. */
async function guarded(fault: string, work: () => Promise<void>): Promise<void> {
  const crashed = new Promise<never>((_, reject) => {
    onCrash = reject;
  });
  try {
    await Promise.race([work(), crashed]);
  } catch (e) {
    const why = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    rows.push([fault, '1', '?', '?', '?', `worker process crashed (uncaught ${why})`]);
  } finally {
    onCrash = undefined;
  }
  console.log(`| ${rows.at(-1)!.join(' | ')} |`);
}

function outcomeOf(run: RetriedUpload, maxAttempts = 4): string {
  if (run.result)
    return `success (${run.result.skipped ? 'upload skipped' : 'sent'}, bytesSent ${run.result.bytesSent})`;
  const f = run.failure!;
  const retried = !f.nonRetryable && run.attempts >= maxAttempts ? ', retried without end' : '';
  return `${f.type}${f.nonRetryable ? ' (non-retryable)' : ' (retryable)'}${retried}`;
}

function row(world: UploadWorld, fault: string, input: UploadDataInput, bytes: Buffer, outcome: string): void {
  const job = world.sim.job(input.jobId)!;
  const byteExact = job.uploads === 0 ? '-' : job.sha256 === sha256(bytes) ? 'yes' : `no (${job.bytesReceived} B)`;
  rows.push([fault, '1', String(dataPutsTo(world, input.jobId)), String(job.uploads), byteExact, outcome]);
}

async function main(): Promise<void> {
  const world = await startWorld({ clientResponseTimeoutMs: 3_000 });
  const proxy = await startS3Proxy(world.s3.endpoint);
  const viaProxy = new S3Source(s3ClientFor(proxy.endpoint));
  const deps = (over = {}) =>
    uploadDeps(world, { uploadIdleTimeoutMs: IDLE_MS, unconfirmedWaitMs: 3_000, unconfirmedPollMs: 100, ...over });
  let n = 0;
  const prepare = (bytes: Buffer) => prepareUpload(world, `matrix-${++n}.csv`, bytes);
  const scenario = (fault: string, size: number, inject: () => void, over = {}) =>
    guarded(fault, async () => {
      world.sim.clearFaults();
      const bytes = csvBytes(size);
      const input = await prepare(bytes);
      inject();
      const run = await uploadWithRetries(deps(over), input);
      row(world, fault, input, bytes, outcomeOf(run));
    });

  console.log('| fault | POSTs | PUTs | accepted copies | byte-exact | outcome |');
  console.log('|---|---|---|---|---|---|');
  try {
    await scenario('1 answer 4x idle limit after the body, commits on answer', 2 * MiB, () =>
      world.sim.commitUploadOnAnswer(4 * IDLE_MS),
    );
    await scenario('1 no answer within the response timeout, commits on answer', MiB, () =>
      world.sim.commitUploadOnAnswer(5_000, { count: 4 }),
    );
    await scenario('1 answer after the response timeout, commits on receipt', MiB, () =>
      world.sim.delayNext('submitData', 5_000),
    );
    await guarded('1 attempt 2 starts while attempt 1 awaits a slow answer', () => overlapping(world, deps, prepare));
    await guarded("1 attempt 2 (without attempt 1's last heartbeat) PUTs; attempt 1's upload is taken first", () =>
      overlappingMidStream(world, deps, prepare),
    );
    for (const spelled of ['New', 'NEW', 'queued', 'created']) {
      await scenario(`2 job state reads "${spelled}" (is new)`, 300_000, () => world.sim.spellStates({ new: spelled }));
    }
    await scenario('3 answer 200 after 64 KiB of 8 MiB, connection closed', 8 * MiB, () =>
      world.sim.answerUploadEarly(64 * 1024),
    );
    for (const status of [401, 403, 404, 413, 429]) {
      await scenario(`4 refused ${status} on headers, connection closed`, 16 * MiB, () =>
        world.sim.refuseUploadOnHeaders(status, { count: 4 }),
      );
    }
    proxy.ignoreRange = true;
    await scenario('12 S3 ignores Range, 4 parallel parts of 256 KiB', 4 * MiB, () => undefined, {
      s3: viaProxy,
      parallelParts: 4,
      partSizeBytes: 256 * 1024,
    });
    await guarded('12 S3 ignores Range: header check of a 32 MiB object', () =>
      headerSampleRow(world, proxy, viaProxy),
    );
    proxy.ignoreRange = false;
    await scenario('13 S3 read cut after 1 MiB (once)', 4 * MiB, () => proxy.cutNextGetAfter(MiB), { s3: viaProxy });
    await scenario('13 S3 answers 403 to the upload read', 200_000, () => proxy.refuseNextGet(), { s3: viaProxy });
    await guarded('13 part limit', async () => {
      const { maxPartBytes } = loadConfig({});
      const verdict = 5_000_000_001 > maxPartBytes ? 'split into parts' : 'one job';
      rows.push([
        '13 a 5,000,000,001-byte body, default IMPORT_MAX_PART_BYTES',
        '-',
        '-',
        '-',
        '-',
        `${verdict} (part limit ${maxPartBytes})`,
      ]);
    });
    await pollingRows();
  } finally {
    await proxy.close();
    await world.close();
  }
}

async function overlapping(
  world: UploadWorld,
  deps: (over?: object) => ReturnType<typeof uploadDeps>,
  prepare: (bytes: Buffer) => Promise<UploadDataInput>,
): Promise<void> {
  world.sim.clearFaults();
  const bytes = csvBytes(2 * MiB);
  const input = await prepare(bytes);
  world.sim.commitUploadOnAnswer(1_000);
  const first = runUpload(deps(), input);
  const settled = first.result.then(
    () => 'success',
    (e) => (e instanceof ApplicationFailure ? e.type : String(e)),
  );
  while (!first.heartbeats.some((h) => h.bytesSent === h.totalBytes)) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 50));
  const second = await uploadWithRetries(deps(), input, 4, first.heartbeats.at(-1), 2);
  const firstOutcome = await settled;
  row(
    world,
    '1 attempt 2 starts while attempt 1 awaits a slow answer',
    input,
    bytes,
    `attempt 1: ${firstOutcome}; then ${outcomeOf(second)}`,
  );
}

/** Attempt 2 never got attempt 1's last heartbeat, so it sends too; attempt 1's upload is taken while it streams. */
async function overlappingMidStream(
  world: UploadWorld,
  deps: (over?: object) => ReturnType<typeof uploadDeps>,
  prepare: (bytes: Buffer) => Promise<UploadDataInput>,
): Promise<void> {
  world.sim.clearFaults();
  const bytes = csvBytes(2 * MiB);
  const input = await prepare(bytes);
  world.sim.commitUploadOnAnswer(500);
  const first = runUpload(deps({ uploadIdleTimeoutMs: 2_000 }), input);
  first.result.catch(() => undefined);
  while (!first.heartbeats.some((h) => h.bytesSent === h.totalBytes)) await new Promise((r) => setTimeout(r, 5));
  const taken = (async () => {
    while (world.sim.job(input.jobId)!.uploads === 0) await new Promise((r) => setTimeout(r, 5));
  })();
  const second = await uploadWithRetries(
    deps({ s3: new GatedS3Source(world.s3.client, taken) }),
    input,
    4,
    undefined,
    2,
  );
  await first.result.catch(() => undefined);
  row(
    world,
    "1 attempt 2 (without attempt 1's last heartbeat) PUTs; attempt 1's upload is taken first",
    input,
    bytes,
    `attempt 2: ${outcomeOf(second)}`,
  );
}

async function headerSampleRow(
  world: UploadWorld,
  proxy: Awaited<ReturnType<typeof startS3Proxy>>,
  viaProxy: S3Source,
): Promise<void> {
  const big = csvBytes(32 * MiB);
  await world.put('matrix-header.csv', big);
  const before = proxy.bytesDelivered();
  let outcome: string;
  try {
    await viaProxy.headerSample(BUCKET, 'matrix-header.csv', { etag: await etagOf(world, 'matrix-header.csv') });
    outcome = 'header read';
  } catch (e) {
    outcome = (e as Error).name;
  }
  const pulled = ((proxy.bytesDelivered() - before) / MiB).toFixed(1);
  rows.push([
    '12 S3 ignores Range: header check of a 32 MiB object',
    '-',
    '-',
    '-',
    '-',
    `${outcome}; ${pulled} MiB pulled from S3`,
  ]);
}

async function pollingRows(): Promise<void> {
  const w = await startServiceWorld({ processingMs: 0 });
  const cases: { spelling: Record<string, string>; outcome: 'completed' | 'failed' }[] = [
    { spelling: { completed: 'COMPLETED' }, outcome: 'completed' },
    { spelling: { failed: 'FAILED' }, outcome: 'failed' },
    { spelling: { completed: 'archived' }, outcome: 'completed' },
  ];
  try {
    for (const c of cases) {
      const state = Object.values(c.spelling)[0] ?? '';
      await guarded(`2 polling a job whose state reads "${state}"`, () => pollOnce(w, state, c));
    }
  } finally {
    await w.close();
  }
}

/** Polls a finished job shown in another spelling, on a 100 ms schedule with a 2 s limit. */
async function pollOnce(
  w: ServiceWorld,
  state: string,
  c: { spelling: Record<string, string>; outcome: 'completed' | 'failed' },
): Promise<void> {
  const csv = Buffer.from('Account Name,Account Domain\nAcme,acme.example\n');
  w.sim.clearFaults();
  w.sim.setJobOutcome(c.outcome);
  const job = await w.service.createJob({ dataImportName: 'poll', entityType: 'Account' });
  await w.service.submitData(job.id, [csv], { contentLength: csv.length });
  while (w.sim.job(job.id)?.state === 'processing') await new Promise((r) => setTimeout(r, 10));
  w.sim.spellStates(c.spelling, { count: 1_000 });
  const budget = budgetWith();
  const run = runActivity(
    makeAwaitJobCompletion({
      service: w.service,
      budget,
      poll: { scheduleMs: [100], jitterRatio: 0 },
      heartbeatIntervalMs: 20,
    }),
    { tenant: budget.tenant, jobId: job.id, timeoutMs: 2_000 },
  );
  let outcome: string;
  try {
    await run.result;
    outcome = 'completed';
  } catch (e) {
    outcome = e instanceof ApplicationFailure ? String(e.type) : String(e);
  }
  const reads = w.sim.requests().filter((r) => r.endpoint === 'jobStatus' && r.path.endsWith(`/${job.id}`)).length;
  rows.push([
    `2 polling a job whose state reads "${state}"`,
    '-',
    '-',
    '-',
    '-',
    `${outcome} after ${reads} status read(s)`,
  ]);
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
