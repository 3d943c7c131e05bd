import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, ConfigError, loadConfig, parseDuration, parseSize } from '../../temporal.config.js';

const SERVICE = { COMPANY_DATA_BASE_URL: 'http://127.0.0.1:8089', COMPANY_DATA_TOKEN: 'tok-config-test-secret' };

function tmpFile(name: string, content: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'config-test-')), name);
  writeFileSync(path, content);
  return path;
}

function errorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration defaults', () => {
  it('runs on embedded defaults when the service is not needed', () => {
    const c = loadConfig({});
    expect(c.temporal).toMatchObject({
      namespace: 'default',
      taskQueue: 'bulk-import',
      uiUrl: 'http://localhost:8233',
    });
    expect(c.temporal.connection.address).toBe('localhost:7233');
    expect(c.service).toBeUndefined();
    expect(c.tenant).toBe('default');
    expect(c.budget.limits).toEqual({
      createJob: 1200,
      submitData: 1200,
      jobStatus: 3600,
      listJobs: 3600,
      listSources: 3600,
      activityTypes: 3600,
      activityFields: 3600,
    });
    expect(c.budget.resetMinuteUtc).toBe(0);
    expect(c.poll.scheduleMs).toEqual([5000, 10000, 20000, 40000, 60000]);
    expect(c.poll.jobTimeoutMs).toBe(24 * 3600 * 1000);
    expect(c.maxFileBytes).toBe(5_000_000_000);
    expect(c.feeds).toEqual([]);
  });

  it('reads the Temporal address and namespace by the SDK conventions', () => {
    const c = loadConfig({ TEMPORAL_ADDRESS: 'temporal.internal:7233', TEMPORAL_NAMESPACE: 'imports' });
    expect(c.temporal.connection.address).toBe('temporal.internal:7233');
    expect(c.temporal.namespace).toBe('imports');
  });

  it('applies budgets, headroom and the reset time', () => {
    const c = loadConfig({
      IMPORT_BUDGET_WRITE_DAILY: '100',
      IMPORT_BUDGET_READ_DAILY: '300',
      IMPORT_BUDGET_HEADROOM_PERCENT: '10',
      IMPORT_BUDGET_RESET_UTC: '06:30',
    });
    expect(c.budget.limits.createJob).toBe(100);
    expect(c.budget.limits.submitData).toBe(100);
    expect(c.budget.limits.jobStatus).toBe(300);
    expect(c.budget.headroomPercent).toBe(10);
    expect(c.budget.resetMinuteUtc).toBe(6 * 60 + 30);
  });
});

describe('configuration errors name the variable and what it expects', () => {
  it.each([
    [{ IMPORT_BUDGET_WRITE_DAILY: 'lots' }, /^IMPORT_BUDGET_WRITE_DAILY must be a whole number from 1 to/],
    [{ IMPORT_BUDGET_RESET_UTC: '24:00' }, /^IMPORT_BUDGET_RESET_UTC must be a UTC time HH:MM; got "24:00"/],
    [{ IMPORT_POLL_SCHEDULE: '5s,soon' }, /^IMPORT_POLL_SCHEDULE must be comma-separated durations/],
    [{ IMPORT_JOB_TIMEOUT: '-1h' }, /^IMPORT_JOB_TIMEOUT must be a duration/],
    [{ IMPORT_MAX_FILE_BYTES: '5 parsecs' }, /^IMPORT_MAX_FILE_BYTES must be a size/],
    [{ IMPORT_MAX_FILE_BYTES: '5000000001' }, /^IMPORT_MAX_FILE_BYTES must be a size from 1 byte to 5GB/],
    [{ IMPORT_MAX_FILE_BYTES: '5GiB' }, /^IMPORT_MAX_FILE_BYTES must be a size from 1 byte to 5GB/],
    [{ S3_ENDPOINT: 'ftp://files' }, /^S3_ENDPOINT must be an http\(s\) URL/],
    [{ S3_FORCE_PATH_STYLE: 'maybe' }, /^S3_FORCE_PATH_STYLE must be true or false/],
    [{ IMPORT_TENANT: 'has space' }, /^IMPORT_TENANT must be 1-64 letters/],
    [{ WORKER_METRICS_PORT: '70000' }, /^WORKER_METRICS_PORT must be a whole number from 0 to 65535/],
    [{ LOG_LEVEL: 'LOUD' }, /^LOG_LEVEL must be one of TRACE, DEBUG, INFO, WARN, ERROR/],
  ])('%o', (env, message) => {
    const err = errorOf(() => loadConfig(env));
    expect(err.message).toMatch(message);
    expect(err.message.split('\n')).toHaveLength(1);
  });

  it('requires the service URL and a token when the service is needed', () => {
    expect(errorOf(() => loadConfig({}, { needsService: true })).message).toMatch(/^COMPANY_DATA_BASE_URL must be/);
    expect(
      errorOf(() => loadConfig({ COMPANY_DATA_BASE_URL: 'https://api.example.com' }, { needsService: true })).message,
    ).toMatch(/COMPANY_DATA_TOKEN or COMPANY_DATA_TOKEN_FILE must be set/);
  });

  it('refuses plain http to anything but loopback', () => {
    const err = errorOf(() =>
      loadConfig({ ...SERVICE, COMPANY_DATA_BASE_URL: 'http://api.example.com' }, { needsService: true }),
    );
    expect(err.message).toMatch(/must be https/);
    for (const url of ['http://127.0.0.1:1', 'http://localhost:2', 'http://[::1]:3', 'https://api.example.com']) {
      expect(loadConfig({ ...SERVICE, COMPANY_DATA_BASE_URL: url }, { needsService: true }).service?.baseUrl).toBe(url);
    }
  });

  it('names an unreadable token file without reading it into the message', () => {
    const err = errorOf(() =>
      loadConfig({ ...SERVICE, COMPANY_DATA_TOKEN_FILE: '/nonexistent/token' }, { needsService: true }),
    );
    expect(err.message).toMatch(/^COMPANY_DATA_TOKEN_FILE must be a readable file.*\/nonexistent\/token/);
  });
});

