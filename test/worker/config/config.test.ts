import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inspect } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CONFIG_VARIABLES,
  ConfigError,
  documentedDefault,
  loadBudgetSettings,
  loadClientConfig,
  loadConfig,
  loadFeeds,
  loadInputDefaults,
  loadTemporalConfig,
  loadWorkerDeployment,
  parseDuration,
  parseSize,
  type VariableName,
} from '../../../temporal.config.js';

const SERVICE = { COMPANY_DATA_BASE_URL: 'http://127.0.0.1:8089', COMPANY_DATA_TOKEN: 'tok-config-test-secret' };

/** One folder for the file's scratch files, removed at its end: the system's temp folder keeps nothing. */
const scratch = mkdtempSync(join(tmpdir(), 'config-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let scratchFiles = 0;

function tmpFile(name: string, content: string): string {
  const dir = join(scratch, String(scratchFiles++));
  mkdirSync(dir);
  const path = join(dir, name);
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
    expect(c.maxFileBytes).toBeUndefined();
    expect(c.maxPartBytes).toBe(5_000_000_000);
    expect(c.feeds).toEqual([]);
  });

  it('reads the Temporal address and namespace by the SDK conventions', () => {
    const c = loadConfig({ TEMPORAL_ADDRESS: 'temporal.internal:7233', TEMPORAL_NAMESPACE: 'imports' });
    expect(c.temporal.connection.address).toBe('temporal.internal:7233');
    expect(c.temporal.namespace).toBe('imports');
  });

  it('reads the job records’ lease, lag, delivery bound and release check, 10 s, 15 s, 16 min and 1 h unless set', () => {
    expect(loadConfig({}).jobRecord).toEqual({
      leaseMs: 10_000,
      lagMs: 15_000,
      deliveryBoundMs: 960_000,
      releaseCheckMs: 3_600_000,
    });
    expect(
      loadConfig({
        IMPORT_RECORD_LEASE: '3s',
        IMPORT_RECORD_LAG: '0',
        IMPORT_DELIVERY_BOUND: '2m',
        IMPORT_RECORD_RELEASE_CHECK: '5s',
      }).jobRecord,
    ).toEqual({ leaseMs: 3_000, lagMs: 0, deliveryBoundMs: 120_000, releaseCheckMs: 5_000 });
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
    [{ IMPORT_MAX_FILE_BYTES: '5 parsecs' }, /^IMPORT_MAX_FILE_BYTES must be a size/],
    [{ IMPORT_MAX_FILE_BYTES: '0' }, /^IMPORT_MAX_FILE_BYTES must be a size of at least 1 byte/],
    [{ IMPORT_MAX_PART_BYTES: '5000000001' }, /^IMPORT_MAX_PART_BYTES must be a size from 1 byte to 5GB/],
    [{ IMPORT_MAX_PART_BYTES: '5GiB' }, /^IMPORT_MAX_PART_BYTES must be a size from 1 byte to 5GB/],
    [{ S3_ENDPOINT: 'ftp://files' }, /^S3_ENDPOINT must be an http\(s\) URL/],
    [{ S3_FORCE_PATH_STYLE: 'maybe' }, /^S3_FORCE_PATH_STYLE must be true or false/],
    [{ IMPORT_TENANT: 'has space' }, /^IMPORT_TENANT must be 1-64 letters/],
    [{ WORKER_METRICS_PORT: '70000' }, /^WORKER_METRICS_PORT must be a whole number from 0 to 65535/],
    [{ WORKER_HEALTH_PORT: '-1' }, /^WORKER_HEALTH_PORT must be a whole number from 0 to 65535/],
    [
      { WORKER_HTTP_HOST: 'localhost' },
      /^WORKER_HTTP_HOST must be an IP address such as 0.0.0.0, 127.0.0.1 or ::; got "localhost"/,
    ],
    [{ LOG_LEVEL: 'LOUD' }, /^LOG_LEVEL must be one of TRACE, DEBUG, INFO, WARN, ERROR/],
    [{ TEMPORAL_TLS: 'maybe' }, /^TEMPORAL_TLS must be true, false, 1 or 0; got "maybe"/],
    [{ TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml' }, /^TEMPORAL_CONFIG_FILE must be a readable file/],
    [{ WORKFLOW_BUNDLE_PATH: '/nonexistent/bundle.js' }, /^WORKFLOW_BUNDLE_PATH must be a readable file/],
    [{ TEMPORAL_ADDRESS: 'not an address' }, /^TEMPORAL_ADDRESS must be host:port, e.g. temporal.internal:7233/],
    [{ TEMPORAL_ADDRESS: 'http://temporal:7233' }, /^TEMPORAL_ADDRESS must be host:port/],
    [{ TEMPORAL_ADDRESS: 'temporal:0' }, /^TEMPORAL_ADDRESS must be host:port/],
    [{ WORKER_CONNECT_TIMEOUT: 'forever' }, /^WORKER_CONNECT_TIMEOUT must be a duration/],
    [{ IMPORT_RECORD_LEASE: '1s' }, /^IMPORT_RECORD_LEASE must be a duration from 2s to 10m; got "1s"/],
    [{ IMPORT_RECORD_LEASE: 'soon' }, /^IMPORT_RECORD_LEASE must be a duration from 2s to 10m/],
    [{ IMPORT_RECORD_LAG: '2h' }, /^IMPORT_RECORD_LAG must be a duration from 0 to 1h; got "2h"/],
    [{ IMPORT_DELIVERY_BOUND: '2h' }, /^IMPORT_DELIVERY_BOUND must be a duration from 0 to 1h; got "2h"/],
    [{ IMPORT_RECORD_RELEASE_CHECK: '0' }, /^IMPORT_RECORD_RELEASE_CHECK must be a duration from 1s to 1d; got "0"/],
  ])('%o', (env, message) => {
    const err = errorOf(() => loadConfig(env));
    expect(err.message).toMatch(message);
    expect(err.message.split('\n')).toHaveLength(1);
  });

  it('reads IMPORT_JOB_TIMEOUT for the inputs the CLI builds, refusing what no import could take', () => {
    expect(loadInputDefaults({})).toEqual({ tenant: 'default', jobTimeoutMs: 24 * 3_600_000 });
    expect(loadInputDefaults({ IMPORT_TENANT: 'acme', IMPORT_JOB_TIMEOUT: '90m' })).toEqual({
      tenant: 'acme',
      jobTimeoutMs: 90 * 60_000,
    });
    for (const text of ['-1h', '0', '0.1ms', '999999999999999d']) {
      const err = errorOf(() => loadInputDefaults({ IMPORT_JOB_TIMEOUT: text }));
      expect(err.message).toMatch(/^IMPORT_JOB_TIMEOUT must be a duration such as 30s, 5m, 24h/);
    }
    // The worker does not read it: a typo there never stops a worker.
    expect(() => loadConfig({ IMPORT_JOB_TIMEOUT: 'soon' })).not.toThrow();
  });

  it('takes LOG_LEVEL in any case', () => {
    for (const text of ['info', 'Info', 'INFO']) expect(loadConfig({ LOG_LEVEL: text }).worker.logLevel).toBe('INFO');
  });

  it('requires the service URL and a token when the service is needed', () => {
    expect(errorOf(() => loadConfig({}, { needsService: true })).message).toMatch(/^COMPANY_DATA_BASE_URL must be/);
    expect(
      errorOf(() => loadConfig({ COMPANY_DATA_BASE_URL: 'https://api.example.com' }, { needsService: true })).message,
    ).toBe(
      'exactly one of COMPANY_DATA_TOKEN, COMPANY_DATA_TOKEN_FILE, COMPANY_DATA_CLIENT_ID must be set: the worker needs one way to get its service token; none is set',
    );
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
      loadConfig(
        { COMPANY_DATA_BASE_URL: SERVICE.COMPANY_DATA_BASE_URL, COMPANY_DATA_TOKEN_FILE: '/nonexistent/token' },
        { needsService: true },
      ),
    );
    expect(err.message).toMatch(/^COMPANY_DATA_TOKEN_FILE must be a readable file.*\/nonexistent\/token/);
  });
});

