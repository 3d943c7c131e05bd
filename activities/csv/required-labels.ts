/**
 * The header labels the service needs before it can import a file
 * (service-facts.md, "Data upload body"), and how a header is matched to them.
 *
 * How the service compares labels is not published. A preflight must never be
 * stricter than the service (it would refuse files the service takes), so
 * labels match the loosest plausible way: a BOM dropped, surrounding spaces
 * trimmed (both done by parseHeaderRow), inner runs of whitespace taken as
 * one space, and letter case ignored. A file that passes may still be failed
 * by a stricter service; one that fails here lacks the column in any reading.
 */
import type { EntityType, MappingObjectType } from '../../workflows/contracts/import-input.js';

/** Display names the service needs per entity type; Activity's come from its type's fields. */
export const REQUIRED_HEADER_LABELS: Record<Exclude<EntityType, 'Activity'>, readonly string[]> = {
  Account: ['Account Name', 'Account Domain'],
  Person: ['First Name', 'Last Name', 'Email', 'External Person Id'],
  Opportunity: ['External Opportunity ID', 'Opportunity Name', 'Account Name', 'Account Domain'],
};

/** The form in which two labels are compared. */
export function labelKey(label: string): string {
  return label
    .replace(/^\uFEFF/, '')
    .trim()
    .replace(/\s+/g, ' ')
    .toLowerCase();
}

/** The required labels `header` lacks, in their required spelling. */
export function missingLabels(header: readonly string[], required: readonly string[]): string[] {
  const present = new Set(header.map(labelKey));
  return required.filter((label) => !present.has(labelKey(label)));
}

/**
 * The service field names a field mapping must target to supply the required
 * fields above, per mapping object type. Not published: inferred from the
 * export API's field names (`{Account}.name`, `{Account}.domain`), see
 * service-facts.md, "How field mappings reach an import job".
 */
export const REQUIRED_SERVICE_FIELDS: Record<MappingObjectType, readonly string[]> = {
  account: ['name', 'domain'],
  person: ['firstName', 'lastName', 'email', 'externalPersonId'],
};
