/**
 * Whether a value is of a field mapping's `dataType`. The service documents
 * the names (`string`, `number`, `boolean`, `date`) but not the forms it
 * parses, so each check takes the common unambiguous forms and no more:
 * a refused row costs the operator a look, an accepted bad one a failed job.
 * Other data types (`string` and any the service may add) take any value.
 */
export const CHECKED_DATA_TYPES = ['number', 'boolean', 'date'] as const;
export type CheckedDataType = (typeof CHECKED_DATA_TYPES)[number];

/** Decimal, optional sign, fraction and exponent; no thousands separators (1,000 is ambiguous between locales). */
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const BOOLEANS = new Set(['true', 'false', 'yes', 'no', 't', 'f', 'y', 'n', '1', '0']);
/** ISO 8601 calendar date, optionally with a time and a zone: 2026-11-27, 2026-11-27T03:45:00Z, 2026-11-27 03:45+01:00. */
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})([T ](\d{2}):(\d{2})(:(\d{2})(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$/;

function isCalendarDate(value: string): boolean {
  const m = ISO_DATE.exec(value);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  const validDay = date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  const validTime = m[4] === undefined || (Number(m[5]) < 24 && Number(m[6]) < 60 && Number(m[8] ?? 0) < 60);
  return validDay && validTime;
}

export function isCheckedDataType(dataType: string): dataType is CheckedDataType {
  return (CHECKED_DATA_TYPES as readonly string[]).includes(dataType);
}

/** Whether a non-empty `value` (surrounding spaces ignored) is a `type`. */
export function isOfType(value: string, type: CheckedDataType): boolean {
  const v = value.trim();
  if (type === 'number') return NUMBER.test(v);
  if (type === 'boolean') return BOOLEANS.has(v.toLowerCase());
  return isCalendarDate(v);
}