describe('the token stays secret', () => {
  it('is redacted in JSON, string and inspect forms of the configuration', () => {
    const c = loadConfig(SERVICE, { needsService: true });
    expect(JSON.stringify(c)).not.toContain(SERVICE.COMPANY_DATA_TOKEN);
    expect(inspect(c, { depth: 10 })).not.toContain(SERVICE.COMPANY_DATA_TOKEN);
    expect(String(c.service?.token.kind === 'env' && c.service.token.token)).toBe('[redacted]');
    expect(c.service?.token.kind === 'env' && c.service.token.token.reveal()).toBe(SERVICE.COMPANY_DATA_TOKEN);
  });

  it('prefers the token file, so a sidecar can rotate it', () => {
    const path = tmpFile('token', 'from-file\n');
    const c = loadConfig({ ...SERVICE, COMPANY_DATA_TOKEN_FILE: path }, { needsService: true });
    expect(c.service?.token).toEqual({ kind: 'file', path });
  });
});

describe('nightly feeds', () => {
  const feed = {
    id: 'accounts-nightly',
    bucket: 'crm-exports',
    prefix: 'accounts/',
    entityType: 'Account',
    listAction: 'insert',
    schedule: { time: '02:30', timeZone: 'Europe/Berlin' },
  };

  it('loads feeds with schedule defaults', () => {
    const c = loadConfig({ IMPORT_FEEDS_FILE: tmpFile('feeds.json', JSON.stringify([feed])) });
    expect(c.feeds).toEqual([
      {
        id: 'accounts-nightly',
        bucket: 'crm-exports',
        prefix: 'accounts/',
        entityType: 'Account',
        listAction: 'insert',
        maxConcurrentImports: 2,
        schedule: { time: '02:30', timeZone: 'Europe/Berlin', catchupWindowMs: 6 * 3600 * 1000, pauseOnFailure: false },
      },
    ]);
  });

  it('requires listAction on a feed, because replace and delete are destructive', () => {
    const { listAction: _omitted, ...noAction } = feed;
    const err = errorOf(() => loadConfig({ IMPORT_FEEDS_FILE: tmpFile('f.json', JSON.stringify([noAction])) }));
    expect(err.message).toMatch(/feeds\[0\]\.listAction: required for feeds/);
  });

  it.each([
    [{ entityType: 'Activity' }, /feeds\[0\]\.activityTypeId: required when entityType is Activity/],
    [{ schedule: { timeZone: 'Mars/Olympus' } }, /feeds\[0\]\.schedule\.timeZone: an IANA time zone/],
    [{ pattern: '([' }, /feeds\[0\]\.pattern: a valid regular expression/],
    [{ fieldMappings: { sourceId: 'x', objectType: 'account', mappings: [] } }, /fieldMappings\.sourceId must be/],
    [{ surprise: true }, /feeds\[0\]/],
  ])('rejects %o', (change, message) => {
    const err = errorOf(() =>
      loadConfig({ IMPORT_FEEDS_FILE: tmpFile('f.json', JSON.stringify([{ ...feed, ...change }])) }),
    );
    expect(err.message).toMatch(message);
  });

  it('rejects duplicate feed ids', () => {
    const err = errorOf(() => loadConfig({ IMPORT_FEEDS_FILE: tmpFile('f.json', JSON.stringify([feed, feed])) }));
    expect(err.message).toMatch(/feed id "accounts-nightly" appears twice/);
  });
});

describe('units', () => {
  it('parses durations and sizes', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('1.5h')).toBe(5_400_000);
    expect(parseDuration('soon')).toBeUndefined();
    expect(parseSize('8MiB')).toBe(8 * 1024 * 1024);
    expect(parseSize('5GB')).toBe(5e9);
    expect(parseSize('12')).toBe(12);
    expect(parseSize('1 TB')).toBeUndefined();
  });
});

describe('the README documents every configuration variable', () => {
  it.each(Object.keys(CONFIG_VARIABLES))('%s', (name) => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(readme).toContain(`\`${name}\``);
  });
});
