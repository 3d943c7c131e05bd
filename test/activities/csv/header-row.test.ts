import { describe, expect, it } from 'vitest';
import { firstRecordEnd } from '../../../activities/csv/first-record.js';
import { detectDelimiter, HeaderRowError, parseHeaderRow } from '../../../activities/csv/header-row.js';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('the header row of a CSV sample', () => {
  it('ends at the first line break outside quotes', () => {
    expect(firstRecordEnd(bytes('"a\nb",c\nd'))).toBe(7);
    expect(firstRecordEnd(bytes('a,b\r\nc'))).toBe(3);
    expect(firstRecordEnd(bytes('"open quote, no end'))).toBe(-1);
  });

  it('picks the delimiter the row uses most, ignoring quoted ones, and comma on a tie', () => {
    expect(detectDelimiter('"a;b;c",d,e')).toBe(',');
    expect(detectDelimiter('a;b;c')).toBe(';');
    expect(detectDelimiter('a;b,c')).toBe(',');
    expect(detectDelimiter('single')).toBe(',');
  });

  it('trims spaces around labels', () => {
    expect(parseHeaderRow(bytes(' Email , First Name')).labels).toEqual(['Email', 'First Name']);
  });

  it('rejects a row that is not valid CSV with a clear message', () => {
    expect(() => parseHeaderRow(bytes('"Email" x,Name'))).toThrow(HeaderRowError);
  });
});
