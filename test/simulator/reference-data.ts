/**
 * The fixed activity types and their fields the simulator serves, in the
 * shapes the production reference documents (service-facts.md), and the
 * header labels each entity type's file needs.
 */
interface ActivityType {
  id: number;
  name: string;
  description: string;
  activitySource: string;
}

interface ActivityField {
  fieldName: string;
  fieldDataType: string;
  defaultField: boolean;
  isRequiredForCsvImport: boolean;
}

export const ACTIVITY_TYPES: ActivityType[] = [
  { id: 1, name: 'Webinar Attended', description: 'A person attended a webinar', activitySource: 'CSV' },
  { id: 2, name: 'Event Visited', description: 'A person visited an event booth', activitySource: 'CSV' },
  { id: 3, name: 'Content Downloaded', description: 'A person downloaded a content asset', activitySource: 'CSV' },
];

const COMMON_FIELDS: ActivityField[] = [
  { fieldName: 'Email', fieldDataType: 'string', defaultField: true, isRequiredForCsvImport: true },
  { fieldName: 'Activity Date', fieldDataType: 'date', defaultField: true, isRequiredForCsvImport: true },
  { fieldName: 'Activity Name', fieldDataType: 'string', defaultField: true, isRequiredForCsvImport: false },
];

const EXTRA_FIELDS: Record<number, ActivityField[]> = {
  1: [{ fieldName: 'Webinar Title', fieldDataType: 'string', defaultField: false, isRequiredForCsvImport: false }],
  2: [{ fieldName: 'Event Name', fieldDataType: 'string', defaultField: false, isRequiredForCsvImport: true }],
  3: [{ fieldName: 'Asset URL', fieldDataType: 'string', defaultField: false, isRequiredForCsvImport: false }],
};

export function activityFields(id: number): { activityType: object; fields: ActivityField[] } | undefined {
  const type = ACTIVITY_TYPES.find((t) => t.id === id);
  if (!type) return undefined;
  return {
    activityType: { name: type.name, label: type.name, description: type.description },
    fields: [...COMMON_FIELDS, ...(EXTRA_FIELDS[id] ?? [])],
  };
}

/** Display names a file of each entity type needs (service-facts.md); Activity's come from its type's fields. */
const REQUIRED_LABELS: Record<string, string[]> = {
  Account: ['Account Name', 'Account Domain'],
  Person: ['First Name', 'Last Name', 'Email', 'External Person Id'],
  Opportunity: ['External Opportunity ID', 'Opportunity Name', 'Account Name', 'Account Domain'],
};

/**
 * The required labels `header` lacks. How production compares labels is
 * unpublished; the simulator compares them as loosely as is plausible
 * (trimmed, BOM dropped, whitespace runs as one space, any letter case), so a
 * file it fails lacks the column in any reading.
 */
export function missingRequiredLabels(
  entityType: string,
  activityTypeId: number | undefined,
  header: string[],
): string[] {
  const required =
    entityType === 'Activity'
      ? (activityFields(activityTypeId ?? -1)?.fields ?? [])
          .filter((f) => f.isRequiredForCsvImport)
          .map((f) => f.fieldName)
      : (REQUIRED_LABELS[entityType] ?? []);
  const key = (label: string) =>
    label
      .replace(/^\uFEFF/, '')
      .trim()
      .replace(/\s+/g, ' ')
      .toLowerCase();
  const present = new Set(header.map(key));
  return required.filter((label) => !present.has(key(label)));
}
