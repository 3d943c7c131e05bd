import { describe, expect, it } from 'vitest';
import { fnv1a64, jobKeyForWorkflow, jobNameHasKey, jobNameWithKey } from '../../workflows/policy/job-key.js';

describe('job key', () => {
  it('matches the published FNV-1a 64-bit test vectors', () => {
    expect(fnv1a64('')).toBe('cbf29ce484222325');
    expect(fnv1a64('a')).toBe('af63dc4c8601ec8c');
    expect(fnv1a64('foobar')).toBe('85944171f73967e8');
  });

  it('is the same for the same workflow id every time (so a reset run finds its job)', () => {
    expect(jobKeyForWorkflow('import-bucket/file.csv')).toBe(jobKeyForWorkflow('import-bucket/file.csv'));
    expect(jobKeyForWorkflow('import-bucket/file.csv')).toMatch(/^[0-9a-f]{16}$/);
  });

  it('differs between workflow ids', () => {
    expect(jobKeyForWorkflow('import-a')).not.toBe(jobKeyForWorkflow('import-b'));
  });

  it('hashes non-ASCII workflow ids by their UTF-8 bytes', () => {
    expect(jobKeyForWorkflow('import-ä')).not.toBe(jobKeyForWorkflow('import-a'));
    expect(jobKeyForWorkflow('import-ä')).toMatch(/^[0-9a-f]{16}$/);
  });

  it('is found in the job name it was put in, and only there', () => {
    const key = jobKeyForWorkflow('wf-1');
    const name = jobNameWithKey('Nightly accounts', key);
    expect(name).toBe(`Nightly accounts [import:${key}]`);
    expect(jobNameHasKey(name, key)).toBe(true);
    expect(jobNameHasKey(name, jobKeyForWorkflow('wf-2'))).toBe(false);
  });
});
