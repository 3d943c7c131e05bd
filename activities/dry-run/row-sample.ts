/**
 * The dry run's row check: the row stage's checks on the file's first rows
 * only (the dry run reads no whole file), saying how much it covered. The
 * sample ends at the last line end inside it, so a row cut by the sample's
 * end is not reported as refused.
 */
import { Readable, Writable } from 'node:stream';
import { constants, gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import type { RowSample } from '../../workflows/contracts/dry-run.js';
import type { EntityType, FieldMapping } from '../../workflows/contracts/import-input.js';
import { MAPPING_OBJECT_TYPE_OF_ENTITY } from '../../workflows/contracts/import-input.js';
import { type Dialect, planRows, type RowPlan } from '../rows/index.js';
import type { S3Source } from '../s3/source.js';

/** The compressed or plain bytes read for the sample. */
const SAMPLE_BYTES = 1024 * 1024;
/** A gzip sample is decompressed at most this far. */
const MAX_SAMPLE_TEXT_BYTES = 4 * 1024 * 1024;
const MAX_EXAMPLES = 5;

interface SampleInput {
  bucket: string;
  key: string;
  etag: string;
  sizeBytes: number;
  dialect: Dialect;
  entityType: EntityType;
  mappings?: FieldMapping[];
}

interface Sample {
  bytes: Buffer;
  wholeFile: boolean;
  /** Decompressed bytes per stored byte of the sample: 1 unless gzip. */
  expansion: number;
}

/** The sample's bytes, decompressed, and whether they are the whole file. */
async function sampleBytes(s3: S3Source, input: SampleInput): Promise<Sample> {
  const raw = await s3.firstBytes(input.bucket, input.key, { etag: input.etag, bytes: SAMPLE_BYTES });
  let wholeFile = raw.length >= input.sizeBytes;
  let bytes = Buffer.from(raw);
  let expansion = 1;
  if (input.dialect.compression === 'gzip') {
    bytes = gunzipSync(raw, { finishFlush: constants.Z_SYNC_FLUSH });
    expansion = bytes.length / Math.max(1, raw.length);
    if (bytes.length > MAX_SAMPLE_TEXT_BYTES) {
      bytes = bytes.subarray(0, MAX_SAMPLE_TEXT_BYTES);
      wholeFile = false;
    }
  }
  if (wholeFile) return { bytes, wholeFile, expansion };
  // Up to the last line end: the row after it may be cut short by the sample.
  const lastLineEnd = Math.max(bytes.lastIndexOf(0x0a), bytes.lastIndexOf(0x0d));
  return { bytes: bytes.subarray(0, lastLineEnd + 1), wholeFile, expansion };
}

/**
 * The jobs the body makes: the plan's parts when the sample is the whole
 * file; else the file's body estimated from the sample's (its size per
 * decompressed source byte), over the part limit.
 */
function partsOf(plan: RowPlan, sample: Sample, input: SampleInput, maxPartBytes: number): number {
  if (sample.wholeFile) return Math.max(1, plan.parts.length);
  const sampleBody = plan.parts.reduce((sum, part) => sum + part.bytes, 0);
  const bodyPerSourceByte = sampleBody / Math.max(1, sample.bytes.length);
  const body = input.sizeBytes * sample.expansion * bodyPerSourceByte;
  return Math.max(1, Math.ceil(body / maxPartBytes));
}

export async function rowSample(s3: S3Source, input: SampleInput, maxPartBytes: number): Promise<RowSample> {
  const sample = await sampleBytes(s3, input);
  const { bytes, wholeFile } = sample;
  const report: Buffer[] = [];
  const rejects = new Writable({
    write(chunk: Buffer, _enc, done) {
      report.push(Buffer.from(chunk));
      done();
    },
  });
  const objectType = MAPPING_OBJECT_TYPE_OF_ENTITY[input.entityType];
  const fieldMappings = objectType && input.mappings ? { objectType, mappings: input.mappings } : undefined;
  const plan = await planRows(Readable.from([bytes]), {
    dialect: { ...input.dialect, compression: 'none' },
    checks: { entityType: input.entityType, fieldMappings },
    // The import's own limit: a row too long for any part is refused here as it would be there.
    maxPartBytes,
    rejects,
  });
  const lines: string[][] =
    report.length > 0
      ? parse(Buffer.concat(report).toString('utf8'), { to: MAX_EXAMPLES + 1, relax_column_count: true })
      : [];
  const examples = lines.slice(1).map(([row, reason]) => ({ row: Number(row), reason: reason ?? '' }));
  return {
    bytes: bytes.length,
    wholeFile,
    read: plan.rowsRead,
    rejected: plan.rowsRejected,
    examples,
    parts: partsOf(plan, sample, input, maxPartBytes),
  };
}