describe('Worker Versioning: WORKER_DEPLOYMENT_NAME and WORKER_BUILD_ID', () => {
  it('leaves the worker unversioned when neither is set (or both are blank)', () => {
    expect(loadConfig({}).worker.deployment).toBeUndefined();
    expect(loadWorkerDeployment({ WORKER_DEPLOYMENT_NAME: ' ', WORKER_BUILD_ID: '' })).toBeUndefined();
  });

  it('joins the deployment version the two name', () => {
    const env = { WORKER_DEPLOYMENT_NAME: 'bulk-import', WORKER_BUILD_ID: '1.4.0+g3f2a9c1' };
    expect(loadConfig(env).worker.deployment).toEqual({ deploymentName: 'bulk-import', buildId: '1.4.0+g3f2a9c1' });
  });

  it.each([
    [
      { WORKER_DEPLOYMENT_NAME: 'bulk-import' },
      'WORKER_DEPLOYMENT_NAME and WORKER_BUILD_ID must be set together (Worker Versioning) or both left unset; WORKER_DEPLOYMENT_NAME is set, WORKER_BUILD_ID is not',
    ],
    [
      { WORKER_BUILD_ID: 'v2' },
      'WORKER_DEPLOYMENT_NAME and WORKER_BUILD_ID must be set together (Worker Versioning) or both left unset; WORKER_BUILD_ID is set, WORKER_DEPLOYMENT_NAME is not',
    ],
  ])('refuses one without the other: %o', (env, message) => {
    expect(errorOf(() => loadConfig(env)).message).toBe(message);
  });

  it('reads the notification webhook, and refuses a secret file with no webhook to sign for', () => {
    const secretFile = fileURLToPath(import.meta.url);
    expect(loadConfig({}).worker.notify).toBeUndefined();
    expect(
      loadConfig({ NOTIFY_WEBHOOK_URL: 'https://hooks.example.com/x', NOTIFY_WEBHOOK_SECRET_FILE: secretFile }).worker
        .notify,
    ).toEqual({
      url: 'https://hooks.example.com/x',
      secretFile,
    });
    expect(errorOf(() => loadConfig({ NOTIFY_WEBHOOK_SECRET_FILE: secretFile })).message).toBe(
      'NOTIFY_WEBHOOK_SECRET_FILE is set but NOTIFY_WEBHOOK_URL is not: set the webhook, or unset the secret file',
    );
  });

  it.each([
    [
      { WORKER_DEPLOYMENT_NAME: 'bulk.import', WORKER_BUILD_ID: 'v1' },
      /^WORKER_DEPLOYMENT_NAME must be .*no "\." or ":"/,
    ],
    [{ WORKER_DEPLOYMENT_NAME: 'bulk:import', WORKER_BUILD_ID: 'v1' }, /^WORKER_DEPLOYMENT_NAME must be/],
    [
      { WORKER_DEPLOYMENT_NAME: '__internal', WORKER_BUILD_ID: 'v1' },
      /^WORKER_DEPLOYMENT_NAME must be .*not starting with "__"/,
    ],
    [{ WORKER_DEPLOYMENT_NAME: 'bulk-import', WORKER_BUILD_ID: 'v 1' }, /^WORKER_BUILD_ID must be 1-200 letters/],
    [{ WORKER_DEPLOYMENT_NAME: 'bulk-import', WORKER_BUILD_ID: '__v1' }, /^WORKER_BUILD_ID must be/],
  ])('refuses what the server would refuse: %o', (env, message) => {
    const err = errorOf(() => loadConfig(env));
    expect(err.message).toMatch(message);
    expect(err.message.split('\n')).toHaveLength(1);
  });

  it("is the worker's business only: the CLI connects whatever they hold", () => {
    expect(loadClientConfig({ WORKER_BUILD_ID: 'v2' }).temporal.taskQueue).toBe('bulk-import');
  });
});

