import { describe, expect, it } from 'vitest';
import { rowProblem, rowRules } from '../../../activities/rows/row-rules.js';
import { isOfType } from '../../../activities/rows/value-types.js';

describe('which fields a row must fill', () => {
  it("are the entity type's display labels, matched as loosely as the header check matches them", () => {
    const rules = rowRules([' account  name', 'Notes', 'ACCOUNT DOMAIN'], { entityType: 'Account' });
    expect(rules.required).toEqual([0, 2]);
    expect(rowProblem(rules, ['Acme', '', 'acme.com'])).toBeUndefined();
    expect(rowProblem(rules, ['Acme', 'n', ' '])).toBe('"ACCOUNT DOMAIN" is empty');
  });

  it("include the labels mapped onto a required service field, and an Activity type's required fields", () => {
    const mapped = rowRules(['Company', 'Website', 'Notes'], {
      entityType: 'Account',
      fieldMappings: {
        objectType: 'account',
        mappings: [
          { sourceFieldLabel: 'Company', serviceFieldName: 'name', dataType: 'string' },
          { sourceFieldLabel: 'Website', serviceFieldName: 'domain', dataType: 'string' },
          { sourceFieldLabel: 'Notes', serviceFieldName: 'description', dataType: 'string' },
        ],
      },
    });
    expect(mapped.required).toEqual([0, 1]);
    const activity = rowRules(['Email', 'Occurred At'], { entityType: 'Activity', requiredLabels: ['Occurred At'] });
    expect(activity.required).toEqual([1]);
  });

  it("check a value against its mapping's data type, whatever its case, and leave strings and empty values alone", () => {
    const rules = rowRules(['Account Name', 'Account Domain', 'Size'], {
      entityType: 'Account',
      fieldMappings: {
        objectType: 'account',
        mappings: [{ sourceFieldLabel: 'Size', serviceFieldName: 'size', dataType: 'NUMBER' }],
      },
    });
    expect(rowProblem(rules, ['a', 'b', ''])).toBeUndefined();
    expect(rowProblem(rules, ['a', 'b', '12 '])).toBeUndefined();
    expect(rowProblem(rules, ['a', 'b', '1,200'])).toBe('"Size" is "1,200", not a number');
    expect(rowProblem(rules, ['a', 'b'])).toBe('2 field(s); the header has 3');
  });
});

describe('values of a data type', () => {
  it.each([
    ['number', ['0', '-12', '+3.5', '.5', '1e6', '2.5E-3'], ['', 'abc', '1,200', '1.2.3', '0x10', 'NaN']],
    ['boolean', ['true', 'FALSE', 'yes', 'N', '1', '0'], ['maybe', '2', 'truthy']],
    [
      'date',
      ['2026-11-27', '2026-11-27T03:45:00Z', '2026-11-27 03:45+01:00', '2024-02-29T23:59:59.123-0500'],
      ['2026-02-30', '27/11/2026', '2026-13-01', '2026-11-27T24:00', 'yesterday'],
    ],
  ] as const)('%s', (type, good, bad) => {
    for (const v of good) expect(isOfType(v, type), v).toBe(true);
    for (const v of bad) expect(isOfType(v, type), v).toBe(false);
  });
});
