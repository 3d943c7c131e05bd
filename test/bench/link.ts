/**
 * Link benchmark (not a test): `npm run bench:link -- [--sizes 1GiB,5GB]
 * [--parts 1,2,4,8] [--concurrent 4] [--json]` and the link flags below.
 *
 * The loopback benchmark (bench:upload) says little about production, where
 * one S3 connection carries tens of MB/s, the service is tens of ms away and
 * both sides speak TLS. Here s3rver and the simulator each sit behind an
 * emulated link (link/link-proxy.ts, its own process): a round-trip time, a
 * per-connection and a whole-link bandwidth, and TLS from a private CA that
 * the client trusts through NODE_EXTRA_CA_CERTS. Measured in separate
 * processes: a bare GetObject over the S3 link, uploadData with each number
 * of ranged reads in flight, and several uploads at once in one process.
 * Memory is measured after a warm-up upload of a small object.
 */
import { availableParallelism, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { AUTO_MAX_PARTS, type ParallelParts } from '../../activities/s3/ranged-reader.js';
import { parseParallelParts, parseSize } from '../../temporal.config.js';
import { startLocalS3 } from '../../worker/demo/local-s3.js';
import { DEMO_TOKENS } from '../simulator/server.js';
import { type BenchObject, type BenchTarget, targetEnv } from './bench-env.js';
import { storeCsvObject } from './csv-object.js';
import { measureRowStage } from './link/row-stage.js';
import { type RunningLink, startLink } from './link/start-link.js';
import { makeBenchCertificates } from './link/tls-ca.js';
import {
  type CurlRun,
  machineBusyPercentSince,
  machineTicks,
  runCurl,
  runMeasurement,
  startSimulatorProcess,
} from './processes.js';
import { createJob, receivedJob, verify } from './simulator-jobs.js';

const MiB = 1024 * 1024;
const MB = 1e6;
const BUCKET = 'bench';
/** The service takes files up to 5 GB (decimal, the spec's limit): the largest size worth measuring. */
const SERVICE_MAX_FILE_BYTES = 5_000_000_000;

const USAGE = `Usage: npm run bench:link -- [options]
  --sizes 1GiB[,5GB]         object sizes, up to the service's 5 GB limit (default 1GiB)
  --parts 1,2,4,8,auto       ranged S3 reads in flight to measure; auto is the default setting (default 1,2,4,8,auto)
  --concurrent N             uploads at once in one process for the fairness run, at the first size only (default 4; 0 skips it)
  --skip-rows                skip the row stage's runs (canonical, gzip and ; Windows-1252 inputs; first size only)
  --part-size 8MiB           size of each ranged read (default UPLOAD_PART_SIZE's default)
  --s3-rtt-ms 2 --s3-connection-mbps 40 --s3-total-mbps 1000
  --service-rtt-ms 40 --service-mbps 150
  --json                     print one JSON object instead of the table
MB = 10^6 bytes; MB/s figures are per direction.`;

interface Links {
  s3RttMs: number;
  s3ConnectionMBps: number;
  s3TotalMBps: number;
  serviceRttMs: number;
  serviceMBps: number;
}

interface Args extends Links {
  sizes: number[];
  parts: ParallelParts[];
  concurrent: number;
  partSizeBytes?: number;
  rows: boolean;
  json: boolean;
}

function positive(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0)
    throw new Error(`--${name} must be a positive number; got ${JSON.stringify(text)}`);
  return n;
}

