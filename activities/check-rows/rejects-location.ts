/**
 * Where an import's rejects report goes: beside the file, or under the
 * import's prefix. The key is a function of the object version and the
 * settings that decide which rows are refused, so every attempt (and every
 * import of the same version with the same settings) names the same report,
 * and another setting never overwrites it.
 */
import { fnv1a64 } from '../../workflows/contracts/job-key.js';
import { normaliseEtag } from '../../workflows/contracts/object-version.js';

/** Every report's key ends so: the nightly's feed listing leaves such objects alone. */
export const REJECTS_REPORT_SUFFIX = '.rejects.csv';

export interface ReportLocation {
  bucket: string;
  key: string;
}

interface ReportInputs {
  bucket: string;
  key: string;
  etag: string;
  rejectsPrefix?: string;
  /** Whatever decides the refused rows (dialect, entity type, mappings), as plain data. */
  settings: unknown;
}

const S3_URL = /^s3:\/\/([^/]+)\/?(.*)$/;

export function rejectsReportLocation(input: ReportInputs): ReportLocation {
  const version = `${normaliseEtag(input.etag)}-${fnv1a64(JSON.stringify(input.settings)).slice(0, 8)}`;
  const name = `${input.key}.${version}${REJECTS_REPORT_SUFFIX}`;
  const prefix = input.rejectsPrefix;
  if (prefix === undefined || prefix === '') return { bucket: input.bucket, key: name };
  const url = S3_URL.exec(prefix);
  if (url) return { bucket: url[1]!, key: `${url[2]}${name}` };
  return { bucket: input.bucket, key: `${prefix}${name}` };
}

export function isRejectsReportKey(key: string): boolean {
  return key.endsWith(REJECTS_REPORT_SUFFIX);
}
