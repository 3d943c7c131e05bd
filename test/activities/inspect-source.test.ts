import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type InspectSourceDeps, makeInspectSource } from '../../activities/inspect-source.js';
import { ReferenceCache } from '../../activities/reference-cache.js';
import type { InspectSourceInput, InspectSourceResult } from '../../workflows/contracts/activities.js';
import type { EntityType, FieldMapping } from '../../workflows/contracts/import-input.js';
import { failureOf, runActivity } from '../support/activities.js';
import { InMemoryBudgetGate, SPEC_BUDGET_SETTINGS } from '../support/in-memory-budget-gate.js';
import { BUCKET, startWorld, type UploadWorld } from './upload/environment.js';

let world: UploadWorld;

beforeAll(async () => {
  world = await startWorld();
});

afterAll(async () => {
  await world?.close();
});

function mapping(label: string, serviceFieldName = label.toLowerCase().replace(/\W/g, '_')): FieldMapping {
  return { sourceFieldLabel: label, serviceFieldName, dataType: 'string' };
}

function deps(overrides: Partial<InspectSourceDeps> = {}): InspectSourceDeps {
  return {
    s3: world.source,
    maxFileBytes: 5 * 1024 ** 3,
    service: world.service,
    budget: world.budget,
    reference: new ReferenceCache(),
    ...overrides,
  };
}

type Where = Pick<InspectSourceInput, 'bucket' | 'key'> & Partial<InspectSourceInput>;

function withDefaults(input: Where): InspectSourceInput {
  return { tenant: 'acme', entityType: 'Account', ...input };
}

function inspect(input: Where, maxFileBytes = 5 * 1024 ** 3): Promise<InspectSourceResult> {
  return runActivity(makeInspectSource(deps({ maxFileBytes })), withDefaults(input)).result;
}

/** The simulator's requests to `endpoint` so far. */
function requestsTo(endpoint: string): number {
  return world.sim.requests().filter((r) => r.endpoint === endpoint).length;
}

async function inspectFile(key: string, body: string | Uint8Array, mappings?: FieldMapping[]) {
  await world.put(key, body);
  return inspect({ bucket: BUCKET, key, mappings });
}

describe('inspectSource reads the file facts and its header row', () => {
  it('returns size, ETag and header labels of a plain CSV', async () => {
    const body = 'Account Name,Account Domain\nAcme,acme.example\n';
    const result = await inspectFile('plain.csv', body);
    expect(result.header).toEqual(['Account Name', 'Account Domain']);
    expect(result.sizeBytes).toBe(body.length);
    expect(result.etag).toBe((await world.source.head(BUCKET, 'plain.csv')).etag);
    expect(result.warnings).toEqual([]);
  });

  it('ignores a UTF-8 byte order mark before the first label', async () => {
    const result = await inspectFile('bom.csv', '\uFEFFAccount Name,Account Domain\r\nAcme,acme.example\r\n');
    expect(result.header).toEqual(['Account Name', 'Account Domain']);
  });

  it('reads quoted labels, with delimiters and line breaks inside the quotes', async () => {
    const result = await inspectFile(
      'quoted.csv',
      '"Name, full","Notes\nmultiline","Say ""hi""",Account Name,Account Domain\n1,2,3,4,5\n',
    );
    expect(result.header).toEqual(['Name, full', 'Notes\nmultiline', 'Say "hi"', 'Account Name', 'Account Domain']);
  });

  it.each([
    ['semicolon', ';'],
    ['tab', '\t'],
    ['pipe', '|'],
  ])('detects a %s delimiter', async (_name, delimiter) => {
    const labels = ['Account Name', 'Account Domain', 'Employees'];
    const result = await inspectFile(
      `delimited-${_name}.csv`,
      `${labels.join(delimiter)}\nAcme${delimiter}acme.example${delimiter}10\n`,
    );
    expect(result.header).toEqual(labels);
  });

  it('reads a header row longer than the first 64 KiB sample', async () => {
    const labels = [...Array.from({ length: 9000 }, (_, i) => `Column number ${i}`), 'Account Name', 'Account Domain'];
    const result = await inspectFile('wide.csv', `${labels.join(',')}\n${labels.map(() => 'x').join(',')}\n`);
    expect(result.header).toEqual(labels);
  });

  it('warns about header columns no mapping covers', async () => {
    const result = await inspectFile('extra-column.csv', 'Account Name,Account Domain,Notes\nAcme,acme.example,\n', [
      mapping('Account Name', 'name'),
      mapping('Account Domain', 'domain'),
    ]);
    expect(result.warnings).toEqual(['no field mapping covers the column(s) "Notes"; the service may ignore them']);
  });
});

