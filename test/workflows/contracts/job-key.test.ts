import { describe, expect, it } from 'vitest';
import {
  executionJobScope,
  fnv1a64,
  JOB_NAME_MAX_LENGTH,
  jobKeyFor,
  jobNameHasKey,
  jobNameWithKey,
} from '../../../workflows/contracts/job-key.js';

describe('job key', () => {
  it('matches the published FNV-1a 64-bit test vectors', () => {
    expect(fnv1a64('')).toBe('cbf29ce484222325');
    expect(fnv1a64('a')).toBe('af63dc4c8601ec8c');
    expect(fnv1a64('foobar')).toBe('85944171f73967e8');
  });

  it('is the same for the same execution chain and file version every time (so a Reset run finds its job)', () => {
    const scope = executionJobScope('import-bucket/file.csv', 'run-1');
    expect(jobKeyFor(scope, '"e1"')).toBe(jobKeyFor(scope, '"e1"'));
    expect(jobKeyFor(scope, '"e1"')).toMatch(/^[0-9a-f]{16}$/);
  });

  it('differs for a fresh start (another first run id), another workflow id and another file version', () => {
    const key = jobKeyFor(executionJobScope('import-a', 'run-1'), '"e1"');
    expect(jobKeyFor(executionJobScope('import-a', 'run-2'), '"e1"')).not.toBe(key);
    expect(jobKeyFor(executionJobScope('import-b', 'run-1'), '"e1"')).not.toBe(key);
    expect(jobKeyFor(executionJobScope('import-a', 'run-1'), '"e2"')).not.toBe(key);
  });

  it('hashes non-ASCII scopes by their UTF-8 bytes', () => {
    expect(jobKeyFor('import-ä', 'e')).not.toBe(jobKeyFor('import-a', 'e'));
  });

  it('sits at the start of the name, so a service that shortens names keeps it', () => {
    const key = jobKeyFor('wf-1', 'e');
    const name = jobNameWithKey('Nightly accounts', key);
    expect(name).toBe(`[import:${key}] Nightly accounts`);
    expect(jobNameHasKey(name, key)).toBe(true);
    expect(jobNameHasKey(name.slice(0, 30), key)).toBe(true);
    expect(jobNameHasKey(name, jobKeyFor('wf-2', 'e'))).toBe(false);
    expect(jobNameHasKey(`Nightly accounts [import:${key}]`, key)).toBe(false);
    expect(jobNameHasKey(undefined, key)).toBe(false);
  });

  it('keeps names within JOB_NAME_MAX_LENGTH without splitting a character', () => {
    const key = jobKeyFor('wf-1', 'e');
    const name = jobNameWithKey('😀'.repeat(300), key);
    expect(name.length).toBeLessThanOrEqual(JOB_NAME_MAX_LENGTH);
    expect(name.endsWith('😀…')).toBe(true);
    expect(jobNameHasKey(name, key)).toBe(true);
  });
});
