/**
 * Reads the labels of a CSV header row the way the service will: UTF-8 with an
 * optional byte order mark, RFC 4180 quoting, and the delimiter the row
 * itself uses (comma unless the row clearly uses ; tab or |).
 */
import { parse } from 'csv-parse/sync';

const CANDIDATE_DELIMITERS = [',', ';', '\t', '|'] as const;
export type Delimiter = (typeof CANDIDATE_DELIMITERS)[number];

interface HeaderRow {
  labels: string[];
  delimiter: Delimiter;
}

export class HeaderRowError extends Error {
  override readonly name = 'HeaderRowError';
}

const BOM = '\uFEFF';

/** The candidate that occurs most often outside quotes; comma on a tie or when none occurs. */
export function detectDelimiter(row: string): Delimiter {
  const counts = new Map<Delimiter, number>(CANDIDATE_DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (const ch of row) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && counts.has(ch as Delimiter))
      counts.set(ch as Delimiter, (counts.get(ch as Delimiter) ?? 0) + 1);
  }
  let best: Delimiter = ',';
  for (const d of CANDIDATE_DELIMITERS) if ((counts.get(d) ?? 0) > (counts.get(best) ?? 0)) best = d;
  return best;
}

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new HeaderRowError('the header row is not valid UTF-8 (the service expects UTF-8 CSV)');
  }
}

/** Parses the first record of `bytes`, which must hold all of it (later records are ignored). */
export function parseHeaderRow(bytes: Uint8Array): HeaderRow {
  let text = decodeUtf8(bytes);
  if (text.startsWith(BOM)) text = text.slice(BOM.length);
  return parseHeaderText(text, detectDelimiter(text));
}

/** Parses the header row in `text` (decoded, no byte order mark), split on `delimiter`. */
export function parseHeaderText(text: string, delimiter: Delimiter): HeaderRow {
  let records: string[][];
  try {
    records = parse(text, { delimiter, to: 1, trim: true, relax_column_count: true });
  } catch (e) {
    throw new HeaderRowError(`the header row is not valid CSV: ${(e as Error).message}`);
  }
  const labels = records[0] ?? [];
  if (labels.length === 0 || labels.every((l) => l === '')) {
    throw new HeaderRowError('the first row is empty; expected a header row of column labels');
  }
  const empty = labels.flatMap((l, i) => (l === '' ? [i + 1] : []));
  if (empty.length > 0) {
    throw new HeaderRowError(
      `the header row has empty labels in column(s) ${empty.join(', ')}; every column needs a label`,
    );
  }
  const seen = new Set<string>();
  const duplicates = new Set<string>();
  for (const l of labels) (seen.has(l) ? duplicates : seen).add(l);
  if (duplicates.size > 0) {
    throw new HeaderRowError(
      `the header row repeats the label(s) ${[...duplicates].map((d) => JSON.stringify(d)).join(', ')}; labels must be unique`,
    );
  }
  return { labels, delimiter };
}
