/**
 * What a row must hold for the service to take it: as many fields as the
 * header, every required field filled, every mapped value of its mapping's
 * data type. The rules are built once from the header and the import's
 * settings, and are plain data recorded in the plan, so the pass that
 * regenerates a part refuses exactly the rows the planning pass refused.
 */
import type { EntityType, FieldMapping, MappingObjectType } from '../../workflows/contracts/import-input.js';
import { labelKey, REQUIRED_FIELDS, type RequiredField } from '../csv/required-labels.js';
import type { ByteRow } from './byte-row.js';
import { type CheckedDataType, isCheckedDataType, isOfType } from './value-types.js';

/** The import's settings the rows are checked against. */
export interface RowChecks {
  entityType: EntityType;
  /** The field mappings the import applies; their object type says which service fields are required. */
  fieldMappings?: { objectType: MappingObjectType; mappings: FieldMapping[] };
  /** More labels every row must fill: an Activity type's fields marked isRequiredForCsvImport. */
  requiredLabels?: readonly string[];
}

export interface RowRules {
  header: string[];
  /** Columns (0-based) that must not be empty. */
  required: number[];
  /** Columns whose non-empty values must be of a data type. */
  typed: { column: number; type: CheckedDataType }[];
}

/** The entity type's required fields (the one table, activities/csv/required-labels.ts). */
function requiredFieldsOf(checks: RowChecks): readonly RequiredField[] {
  return checks.entityType === 'Activity' ? [] : REQUIRED_FIELDS[checks.entityType];
}

function requiredDisplayLabels(checks: RowChecks): string[] {
  return [...requiredFieldsOf(checks).map((f) => f.label), ...(checks.requiredLabels ?? [])];
}

/** A required field comes from a display-name label or from a mapping onto its service name. */
function requiredColumns(header: readonly string[], checks: RowChecks): number[] {
  const keys = new Set(requiredDisplayLabels(checks).map(labelKey));
  const set = checks.fieldMappings;
  const serviceFields = new Set<string>(
    set ? requiredFieldsOf(checks).flatMap((f) => (f.serviceName === undefined ? [] : [f.serviceName])) : [],
  );
  const mapped = new Set(
    set?.mappings.filter((m) => serviceFields.has(m.serviceFieldName)).map((m) => m.sourceFieldLabel),
  );
  return header.flatMap((label, column) => (keys.has(labelKey(label)) || mapped.has(label) ? [column] : []));
}

function typedColumns(header: readonly string[], checks: RowChecks): RowRules['typed'] {
  return (checks.fieldMappings?.mappings ?? []).flatMap((m) => {
    const type = m.dataType.trim().toLowerCase();
    const column = header.indexOf(m.sourceFieldLabel);
    return column >= 0 && isCheckedDataType(type) ? [{ column, type }] : [];
  });
}

export function rowRules(header: readonly string[], checks: RowChecks): RowRules {
  return { header: [...header], required: requiredColumns(header, checks), typed: typedColumns(header, checks) };
}

const MAX_QUOTED_VALUE = 60;

function quoted(value: string): string {
  return JSON.stringify(value.length > MAX_QUOTED_VALUE ? `${value.slice(0, MAX_QUOTED_VALUE)}…` : value);
}

/** Why the service would refuse the row, or undefined when it would take it. */
export function rowProblem(rules: RowRules, fields: readonly string[]): string | undefined {
  const { header } = rules;
  if (fields.length !== header.length) return `${fields.length} field(s); the header has ${header.length}`;
  const problems: string[] = [];
  for (const column of rules.required) {
    if (fields[column]!.trim() === '') problems.push(`${quoted(header[column]!)} is empty`);
  }
  for (const { column, type } of rules.typed) {
    const value = fields[column]!;
    if (value.trim() !== '' && !isOfType(value, type))
      problems.push(`${quoted(header[column]!)} is ${quoted(value)}, not a ${type}`);
  }
  return problems.length > 0 ? problems.join('; ') : undefined;
}

/**
 * rowProblem for a row read from its bytes: the field count and the columns
 * the rules read, no other field decoded. A row with a problem is described
 * by rowProblem itself, so the reason is word for word the same.
 */
export function byteRowProblem(rules: RowRules, row: ByteRow): string | undefined {
  if (row.fieldCount() !== rules.header.length) return rowProblem(rules, row.fields);
  for (const column of rules.required) {
    if (row.isBlank(column)) return rowProblem(rules, row.fields);
  }
  for (const { column, type } of rules.typed) {
    const value = row.field(column);
    if (value.trim() !== '' && !isOfType(value, type)) return rowProblem(rules, row.fields);
  }
  return undefined;
}
