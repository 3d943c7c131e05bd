/**
 * The importFile workflow's input, and its validation. Pure code: it runs in
 * the workflow sandbox and in the CLI, so both reject the same inputs with the
 * same words. The input never carries a secret: anyone with Temporal UI access
 * can read it.
 */
import type { InspectSourceInput } from './activities.js';

export const ENTITY_TYPES = ['Account', 'Opportunity', 'Person', 'Activity'] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

/** `replace` (the service's own default) and `delete` remove list members. */
export const LIST_ACTIONS = ['replace', 'insert', 'delete', 'noop'] as const;
export type ListAction = (typeof LIST_ACTIONS)[number];
export const DESTRUCTIVE_LIST_ACTIONS: readonly ListAction[] = ['replace', 'delete'];
/**
 * Sent when the input names none, so that the service's destructive default
 * (`replace`) never applies by accident.
 */
export const DEFAULT_LIST_ACTION: ListAction = 'noop';

export const MAPPING_OBJECT_TYPES = ['account', 'person'] as const;
export type MappingObjectType = (typeof MAPPING_OBJECT_TYPES)[number];

/**
 * The mapping set a job of each entity type reads its header through
 * (service-facts.md, "How field mappings reach an import job"): Opportunity
 * and Activity jobs take none.
 */
export const MAPPING_OBJECT_TYPE_OF_ENTITY: Readonly<Partial<Record<EntityType, MappingObjectType>>> = {
  Account: 'account',
  Person: 'person',
};

/** The `dataType`s the service documents for a mapping; anything else is most likely a typo. */
export const MAPPING_DATA_TYPES = ['string', 'number', 'boolean', 'date'] as const;

/**
 * Who started an import, for the outcome metrics: the operator CLI or a
 * nightly feed's Schedule. Optional: an import started otherwise (the SDK,
 * the Temporal UI) counts as `other`, and one an operator Reset counts as `reset`.
 */
export const IMPORT_TRIGGERS = ['cli', 'schedule'] as const;
export type ImportTrigger = (typeof IMPORT_TRIGGERS)[number];

export const ON_FAILURE_MODES = ['fail', 'await-retry'] as const;

/**
 * What an import does with the rows the service would refuse: `skip` sends
 * the rest, `fail` fails before any job is created. Either way the rows land
 * in the rejects report.
 */
export const ON_REJECTED_ROWS = ['skip', 'fail'] as const;
export type OnRejectedRowsMode = (typeof ON_REJECTED_ROWS)[number];
/** Nothing is dropped unless the operator says so. */
export const DEFAULT_ON_REJECTED_ROWS: OnRejectedRowsMode = 'fail';

/** The delimiters a file may use; without one in the input it is read from the header row. */
export const CSV_DELIMITERS = [',', ';', '\t', '|'] as const;
export type CsvDelimiter = (typeof CSV_DELIMITERS)[number];
/** The encodings an import may declare (a UTF-16 file says so with its byte order mark). */
export const CSV_ENCODINGS = ['utf-8', 'windows-1252', 'latin1'] as const;
export type CsvEncoding = (typeof CSV_ENCODINGS)[number];

/** How the file's rows are read and what happens to the ones the service would refuse. */
export interface RowOptions {
  onRejectedRows?: OnRejectedRowsMode;
  delimiter?: CsvDelimiter;
  encoding?: CsvEncoding;
  /**
   * Where the rejects report goes: `s3://bucket/prefix/` or a key prefix in
   * the source's bucket. Default: beside the file.
   */
  rejectsPrefix?: string;
}
export type OnFailureMode = (typeof ON_FAILURE_MODES)[number];

export interface FieldMapping {
  sourceFieldLabel: string;
  serviceFieldName: string;
  dataType: string;
}

export interface FieldMappingSet {
  /** The custom source's int64 id, as a decimal string (JSON numbers lose int64 precision). */
  sourceId: string;
  objectType: MappingObjectType;
  mappings: FieldMapping[];
}

export interface S3ObjectRef {
  bucket: string;
  key: string;
}

export interface ImportFileInput {
  source: S3ObjectRef;
  dataImportName: string;
  entityType: EntityType;
  /** The create-job `source` field; the service's default is `CSV`. */
  importSource?: string;
  /** Required when entityType is `Activity`. */
  activityTypeId?: number;
  listAction?: ListAction;
  fieldMappings?: FieldMappingSet;
  /** Whose daily budget the calls count against; defaults to the worker's tenant. */
  tenant?: string;
  onFailure?: OnFailureMode;
  /** How long `await-retry` waits for a retry/abandon signal; default 7 days. */
  awaitRetryTimeoutMs?: number;
  /** Overall limit on waiting for the job to finish; default 24 hours. */
  jobTimeoutMs?: number;
  /** How the rows are read, and what happens to the ones the service would refuse. */
  rows?: RowOptions;
  /** Who started the import (metrics only; it changes nothing the import does). */
  trigger?: ImportTrigger;
}

