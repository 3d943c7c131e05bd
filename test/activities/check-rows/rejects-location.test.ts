import { describe, expect, it } from 'vitest';
import { isRejectsReportKey, rejectsReportLocation } from '../../../activities/check-rows/rejects-location.js';

const version = { bucket: 'drops', key: 'crm/accounts.csv', etag: '"abc123"', settings: { entityType: 'Account' } };

describe('the rejects report location', () => {
  it('is beside the file, named after the version and the settings, the same on every call', () => {
    const first = rejectsReportLocation(version);
    expect(first.bucket).toBe('drops');
    expect(first.key).toMatch(/^crm\/accounts\.csv\.abc123-[0-9a-f]{8}\.rejects\.csv$/);
    expect(rejectsReportLocation({ ...version })).toEqual(first);
  });

  it('changes with the settings that decide which rows are refused, and with the ETag', () => {
    const base = rejectsReportLocation(version).key;
    expect(rejectsReportLocation({ ...version, settings: { entityType: 'Person' } }).key).not.toBe(base);
    expect(rejectsReportLocation({ ...version, etag: 'def456' }).key).not.toBe(base);
  });

  it('goes under a key prefix in the same bucket, or under an s3:// prefix in another', () => {
    expect(rejectsReportLocation({ ...version, rejectsPrefix: 'rejects/' }).key).toMatch(
      /^rejects\/crm\/accounts\.csv\./,
    );
    const other = rejectsReportLocation({ ...version, rejectsPrefix: 's3://reports/imports/' });
    expect(other.bucket).toBe('reports');
    expect(other.key).toMatch(/^imports\/crm\/accounts\.csv\./);
  });

  it('is a key the feed listing recognises and skips', () => {
    expect(isRejectsReportKey(rejectsReportLocation(version).key)).toBe(true);
    expect(isRejectsReportKey('crm/accounts.csv')).toBe(false);
  });
});
