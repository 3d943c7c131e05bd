/**
 * The inspectSource activity: checks the S3 file and the import's settings
 * before any job exists, and finds how the file is written (its dialect:
 * compression, encoding, delimiter), which the workflow records. A missing,
 * empty or oversized file, one that holds no data row or cannot be decoded,
 * a malformed header row, a header that lacks a mapped label or (read through the
 * mappings) a field the entity type requires, an import source the service
 * does not list, or an Activity file
 * without its type's required fields fails here, non-retryably, with a
 * message that names the file and what to fix. The file's own checks spend
 * no service call; the reference reads are cached per worker and counted
 * against the metadata budgets.
 */
import type { InspectSourceInput, InspectSourceResult } from '../workflows/contracts/activities.js';
import type { EntityType, FieldMapping } from '../workflows/contracts/import-input.js';
import { HeaderRowError } from './csv/header-row.js';
import {
  describeField,
  labelKey,
  missingFields,
  missingLabels,
  missingMappedLabels,
  REQUIRED_FIELDS,
  type RequiredFields,
} from './csv/required-labels.js';
import { type SampleHeader, sampleHeader } from './csv/sample-header.js';
import { failure } from './failures.js';
import type { ReferenceCache } from './reference-cache.js';
import { type Dialect, detectDialect, RowStageError } from './rows/index.js';
import { HeaderTooLong, SourceObjectChanged, SourceObjectMissing, s3Url } from './s3/errors.js';
import type { S3Source } from './s3/source.js';
import { NotFound } from './service/errors.js';
import type { ActivityFields } from './service/types.js';
import { ServiceCalls, type ServiceCallsDeps } from './service-calls.js';

/** What preflight needs of the service client: the reference reads. */
interface ReferenceService {
  listSources(entityType: EntityType): Promise<string[]>;
  getActivityFields(activityTypeId: number): Promise<ActivityFields>;
}

export interface InspectSourceDeps extends ServiceCallsDeps {
  s3: S3Source;
  /** The largest object taken (IMPORT_MAX_FILE_BYTES); absent, any: a body too large for one job is split. */
  maxFileBytes?: number;
  service: ReferenceService;
  /** One per worker: reference data read by one import serves the next ones. */
  reference: ReferenceCache;
  /** The fields each entity type needs, by display name and (inferred) service name; default REQUIRED_FIELDS. */
  requiredFields?: RequiredFields;
}

type FileFacts = Omit<InspectSourceResult, 'apiCalls'>;

/** An object overwritten between our HEAD and our header read is looked at again, a few times. */
const MAX_LOOKS = 3;

export function makeInspectSource(deps: InspectSourceDeps) {
  return async function inspectSource(input: InspectSourceInput): Promise<InspectSourceResult> {
    const facts = await lookAtFile(deps, input);
    const calls = ServiceCalls.forCurrentActivity(deps, input.tenant);
    await checkReferences(deps, input, facts.header, calls);
    return { ...facts, apiCalls: calls.counts };
  };
}

/** The reference reads' checks (import source, activity fields), with the caller's calls: the dry run reports them. */
export async function checkReferences(
  deps: InspectSourceDeps,
  input: InspectSourceInput,
  header: string[],
  calls: ServiceCalls,
): Promise<void> {
  await checkImportSource(deps, input, calls);
  await checkActivityFields(deps, input, header, calls);
}

/** The file's own checks (HEAD, header row, labels): no service call. */
export async function lookAtFile(deps: InspectSourceDeps, input: InspectSourceInput): Promise<FileFacts> {
  for (let look = 1; ; look++) {
    try {
      return await inspectOnce(deps, input);
    } catch (err) {
      if (!(err instanceof SourceObjectChanged) || look >= MAX_LOOKS) throw mapSourceError(err);
    }
  }
}