export const TENANT_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
const INT64_PATTERN = /^[0-9]{1,19}$/;
const MAX_NAME_LENGTH = 200;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function nonEmptyString(v: unknown): v is string {
  return typeof v === 'string' && v.trim().length > 0;
}

function oneOf<T extends string>(allowed: readonly T[], v: unknown): v is T {
  return typeof v === 'string' && (allowed as readonly string[]).includes(v);
}

function positiveMs(v: unknown): boolean {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
}

/** Problems with a field-mapping set, each naming the field and what is expected. */
export function fieldMappingProblems(set: unknown, at = 'fieldMappings'): string[] {
  if (!isObject(set)) return [`${at} must be an object { sourceId, objectType, mappings }`];
  const problems: string[] = [];
  const sourceId = typeof set.sourceId === 'number' ? String(set.sourceId) : set.sourceId;
  if (typeof set.sourceId === 'number' && !Number.isSafeInteger(set.sourceId)) {
    // JSON.parse has already rounded it: the digits here may name another source.
    problems.push(
      `${at}.sourceId ${sourceId} is a JSON number above 2^53, so it may have been rounded; write the id as a decimal string`,
    );
  } else if (typeof sourceId !== 'string' || !INT64_PATTERN.test(sourceId)) {
    problems.push(
      `${at}.sourceId must be the custom source's int64 id as a decimal string, got ${JSON.stringify(set.sourceId)}`,
    );
  }
  if (!oneOf(MAPPING_OBJECT_TYPES, set.objectType)) {
    problems.push(
      `${at}.objectType must be one of ${MAPPING_OBJECT_TYPES.join(', ')}, got ${JSON.stringify(set.objectType)}`,
    );
  }
  if (!Array.isArray(set.mappings) || set.mappings.length === 0) {
    problems.push(`${at}.mappings must be a non-empty array of { sourceFieldLabel, serviceFieldName, dataType }`);
    return problems;
  }
  const labels = new Set<string>();
  set.mappings.forEach((m: unknown, i: number) => {
    const where = `${at}.mappings[${i}]`;
    if (!isObject(m)) {
      problems.push(`${where} must be an object { sourceFieldLabel, serviceFieldName, dataType }`);
      return;
    }
    for (const field of ['sourceFieldLabel', 'serviceFieldName', 'dataType'] as const) {
      if (!nonEmptyString(m[field])) problems.push(`${where}.${field} must be a non-empty string`);
    }
    if (nonEmptyString(m.dataType) && !oneOf(MAPPING_DATA_TYPES, m.dataType)) {
      problems.push(
        `${where}.dataType must be one of ${MAPPING_DATA_TYPES.join(', ')} (the types the service documents), got ${JSON.stringify(m.dataType)}`,
      );
    }
    if (typeof m.sourceFieldLabel === 'string') {
      if (labels.has(m.sourceFieldLabel))
        problems.push(`${where}.sourceFieldLabel "${m.sourceFieldLabel}" is mapped twice`);
      labels.add(m.sourceFieldLabel);
    }
  });
  return problems;
}

/**
 * Where an import's field mappings can take effect: a job reads its header
 * through its custom source's set for the entity's object type, and an
 * import with mappings creates its job on that source, so neither another
 * object type's set nor another `importSource` would ever be read.
 */
function mappingFitProblems(input: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const set = input.fieldMappings as Record<string, unknown>;
  if (oneOf(ENTITY_TYPES, input.entityType) && oneOf(MAPPING_OBJECT_TYPES, set?.objectType)) {
    const fits = MAPPING_OBJECT_TYPE_OF_ENTITY[input.entityType];
    if (fits === undefined) {
      problems.push(
        `fieldMappings cannot be used with ${input.entityType} imports: the service reads custom-source mappings only for Account (objectType account) and Person (objectType person) jobs; remove fieldMappings and give the file the display-name labels`,
      );
    } else if (set.objectType !== fits) {
      problems.push(
        `fieldMappings.objectType must be ${JSON.stringify(fits)} for ${input.entityType} imports, got ${JSON.stringify(set.objectType)}: this set would replace source ${String(set.sourceId)}'s ${set.objectType} mappings, which a ${input.entityType} job never reads`,
      );
    }
  }
  if (input.importSource !== undefined) {
    problems.push(
      'importSource cannot be given with fieldMappings: the import creates its job on the custom source fieldMappings.sourceId names (by the name the service lists), the only job that reads those mappings; leave importSource out',
    );
  }
  return problems;
}

