/** Source files for the row stage's tests: real files on disk, read through real file streams in small chunks. */
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { expect } from 'vitest';
import { type OpenSource, type PlanOptions, planRows, type RowPlan } from '../../../activities/rows/index.js';

/** Small reads, so that rows, quotes, multi-byte characters and CRLFs fall across chunk boundaries. */
export const SMALL_CHUNKS = 7;

export interface SourceFile {
  path: string;
  open: OpenSource;
}

export class SourceFiles {
  private constructor(private readonly dir: string) {}
  private count = 0;

  static async create(): Promise<SourceFiles> {
    return new SourceFiles(await mkdtemp(join(tmpdir(), 'rows-')));
  }

  async write(bytes: Uint8Array | string, highWaterMark = SMALL_CHUNKS): Promise<SourceFile> {
    const path = join(this.dir, `source-${this.count++}`);
    await writeFile(path, bytes);
    return { path, open: async (start) => createReadStream(path, { start, highWaterMark }) };
  }

  async remove(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}

export async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

export interface PlannedFile {
  plan: RowPlan;
  rejects: string;
  /** How many times the pass opened the file. */
  opens: number;
}

/**
 * Plans a source file as the activity does (able to read it again from its
 * start), collecting its rejects report, and checks that a single pass that
 * cuts parts from the first row comes to the same plan, report and error.
 */
export async function planFile(file: SourceFile, options: Omit<PlanOptions, 'rejects'>): Promise<PlannedFile> {
  const [reopened, single] = await Promise.allSettled([planWith(file, options, true), planWith(file, options, false)]);
  const outcome = (r: PromiseSettledResult<PlannedFile>) =>
    r.status === 'fulfilled' ? { plan: r.value.plan, rejects: r.value.rejects } : { error: String(r.reason) };
  expect(outcome(reopened)).toEqual(outcome(single));
  if (reopened.status === 'rejected') throw reopened.reason;
  return reopened.value;
}

async function planWith(
  file: SourceFile,
  options: Omit<PlanOptions, 'rejects'>,
  reopenable: boolean,
): Promise<PlannedFile> {
  const sink = new PassThrough();
  let opens = 1;
  const reopen = async () => {
    opens++;
    return file.open(0);
  };
  const [plan, report] = await Promise.allSettled([
    planRows(await file.open(0), { ...options, rejects: sink, ...(reopenable ? { reopen } : {}) }),
    bytesOf(sink),
  ]);
  if (plan.status === 'rejected') throw plan.reason;
  if (report.status === 'rejected') throw report.reason;
  return { plan: plan.value, rejects: report.value.toString('utf8'), opens };
}
