import { describe, expect, it } from 'vitest';
import {
  fieldMappingProblems,
  type ImportFileInput,
  importInputProblems,
  normaliseImportInput,
} from '../../../workflows/contracts/import-input.js';

const valid: ImportFileInput = {
  source: { bucket: 'imports', key: 'accounts.csv' },
  dataImportName: 'Accounts',
  entityType: 'Account',
};
const mappings = {
  sourceId: '9007199254740993',
  objectType: 'account',
  mappings: [{ sourceFieldLabel: 'Name', serviceFieldName: 'name', dataType: 'string' }],
};
const problemsWith = (patch: Record<string, unknown>) => importInputProblems({ ...valid, ...patch });

describe('importFile input validation', () => {
  it('accepts a minimal input and a full one', () => {
    expect(importInputProblems(valid)).toEqual([]);
    expect(
      importInputProblems({
        ...valid,
        entityType: 'Activity',
        activityTypeId: 7,
        importSource: 'CSV',
        listAction: 'insert',
        tenant: 'acme.eu-1',
        onFailure: 'await-retry',
        awaitRetryTimeoutMs: 60_000,
        jobTimeoutMs: 3_600_000,
      }),
    ).toEqual([]);
    expect(importInputProblems({ ...valid, fieldMappings: mappings })).toEqual([]);
    expect(
      importInputProblems({ ...valid, entityType: 'Person', fieldMappings: { ...mappings, objectType: 'person' } }),
    ).toEqual([]);
  });

  it('rejects a non-object input', () => {
    expect(importInputProblems(null)).toEqual(['input must be a JSON object']);
    expect(importInputProblems([valid])).toEqual(['input must be a JSON object']);
  });

  it('requires source { bucket, key }', () => {
    expect(problemsWith({ source: undefined })).toEqual(['source must be { bucket, key } with non-empty strings']);
    expect(problemsWith({ source: { bucket: 'b', key: ' ' } })).toEqual([
      'source must be { bucket, key } with non-empty strings',
    ]);
  });

  it('requires a dataImportName of at most 200 characters', () => {
    expect(problemsWith({ dataImportName: '' })).toEqual(['dataImportName must be a non-empty string']);
    expect(problemsWith({ dataImportName: 'x'.repeat(201) })).toEqual([
      'dataImportName must be at most 200 characters',
    ]);
  });

  it('requires a known entityType', () => {
    expect(problemsWith({ entityType: 'Lead' })).toEqual([
      'entityType must be one of Account, Opportunity, Person, Activity, got "Lead"',
    ]);
  });

  it('rejects an empty importSource', () => {
    expect(problemsWith({ importSource: '' })).toEqual([
      'importSource, when given, must be a non-empty string (the service default is CSV)',
    ]);
  });

  it('requires activityTypeId to be a positive int32, and present for Activity', () => {
    for (const bad of [0, -1, 1.5, 2147483648, '7']) {
      expect(problemsWith({ activityTypeId: bad })).toEqual(['activityTypeId must be a positive int32']);
    }
    expect(problemsWith({ entityType: 'Activity' })).toEqual([
      'activityTypeId is required when entityType is Activity',
    ]);
  });

  it('requires a known listAction', () => {
    expect(problemsWith({ listAction: 'append' })).toEqual([
      'listAction must be one of replace, insert, delete, noop, got "append"',
    ]);
  });

  it('checks every field mapping rule', () => {
    expect(fieldMappingProblems('x')).toEqual(['fieldMappings must be an object { sourceId, objectType, mappings }']);
    expect(fieldMappingProblems({ ...mappings, sourceId: 'abc' })).toEqual([
      'fieldMappings.sourceId must be the custom source\'s int64 id as a decimal string, got "abc"',
    ]);
    expect(fieldMappingProblems({ ...mappings, objectType: 'company' })).toEqual([
      'fieldMappings.objectType must be one of account, person, got "company"',
    ]);
    expect(fieldMappingProblems({ ...mappings, mappings: [] })).toEqual([
      'fieldMappings.mappings must be a non-empty array of { sourceFieldLabel, serviceFieldName, dataType }',
    ]);
    expect(fieldMappingProblems({ ...mappings, mappings: [42] })).toEqual([
      'fieldMappings.mappings[0] must be an object { sourceFieldLabel, serviceFieldName, dataType }',
    ]);
    expect(
      fieldMappingProblems({
        ...mappings,
        mappings: [{ sourceFieldLabel: 'A', serviceFieldName: '', dataType: 'string' }],
      }),
    ).toEqual(['fieldMappings.mappings[0].serviceFieldName must be a non-empty string']);
    const twice = { sourceFieldLabel: 'Name', serviceFieldName: 'name', dataType: 'string' };
    expect(fieldMappingProblems({ ...mappings, mappings: [twice, twice] })).toEqual([
      'fieldMappings.mappings[1].sourceFieldLabel "Name" is mapped twice',
    ]);
    expect(problemsWith({ fieldMappings: { ...mappings, objectType: 'x' } })).toHaveLength(1);
  });

  it('accepts only the dataTypes the service documents', () => {
    for (const dataType of ['string', 'number', 'boolean', 'date']) {
      const set = { ...mappings, mappings: [{ sourceFieldLabel: 'A', serviceFieldName: 'a', dataType }] };
      expect(fieldMappingProblems(set)).toEqual([]);
    }
    const typo = { ...mappings, mappings: [{ sourceFieldLabel: 'A', serviceFieldName: 'a', dataType: 'strin' }] };
    expect(fieldMappingProblems(typo)).toEqual([
      'fieldMappings.mappings[0].dataType must be one of string, number, boolean, date (the types the service documents), got "strin"',
    ]);
  });

  it('refuses a mapping set whose object type the entity type never reads', () => {
    expect(problemsWith({ entityType: 'Person', fieldMappings: mappings })).toEqual([
      'fieldMappings.objectType must be "person" for Person imports, got "account": this set would replace source 9007199254740993\'s account mappings, which a Person job never reads',
    ]);
    expect(problemsWith({ fieldMappings: { ...mappings, objectType: 'person' } })[0]).toContain(
      'must be "account" for Account imports',
    );
    expect(problemsWith({ entityType: 'Opportunity', fieldMappings: mappings })).toEqual([
      'fieldMappings cannot be used with Opportunity imports: the service reads custom-source mappings only for Account (objectType account) and Person (objectType person) jobs; remove fieldMappings and give the file the display-name labels',
    ]);
    expect(problemsWith({ entityType: 'Activity', activityTypeId: 2, fieldMappings: mappings })[0]).toContain(
      'cannot be used with Activity imports',
    );
  });

  it("refuses an importSource beside field mappings: the job goes on the mappings' source", () => {
    expect(problemsWith({ importSource: 'CSV', fieldMappings: mappings })).toEqual([
      'importSource cannot be given with fieldMappings: the import creates its job on the custom source fieldMappings.sourceId names (by the name the service lists), the only job that reads those mappings; leave importSource out',
    ]);
  });

  it('accepts a numeric sourceId and normalises it to a decimal string', () => {
    const input = { ...valid, fieldMappings: { ...mappings, sourceId: 42 } } as unknown as ImportFileInput;
    expect(importInputProblems(input)).toEqual([]);
    expect(normaliseImportInput(input).fieldMappings?.sourceId).toBe('42');
  });

  it('refuses a numeric sourceId above 2^53, which JSON has already rounded, and unsafe timeouts', () => {
    expect(problemsWith({ fieldMappings: { ...mappings, sourceId: JSON.parse('9007199254740993') } })).toEqual([
      'fieldMappings.sourceId 9007199254740992 is a JSON number above 2^53, so it may have been rounded; write the id as a decimal string',
    ]);
    expect(problemsWith({ jobTimeoutMs: 2 ** 60 })).toEqual([
      'jobTimeoutMs must be a positive whole number of milliseconds',
    ]);
  });

  it('requires a tenant of 1-64 safe characters', () => {
    for (const bad of ['', 'a b', 'x'.repeat(65), 'ä']) {
      expect(problemsWith({ tenant: bad })).toEqual([
        'tenant must be 1-64 characters of letters, digits, ".", "_" or "-"',
      ]);
    }
  });

  it('requires a known onFailure mode', () => {
    expect(problemsWith({ onFailure: 'retry' })).toEqual(['onFailure must be one of fail, await-retry']);
  });

  it('requires positive whole-millisecond timeouts', () => {
    expect(problemsWith({ awaitRetryTimeoutMs: 0 })).toEqual([
      'awaitRetryTimeoutMs must be a positive whole number of milliseconds',
    ]);
    expect(problemsWith({ jobTimeoutMs: 1.5 })).toEqual([
      'jobTimeoutMs must be a positive whole number of milliseconds',
    ]);
  });

  it('reports every problem at once', () => {
    expect(importInputProblems({ source: {}, entityType: 'x' })).toHaveLength(3);
  });
});
