/**
 * The row stage over the emulated links: for each input kind, an import's two
 * passes (the planning pass, then the upload) in a child process, and the
 * same transfer through the leanest tools:
 * - canonical (UTF-8, comma, LF): the plan sends it byte for byte; against
 *   `curl GET | curl -T`;
 * - gzip: rewritten as canonical CSV; against `curl GET | gzip -d | curl -T`;
 * - `;` Windows-1252: rewritten; against `curl GET | iconv | python3 csv |
 *   curl -T` (a correct re-delimit, quotes respected) and `iconv | tr` (the
 *   byte work alone: it would break a quoted `;` or `,`, so a floor only).
 * Rates are MB/s of CSV (decompressed); CPU per GiB of CSV.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { DEMO_TOKENS } from '../../simulator/server.js';
import { type BenchTarget, targetEnv } from '../bench-env.js';
import { type CurlRun, machineBusyPercentSince, machineTicks, runCurl, runMeasurement } from '../processes.js';
import { type RowInputKind, storeRowInput } from '../row-inputs.js';
import { createJob, receivedJob, verify } from '../simulator-jobs.js';

const MB = 1e6;
const GiB = 1024 ** 3;
const WARM_UP_BYTES = 4 * 1024 * 1024;

export interface RowStageRow {
  run: string;
  MBps: number;
  expectedMBps: number;
  ratio: number;
  cpuSecondsPerGiB: number;
  rssGrowthMB?: number;
  peakRssMB?: number;
  machineBusyPercent: number;
  /** This run's CPU and wall time over its lean pipeline's. */
  leanCpuRatio?: number;
  leanTimeRatio?: number;
}

export interface RowStageLinks {
  s3ConnectionMBps: number;
  s3TotalMBps: number;
  serviceMBps: number;
  /** What the byte path's ranged reads reach (`auto`). */
  byteUploadMBps: number;
}

interface Endpoints {
  s3: string;
  serviceUrl: string;
  simulatorUrl: string;
}