function parseLinkArgs(argv: string[]): Args {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      sizes: { type: 'string', default: '1GiB' },
      parts: { type: 'string', default: '1,2,4,8,auto' },
      concurrent: { type: 'string', default: '4' },
      'part-size': { type: 'string' },
      'service-rtt-ms': { type: 'string' },
      'service-mbps': { type: 'string' },
      's3-rtt-ms': { type: 'string' },
      's3-connection-mbps': { type: 'string' },
      's3-total-mbps': { type: 'string' },
      json: { type: 'boolean', default: false },
      'skip-rows': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const sizes = values.sizes.split(',').map((s) => {
    const bytes = parseSize(s.trim());
    if (bytes === undefined || bytes < 16 * MiB || bytes > SERVICE_MAX_FILE_BYTES) {
      throw new Error(
        `--sizes takes sizes from 16MiB to 5GB (the service's limit, 4.66 GiB) such as 1GiB,5GB; got ${JSON.stringify(s)}`,
      );
    }
    return bytes;
  });
  const parts = values.parts.split(',').map((p) => {
    const parsed = parseParallelParts(p);
    if (parsed === undefined) throw new Error(`--parts takes auto or whole numbers from 1 to 32; got ${p}`);
    return parsed;
  });
  const concurrent = Number(values.concurrent);
  if (!Number.isInteger(concurrent) || concurrent < 0 || concurrent > 16) {
    throw new Error(`--concurrent must be a whole number from 0 to 16; got ${values.concurrent}`);
  }
  const partSizeBytes = values['part-size'] === undefined ? undefined : parseSize(values['part-size']);
  if (values['part-size'] !== undefined && (partSizeBytes === undefined || partSizeBytes < 64 * 1024)) {
    throw new Error(`--part-size must be a size of at least 64KiB such as 8MiB; got ${values['part-size']}`);
  }
  return {
    sizes,
    parts,
    concurrent,
    partSizeBytes,
    rows: !values['skip-rows'],
    json: values.json,
    s3RttMs: positive('s3-rtt-ms', values['s3-rtt-ms'], 2),
    s3ConnectionMBps: positive('s3-connection-mbps', values['s3-connection-mbps'], 40),
    s3TotalMBps: positive('s3-total-mbps', values['s3-total-mbps'], 1000),
    serviceRttMs: positive('service-rtt-ms', values['service-rtt-ms'], 40),
    serviceMBps: positive('service-mbps', values['service-mbps'], 150),
  };
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
const log = (line: string) => process.stderr.write(`bench:link: ${line}\n`);

interface UploadRun {
  bytes: number;
  skipped: boolean;
  seconds: number;
  cpuSeconds: number;
  rssBeforeMB: number;
  peakRssMB: number;
}
interface GetOnly {
  bytes: number;
  seconds: number;
  cpuSeconds: number;
}
interface ConcurrentRun {
  uploads: { jobId: number; bytes: number; seconds: number }[];
  seconds: number;
  rssBeforeMB: number;
  peakRssMB: number;
}

interface Row {
  run: string;
  MBps: number;
  expectedMBps: number;
  ratio: number;
  cpuSecondsPerGiB: number;
  rssGrowthMB?: number;
  peakRssMB?: number;
  /** How busy the whole machine was meanwhile (the link proxies, s3rver and the simulator included). */
  machineBusyPercent: number;
  /** A row-stage run's CPU and wall time over its lean pipeline's. */
  leanCpuRatio?: number;
  leanTimeRatio?: number;
}

interface SizeResult {
  sizeBytes: number;
  rows: Row[];
  concurrent?: { uploadsMBps: number[]; shareOfQuarter: number[]; rssGrowthMB: number };
}

/** What an upload can reach: the service link, or the S3 connections feeding it. */
function expectedMBps(links: Links, parts: ParallelParts): number {
  const connections = parts === 'auto' ? AUTO_MAX_PARTS : parts;
  return Math.min(links.serviceMBps, connections * links.s3ConnectionMBps, links.s3TotalMBps);
}

/**
 * The leanest tools over the same links, at the first size only: curl's GET
 * alone, `curl GET | curl -T -` into a job, and curl sending zeros from
 * memory (what the emulated service link itself carries). Their CPU per GiB
 * says what sending over TLS costs on top of receiving, for any client.
 */
async function measureCurl(
  args: Args,
  sizeBytes: number,
  endpoints: { s3: string; serviceUrl: string; simulatorUrl: string },
  key: string,
  caCertPath: string,
): Promise<Row[]> {
  const gib = sizeBytes / 1024 ** 3;
  const getUrl = `${endpoints.s3}/${BUCKET}/${key}`;
  const row = (run: string, r: CurlRun, expected: number, busy: number): Row => ({
    run,
    MBps: round(sizeBytes / MB / r.seconds),
    expectedMBps: expected,
    ratio: round(sizeBytes / MB / r.seconds / expected, 3),
    cpuSecondsPerGiB: round(r.cpuSeconds / gib, 2),
    machineBusyPercent: round(busy, 0),
  });
  log('curl GET alone over the S3 link');
  let ticks = machineTicks();
  const get = await runCurl({ getUrl, token: DEMO_TOKENS.importer, caCertPath });
  const getRow = row(
    'curl GET',
    get,
    Math.min(args.s3ConnectionMBps, args.s3TotalMBps),
    machineBusyPercentSince(ticks),
  );
  log('curl GET | curl -T - over both links');
  const jobId = await createJob(endpoints.simulatorUrl);
  ticks = machineTicks();
  const pipe = await runCurl({
    getUrl,
    putUrl: `${endpoints.serviceUrl}/import/v1/job/${jobId}/data?listAction=noop`,
    token: DEMO_TOKENS.importer,
    caCertPath,
  });
  const pipeRow = row('curl GET | curl -T', pipe, expectedMBps(args, 1), machineBusyPercentSince(ticks));
  log('curl -T from memory over the service link');
  const linkJobId = await createJob(endpoints.simulatorUrl);
  ticks = machineTicks();
  const put = await runCurl({
    getUrl: { zeroBytes: sizeBytes },
    putUrl: `${endpoints.serviceUrl}/import/v1/job/${linkJobId}/data?listAction=noop`,
    token: DEMO_TOKENS.importer,
    caCertPath,
  });
  const putRow = row('curl -T (memory)', put, args.serviceMBps, machineBusyPercentSince(ticks));
  return [getRow, pipeRow, putRow];
}

async function measureSize(
  args: Args,
  sizeBytes: number,
  endpoints: { s3: string; serviceUrl: string; simulatorUrl: string },
  s3Client: Parameters<typeof storeCsvObject>[0],
  caCertPath: string,
): Promise<SizeResult> {
  const key = `bench/accounts-${sizeBytes}.csv`;
  log(`storing a ${round(sizeBytes / MiB)} MiB object`);
  const stored = await storeCsvObject(s3Client, BUCKET, key, sizeBytes);
  const warmObject = await storeCsvObject(s3Client, BUCKET, 'bench/warm-up.csv', 4 * MiB);
  const object: BenchObject = { key, etag: stored.etag, sizeBytes };
  const base: BenchTarget = {
    ...object,
    s3Endpoint: endpoints.s3,
    bucket: BUCKET,
    caCertPath,
    partSizeBytes: args.partSizeBytes,
  };
  const warmup = async () => ({
    key: 'bench/warm-up.csv',
    etag: warmObject.etag,
    sizeBytes: 4 * MiB,
    jobId: await createJob(endpoints.simulatorUrl),
  });
  const gib = sizeBytes / 1024 ** 3;
  const rows: Row[] = [];

  log('GetObject alone over the S3 link');
  let ticks = machineTicks();
  const getOnly = await runMeasurement<GetOnly>('test/bench/get-only.ts', targetEnv(base));
  const getBusy = machineBusyPercentSince(ticks);
  if (getOnly.bytes !== sizeBytes) throw new Error(`GetObject read ${getOnly.bytes} of ${sizeBytes} bytes`);
  const getMBps = sizeBytes / MB / getOnly.seconds;
  const getExpected = Math.min(args.s3ConnectionMBps, args.s3TotalMBps);
  rows.push({
    run: 'GetObject',
    MBps: round(getMBps),
    expectedMBps: getExpected,
    ratio: round(getMBps / getExpected, 3),
    cpuSecondsPerGiB: round(getOnly.cpuSeconds / gib, 2),
    machineBusyPercent: round(getBusy, 0),
  });
  if (sizeBytes === args.sizes[0]) rows.push(...(await measureCurl(args, sizeBytes, endpoints, key, caCertPath)));

  for (const parts of args.parts) {
    log(`uploadData, ranged reads in flight: ${parts}`);
    const jobId = await createJob(endpoints.simulatorUrl);
    const target: BenchTarget = {
      ...base,
      simulatorUrl: endpoints.serviceUrl,
      jobId,
      parallelParts: parts,
      warmup: await warmup(),
    };
    ticks = machineTicks();
    const run = await runMeasurement<UploadRun>('test/bench/upload-run.ts', targetEnv(target));
    const busy = machineBusyPercentSince(ticks);
    if (run.skipped) throw new Error('uploadData skipped the upload: the fresh job was not new');
    verify(`uploadData (${parts} parts)`, await receivedJob(endpoints.simulatorUrl, jobId), sizeBytes, stored.sha256);
    const MBps = sizeBytes / MB / run.seconds;
    const expected = expectedMBps(args, parts);
    rows.push({
      run: `upload, parts ${parts}`,
      MBps: round(MBps),
      expectedMBps: expected,
      ratio: round(MBps / expected, 3),
      cpuSecondsPerGiB: round(run.cpuSeconds / gib, 2),
      rssGrowthMB: round(run.peakRssMB - run.rssBeforeMB),
      peakRssMB: round(run.peakRssMB),
      machineBusyPercent: round(busy, 0),
    });
  }

  if (args.rows && sizeBytes === args.sizes[0]) {
    const links = { ...args, byteUploadMBps: expectedMBps(args, 'auto') };
    rows.push(
      ...(await measureRowStage(sizeBytes, links, endpoints, { client: s3Client, bucket: BUCKET }, caCertPath)),
    );
  }

  // The fairness run at the first size only: four 5 GiB uploads would take a quarter of an hour and show nothing new.
  if (args.concurrent === 0 || sizeBytes !== args.sizes[0]) return { sizeBytes, rows };
  log(`${args.concurrent} uploads at once in one process`);
  const jobIds = await Promise.all(Array.from({ length: args.concurrent }, () => createJob(endpoints.simulatorUrl)));
  const target: BenchTarget = {
    ...base,
    simulatorUrl: endpoints.serviceUrl,
    jobIds,
    parallelParts: 'auto',
    warmup: await warmup(),
  };
  const many = await runMeasurement<ConcurrentRun>('test/bench/upload-concurrent.ts', targetEnv(target));
  for (const jobId of jobIds) {
    verify(`concurrent upload ${jobId}`, await receivedJob(endpoints.simulatorUrl, jobId), sizeBytes, stored.sha256);
  }
  const totalMBps = (sizeBytes * jobIds.length) / MB / many.seconds;
  const uploadsMBps = many.uploads.map((u) => sizeBytes / MB / u.seconds);
  return {
    sizeBytes,
    rows,
    concurrent: {
      uploadsMBps: uploadsMBps.map((m) => round(m)),
      shareOfQuarter: uploadsMBps.map((m) => round(m / (totalMBps / jobIds.length), 3)),
      rssGrowthMB: round(many.peakRssMB - many.rssBeforeMB),
    },
  };
}

interface Target {
  name: string;
  met: boolean;
}

function judge(args: Args, results: SizeResult[]): Target[] {
  const targets: Target[] = [];
  for (const r of results) {
    const size = `${round(r.sizeBytes / 1024 ** 3, 2)} GiB`;
    const get = r.rows[0]!;
    const uploads = r.rows.filter((row) => row.run.startsWith('upload'));
    for (const row of uploads) {
      targets.push({ name: `${size} ${row.run}: MB/s >= 0.9 x expected`, met: row.ratio >= 0.9 });
      targets.push({ name: `${size} ${row.run}: RSS growth <= 64 MB`, met: (row.rssGrowthMB ?? 0) <= 64 });
    }
    for (const row of uploads.filter((u) => u.run === 'upload, parts 1' || u.run === 'upload, parts auto')) {
      targets.push({
        name: `${size} ${row.run}: CPU per GiB <= 1.1 x GetObject's (${round(row.cpuSecondsPerGiB / get.cpuSecondsPerGiB, 2)} x)`,
        met: row.cpuSecondsPerGiB <= 1.1 * get.cpuSecondsPerGiB,
      });
    }
    const byteUpload = r.rows.find((row) => row.run.startsWith('rows canonical') && row.run.endsWith(': upload'));
    if (byteUpload) {
      const both = r.rows.find((row) => row.run.startsWith('rows canonical') && row.run.endsWith(': both'))!;
      targets.push({ name: `${size} canonical input sent byte for byte`, met: byteUpload.run.includes('original') });
      targets.push({ name: `${size} ${byteUpload.run}: MB/s >= 0.9 x expected`, met: byteUpload.ratio >= 0.9 });
      targets.push({
        name: `${size} ${byteUpload.run}: CPU <= 1.2 x curl GET | curl -T's (${byteUpload.leanCpuRatio} x)`,
        met: (byteUpload.leanCpuRatio ?? Number.POSITIVE_INFINITY) <= 1.2,
      });
      targets.push({ name: `${size} ${both.run}: RSS growth <= 64 MB`, met: (both.rssGrowthMB ?? 0) <= 64 });
    }
    if (r.concurrent) {
      targets.push({
        name: `${size} ${args.concurrent} at once: each within 20% of an equal share`,
        met: r.concurrent.shareOfQuarter.every((s) => Math.abs(s - 1) <= 0.2),
      });
      targets.push({
        name: `${size} ${args.concurrent} at once: RSS growth <= 64 MB per upload`,
        met: r.concurrent.rssGrowthMB <= 64 * args.concurrent,
      });
    }
  }
  if (results.length > 1) {
    // The same run at each size: its memory must not grow with the file.
    for (const run of results[0]!.rows.filter((row) => row.rssGrowthMB !== undefined).map((row) => row.run)) {
      const growths = results.map((r) => r.rows.find((row) => row.run === run)?.rssGrowthMB ?? 0);
      const spread = Math.max(...growths) - Math.min(...growths);
      targets.push({
        name: `${run}: RSS growth equal within 16 MB across sizes (spread ${round(spread)} MB)`,
        met: spread <= 16,
      });
    }
  }
  return targets;
}

function printTable(args: Args, results: SizeResult[], targets: Target[]): void {
  console.log('Link benchmark: TLS on both links (private CA, trusted through NODE_EXTRA_CA_CERTS)');
  console.log(
    `  S3 link ${args.s3RttMs} ms RTT, ${args.s3ConnectionMBps} MB/s per connection, ${args.s3TotalMBps} MB/s in all;` +
      ` service link ${args.serviceRttMs} ms RTT, ${args.serviceMBps} MB/s`,
  );
  console.log('  RSS growth is measured after a 4 MiB warm-up upload in the same process.');
  for (const r of results) {
    console.log(`\n  ${round(r.sizeBytes / MiB)} MiB object`);
    const width = Math.max(19, ...r.rows.map((row) => row.run.length));
    console.log(
      `    ${'run'.padEnd(width)}    MB/s  expected   ratio  CPU s/GiB  RSS growth MB  peak RSS MB  machine busy %` +
        '  x lean CPU  x lean time',
    );
    const mb = (n: number | undefined, width: number) => (n === undefined ? '-' : n.toFixed(1)).padStart(width);
    const x = (n: number | undefined, width: number) => (n === undefined ? '-' : n.toFixed(2)).padStart(width);
    for (const row of r.rows) {
      console.log(
        `    ${row.run.padEnd(width)} ${row.MBps.toFixed(1).padStart(7)} ${row.expectedMBps.toFixed(0).padStart(9)} ` +
          `${row.ratio.toFixed(3).padStart(7)} ${row.cpuSecondsPerGiB.toFixed(2).padStart(10)} ` +
          `${mb(row.rssGrowthMB, 14)} ${mb(row.peakRssMB, 12)} ${row.machineBusyPercent.toFixed(0).padStart(15)}` +
          `${x(row.leanCpuRatio, 12)} ${x(row.leanTimeRatio, 12)}`,
      );
    }
    if (r.concurrent) {
      console.log(
        `    ${args.concurrent} at once: ${r.concurrent.uploadsMBps.join(', ')} MB/s; share of an equal split ` +
          `${r.concurrent.shareOfQuarter.join(', ')}; RSS growth ${r.concurrent.rssGrowthMB} MB`,
      );
    }
  }
  console.log(`\n  every upload byte-exact (simulator sha256 = object sha256)`);
  console.log(`  ${availableParallelism()} cores shared by every process; load average ${loadavg()[0]!.toFixed(1)}`);
  for (const t of targets) console.log(`  target ${t.met ? 'MET    ' : 'NOT MET'} ${t.name}`);
}

async function main(): Promise<void> {
  const args = parseLinkArgs(process.argv.slice(2));
  const certs = makeBenchCertificates();
  const s3 = await startLocalS3({ buckets: [BUCKET] });
  const sim = await startSimulatorProcess();
  const links: RunningLink[] = [];
  try {
    const tls = { serverKeyPath: certs.serverKeyPath, serverCertPath: certs.serverCertPath };
    const s3Link = await startLink({
      backendPort: Number(new URL(s3.endpoint).port),
      rttMs: args.s3RttMs,
      perConnectionBytesPerSecond: args.s3ConnectionMBps * MB,
      totalBytesPerSecond: args.s3TotalMBps * MB,
      ...tls,
    });
    links.push(s3Link);
    const serviceLink = await startLink({
      backendPort: Number(new URL(sim.url).port),
      rttMs: args.serviceRttMs,
      perConnectionBytesPerSecond: args.serviceMBps * MB,
      totalBytesPerSecond: args.serviceMBps * MB,
      ...tls,
    });
    links.push(serviceLink);
    const endpoints = {
      s3: `https://localhost:${s3Link.port}`,
      serviceUrl: `https://localhost:${serviceLink.port}`,
      simulatorUrl: sim.url,
    };
    const results: SizeResult[] = [];
    for (const size of args.sizes) results.push(await measureSize(args, size, endpoints, s3.client, certs.caCertPath));
    const targets = judge(args, results);
    if (args.json) console.log(JSON.stringify({ links: { ...args, sizes: undefined }, results, targets }));
    else printTable(args, results, targets);
  } finally {
    for (const link of links) await link.stop();
    await sim.stop();
    await s3.close();
  }
}

main().catch((err: unknown) => {
  console.error(`bench:link: ${(err as Error).message}`);
  process.exit(1);
});
