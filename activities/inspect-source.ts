/**
 * The inspectSource activity: checks the S3 file before any service call is
 * spent on it. A missing, empty or oversized file, a malformed header row, or
 * a header that lacks a mapped label fails here, non-retryably, with a message
 * that names the file and what to fix.
 */
import type { InspectSourceInput, InspectSourceResult } from '../workflows/policy/activity-contracts.js';
import { HeaderRowError, parseHeaderRow } from './csv/header-row.js';
import { failure } from './failures.js';
import { HeaderTooLong, SourceObjectChanged, SourceObjectMissing, s3Url } from './s3/errors.js';
import type { S3Source } from './s3/source.js';

export interface InspectSourceDeps {
  s3: S3Source;
  maxFileBytes: number;
}

/** An object overwritten between our HEAD and our header read is looked at again, a few times. */
const MAX_LOOKS = 3;

export function makeInspectSource(deps: InspectSourceDeps) {
  return async function inspectSource(input: InspectSourceInput): Promise<InspectSourceResult> {
    for (let look = 1; ; look++) {
      try {
        return await inspectOnce(deps, input);
      } catch (err) {
        if (!(err instanceof SourceObjectChanged) || look >= MAX_LOOKS) throw mapSourceError(err);
      }
    }
  };
}

async function inspectOnce(deps: InspectSourceDeps, input: InspectSourceInput): Promise<InspectSourceResult> {
  const { bucket, key } = input;
  const where = s3Url(bucket, key);
  const head = await deps.s3.head(bucket, key);
  if (head.sizeBytes > deps.maxFileBytes) {
    throw failure(
      'FileTooLarge',
      `${where} is ${head.sizeBytes} bytes; the limit is ${deps.maxFileBytes} bytes (IMPORT_MAX_FILE_BYTES, the service accepts at most 5 GB)`,
      { sizeBytes: head.sizeBytes, limitBytes: deps.maxFileBytes },
    );
  }
  if (head.sizeBytes === 0) throw failure('EmptyFile', `${where} is empty; expected a CSV file with a header row`);

  const headerBytes = await deps.s3.headerSample(bucket, key, { etag: head.etag });
  let header: string[];
  try {
    header = parseHeaderRow(headerBytes).labels;
  } catch (err) {
    if (err instanceof HeaderRowError) throw failure('InvalidCsvHeader', `${where}: ${err.message}`);
    throw err;
  }

  const warnings: string[] = [];
  const mapped = (input.mappings ?? []).map((m) => m.sourceFieldLabel);
  if (mapped.length > 0) {
    const inHeader = new Set(header);
    const missing = mapped.filter((label) => !inHeader.has(label));
    if (missing.length > 0) {
      throw failure(
        'MappingMismatch',
        `${where}: the header row lacks the mapped label(s) ${quoteAll(missing)}; the header has ${quoteAll(header)}`,
        { missing, header },
      );
    }
    const covered = new Set(mapped);
    const unmapped = header.filter((label) => !covered.has(label));
    if (unmapped.length > 0) {
      warnings.push(`no field mapping covers the column(s) ${quoteAll(unmapped)}; the service may ignore them`);
    }
  }
  return { ...head, header, warnings };
}

function quoteAll(labels: string[]): string {
  return labels.map((l) => JSON.stringify(l)).join(', ');
}

function mapSourceError(err: unknown): unknown {
  if (err instanceof SourceObjectMissing) {
    return failure('SourceNotFound', `${err.message}; expected an existing CSV object`, {
      bucket: err.bucket,
      key: err.key,
    });
  }
  if (err instanceof HeaderTooLong) {
    return failure('InvalidCsvHeader', `${err.message}; is it a CSV file with a header row?`);
  }
  if (err instanceof SourceObjectChanged) return failure('SourceChanged', err.message);
  return err;
}