/** Every problem with an importFile input; empty when it is valid. */
export function importInputProblems(input: unknown): string[] {
  if (!isObject(input)) return ['input must be a JSON object'];
  const problems: string[] = [];
  const source = input.source;
  if (!isObject(source) || !nonEmptyString(source.bucket) || !nonEmptyString(source.key)) {
    problems.push('source must be { bucket, key } with non-empty strings');
  }
  if (!nonEmptyString(input.dataImportName)) {
    problems.push('dataImportName must be a non-empty string');
  } else if (input.dataImportName.length > MAX_NAME_LENGTH) {
    problems.push(`dataImportName must be at most ${MAX_NAME_LENGTH} characters`);
  }
  if (!oneOf(ENTITY_TYPES, input.entityType)) {
    problems.push(`entityType must be one of ${ENTITY_TYPES.join(', ')}, got ${JSON.stringify(input.entityType)}`);
  }
  if (input.importSource !== undefined && !nonEmptyString(input.importSource)) {
    problems.push('importSource, when given, must be a non-empty string (the service default is CSV)');
  }
  if (input.activityTypeId !== undefined) {
    const id = input.activityTypeId;
    if (typeof id !== 'number' || !Number.isInteger(id) || id <= 0 || id > 2147483647) {
      problems.push('activityTypeId must be a positive int32');
    }
  }
  if (input.entityType === 'Activity' && input.activityTypeId === undefined) {
    problems.push('activityTypeId is required when entityType is Activity');
  }
  if (input.listAction !== undefined && !oneOf(LIST_ACTIONS, input.listAction)) {
    problems.push(`listAction must be one of ${LIST_ACTIONS.join(', ')}, got ${JSON.stringify(input.listAction)}`);
  }
  if (input.fieldMappings !== undefined) {
    problems.push(...fieldMappingProblems(input.fieldMappings), ...mappingFitProblems(input));
  }
  if (input.tenant !== undefined && (typeof input.tenant !== 'string' || !TENANT_PATTERN.test(input.tenant))) {
    problems.push('tenant must be 1-64 characters of letters, digits, ".", "_" or "-"');
  }
  if (input.onFailure !== undefined && !oneOf(ON_FAILURE_MODES, input.onFailure)) {
    problems.push(`onFailure must be one of ${ON_FAILURE_MODES.join(', ')}`);
  }
  if (input.awaitRetryTimeoutMs !== undefined && !positiveMs(input.awaitRetryTimeoutMs)) {
    problems.push('awaitRetryTimeoutMs must be a positive whole number of milliseconds');
  }
  if (input.jobTimeoutMs !== undefined && !positiveMs(input.jobTimeoutMs)) {
    problems.push('jobTimeoutMs must be a positive whole number of milliseconds');
  }
  if (input.trigger !== undefined && !oneOf(IMPORT_TRIGGERS, input.trigger)) {
    problems.push(
      `trigger, when given, must be one of ${IMPORT_TRIGGERS.join(', ')}, got ${JSON.stringify(input.trigger)}`,
    );
  }
  if (input.rows !== undefined) problems.push(...rowOptionProblems(input.rows));
  return problems;
}

/** Problems with the row options, each naming the field and what is expected. */
export function rowOptionProblems(rows: unknown, at = 'rows'): string[] {
  if (!isObject(rows)) return [`${at} must be an object { onRejectedRows, delimiter, encoding, rejectsPrefix }`];
  const problems: string[] = [];
  if (rows.onRejectedRows !== undefined && !oneOf(ON_REJECTED_ROWS, rows.onRejectedRows)) {
    problems.push(
      `${at}.onRejectedRows must be one of ${ON_REJECTED_ROWS.join(', ')}, got ${JSON.stringify(rows.onRejectedRows)}`,
    );
  }
  if (rows.delimiter !== undefined && !oneOf(CSV_DELIMITERS, rows.delimiter)) {
    problems.push(
      `${at}.delimiter must be one of ${CSV_DELIMITERS.map((d) => JSON.stringify(d)).join(', ')}, got ${JSON.stringify(rows.delimiter)}`,
    );
  }
  if (rows.encoding !== undefined && !oneOf(CSV_ENCODINGS, rows.encoding)) {
    problems.push(
      `${at}.encoding must be one of ${CSV_ENCODINGS.join(', ')} (UTF-16 is read from its byte order mark), got ${JSON.stringify(rows.encoding)}`,
    );
  }
  if (rows.rejectsPrefix !== undefined && typeof rows.rejectsPrefix !== 'string') {
    problems.push(`${at}.rejectsPrefix must be a string: s3://bucket/prefix/ or a key prefix in the source's bucket`);
  }
  return problems;
}

/** The input with int64 ids normalised to strings; call after importInputProblems() is empty. */
export function normaliseImportInput(input: ImportFileInput): ImportFileInput {
  if (!input.fieldMappings) return input;
  return { ...input, fieldMappings: { ...input.fieldMappings, sourceId: String(input.fieldMappings.sourceId) } };
}

/** What looking at the source needs from an import's input: the same for an import and its dry run. */
export function inspectSourceInput(input: ImportFileInput): InspectSourceInput {
  return {
    tenant: input.tenant,
    bucket: input.source.bucket,
    key: input.source.key,
    mappings: input.fieldMappings?.mappings,
    entityType: input.entityType,
    importSource: input.importSource,
    activityTypeId: input.activityTypeId,
    delimiter: input.rows?.delimiter,
    encoding: input.rows?.encoding,
  };
}
