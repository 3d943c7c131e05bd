/**
 * `npm run bench:rows [MiB]`: the row stage's cost on a generated file
 * (default 200 MiB), beside the leanest tools doing the byte work alone:
 * `gzip -dc` for a gzip file, `iconv | tr` for a `;` Windows-1252 file. It
 * measures the planning pass (reads and checks every row, sends nothing) and
 * the regeneration of every part, each in this process: wall time, CPU
 * seconds per GiB of source, and RSS growth. Figures, not assertions.
 */
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { detectDialect, type OpenSource, partBody, planRows, type RowPlan } from '../../activities/rows/index.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const READ_BYTES = MiB;
/** Small enough that the converted files are cut into several parts. */
const PART_BYTES = 64 * MiB;

interface Measure {
  wallS: number;
  cpuS: number;
  rssGrowthMiB: number;
}

async function measure(work: () => Promise<void>): Promise<Measure> {
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 50);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await work();
  const cpu = process.cpuUsage(cpu0);
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  return {
    wallS: (performance.now() - t0) / 1000,
    cpuS: (cpu.user + cpu.system) / 1e6,
    rssGrowthMiB: (peak - rss0) / MiB,
  };
}

/** A shell pipeline's wall and CPU seconds (its children's, from GNU time). */
function tool(command: string): Measure {
  const run = spawnSync('/usr/bin/time', ['-f', '%e %U %S %M', 'sh', '-c', command], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`${command} failed: ${run.stderr}`);
  return parseTime(run.stderr);
}

function parseTime(stderr: string): Measure {
  const [wall, user, sys, maxKiB] = stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
  return { wallS: wall!, cpuS: user! + sys!, rssGrowthMiB: maxKiB! / 1024 };
}

/** Rows like a CRM export: names with accents, quoted notes holding the delimiter and quotes. */
async function generate(path: string, mib: number, delimiter: string, lineEnd: string, encoding: 'utf8' | 'latin1') {
  const out = createWriteStream(path);
  const header = ['Account Name', 'Account Domain', 'Employees', 'Notes'].join(delimiter) + lineEnd;
  let written = 0;
  out.write(Buffer.from(header, encoding));
  for (let i = 0; written < mib * MiB; i++) {
    const lines: string[] = [];
    for (let j = 0; j < 1000; j++, i++) {
      const note = `"Société n°${i}${delimiter} a ""key"" account, since ${1990 + (i % 30)}"`;
      lines.push([`Company ${i} Café`, `c${i}.example.com`, String(i % 5000), note].join(delimiter));
    }
    const chunk = Buffer.from(lines.join(lineEnd) + lineEnd, encoding);
    written += chunk.length;
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

async function bytes(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function runStage(
  path: string,
  maxPartBytes: number,
  encoding?: 'windows-1252',
): Promise<{ plan: RowPlan; planM: Measure; bodyM: Measure }> {
  const open: OpenSource = async (start) => createReadStream(path, { start, highWaterMark: READ_BYTES });
  const sample = await bytes(createReadStream(path, { end: 64 * 1024 - 1 }));
  const dialect = detectDialect(sample, { encoding });
  let plan: RowPlan | undefined;
  const planM = await measure(async () => {
    // As the activity plans: able to read the file again, and knowing its size.
    const reopen = () => open(0);
    const sourceBytes = (await stat(path)).size;
    const options = { dialect, checks: { entityType: 'Account' as const }, maxPartBytes, reopen, sourceBytes };
    plan = await planRows(await open(0), options);
  });
  const bodyM = await measure(async () => {
    if (plan!.body === 'original') return;
    for (const part of plan!.parts) for await (const _ of partBody(plan!, part.number, open)) void _;
  });
  return { plan: plan!, planM, bodyM };
}

function row(name: string, m: Measure, sourceBytes: number, against?: Measure): string {
  const rate = sourceBytes / MiB / m.wallS;
  const cpuPerGiB = m.cpuS / (sourceBytes / GiB);
  const ratio = against ? ` (${(m.cpuS / against.cpuS).toFixed(1)}x the tool's CPU)` : '';
  return `${name.padEnd(44)} ${m.wallS.toFixed(1).padStart(6)} s  ${rate.toFixed(0).padStart(5)} MiB/s  ${cpuPerGiB.toFixed(1).padStart(6)} CPU s/GiB  RSS +${m.rssGrowthMiB.toFixed(0)} MiB${ratio}`;
}

async function main() {
  const mib = Number(process.argv[2] ?? 200);
  const dir = await mkdtemp(join(tmpdir(), 'bench-rows-'));
  try {
    const canonical = join(dir, 'canonical.csv');
    const dialect = join(dir, 'semicolon-1252.csv');
    const gzip = join(dir, 'canonical.csv.data');
    await generate(canonical, mib, ',', '\n', 'utf8');
    await generate(dialect, mib, ';', '\r\n', 'latin1');
    await pipeline(createReadStream(canonical), createGzip(), createWriteStream(gzip));
    const size = async (p: string) => (await stat(p)).size;
    const sizes = { canonical: await size(canonical), dialect: await size(dialect), gzip: await size(gzip) };
    console.log(
      `source: ${(sizes.canonical / MiB).toFixed(0)} MiB canonical, ${(sizes.dialect / MiB).toFixed(0)} MiB ; windows-1252, gzip ${(sizes.gzip / MiB).toFixed(0)} MiB\n`,
    );

    const c = await runStage(canonical, 5 * GiB);
    console.log(row(`canonical: plan (body ${c.plan.body})`, c.planM, sizes.canonical));
    console.log(row('  cat > /dev/null', tool(`cat ${canonical} > /dev/null`), sizes.canonical));

    const g = await runStage(gzip, PART_BYTES);
    const gunzip = tool(`gzip -dc ${gzip} > /dev/null`);
    console.log(row(`gzip: plan (${g.plan.parts.length} parts)`, g.planM, sizes.canonical, gunzip));
    console.log(row('gzip: regenerate every part', g.bodyM, sizes.canonical, gunzip));
    console.log(row('  gzip -dc > /dev/null', gunzip, sizes.canonical));

    const d = await runStage(dialect, PART_BYTES, 'windows-1252');
    const iconv = tool(`iconv -f WINDOWS-1252 -t UTF-8 ${dialect} | tr ';' ',' > /dev/null`);
    console.log(row(`; windows-1252: plan (${d.plan.parts.length} parts)`, d.planM, sizes.dialect, iconv));
    console.log(row('; windows-1252: regenerate every part', d.bodyM, sizes.dialect, iconv));
    console.log(row("  iconv -f WINDOWS-1252 -t UTF-8 | tr ';' ','", iconv, sizes.dialect));
    console.log(`\nrows: ${c.plan.rowsRead} per file; tools' RSS is their peak, not growth`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
