import { describe, expect, it } from 'vitest';
import { fnv1a64, JOB_NAME_MAX_LENGTH, jobNameHasKey, jobNameWithKey } from '../../../workflows/contracts/job-key.js';
import { jobKeyOf } from '../../../workflows/job-record-state.js';

const version = (etag: string) => ({ tenant: 't1', bucket: 'b', key: 'file.csv', etag });

describe('job key', () => {
  it('matches the published FNV-1a 64-bit test vectors', () => {
    expect(fnv1a64('')).toBe('cbf29ce484222325');
    expect(fnv1a64('a')).toBe('af63dc4c8601ec8c');
    expect(fnv1a64('foobar')).toBe('85944171f73967e8');
  });

  it('is one per intent of one object version: the same every time, another for another intent or version', () => {
    const key = jobKeyOf(version('"e1"'), 1);
    expect(jobKeyOf(version('"e1"'), 1)).toBe(key);
    expect(key).toMatch(/^[0-9a-f]{16}$/);
    expect(jobKeyOf(version('"e1"'), 2)).not.toBe(key);
    expect(jobKeyOf(version('"e2"'), 1)).not.toBe(key);
    expect(jobKeyOf({ ...version('"e1"'), tenant: 't2' }, 1)).not.toBe(key);
  });

  it('sits at the start of the name, so a service that shortens names keeps it', () => {
    const key = jobKeyOf(version('e'), 1);
    const name = jobNameWithKey('Nightly accounts', key);
    expect(name).toBe(`[import:${key}] Nightly accounts`);
    expect(jobNameHasKey(name, key)).toBe(true);
    expect(jobNameHasKey(name.slice(0, 30), key)).toBe(true);
    expect(jobNameHasKey(name, jobKeyOf(version('e'), 2))).toBe(false);
    expect(jobNameHasKey(`Nightly accounts [import:${key}]`, key)).toBe(false);
    expect(jobNameHasKey(undefined, key)).toBe(false);
  });

  it('keeps names within JOB_NAME_MAX_LENGTH without splitting a character', () => {
    const key = jobKeyOf(version('e'), 1);
    const name = jobNameWithKey('😀'.repeat(300), key);
    expect(name.length).toBeLessThanOrEqual(JOB_NAME_MAX_LENGTH);
    expect(name.endsWith('😀…')).toBe(true);
    expect(jobNameHasKey(name, key)).toBe(true);
  });
});