interface RowStageRun {
  body: 'original' | 'canonical';
  parts: number;
  bodyBytes: number;
  bodySha256?: string;
  plan: { seconds: number; cpuSeconds: number };
  upload: { seconds: number; cpuSeconds: number };
  rssBeforeMB: number;
  peakRssMB: number;
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
const log = (line: string) => process.stderr.write(`bench:link: ${line}\n`);

const LEAN: Record<RowInputKind, { name: string; filter?: string }[]> = {
  canonical: [{ name: 'curl GET | curl -T' }],
  gzip: [{ name: 'curl | gzip -d | curl -T', filter: 'gzip -dc' }],
  dialect: [
    {
      name: 'curl | iconv | python3 csv | curl -T',
      filter:
        "iconv -f WINDOWS-1252 -t UTF-8 | python3 -c 'import csv,io,sys; " +
        'r=csv.reader(io.TextIOWrapper(sys.stdin.buffer,encoding="utf-8",newline=""),delimiter=";"); ' +
        'csv.writer(io.TextIOWrapper(sys.stdout.buffer,encoding="utf-8",newline=""),lineterminator="\\r\\n").writerows(r)\'',
    },
    { name: "curl | iconv | tr ';' ',' | curl -T", filter: "iconv -f WINDOWS-1252 -t UTF-8 | tr ';' ','" },
  ],
};

function label(kind: RowInputKind): string {
  return kind === 'dialect' ? '; 1252' : kind;
}

async function measureKind(
  kind: RowInputKind,
  csvBytes: number,
  links: RowStageLinks,
  endpoints: Endpoints,
  s3: { client: S3Client; bucket: string },
  caCertPath: string,
): Promise<RowStageRow[]> {
  log(`row stage: storing ${kind} input`);
  const key = `bench/rows-${kind}-${csvBytes}.csv`;
  const stored = await storeRowInput(s3.client, s3.bucket, key, kind, csvBytes);
  const warm = await storeRowInput(s3.client, s3.bucket, `bench/rows-${kind}-warm-up.csv`, kind, WARM_UP_BYTES);
  const target: BenchTarget = {
    key,
    etag: stored.etag,
    sizeBytes: stored.objectBytes,
    s3Endpoint: endpoints.s3,
    bucket: s3.bucket,
    caCertPath,
    simulatorUrl: endpoints.serviceUrl,
    jobId: await createJob(endpoints.simulatorUrl),
    parallelParts: 'auto',
    warmup: {
      key: `bench/rows-${kind}-warm-up.csv`,
      etag: warm.etag,
      sizeBytes: warm.objectBytes,
      jobId: await createJob(endpoints.simulatorUrl),
    },
  };
  log(`row stage: ${kind}: plan, then upload`);
  const env = { ...targetEnv(target), ...(kind === 'dialect' ? { BENCH_ENCODING: 'windows-1252' } : {}) };
  let ticks = machineTicks();
  const run = await runMeasurement<RowStageRun>('test/bench/row-stage-run.ts', env);
  const busy = machineBusyPercentSince(ticks);
  const sha256 = run.body === 'original' ? stored.sha256 : run.bodySha256!;
  verify(`${kind} import`, await receivedJob(endpoints.simulatorUrl, target.jobId!), run.bodyBytes, sha256);
  if (run.parts !== 1) throw new Error(`the ${kind} input was planned as ${run.parts} parts; expected one`);

  // One sequential read carries the planning pass, and the upload of a regenerated body.
  const sequentialMBps = Math.min(links.s3ConnectionMBps, links.s3TotalMBps) * (stored.csvBytes / stored.objectBytes);
  const planExpected = sequentialMBps;
  const uploadExpected = run.body === 'original' ? links.byteUploadMBps : Math.min(links.serviceMBps, sequentialMBps);
  const bothExpected =
    stored.csvBytes / MB / (stored.csvBytes / MB / planExpected + run.bodyBytes / MB / uploadExpected);
  const gib = stored.csvBytes / GiB;
  const row = (name: string, seconds: number, cpuSeconds: number, expected: number): RowStageRow => {
    const MBps = stored.csvBytes / MB / seconds;
    return {
      run: name,
      MBps: round(MBps),
      expectedMBps: round(expected),
      ratio: round(MBps / expected, 3),
      cpuSecondsPerGiB: round(cpuSeconds / gib, 2),
      machineBusyPercent: round(busy, 0),
    };
  };
  const name = `rows ${label(kind)} (${run.body})`;
  const both = row(
    `${name}: both`,
    run.plan.seconds + run.upload.seconds,
    run.plan.cpuSeconds + run.upload.cpuSeconds,
    bothExpected,
  );
  both.rssGrowthMB = round(run.peakRssMB - run.rssBeforeMB);
  both.peakRssMB = round(run.peakRssMB);
  const rows = [
    row(`${name}: plan`, run.plan.seconds, run.plan.cpuSeconds, planExpected),
    row(`${name}: upload`, run.upload.seconds, run.upload.cpuSeconds, uploadExpected),
    both,
  ];

  const leanExpected = Math.min(links.serviceMBps, sequentialMBps);
  for (const lean of LEAN[kind]) {
    log(`row stage: ${lean.name}`);
    const jobId = await createJob(endpoints.simulatorUrl);
    ticks = machineTicks();
    const curl: CurlRun = await runCurl({
      getUrl: `${endpoints.s3}/${s3.bucket}/${key}`,
      putUrl: `${endpoints.serviceUrl}/import/v1/job/${jobId}/data?listAction=noop`,
      filter: lean.filter,
      token: DEMO_TOKENS.importer,
      caCertPath,
    });
    const leanRow = row(`  ${lean.name}`, curl.seconds, curl.cpuSeconds, leanExpected);
    leanRow.machineBusyPercent = round(machineBusyPercentSince(ticks), 0);
    rows.push(leanRow);
    // Each row-stage run against the first (the correct) lean pipeline.
    if (lean === LEAN[kind][0]) {
      for (const r of rows.slice(0, 3)) {
        const seconds = stored.csvBytes / MB / r.MBps;
        r.leanTimeRatio = round(seconds / curl.seconds, 2);
        r.leanCpuRatio = round((r.cpuSecondsPerGiB * gib) / curl.cpuSeconds, 2);
      }
    }
  }
  return rows;
}

/** The row stage's rows at one size: canonical, gzip and `;` Windows-1252 inputs of about `csvBytes` each. */
export async function measureRowStage(
  csvBytes: number,
  links: RowStageLinks,
  endpoints: Endpoints,
  s3: { client: S3Client; bucket: string },
  caCertPath: string,
): Promise<RowStageRow[]> {
  const rows: RowStageRow[] = [];
  for (const kind of ['canonical', 'gzip', 'dialect'] as const) {
    rows.push(...(await measureKind(kind, csvBytes, links, endpoints, s3, caCertPath)));
  }
  return rows;
}