async function inspectOnce(deps: InspectSourceDeps, input: InspectSourceInput): Promise<FileFacts> {
  const { bucket, key } = input;
  const where = s3Url(bucket, key);
  const head = await deps.s3.head(bucket, key);
  if (deps.maxFileBytes !== undefined && head.sizeBytes > deps.maxFileBytes) {
    throw failure(
      'FileTooLarge',
      `${where} is ${head.sizeBytes} bytes; the limit is ${deps.maxFileBytes} bytes (IMPORT_MAX_FILE_BYTES)`,
      { sizeBytes: head.sizeBytes, limitBytes: deps.maxFileBytes },
    );
  }
  if (head.sizeBytes === 0) throw failure('EmptyFile', `${where} is empty; expected a CSV file with a header row`);

  const { dialect, header, hasDataRows } = await readHeader(deps.s3, input, head);

  const mappings = input.mappings ?? [];
  const table = deps.requiredFields ?? REQUIRED_FIELDS;
  const warnings: string[] = [];
  if (mappings.length > 0) {
    const missing = missingMappedLabels(header, mappings);
    if (missing.length > 0) {
      throw failure(
        'MappingMismatch',
        `${where}: the header row lacks the mapped label(s) ${quoteAll(missing)}; the header has ${quoteAll(header)}; fix the file or the mappings' sourceFieldLabel`,
        { missing, header },
      );
    }
    warnings.push(...unreadColumns(header, mappings, table, input.entityType));
  }
  checkRequiredFields(where, input.entityType, header, mappings, table);
  // After the header's own checks, so a header that is wrong says so first.
  if (!hasDataRows) {
    throw failure('EmptyFile', `${where} holds a header row and no data rows; expected at least one row to import`, {
      header,
    });
  }
  return { ...head, dialect, header, warnings };
}

/** The first read's size: a header row of any usual width, and for gzip many rows more. */
const FIRST_SAMPLE_BYTES = 64 * 1024;
/** A header row longer than this is not one. */
const MAX_SAMPLE_BYTES = 1024 * 1024;

/**
 * The file's dialect, found from its first bytes (more of them while the
 * header row does not end inside), its header row read through it, and
 * whether any row follows (a header-only file's job could only fail).
 */
async function readHeader(
  s3: S3Source,
  input: InspectSourceInput,
  head: { sizeBytes: number; etag: string },
): Promise<{ dialect: Dialect; header: string[]; hasDataRows: boolean }> {
  const where = s3Url(input.bucket, input.key);
  const options = { encoding: input.encoding, delimiter: input.delimiter };
  for (let bytes = FIRST_SAMPLE_BYTES; ; bytes *= 4) {
    const sample = await s3.firstBytes(input.bucket, input.key, { etag: head.etag, bytes });
    const complete = sample.length >= head.sizeBytes;
    let dialect: Dialect;
    try {
      dialect = detectDialect(sample, { ...options, complete });
    } catch (err) {
      const headerCut = err instanceof RowStageError && err.code === 'NoHeader' && !complete;
      if (headerCut && bytes < MAX_SAMPLE_BYTES) continue;
      throw unreadable(where, err);
    }
    let found: SampleHeader;
    try {
      found = sampleHeader(sample, dialect, complete);
    } catch (err) {
      if (err instanceof HeaderRowError) throw failure('InvalidCsvHeader', `${where}: ${err.message}`);
      throw err;
    }
    return { dialect, header: found.labels, hasDataRows: found.hasDataRows };
  }
}

/** A file the row stage cannot read, as the failure an operator fixes. */
function unreadable(where: string, err: unknown): unknown {
  if (!(err instanceof RowStageError)) return err;
  if (err.code === 'NoHeader') return failure('InvalidCsvHeader', `${where}: ${err.message}`);
  return failure('UnreadableFile', `${where}: ${err.message}`, { code: err.code });
}

/**
 * Every field the entity type needs must come from a display-name label or
 * from a mapping onto its service name (the job reads the header through its
 * mappings). Activity files are checked against their type's fields instead.
 */
