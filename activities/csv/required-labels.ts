/**
 * The fields the service needs before it can import a file (service-facts.md,
 * "Data upload body" and "How field mappings reach an import job"), and how a
 * header, read through a custom source's field mappings, is matched to them.
 * The worker's preflight and the test simulator both read this one table.
 *
 * How the service compares labels is not published. A preflight must never be
 * stricter than the service (it would refuse files the service takes), so
 * labels match the loosest plausible way: a BOM dropped, surrounding spaces
 * trimmed (both done by parseHeaderRow), inner runs of whitespace taken as
 * one space, and letter case ignored. A file that passes may still be failed
 * by a stricter service; one that fails here lacks the column in any reading.
 */
import type { EntityType, FieldMapping, MappingObjectType } from '../../workflows/contracts/import-input.js';

/** One field an entity type's file must carry. */
export interface RequiredField {
  /** The display name a header may hold (published). */
  label: string;
  /**
   * The service field a mapping may name instead. INFERRED: the service does
   * not publish these names; the export API's field names (`{Account}.name`,
   * `{Account}.domain`) suggest them. Absent where the entity type's jobs take
   * no mappings (Opportunity).
   */
  serviceName?: string;
}

/** Required fields per entity type; Activity's come from its activity type's fields. */
export type RequiredFields = Readonly<Record<Exclude<EntityType, 'Activity'>, readonly RequiredField[]>>;

/**
 * The default table. Every reader takes another in its place (the worker's
 * inspectSource deps, the simulator's `requiredFields` option), so a service
 * that turns out to name its fields otherwise is one table away.
 */
export const REQUIRED_FIELDS: RequiredFields = {
  Account: [
    { label: 'Account Name', serviceName: 'name' },
    { label: 'Account Domain', serviceName: 'domain' },
  ],
  Person: [
    { label: 'First Name', serviceName: 'firstName' },
    { label: 'Last Name', serviceName: 'lastName' },
    { label: 'Email', serviceName: 'email' },
    { label: 'External Person Id', serviceName: 'externalPersonId' },
  ],
  Opportunity: [
    { label: 'External Opportunity ID' },
    { label: 'Opportunity Name' },
    { label: 'Account Name' },
    { label: 'Account Domain' },
  ],
};

/** The form in which two labels (or field names) are compared. */
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

type LabelMapping = Pick<FieldMapping, 'sourceFieldLabel' | 'serviceFieldName'>;

/** The header as a job reads it through its mappings: each mapped label becomes its service field. */
export function headerThroughMappings(header: readonly string[], mappings: readonly LabelMapping[]): string[] {
  const fieldOf = new Map(mappings.map((m) => [labelKey(m.sourceFieldLabel), m.serviceFieldName]));
  return header.map((label) => fieldOf.get(labelKey(label)) ?? label);
}

/**
 * The required fields a header, read through its mappings, lacks: no
 * unmapped column holds the display name, and no mapping of one of its
 * columns names the service field. (A mapped column is read as its service
 * field only; an unmapped one only as a display name.)
 */
export function missingFields(
  header: readonly string[],
  mappings: readonly LabelMapping[],
  required: readonly RequiredField[],
): RequiredField[] {
  const fieldOf = new Map(mappings.map((m) => [labelKey(m.sourceFieldLabel), labelKey(m.serviceFieldName)]));
  const displayNames = new Set<string>();
  const serviceFields = new Set<string>();
  for (const label of header) {
    const field = fieldOf.get(labelKey(label));
    if (field === undefined) displayNames.add(labelKey(label));
    else serviceFields.add(field);
  }
  return required.filter(
    (field) =>
      !displayNames.has(labelKey(field.label)) &&
      (field.serviceName === undefined || !serviceFields.has(labelKey(field.serviceName))),
  );
}

/** The mapped labels `header` lacks, in the mappings' spelling. */
export function missingMappedLabels(header: readonly string[], mappings: readonly LabelMapping[]): string[] {
  return missingLabels(
    header,
    mappings.map((m) => m.sourceFieldLabel),
  );
}

/** "Account Name" (or a mapping onto "name"): a required field as a person fixing the file reads it. */
export function describeField(field: RequiredField): string {
  const label = JSON.stringify(field.label);
  return field.serviceName === undefined ? label : `${label} (or a mapping onto ${JSON.stringify(field.serviceName)})`;
}

/** The display names each entity type needs, as the row checks read them. */
export const REQUIRED_HEADER_LABELS: Record<Exclude<EntityType, 'Activity'>, readonly string[]> = {
  Account: REQUIRED_FIELDS.Account.map((f) => f.label),
  Person: REQUIRED_FIELDS.Person.map((f) => f.label),
  Opportunity: REQUIRED_FIELDS.Opportunity.map((f) => f.label),
};

/** The service field names a mapping must target to supply the required fields, per mapping object type. */
export const REQUIRED_SERVICE_FIELDS: Record<MappingObjectType, readonly string[]> = {
  account: REQUIRED_FIELDS.Account.flatMap((f) => (f.serviceName ? [f.serviceName] : [])),
  person: REQUIRED_FIELDS.Person.flatMap((f) => (f.serviceName ? [f.serviceName] : [])),
};
