/**
 * Split benchmark (not a test): `npm run bench:split -- [--bytes N]
 * [--max-part-bytes N]`. A file one byte over the part limit
 * (IMPORT_MAX_PART_BYTES, default the service's 5 GB), planned and uploaded
 * as an import does it: the planning pass cuts it at a row boundary into two
 * parts, and each part's body is regenerated from the plan into a job of its
 * own on the simulator, which checks every byte (size and sha256).
 *
 * The object is generated (split/generated-object.ts): no disk holds it. All
 * on loopback without TLS, so the figures are the worker's CPU, not a link's.
 * At the default size it reads about 15 GB in all (the plan, then each part):
 * tens of minutes on a shared 2-core machine.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { parseSize } from '../../temporal.config.js';
import { declaredDefault } from '../../worker/config/declarations.js';
import { targetEnv } from './bench-env.js';
import { machineBusyPercentSince, machineTicks, runMeasurement, startSimulatorProcess } from './processes.js';
import { receivedJob, verify } from './simulator-jobs.js';
import { GeneratedCsv, serveGenerated } from './split/generated-object.js';

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;
const BUCKET = 'bench';

interface SplitRun {
  body: string;
  rowsRead: number;
  rowsSent: number;
  rowsRejected: number;
  plan: { seconds: number; cpuSeconds: number };
  parts: {
    number: number;
    firstRow: number;
    lastRow: number;
    rowsSent: number;
    bytes: number;
    sha256: string;
    jobId: string;
    bytesSent: number;
    seconds: number;
    cpuSeconds: number;
  }[];
  rssGrowthMiB: number;
}

function sizeArg(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const bytes = /^\d+$/.test(text) ? Number(text) : parseSize(text);
  if (bytes === undefined || !Number.isSafeInteger(bytes) || bytes <= 0) {
    throw new Error(`--${name} takes a size in bytes (or with a unit, such as 5GB); got ${JSON.stringify(text)}`);
  }
  return bytes;
}

const { values } = parseArgs({ options: { bytes: { type: 'string' }, 'max-part-bytes': { type: 'string' } } });
const maxPartBytes = sizeArg('max-part-bytes', values['max-part-bytes'], declaredDefault('IMPORT_MAX_PART_BYTES'));
const csv = new GeneratedCsv(sizeArg('bytes', values.bytes, maxPartBytes + 1));
const key = `generated-${csv.sizeBytes}.csv`;
const log = (line: string) => process.stderr.write(`bench:split: ${line}\n`);
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

const simulator = await startSimulatorProcess();
const s3 = await serveGenerated(csv, BUCKET, key);
try {
  log(
    `planning and uploading a generated ${csv.sizeBytes}-byte CSV (${csv.rows} rows), parts of at most ${maxPartBytes} bytes`,
  );
  const load0 = loadavg()[0]!;
  const ticks = machineTicks();
  const env = {
    ...targetEnv({
      key,
      etag: csv.etag,
      sizeBytes: csv.sizeBytes,
      s3Endpoint: s3.url,
      bucket: BUCKET,
      simulatorUrl: simulator.url,
    }),
    BENCH_MAX_PART_BYTES: String(maxPartBytes),
  };
  const run = await runMeasurement<SplitRun>('test/bench/split/split-run.ts', env);
  const busy = machineBusyPercentSince(ticks);
  for (const part of run.parts) {
    verify(`part ${part.number}`, await receivedJob(simulator.url, part.jobId), part.bytes, part.sha256);
  }
  const gib = csv.sizeBytes / GiB;
  const uploadSeconds = run.parts.reduce((s, p) => s + p.seconds, 0);
  const uploadCpu = run.parts.reduce((s, p) => s + p.cpuSeconds, 0);
  console.log(
    `source: ${csv.sizeBytes} bytes, ${run.rowsRead} data rows; body ${run.body}; ${run.rowsSent} rows sent, ` +
      `${run.rowsRejected} rejected; part limit ${maxPartBytes} bytes\n`,
  );
  console.log('part | rows | first-last row | bytes | upload s | upload CPU s | CPU s/GiB');
  for (const p of run.parts) {
    console.log(
      `${p.number} | ${p.rowsSent} | ${p.firstRow}-${p.lastRow} | ${p.bytes} | ${round(p.seconds)} | ` +
        `${round(p.cpuSeconds)} | ${p.bytes < MiB ? '-' : round(p.cpuSeconds / (p.bytes / GiB), 2)}`,
    );
  }
  console.log(
    `\nplan: ${round(run.plan.seconds)} s wall, ${round(run.plan.cpuSeconds)} CPU s (${round(run.plan.cpuSeconds / gib, 2)} s/GiB)` +
      `\nupload, all parts: ${round(uploadSeconds)} s wall, ${round(uploadCpu)} CPU s (${round(uploadCpu / gib, 2)} s/GiB)` +
      `\nRSS growth: ${round(run.rssGrowthMiB)} MiB; every part received byte for byte (size and sha256 as planned)` +
      `\nmachine busy ${round(busy, 0)}%; load average ${round(load0, 2)} at the start, ${round(loadavg()[0]!, 2)} at the end`,
  );
} finally {
  s3.server.close();
  await simulator.stop();
}