describe('each caller reads only what it uses', () => {
  const workerTypos = { UPLOAD_PART_SIZE: '8mb', LOG_LEVEL: 'loud', WORKER_METRICS_PORT: 'none' };

  it('lets the CLI connect whatever the worker-only variables hold', () => {
    const c = loadClientConfig({ ...workerTypos, TEMPORAL_ADDRESS: '[::1]:7233', IMPORT_TENANT: 'acme' });
    expect(c.temporal.connection.address).toBe('[::1]:7233');
    expect(c.tenant).toBe('acme');
  });

  it('still stops the worker on each of them', () => {
    expect(errorOf(() => loadConfig(workerTypos)).message).toMatch(/^UPLOAD_PART_SIZE must be a size/);
  });

  it('reads budgets and feeds on their own', () => {
    expect(loadBudgetSettings({ ...workerTypos, IMPORT_BUDGET_READ_DAILY: '10' }).limits.jobStatus).toBe(10);
    expect(loadFeeds(workerTypos)).toEqual([]);
  });

  it('accepts TLS switches the SDK understands', () => {
    expect(loadTemporalConfig({ TEMPORAL_TLS: '1' }).connection.tls).toEqual({});
    expect(loadTemporalConfig({ TEMPORAL_TLS: 'false' }).connection.tls).toBe(false);
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

  it('reads a token file, so a sidecar can rotate it', () => {
    const path = tmpFile('token', 'from-file\n');
    const c = loadConfig(
      { COMPANY_DATA_BASE_URL: SERVICE.COMPANY_DATA_BASE_URL, COMPANY_DATA_TOKEN_FILE: path },
      { needsService: true },
    );
    expect(c.service?.token).toEqual({ kind: 'file', path });
  });

  it('listens for metrics and health on every IPv4 interface unless told otherwise', () => {
    expect(loadConfig({}).worker).toMatchObject({ metricsPort: 9464, healthPort: 9465, httpHost: '0.0.0.0' });
    expect(loadConfig({ WORKER_HTTP_HOST: '::1', WORKER_HEALTH_PORT: '0' }).worker).toMatchObject({
      healthPort: 0,
      httpHost: '::1',
    });
  });
});

describe('the client-credentials token source', () => {
  const BASE = { COMPANY_DATA_BASE_URL: 'https://api.example.com/company' };
  const SECRET = 'client-secret-7d1e';

  it('exchanges at the service host, and the secret is redacted in every form of the configuration', () => {
    const c = loadConfig(
      { ...BASE, COMPANY_DATA_CLIENT_ID: 'worker-1', COMPANY_DATA_CLIENT_SECRET: SECRET },
      { needsService: true },
    );
    expect(c.service?.token).toMatchObject({
      kind: 'client-credentials',
      tokenUrl: 'https://api.example.com/company/auth/v1/token',
      clientId: 'worker-1',
    });
    expect(JSON.stringify(c)).not.toContain(SECRET);
    expect(inspect(c, { depth: 10 })).not.toContain(SECRET);
  });

  it('takes the secret from a file', () => {
    const file = tmpFile('secret', `${SECRET}\n`);
    const c = loadConfig(
      { ...BASE, COMPANY_DATA_CLIENT_ID: 'worker-1', COMPANY_DATA_CLIENT_SECRET_FILE: file },
      { needsService: true },
    );
    expect(c.service?.token).toMatchObject({ kind: 'client-credentials', clientSecret: { file } });
  });

  it.each([
    [
      { COMPANY_DATA_TOKEN: 't', COMPANY_DATA_CLIENT_ID: 'c', COMPANY_DATA_CLIENT_SECRET: SECRET },
      'COMPANY_DATA_TOKEN and COMPANY_DATA_CLIENT_ID are set',
    ],
    [
      { COMPANY_DATA_TOKEN: 't', COMPANY_DATA_TOKEN_FILE: '/etc/hostname' },
      'COMPANY_DATA_TOKEN and COMPANY_DATA_TOKEN_FILE are set',
    ],
    [
      { COMPANY_DATA_CLIENT_ID: 'c' },
      'COMPANY_DATA_CLIENT_SECRET or COMPANY_DATA_CLIENT_SECRET_FILE must be set with COMPANY_DATA_CLIENT_ID; neither is set',
    ],
    [
      {
        COMPANY_DATA_CLIENT_ID: 'c',
        COMPANY_DATA_CLIENT_SECRET: SECRET,
        COMPANY_DATA_CLIENT_SECRET_FILE: '/etc/hostname',
      },
      'both are set',
    ],
    [
      { COMPANY_DATA_CLIENT_ID: 'c', COMPANY_DATA_CLIENT_SECRET_FILE: '/nonexistent/secret' },
      'COMPANY_DATA_CLIENT_SECRET_FILE must be a readable file (holding the client secret); got "/nonexistent/secret"',
    ],
  ])('refuses %o with one clear line that never quotes the secret', (env, message) => {
    const err = errorOf(() => loadConfig({ ...BASE, ...env }, { needsService: true }));
    expect(err.message).toContain(message);
    expect(err.message).not.toContain(SECRET);
    expect(err.message.split('\n')).toHaveLength(1);
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
    [{ entityType: 'Activity' }, /feeds\[0\]: activityTypeId is required when entityType is Activity/],
    [{ listAction: 'merge' }, /feeds\[0\]: listAction must be one of replace, insert, delete, noop, got "merge"/],
    [{ tenant: 'has space' }, /feeds\[0\]: tenant must be 1-64 characters/],
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

  it('refuses a source id too large for a JSON number, quoting the digits the file holds', () => {
    const mappings = {
      objectType: 'account',
      mappings: [{ sourceFieldLabel: 'E', serviceFieldName: 'e', dataType: 'string' }],
    };
    const text = JSON.stringify([{ ...feed, fieldMappings: { sourceId: 1, ...mappings } }]).replace(
      '"sourceId":1',
      '"sourceId":9007199254740993',
    );
    const err = errorOf(() => loadConfig({ IMPORT_FEEDS_FILE: tmpFile('f.json', text) }));
    expect(err.message).toMatch(/feeds\[0\]\.fieldMappings\.sourceId 9007199254740993 is too large for a JSON number/);
    expect(err.message).toContain('"sourceId": "9007199254740993"');
  });

  it('keeps a source id written as a string exact', () => {
    const set = {
      sourceId: '9007199254740993',
      objectType: 'account',
      mappings: [{ sourceFieldLabel: 'E', serviceFieldName: 'e', dataType: 'string' }],
    };
    const c = loadConfig({ IMPORT_FEEDS_FILE: tmpFile('f.json', JSON.stringify([{ ...feed, fieldMappings: set }])) });
    expect(c.feeds[0]?.fieldMappings?.sourceId).toBe('9007199254740993');
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

describe('docs/configuration.md documents every configuration variable', () => {
  const reference = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
  it.each(Object.keys(CONFIG_VARIABLES) as VariableName[])('%s, with its declared meaning and default', (name) => {
    const shownDefault = documentedDefault(name);
    const row = `| \`${name}\` | ${CONFIG_VARIABLES[name].doc}.${shownDefault ? ` Default ${shownDefault}` : ''} |`;
    expect(reference.split('\n')).toContain(row);
  });
});
