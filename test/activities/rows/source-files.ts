/** Source files for the row stage's tests: real files on disk, read through real file streams in small chunks. */
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
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

/** Plans a source file, collecting its rejects report. */
export async function planFile(
  file: SourceFile,
  options: Omit<PlanOptions, 'rejects'>,
): Promise<{ plan: RowPlan; rejects: string }> {
  const sink = new PassThrough();
  const [plan, report] = await Promise.allSettled([
    planRows(await file.open(0), { ...options, rejects: sink }),
    bytesOf(sink),
  ]);
  if (plan.status === 'rejected') throw plan.reason;
  if (report.status === 'rejected') throw report.reason;
  return { plan: plan.value, rejects: report.value.toString('utf8') };
}
