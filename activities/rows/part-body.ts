/**
 * Regenerates one part's body from the plan, on any attempt: the canonical
 * header, then the canonical lines of the part's sent rows. An uncompressed
 * source is re-read from the part's first row (`startByte`); a gzip one is
 * decompressed from its start (gzip cannot be entered mid-stream), and its
 * bytes before `startByte` dropped without being parsed. The last line is held back until the body's size and digest
 * match the plan: a body that came out different (the object changed under
 * an unpinned read) ends in an error short of its Content-Length, so the
 * service never receives it complete.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { canonicalLine } from './canonical-csv.js';
import { RowStageError } from './errors.js';
import { LineBlocks } from './line-blocks.js';
import type { PartPlan, RowPlan } from './row-plan.js';
import { type RowLimits, rowVerdict } from './row-verdict.js';
import { sourceRows } from './source-rows.js';

/** Opens the object's bytes from a (compressed) byte offset, pinned to the planned object version. */
export type OpenSource = (fromByte: number) => Promise<Readable>;

export function partBody(plan: RowPlan, partNumber: number, open: OpenSource): Readable {
  const part = plan.parts[partNumber - 1];
  if (!part) throw new RangeError(`part ${partNumber} does not exist; the plan has ${plan.parts.length}`);
  if (plan.body === 'original') return Readable.from(originalBody(open), { objectMode: false });
  return Readable.from(canonicalBody(plan, part, open), { objectMode: false });
}

async function* originalBody(open: OpenSource): AsyncGenerator<Buffer> {
  yield* await open(0);
}

function mismatch(part: PartPlan, bytes: number): RowStageError {
  return new RowStageError(
    'PartChanged',
    `part ${part.number} came out as ${bytes} bytes with another digest than planned (${part.bytes} bytes); the source object changed since the plan`,
  );
}

async function* canonicalBody(plan: RowPlan, part: PartPlan, open: OpenSource): AsyncGenerator<Buffer> {
  const raw = await open(plan.dialect.compression === 'none' ? part.startByte : 0);
  const from = { startByte: part.startByte, firstRow: part.firstRow, maxRowBytes: plan.maxRowBytes };
  const rows = sourceRows(raw, plan.dialect, from);
  const headerLine = canonicalLine(plan.rules.header);
  const limits: RowLimits = {
    rules: plan.rules,
    maxPartBytes: plan.maxPartBytes,
    headerBytes: Buffer.byteLength(headerLine),
  };
  const hash = createHash('sha256');
  const blocks = new LineBlocks();
  // The header, then each sent row's line; a block goes once the next one starts, so the last waits for the check.
  let bytes = Buffer.byteLength(headerLine);
  blocks.add(headerLine, bytes);
  try {
    for await (const batch of rows) {
      for (const row of batch) {
        if (row.row > part.lastRow) break;
        const verdict = rowVerdict(limits, row);
        if ('reason' in verdict) continue;
        bytes += verdict.bytes;
        const block = blocks.add(verdict.line, verdict.bytes);
        if (block) {
          hash.update(block);
          yield block;
        }
      }
      if (batch.at(-1)!.row >= part.lastRow) break;
    }
  } finally {
    await rows.return(undefined);
  }
  const rest = blocks.rest();
  if (bytes !== part.bytes || hash.update(rest).digest('hex') !== part.sha256) throw mismatch(part, bytes);
  yield rest;
}
