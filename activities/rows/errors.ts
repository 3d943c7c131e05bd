/**
 * Why the row stage cannot read a file at all (as opposed to a row it
 * refuses, which goes to the rejects). The code names the failure for the
 * activity that maps it; the message says what was wrong and what to do.
 */
export type RowStageErrorCode =
  | 'NotUtf8' // bytes that are not UTF-8 in a file read as UTF-8
  | 'UnsupportedEncoding' // UTF-16 without a byte order mark, or a BOM that contradicts the declared encoding
  | 'NoHeader' // the file holds no header row
  | 'RowTooLong' // a row beyond the bound that keeps memory flat (usually an unclosed quote)
  | 'CorruptCompression' // a gzip stream that is cut short or damaged
  | 'PartChanged'; // a part regenerated to other bytes than its plan: the object changed

export class RowStageError extends Error {
  override readonly name = 'RowStageError';
  constructor(
    readonly code: RowStageErrorCode,
    message: string,
  ) {
    super(message);
  }
}
