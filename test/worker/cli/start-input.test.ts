import { describe, expect, it } from 'vitest';
import { CliError } from '../../../worker/cli/cli-error.js';
import { destructiveListActionWarning, importInputFromFlags } from '../../../worker/cli/start-input.js';

const files: Record<string, string> = {
  'mappings.json': JSON.stringify({
    sourceId: '9007199254740993',
    objectType: 'account',
    mappings: [{ sourceFieldLabel: 'Account Name', serviceFieldName: 'name', dataType: 'string' }],
  }),
  'rounded-mappings.json':
    '{ "sourceId": 9007199254740993, "objectType": "account", "mappings": [{ "sourceFieldLabel": "A", "serviceFieldName": "a", "dataType": "string" }] }',
  'input.json': JSON.stringify({
    source: { bucket: 'crm', key: 'a.csv' },
    dataImportName: 'A',
    entityType: 'Account',
    listAction: 'insert',
  }),
  'timed-input.json': JSON.stringify({
    source: { bucket: 'crm', key: 'a.csv' },
    dataImportName: 'A',
    entityType: 'Account',
    jobTimeoutMs: 60_000,
  }),
  'broken.json': '{ "source": ',
  'bad-input.json': JSON.stringify({ source: { bucket: 'crm' }, dataImportName: 'A', entityType: 'Thing' }),
};
const read = (path: string) => {
  const text = files[path];
  if (text === undefined) throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
  return text;
};

/** What the CLI reads from IMPORT_TENANT and IMPORT_JOB_TIMEOUT (the latter at its default). */
const inTenant = (tenant: string) => ({ tenant, jobTimeoutMs: 86_400_000 });

function problemOf(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(CliError);
    return (err as Error).message;
  }
  throw new Error('expected a CliError');
}