describe('inspectSource refuses files the service would reject, before any service call', () => {
  it('fails with SourceNotFound naming the bucket and key of a missing object', async () => {
    const err = await failureOf(inspect({ bucket: BUCKET, key: 'no/such/file.csv' }));
    expect(err.type).toBe('SourceNotFound');
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toContain(`s3://${BUCKET}/no/such/file.csv`);
  });

  it('fails with SourceNotFound when the bucket does not exist', async () => {
    const err = await failureOf(inspect({ bucket: 'no-such-bucket', key: 'a.csv' }));
    expect(err.type).toBe('SourceNotFound');
    expect(err.message).toContain('s3://no-such-bucket/a.csv: the bucket "no-such-bucket" does not exist');
  });

  it('fails with FileTooLarge naming the size and the limit', async () => {
    await world.put('large.csv', `Email\n${'a@b.c\n'.repeat(100)}`);
    const err = await failureOf(inspect({ bucket: BUCKET, key: 'large.csv' }, 500));
    expect(err.type).toBe('FileTooLarge');
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toContain('606 bytes');
    expect(err.message).toContain('limit is 500 bytes');
  });

  it('fails with EmptyFile for a zero-byte object', async () => {
    const err = await failureOf(inspectFile('empty.csv', ''));
    expect(err.type).toBe('EmptyFile');
    expect(err.nonRetryable).toBe(true);
  });

  it('fails with InvalidCsvHeader naming labels that repeat', async () => {
    const err = await failureOf(inspectFile('duplicate.csv', 'Email,First Name,Email\n'));
    expect(err.type).toBe('InvalidCsvHeader');
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toContain('repeats the label(s) "Email"');
  });

  it('fails with InvalidCsvHeader naming the column of an empty label', async () => {
    const err = await failureOf(inspectFile('empty-label.csv', 'Email,,Last Name\n'));
    expect(err.type).toBe('InvalidCsvHeader');
    expect(err.message).toContain('empty labels in column(s) 2');
  });

  it('fails with InvalidCsvHeader when the first row is blank', async () => {
    const err = await failureOf(inspectFile('blank-first-row.csv', '\nEmail\n'));
    expect(err.type).toBe('InvalidCsvHeader');
  });

  it('fails with UnreadableFile, naming the encoding to declare, when the header is not UTF-8', async () => {
    const err = await failureOf(inspectFile('latin1.csv', Buffer.from('Stra\xdfe,Ort\n', 'latin1')));
    expect(err.type).toBe('UnreadableFile');
    expect(err.message).toContain('is not UTF-8; if the file is Windows-1252 or Latin-1, declare that encoding');
  });

  it('fails with EmptyFile for a header-only file, after the header checks', async () => {
    const err = await failureOf(inspectFile('header-only.csv', 'Account Name,Account Domain\r\n'));
    expect(err.type).toBe('EmptyFile');
    expect(err.message).toContain('holds a header row and no data rows');
  });

  it('fails with InvalidCsvHeader when no header row ends within 1 MiB', async () => {
    const err = await failureOf(inspectFile('one-long-line.csv', 'x'.repeat(1024 * 1024 + 10)));
    expect(err.type).toBe('InvalidCsvHeader');
    expect(err.message).toContain('no line end in the first 1048576 characters');
  });

  it('fails with MappingMismatch naming the mapped labels the header lacks', async () => {
    const err = await failureOf(
      inspectFile('mismatch.csv', 'Account Name,Domain\n', [mapping('Account Name'), mapping('Account Domain')]),
    );
    expect(err.type).toBe('MappingMismatch');
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toContain('lacks the mapped label(s) "Account Domain"');
    expect(err.message).toContain('the header has "Account Name", "Domain"');
  });
});

