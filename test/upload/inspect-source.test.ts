import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeInspectSource } from '../../activities/inspect-source.js';
import type { InspectSourceInput, InspectSourceResult } from '../../workflows/policy/activity-contracts.js';
import type { FieldMapping } from '../../workflows/policy/import-input.js';
import { failureOf, runActivity } from '../support/activities.js';
import { BUCKET, startWorld, type UploadWorld } from './environment.js';

let world: UploadWorld;

beforeAll(async () => {
  world = await startWorld();
});

afterAll(async () => {
  await world?.close();
});

function mapping(label: string): FieldMapping {
  return { sourceFieldLabel: label, serviceFieldName: label.toLowerCase().replace(/\W/g, '_'), dataType: 'string' };
}

function inspect(input: InspectSourceInput, maxFileBytes = 5 * 1024 ** 3): Promise<InspectSourceResult> {
  return runActivity(makeInspectSource({ s3: world.source, maxFileBytes }), input).result;
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
    const result = await inspectFile('bom.csv', '\uFEFFEmail,First Name\r\nx@y.z,X\r\n');
    expect(result.header).toEqual(['Email', 'First Name']);
  });

  it('reads quoted labels, with delimiters and line breaks inside the quotes', async () => {
    const result = await inspectFile('quoted.csv', '"Name, full","Notes\nmultiline","Say ""hi"""\n1,2,3\n');
    expect(result.header).toEqual(['Name, full', 'Notes\nmultiline', 'Say "hi"']);
  });

  it.each([
    ['semicolon', ';'],
    ['tab', '\t'],
    ['pipe', '|'],
  ])('detects a %s delimiter', async (_name, delimiter) => {
    const result = await inspectFile(`delimited-${_name}.csv`, ['Email', 'First Name', 'Last Name'].join(delimiter));
    expect(result.header).toEqual(['Email', 'First Name', 'Last Name']);
  });

  it('reads a header row longer than the first 64 KiB sample', async () => {
    const labels = Array.from({ length: 9000 }, (_, i) => `Column number ${i}`);
    const result = await inspectFile('wide.csv', `${labels.join(',')}\n${labels.map(() => 'x').join(',')}\n`);
    expect(result.header).toEqual(labels);
  });

  it('warns about header columns no mapping covers', async () => {
    const result = await inspectFile('extra-column.csv', 'Account Name,Account Domain,Notes\n', [
      mapping('Account Name'),
      mapping('Account Domain'),
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
    expect(err.message).toContain('s3://no-such-bucket/a.csv');
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

  it('fails with InvalidCsvHeader when the header is not UTF-8', async () => {
    const err = await failureOf(inspectFile('latin1.csv', Buffer.from('Stra\xdfe,Ort\n', 'latin1')));
    expect(err.type).toBe('InvalidCsvHeader');
    expect(err.message).toContain('not valid UTF-8');
  });

  it('fails with InvalidCsvHeader when no header row ends within 1 MiB', async () => {
    const err = await failureOf(inspectFile('one-long-line.csv', 'x'.repeat(1024 * 1024 + 10)));
    expect(err.type).toBe('InvalidCsvHeader');
    expect(err.message).toContain('does not end within the first 1048576 bytes');
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