function checkRequiredFields(
  where: string,
  entityType: EntityType,
  header: string[],
  mappings: readonly FieldMapping[],
  table: RequiredFields,
): void {
  if (entityType === 'Activity' || !Object.hasOwn(table, entityType)) return;
  const missing = missingFields(header, mappings, table[entityType]);
  if (missing.length === 0) return;
  const read = mappings.length > 0 ? 'the header row, read through the field mappings,' : 'the header row';
  const fix = mappings.length > 0 ? 'add the column or map a column onto its field' : 'add the column';
  throw failure(
    'InvalidCsvHeader',
    `${where}: ${read} lacks ${missing.map(describeField).join(', ')}, which ${entityType} imports require; the header has ${quoteAll(header)}; ${fix}`,
    { missing: missing.map((f) => f.label), header },
  );
}

/** Columns neither a mapping nor a required display name covers: the service may ignore them. */
function unreadColumns(
  header: string[],
  mappings: readonly FieldMapping[],
  table: RequiredFields,
  entityType: EntityType,
): string[] {
  const required = entityType === 'Activity' ? [] : table[entityType].map((f) => f.label);
  const known = new Set([...mappings.map((m) => m.sourceFieldLabel), ...required].map(labelKey));
  const unread = header.filter((label) => !known.has(labelKey(label)));
  if (unread.length === 0) return [];
  return [`no field mapping covers the column(s) ${quoteAll(unread)}; the service may ignore them`];
}

/** A named import source must be one the service lists for the entity type (CSV, the default, always is). */
async function checkImportSource(deps: InspectSourceDeps, input: InspectSourceInput, calls: ServiceCalls) {
  const wanted = input.importSource;
  if (wanted === undefined) return;
  const sources = await deps.reference.get(`sources/${input.entityType}`, () =>
    calls.run('listSources', () => deps.service.listSources(input.entityType)),
  );
  if (sources.some((s) => labelKey(s) === labelKey(wanted))) return;
  throw failure(
    'InvalidInput',
    `importSource ${JSON.stringify(wanted)} is not a source the service accepts for ${input.entityType} imports; it lists ${quoteAll(sources)} (a custom source's numeric id is not one)`,
    { importSource: wanted, sources },
  );
}

/** An Activity file needs the columns its activity type marks isRequiredForCsvImport. */
async function checkActivityFields(
  deps: InspectSourceDeps,
  input: InspectSourceInput,
  header: string[],
  calls: ServiceCalls,
) {
  const typeId = input.activityTypeId;
  if (input.entityType !== 'Activity' || typeId === undefined) return;
  const fields = await deps.reference.get(`activity-fields/${typeId}`, () =>
    calls.run('activityFields', () =>
      deps.service.getActivityFields(typeId).catch((err: unknown) => {
        if (err instanceof NotFound) return undefined;
        throw err;
      }),
    ),
  );
  if (!fields) {
    throw failure('InvalidInput', `activityTypeId ${typeId} is not an activity type the service knows`, {
      activityTypeId: typeId,
    });
  }
  const required = fields.fields.filter((f) => f.isRequiredForCsvImport).map((f) => f.fieldName);
  const missing = missingLabels(header, required);
  if (missing.length > 0) {
    throw failure(
      'InvalidCsvHeader',
      `${s3Url(input.bucket, input.key)}: the header row lacks the field(s) ${quoteAll(missing)} that activity type ${typeId} (${fields.activityType.name}) requires for CSV imports; the header has ${quoteAll(header)}`,
      { missing, header, activityTypeId: typeId },
    );
  }
}

function quoteAll(labels: string[]): string {
  return labels.map((l) => JSON.stringify(l)).join(', ');
}

function mapSourceError(err: unknown): unknown {
  if (err instanceof SourceObjectMissing) {
    return failure('SourceNotFound', `${err.message}; expected an existing CSV object`, {
      bucket: err.bucket,
      key: err.key,
    });
  }
  if (err instanceof HeaderTooLong) {
    return failure('InvalidCsvHeader', `${err.message}; is it a CSV file with a header row?`);
  }
  if (err instanceof SourceObjectChanged) return failure('SourceChanged', err.message);
  return err;
}
