/**
 * Windows-1252 is Latin-1 except for bytes 0x80-0x9F, where it has curly
 * quotes, dashes, the euro sign and so on instead of control characters. The
 * parser reads such files as Latin-1 (one byte, one character, so its byte
 * offsets stay the file's), and each field is then corrected here.
 *
 * The table is written out because Node 20's TextDecoder('windows-1252')
 * decodes these bytes as Latin-1 (measured on 20.20.2: 0x80 stays U+0080).
 * The five bytes Windows-1252 leaves undefined keep their Latin-1 meaning, as
 * the WHATWG Encoding Standard decodes them.
 */
const C1_RANGE = /[\u0080-\u009f]/g;
const WINDOWS_1252_C1 = String.fromCharCode(
  ...[0x20ac, 0x0081, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008d],
  ...[0x017d, 0x008f, 0x0090, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a],
  ...[0x0153, 0x009d, 0x017e, 0x0178],
);

/** A field decoded as Latin-1, as Windows-1252 would have decoded it. */
export function latin1ToWindows1252(field: string): string {
  C1_RANGE.lastIndex = 0;
  if (!C1_RANGE.test(field)) return field;
  return field.replace(C1_RANGE, (c) => WINDOWS_1252_C1[c.charCodeAt(0) - 0x80]!);
}
