import { describe, expect, it } from 'vitest';
import {
  headerThroughMappings,
  missingFields,
  missingMappedLabels,
  REQUIRED_FIELDS,
} from '../../../activities/csv/required-labels.js';

const map = (sourceFieldLabel: string, serviceFieldName: string) => ({ sourceFieldLabel, serviceFieldName });
const labels = (fields: { label: string }[]) => fields.map((f) => f.label);

describe('a header read through field mappings', () => {
  it('reads each mapped label as its service field and leaves the others as they are', () => {
    expect(
      headerThroughMappings(['Company', 'Website', 'Notes'], [map('company', 'name'), map('Website', 'domain')]),
    ).toEqual(['name', 'domain', 'Notes']);
  });

  it('takes a required field from a display-name column or from a mapping onto its service name', () => {
    expect(missingFields(['Account Name', 'Account Domain'], [], REQUIRED_FIELDS.Account)).toEqual([]);
    expect(
      missingFields(
        ['Company', 'Website'],
        [map('Company', 'name'), map('Website', 'domain')],
        REQUIRED_FIELDS.Account,
      ),
    ).toEqual([]);
    expect(missingFields(['Company', 'account  domain'], [map('Company', 'NAME')], REQUIRED_FIELDS.Account)).toEqual(
      [],
    );
  });

  it('counts a mapped column as its mapping only, and an unmapped one as a display name only', () => {
    // "Account Domain" mapped elsewhere no longer supplies the display name; "domain" unmapped is no mapping.
    expect(
      labels(
        missingFields(['Account Name', 'Account Domain'], [map('Account Domain', 'url')], REQUIRED_FIELDS.Account),
      ),
    ).toEqual(['Account Domain']);
    expect(labels(missingFields(['Account Name', 'domain'], [], REQUIRED_FIELDS.Account))).toEqual(['Account Domain']);
  });

  it('ignores a mapping whose label the header lacks, and names that label', () => {
    expect(
      labels(missingFields(['Company'], [map('Company', 'name'), map('Website', 'domain')], REQUIRED_FIELDS.Account)),
    ).toEqual(['Account Domain']);
    expect(missingMappedLabels(['Company'], [map(' company ', 'name'), map('Website', 'domain')])).toEqual(['Website']);
  });

  it('takes no mapping for entity types without service names', () => {
    const header = ['Opportunity Name', 'Account Name', 'Account Domain', 'Id'];
    expect(labels(missingFields(header, [map('Id', 'externalOpportunityId')], REQUIRED_FIELDS.Opportunity))).toEqual([
      'External Opportunity ID',
    ]);
  });
});
