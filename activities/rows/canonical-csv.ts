/**
 * The form the service receives: comma-separated, RFC 4180 quoting only where
 * a field needs it, CRLF after every record (RFC 4180's record separator, the
 * one line end every CSV reader takes), UTF-8 without a byte order mark.
 */
const NEEDS_QUOTES = /[",\r\n]/;

function field(value: string): string {
  return NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** One record and its line end. */
export function canonicalLine(fields: readonly string[]): string {
  // A lone empty field would be an empty line, which readers skip: quote it so the row survives.
  if (fields.length === 1 && fields[0] === '') return '""\r\n';
  // Most rows need no quotes at all: one test of all their text instead of one per field.
  if (!NEEDS_QUOTES.test(fields.join(''))) return `${fields.join(',')}\r\n`;
  return `${fields.map(field).join(',')}\r\n`;
}
