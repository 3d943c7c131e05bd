/**
 * Windows-1252 is Latin-1 except for bytes 0x80-0x9F, where it has curly
 * quotes, dashes, the euro sign and so on instead of control characters. The
 * parser reads such files as Latin-1 (one byte, one character, so its byte
 * offsets stay the file's), and each field is then corrected here.
 */
const C1_RANGE = /[\u0080-\u009f]/g;
const WINDOWS_1252_C1 = new TextDecoder('windows-1252').decode(Uint8Array.from({ length: 32 }, (_, i) => 0x80 + i));

/** A field decoded as Latin-1, as Windows-1252 would have decoded it. */
export function latin1ToWindows1252(field: string): string {
  C1_RANGE.lastIndex = 0;
  if (!C1_RANGE.test(field)) return field;
  return field.replace(C1_RANGE, (c) => WINDOWS_1252_C1[c.charCodeAt(0) - 0x80]!);
}
