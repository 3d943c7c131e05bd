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
import { type Dialect, planRows } from '../rows/index.js';
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

/** The sample's bytes, decompressed, and whether they are the whole file. */
async function sampleBytes(s3: S3Source, input: SampleInput): Promise<{ bytes: Buffer; wholeFile: boolean }> {
  const raw = await s3.firstBytes(input.bucket, input.key, { etag: input.etag, bytes: SAMPLE_BYTES });
  let wholeFile = raw.length >= input.sizeBytes;
  let bytes = Buffer.from(raw);
  if (input.dialect.compression === 'gzip') {
    bytes = gunzipSync(raw, { finishFlush: constants.Z_SYNC_FLUSH });
    if (bytes.length > MAX_SAMPLE_TEXT_BYTES) {
      bytes = bytes.subarray(0, MAX_SAMPLE_TEXT_BYTES);
      wholeFile = false;
    }
  }
  if (wholeFile) return { bytes, wholeFile };
  // Up to the last line end: the row after it may be cut short by the sample.
  const lastLineEnd = Math.max(bytes.lastIndexOf(0x0a), bytes.lastIndexOf(0x0d));
  return { bytes: bytes.subarray(0, lastLineEnd + 1), wholeFile };
}

export async function rowSample(s3: S3Source, input: SampleInput): Promise<RowSample> {
  const { bytes, wholeFile } = await sampleBytes(s3, input);
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
    // The sample only counts rows: no part limit applies to it.
    maxPartBytes: Number.MAX_SAFE_INTEGER,
    rejects,
  });
  const lines: string[][] =
    report.length > 0
      ? parse(Buffer.concat(report).toString('utf8'), { to: MAX_EXAMPLES + 1, relax_column_count: true })
      : [];
  const examples = lines.slice(1).map(([row, reason]) => ({ row: Number(row), reason: reason ?? '' }));
  return { bytes: bytes.length, wholeFile, read: plan.rowsRead, rejected: plan.rowsRejected, examples };
}