describe('importInputFromFlags', () => {
  it('builds the input from flags, naming the job after the file and filling the default tenant and the trigger', () => {
    const input = importInputFromFlags(
      { bucket: 'crm', key: 'drops/accounts.csv', entityType: 'Account', listAction: 'insert' },
      inTenant('acme'),
      read,
    );
    expect(input).toEqual({
      source: { bucket: 'crm', key: 'drops/accounts.csv' },
      dataImportName: 'accounts.csv',
      entityType: 'Account',
      listAction: 'insert',
      tenant: 'acme',
      jobTimeoutMs: 86_400_000,
      trigger: 'cli',
    });
  });

  it("writes IMPORT_JOB_TIMEOUT into the input, unless an --input file names the import's own", () => {
    const defaults = { tenant: 'acme', jobTimeoutMs: 7_200_000 };
    const flags = { bucket: 'crm', key: 'a.csv', entityType: 'Account' };
    expect(importInputFromFlags(flags, defaults, read).jobTimeoutMs).toBe(7_200_000);
    expect(importInputFromFlags({ input: 'input.json' }, defaults, read).jobTimeoutMs).toBe(7_200_000);
    expect(importInputFromFlags({ input: 'timed-input.json' }, defaults, read).jobTimeoutMs).toBe(60_000);
  });

  it('reads the mappings from their file, keeping the int64 id exact as text', () => {
    const input = importInputFromFlags(
      { bucket: 'crm', key: 'accounts.csv', entityType: 'Account', mappingsFile: 'mappings.json' },
      inTenant('acme'),
      read,
    );
    expect(input.fieldMappings?.sourceId).toBe('9007199254740993');
  });

  it('reads the activity type id as a number', () => {
    const input = importInputFromFlags(
      {
        bucket: 'crm',
        key: 'calls.csv',
        name: 'Calls',
        entityType: 'Activity',
        activityTypeId: '42',
        tenant: 'other',
        onFailure: 'await-retry',
        importSource: 'CSV',
      },
      inTenant('acme'),
      read,
    );
    expect(input).toMatchObject({
      activityTypeId: 42,
      tenant: 'other',
      onFailure: 'await-retry',
      dataImportName: 'Calls',
    });
  });

  it('refuses a source id written as a JSON number too large to stay exact, quoting the digits the file holds', () => {
    expect(
      problemOf(() =>
        importInputFromFlags(
          { bucket: 'b', key: 'k', entityType: 'Account', mappingsFile: 'rounded-mappings.json' },
          inTenant('t'),
          read,
        ),
      ),
    ).toMatch(
      /^fieldMappings\.sourceId 9007199254740993 is too large for a JSON number \(it would be rounded\); write it as a string: "sourceId": "9007199254740993"$/,
    );
  });

  it('names the flag of every problem, in one message', () => {
    const message = problemOf(() =>
      importInputFromFlags(
        { bucket: 'b', key: 'k.csv', entityType: 'Activity', tenant: 'bad tenant!' },
        inTenant('acme'),
        read,
      ),
    );
    expect(message).toBe(
      'invalid import input: --activity-type-id: activityTypeId is required when entityType is Activity; --tenant: tenant must be 1-64 characters of letters, digits, ".", "_" or "-"',
    );
  });

  it.each([
    ['a'.repeat(1_001), 'is 1001 bytes in UTF-8'],
    // 334 three-byte characters: within 1,000 characters, past 1,000 bytes.
    ['導'.repeat(334), 'is 1002 bytes in UTF-8'],
    ['  ', 'must not be empty'],
  ])('refuses a --workflow-id Temporal would refuse, naming the limit, before reading anything', (id, why) => {
    const reads: string[] = [];
    const counting = (path: string) => {
      reads.push(path);
      return read(path);
    };
    const start = () =>
      importInputFromFlags({ input: 'input.json', workflowId: id }, { tenant: 'default', jobTimeoutMs: 1 }, counting);
    expect(start).toThrow(CliError);
    expect(start).toThrow(`--workflow-id ${why}`);
    if (why !== 'must not be empty') expect(start).toThrow('at most 1,000 bytes');
    expect(reads).toEqual([]);
  });

  it('takes a --workflow-id of exactly 1,000 bytes', () => {
    const id = `${'é'.repeat(499)}ab`;
    expect(() =>
      importInputFromFlags({ input: 'input.json', workflowId: id }, { tenant: 'default', jobTimeoutMs: 1 }, read),
    ).not.toThrow();
  });

  it('rejects a non-numeric activity type id', () => {
    expect(
      problemOf(() =>
        importInputFromFlags(
          { bucket: 'b', key: 'k', entityType: 'Activity', activityTypeId: '4x' },
          inTenant('t'),
          read,
        ),
      ),
    ).toContain('--activity-type-id: activityTypeId must be a positive int32');
  });

  it('says which flags are required when they are missing', () => {
    expect(problemOf(() => importInputFromFlags({ bucket: 'b' }, inTenant('t'), read))).toBe(
      'start needs --bucket, --key and --entity-type (or --input file.json); see start --help',
    );
  });

  it("reads a whole input from --input and validates it with the workflow's rules", () => {
    expect(importInputFromFlags({ input: 'input.json' }, inTenant('acme'), read)).toMatchObject({
      tenant: 'acme',
      listAction: 'insert',
    });
    expect(problemOf(() => importInputFromFlags({ input: 'bad-input.json' }, inTenant('acme'), read))).toMatch(
      /^invalid import input: --input bad-input\.json: source must be \{ bucket, key \}.*; entityType must be one of Account, Opportunity, Person, Activity, got "Thing"$/,
    );
  });

  it('refuses --input together with input flags', () => {
    expect(problemOf(() => importInputFromFlags({ input: 'input.json', bucket: 'b' }, inTenant('t'), read))).toBe(
      'use either --input or the input flags, not both (got --input and --bucket)',
    );
  });

  it('reports an unreadable or malformed file by flag and path', () => {
    expect(problemOf(() => importInputFromFlags({ input: 'missing.json' }, inTenant('t'), read))).toBe(
      '--input missing.json: cannot read the file (ENOENT)',
    );
    expect(problemOf(() => importInputFromFlags({ input: 'broken.json' }, inTenant('t'), read))).toMatch(
      /^--input broken\.json: not valid JSON/,
    );
    expect(
      problemOf(() =>
        importInputFromFlags(
          { bucket: 'b', key: 'k', entityType: 'Account', mappingsFile: 'nope' },
          inTenant('t'),
          read,
        ),
      ),
    ).toBe('--mappings-file nope: cannot read the file (ENOENT)');
  });
});

describe('destructiveListActionWarning', () => {
  const base = { source: { bucket: 'b', key: 'k' }, dataImportName: 'x', entityType: 'Account' as const };

  it('warns for replace and delete only', () => {
    expect(destructiveListActionWarning({ ...base, listAction: 'replace' })).toMatch(
      /^warning: listAction replace removes every member/,
    );
    expect(destructiveListActionWarning({ ...base, listAction: 'delete' })).toMatch(
      /^warning: listAction delete removes/,
    );
    expect(destructiveListActionWarning({ ...base, listAction: 'insert' })).toBeUndefined();
    expect(destructiveListActionWarning(base)).toBeUndefined();
  });
});