describe('inspectSource checks the file against what the service requires, before any job exists', () => {
  it.each<[EntityType, string, string]>([
    ['Account', 'Account Name,Domain,Employees', '"Account Domain" (or a mapping onto "domain")'],
    ['Person', 'First Name,Last Name,E-mail,External Person Id', '"Email" (or a mapping onto "email")'],
    ['Opportunity', 'Opportunity Name,Account Name,Account Domain', '"External Opportunity ID"'],
  ])(
    'a %s file without a required label fails InvalidCsvHeader, spending no service call',
    async (entityType, header, missing) => {
      const before = world.sim.requests().length;
      await world.put(`required-${entityType}.csv`, `${header}\n1,2,3,4\n`);
      const err = await failureOf(inspect({ bucket: BUCKET, key: `required-${entityType}.csv`, entityType }));
      expect(err.type).toBe('InvalidCsvHeader');
      expect(err.nonRetryable).toBe(true);
      expect(err.message).toContain(`the header row lacks ${missing}, which ${entityType} imports require`);
      expect(world.sim.requests().length).toBe(before);
    },
  );

  it('matches required labels trimmed, after a BOM, in any case and spacing', async () => {
    await world.put('loose.csv', '\uFEFF  account   NAME , Account Domain\nAcme,acme.example\n');
    const result = await inspect({ bucket: BUCKET, key: 'loose.csv' });
    expect(result.header).toEqual(['account   NAME', 'Account Domain']);
  });

  it('takes a required field from a mapping onto its service name', async () => {
    const result = await inspectFile('mapped.csv', 'Company,Web Site\nAcme,acme.example\n', [
      mapping('Company', 'name'),
      mapping('Web Site', 'domain'),
    ]);
    expect(result.header).toEqual(['Company', 'Web Site']);
  });

  it('refuses a header that, read through the mappings, lacks a required field, spending no service call', async () => {
    const before = world.sim.requests().length;
    await world.put('half-mapped.csv', 'Company,Website\nAcme,acme.example\n');
    const err = await failureOf(
      inspect({
        bucket: BUCKET,
        key: 'half-mapped.csv',
        mappings: [mapping('Company', 'name'), mapping('Website', 'url')],
      }),
    );
    expect(err).toMatchObject({ type: 'InvalidCsvHeader', nonRetryable: true });
    expect(err.message).toContain(
      'the header row, read through the field mappings, lacks "Account Domain" (or a mapping onto "domain"), which Account imports require',
    );
    expect(err.message).toContain('add the column or map a column onto its field');
    expect(world.sim.requests().length).toBe(before);
  });

  it('reads a mapped display-name column as its mapping only', async () => {
    await world.put('remapped.csv', 'Account Name,Account Domain\nAcme,acme.example\n');
    const err = await failureOf(
      inspect({ bucket: BUCKET, key: 'remapped.csv', mappings: [mapping('Account Domain', 'website')] }),
    );
    expect(err.message).toContain('lacks "Account Domain" (or a mapping onto "domain")');
  });

  it('takes another required-field table in place of the inferred one', async () => {
    await world.put('renamed.csv', 'Company,Account Domain\nAcme,acme.example\n');
    const requiredFields = {
      Account: [{ label: 'Account Name', serviceName: 'accountName' }, { label: 'Account Domain' }],
      Person: [],
      Opportunity: [],
    };
    const input = withDefaults({ bucket: BUCKET, key: 'renamed.csv', mappings: [mapping('Company', 'accountName')] });
    const result = await runActivity(makeInspectSource(deps({ requiredFields })), input).result;
    expect(result.header).toEqual(['Company', 'Account Domain']);
    const inferred = await failureOf(inspect(input));
    expect(inferred.message).toContain('(or a mapping onto "name")');
  });

  it('an importSource the service does not list fails InvalidInput naming what it lists', async () => {
    await world.put('accounts.csv', 'Account Name,Account Domain\nAcme,acme.example\n');
    const err = await failureOf(inspect({ bucket: BUCKET, key: 'accounts.csv', importSource: '1001' }));
    expect(err.type).toBe('InvalidInput');
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toContain('importSource "1001" is not a source the service accepts for Account imports');
    expect(err.message).toContain('it lists "CSV"');
  });

  it('a listed importSource passes, in any case, and reports the read in apiCalls', async () => {
    await world.put('accounts.csv', 'Account Name,Account Domain\nAcme,acme.example\n');
    const result = await inspect({ bucket: BUCKET, key: 'accounts.csv', importSource: 'csv' });
    expect(result.apiCalls).toEqual({ listSources: 1 });
  });

  it('an Activity file without a field its type requires fails InvalidCsvHeader naming it', async () => {
    await world.put('event.csv', 'Email,Activity Date,Activity Name\nada@example.com,2026-11-22,Booth\n');
    const err = await failureOf(
      inspect({ bucket: BUCKET, key: 'event.csv', entityType: 'Activity', activityTypeId: 2 }),
    );
    expect(err.type).toBe('InvalidCsvHeader');
    expect(err.message).toContain('lacks the field(s) "Event Name" that activity type 2 (Event Visited) requires');
  });

  it('an Activity file with its required fields passes; an unknown activity type fails InvalidInput', async () => {
    await world.put('webinar.csv', 'email,Activity Date\nada@example.com,2026-11-22\n');
    const ok = await inspect({ bucket: BUCKET, key: 'webinar.csv', entityType: 'Activity', activityTypeId: 1 });
    expect(ok.apiCalls).toEqual({ activityFields: 1 });
    const err = await failureOf(
      inspect({ bucket: BUCKET, key: 'webinar.csv', entityType: 'Activity', activityTypeId: 999 }),
    );
    expect(err.type).toBe('InvalidInput');
    expect(err.message).toContain('activityTypeId 999 is not an activity type the service knows');
  });

  it('one worker reads reference data once for many imports, also concurrent ones, until the TTL passes', async () => {
    await world.put('person.csv', 'First Name,Last Name,Email,External Person Id\nAda,L,a@b.c,p1\n');
    const clock = { now: 0 };
    const inspectSource = makeInspectSource(deps({ reference: new ReferenceCache(60_000, () => clock.now) }));
    const input = withDefaults({ bucket: BUCKET, key: 'person.csv', entityType: 'Person', importSource: 'CSV' });
    const before = requestsTo('listSources');
    const results = await Promise.all(Array.from({ length: 5 }, () => runActivity(inspectSource, input).result));
    expect(requestsTo('listSources') - before).toBe(1);
    expect(results.filter((r) => r.apiCalls?.listSources === 1)).toHaveLength(1);
    clock.now += 59_999;
    await runActivity(inspectSource, input).result;
    expect(requestsTo('listSources') - before).toBe(1);
    clock.now += 1;
    await runActivity(inspectSource, input).result;
    expect(requestsTo('listSources') - before).toBe(2);
  });

  it('a spent metadata budget is a budget wait, not a failed import', async () => {
    await world.put('accounts.csv', 'Account Name,Account Domain\nAcme,acme.example\n');
    const budget = new InMemoryBudgetGate(
      { ...SPEC_BUDGET_SETTINGS, limits: { ...SPEC_BUDGET_SETTINGS.limits, listSources: 0 } },
      Date.now,
      'acme',
    );
    const input = withDefaults({ bucket: BUCKET, key: 'accounts.csv', importSource: 'CSV' });
    const err = await failureOf(runActivity(makeInspectSource(deps({ budget })), input).result);
    expect(err.type).toBe('BudgetExhausted');
  });
});
