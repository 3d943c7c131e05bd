/**
 * Upload benchmark (not a test): `npm run bench:upload -- --size 1GiB [--json]
 * [--parallel-parts N] [--part-size 8MiB]`.
 *
 * On loopback it starts s3rver and the simulator (each its own process),
 * stores a CSV-like object of --size, and measures in separate processes:
 * (a) S3 GetObject alone, (b) `curl GET | curl -T -` into the simulator's data
 * PUT, (c) the uploadData activity end to end, with its memory. Both uploads
 * are checked byte for byte (the simulator's sha256 against the object's).
 * All processes share the machine's cores: compare the ratios of one run.
 */
import { availableParallelism, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type { ParallelParts } from '../../activities/s3/ranged-reader.js';
import { loadConfig, parseParallelParts, parseSize } from '../../temporal.config.js';
import { startLocalS3 } from '../../worker/demo/local-s3.js';
import { DEMO_TOKENS } from '../simulator/server.js';
import { type BenchTarget, targetEnv } from './bench-env.js';
import { storeCsvObject } from './csv-object.js';
import { runCurl, runMeasurement, startSimulatorProcess } from './processes.js';
import { createJob, receivedJob, verify } from './simulator-jobs.js';

const MiB = 1024 * 1024;
const MB = 1e6;
// The service's limit (5 GB, decimal): the simulator refuses anything larger.
const MAX_SIZE = 5_000_000_000;
const BUCKET = 'bench';
const KEY = 'bench/accounts.csv';

const USAGE =
  'Usage: npm run bench:upload -- [--size 1GiB] [--json] [--parallel-parts N] [--part-size 8MiB]\n' +
  '  --size            object size, 1 MiB to 5 GB (default 1GiB)\n' +
  '  --parallel-parts  ranged S3 reads in flight: auto or 1..32 (1 = one sequential GET; default UPLOAD_PARALLEL_PARTS or its default)\n' +
  '  --part-size       size of each ranged read (default UPLOAD_PART_SIZE or its default)\n' +
  '  --json            print one JSON object instead of the table';

interface Args {
  sizeBytes: number;
  json: boolean;
  parallelParts: ParallelParts;
  partSizeBytes: number;
}

function parseBenchArgs(argv: string[]): Args {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      size: { type: 'string', default: '1GiB' },
      json: { type: 'boolean', default: false },
      'parallel-parts': { type: 'string' },
      'part-size': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const defaults = loadConfig(process.env).upload;
  const sizeBytes = parseSize(values.size);
  if (sizeBytes === undefined || sizeBytes < MiB || sizeBytes > MAX_SIZE) {
    throw new Error(
      `--size must be a size from 1MiB to 5GB such as 1GiB or 512MiB; got ${JSON.stringify(values.size)}`,
    );
  }
  const partSizeBytes = values['part-size'] === undefined ? defaults.partSizeBytes : parseSize(values['part-size']);
  if (partSizeBytes === undefined || partSizeBytes < 64 * 1024) {
    throw new Error(
      `--part-size must be a size of at least 64KiB such as 8MiB; got ${JSON.stringify(values['part-size'])}`,
    );
  }
  const parallelParts =
    values['parallel-parts'] === undefined ? defaults.parallelParts : parseParallelParts(values['parallel-parts']);
  if (parallelParts === undefined) {
    throw new Error(
      `--parallel-parts must be auto or a whole number from 1 to 32; got ${JSON.stringify(values['parallel-parts'])}`,
    );
  }
  return { sizeBytes, json: values.json, parallelParts, partSizeBytes };
}

function log(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

interface GetOnly {
  bytes: number;
  seconds: number;
  cpuSeconds: number;
}
interface UploadRun {
  bytes: number;
  skipped: boolean;
  seconds: number;
  cpuSeconds: number;
  rssBeforeMB: number;
  peakRssMB: number;
  maxRssMB: number;
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

async function main(): Promise<void> {
  const args = parseBenchArgs(process.argv.slice(2));
  const s3 = await startLocalS3({ buckets: [BUCKET] });
  const sim = await startSimulatorProcess();
  try {
    log(`storing a ${round(args.sizeBytes / MiB)} MiB object in s3rver at ${s3.endpoint}`);
    const stored = await storeCsvObject(s3.client, BUCKET, KEY, args.sizeBytes);
    const target: BenchTarget = {
      s3Endpoint: s3.endpoint,
      bucket: BUCKET,
      key: KEY,
      etag: stored.etag,
      sizeBytes: args.sizeBytes,
      simulatorUrl: sim.url,
      parallelParts: args.parallelParts,
      partSizeBytes: args.partSizeBytes,
    };

    log('(a) S3 GetObject to nowhere');
    const getOnly = await runMeasurement<GetOnly>('test/bench/get-only.ts', targetEnv(target));
    if (getOnly.bytes !== args.sizeBytes) throw new Error(`GetObject read ${getOnly.bytes} of ${args.sizeBytes} bytes`);

    log('(b) curl GET | curl -T - (chunked) into the simulator');
    const curlJob = await createJob(sim.url);
    const { seconds: curlSeconds } = await runCurl({
      getUrl: `${s3.endpoint}/${BUCKET}/${KEY}`,
      putUrl: `${sim.url}/import/v1/job/${curlJob}/data?listAction=noop`,
      token: DEMO_TOKENS.importer,
    });
    verify('the curl pipeline', await receivedJob(sim.url, curlJob), args.sizeBytes, stored.sha256);

    log(
      `(c) uploadData end to end (parallel parts ${args.parallelParts}, part size ${round(args.partSizeBytes / MiB)} MiB)`,
    );
    const uploadJob = await createJob(sim.url);
    const upload = await runMeasurement<UploadRun>(
      'test/bench/upload-run.ts',
      targetEnv({ ...target, jobId: uploadJob }),
    );
    if (upload.skipped) throw new Error('uploadData skipped the upload: the fresh job was not new');
    verify('uploadData', await receivedJob(sim.url, uploadJob), args.sizeBytes, stored.sha256);

    const getOnlyMBps = args.sizeBytes / MB / getOnly.seconds;
    const curlPipeMBps = args.sizeBytes / MB / curlSeconds;
    const uploadMBps = args.sizeBytes / MB / upload.seconds;
    const result = {
      sizeBytes: args.sizeBytes,
      parallelParts: args.parallelParts,
      partSizeBytes: args.partSizeBytes,
      getOnlyMBps: round(getOnlyMBps),
      curlPipeMBps: round(curlPipeMBps),
      uploadMBps: round(uploadMBps),
      ratioToGetOnly: round(uploadMBps / getOnlyMBps, 3),
      ratioToCurlPipe: round(uploadMBps / curlPipeMBps, 3),
      uploadPeakRssMB: round(upload.peakRssMB),
      rssGrowthMB: round(upload.peakRssMB - upload.rssBeforeMB),
      getOnlyCpuSeconds: round(getOnly.cpuSeconds, 2),
      uploadCpuSeconds: round(upload.cpuSeconds, 2),
      byteExact: true,
    };
    const targets = [
      { name: 'uploadMBps >= 0.95 x getOnlyMBps', met: result.ratioToGetOnly >= 0.95 },
      { name: 'uploadMBps >= 1.2 x curlPipeMBps', met: result.ratioToCurlPipe >= 1.2 },
      { name: 'rssGrowthMB <= 64', met: result.rssGrowthMB <= 64 },
    ];
    if (args.json) {
      console.log(JSON.stringify({ ...result, targets }));
      return;
    }
    console.log(`Upload benchmark, ${round(args.sizeBytes / MiB)} MiB object, loopback (MB = 10^6 bytes)`);
    console.log(`  (a) S3 GetObject only           ${result.getOnlyMBps.toFixed(1).padStart(8)} MB/s`);
    console.log(`  (b) curl GET | curl -T - (PUT)  ${result.curlPipeMBps.toFixed(1).padStart(8)} MB/s`);
    console.log(`  (c) uploadData end to end       ${result.uploadMBps.toFixed(1).padStart(8)} MB/s`);
    console.log(`      ratio to (a) ${result.ratioToGetOnly}, to (b) ${result.ratioToCurlPipe}`);
    console.log(
      `      peak RSS ${result.uploadPeakRssMB} MB, growth during upload ${result.rssGrowthMB} MB (RSS before ${round(upload.rssBeforeMB)} MB)`,
    );
    console.log(
      `      client CPU: GetObject ${result.getOnlyCpuSeconds} s, uploadData ${result.uploadCpuSeconds} s ` +
        `(all processes share ${availableParallelism()} cores; load average ${loadavg()[0]!.toFixed(1)})`,
    );
    console.log('  both uploads byte-exact (simulator sha256 = object sha256)');
    for (const t of targets) console.log(`  target ${t.met ? 'MET    ' : 'NOT MET'} ${t.name}`);
  } finally {
    await sim.stop();
    await s3.close();
  }
}

main().catch((err: unknown) => {
  console.error(`bench: ${(err as Error).message}`);
  process.exit(1);
});
