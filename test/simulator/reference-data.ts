/**
 * The fixed activity types and their fields the simulator serves, in the
 * shapes the production reference documents (service-facts.md). The fields
 * the other entity types need are the worker's table
 * (activities/csv/required-labels.ts), read by the job store.
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

/** The fields an activity type marks isRequiredForCsvImport: its file's header must hold them. */
export function requiredActivityFields(activityTypeId: number | undefined): string[] {
  return (activityFields(activityTypeId ?? -1)?.fields ?? [])
    .filter((f) => f.isRequiredForCsvImport)
    .map((f) => f.fieldName);
}
