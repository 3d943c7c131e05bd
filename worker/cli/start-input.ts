/**
 * The `start` command's input: built from flags or read from a JSON file,
 * then checked with the same validation the workflow applies, before any
 * connection is made. Problems name the flag the operator typed. What the
 * input leaves out of the tenant and the job timeout comes from
 * configuration (IMPORT_TENANT, IMPORT_JOB_TIMEOUT): the workflow cannot
 * read it, so it is written in here.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { InputDefaults } from '../../temporal.config.js';
import {
  DESTRUCTIVE_LIST_ACTIONS,
  type ImportFileInput,
  importInputProblems,
  normaliseImportInput,
} from '../../workflows/contracts/import-input.js';
import { integerLiteralFor } from '../../workflows/contracts/json-numbers.js';
import { workflowIdProblem } from '../../workflows/contracts/workflow-id.js';
import { UsageError } from './cli-error.js';

export interface StartFlags {
  input?: string;
  bucket?: string;
  key?: string;
  name?: string;
  entityType?: string;
  listAction?: string;
  activityTypeId?: string;
  importSource?: string;
  mappingsFile?: string;
  tenant?: string;
  onFailure?: string;
  onRejectedRows?: string;
  delimiter?: string;
  encoding?: string;
  rejectsPrefix?: string;
  workflowId?: string;
}

const INPUT_FLAGS = {
  bucket: '--bucket',
  key: '--key',
  name: '--name',
  entityType: '--entity-type',
  listAction: '--list-action',
  activityTypeId: '--activity-type-id',
  importSource: '--import-source',
  mappingsFile: '--mappings-file',
  tenant: '--tenant',
  onFailure: '--on-failure',
  onRejectedRows: '--on-rejected-rows',
  delimiter: '--delimiter',
  encoding: '--encoding',
  rejectsPrefix: '--rejects-prefix',
} as const satisfies Partial<Record<keyof StartFlags, string>>;

/** Which flag sets each input field, to name it in a problem. */
const FLAG_OF_FIELD: Record<string, string> = {
  source: '--bucket/--key',
  dataImportName: '--name',
  entityType: '--entity-type',
  listAction: '--list-action',
  activityTypeId: '--activity-type-id',
  importSource: '--import-source',
  fieldMappings: '--mappings-file',
  tenant: '--tenant',
  onFailure: '--on-failure',
  rows: '--on-rejected-rows/--delimiter/--encoding/--rejects-prefix',
};

type ReadText = (path: string) => string;
const readText: ReadText = (path) => readFileSync(path, 'utf8');

interface JsonFile {
  data: unknown;
  /** The file as written, to quote a number JSON.parse rounded. */
  text: string;
}

function readJson(path: string, flag: string, read: ReadText): JsonFile {
  let text: string;
  try {
    text = read(path);
  } catch (err) {
    throw new UsageError(`${flag} ${path}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    return { data: JSON.parse(text), text };
  } catch (err) {
    throw new UsageError(`${flag} ${path}: not valid JSON (${(err as Error).message})`);
  }
}

function parseActivityTypeId(text: string): number | string {
  // A non-number is passed through so that validation reports it with the expected form.
  return /^\d+$/.test(text.trim()) ? Number(text) : text;
}

function fromFlags(flags: StartFlags, mappings: JsonFile | undefined): Record<string, unknown> {
  const input: Record<string, unknown> = {
    source: { bucket: flags.bucket, key: flags.key },
    dataImportName: flags.name ?? (flags.key ? basename(flags.key) : undefined),
    entityType: flags.entityType,
  };
  if (flags.listAction !== undefined) input.listAction = flags.listAction;
  if (flags.activityTypeId !== undefined) input.activityTypeId = parseActivityTypeId(flags.activityTypeId);
  if (flags.importSource !== undefined) input.importSource = flags.importSource;
  if (mappings !== undefined) input.fieldMappings = mappings.data;
  if (flags.tenant !== undefined) input.tenant = flags.tenant;
  if (flags.onFailure !== undefined) input.onFailure = flags.onFailure;
  const rows = rowOptionsFromFlags(flags);
  if (Object.keys(rows).length > 0) input.rows = rows;
  return input;
}

/** `tab` stands for the tab character, which is awkward to type in a shell. */
function rowOptionsFromFlags(flags: StartFlags): Record<string, string> {
  const rows: Record<string, string> = {};
  if (flags.onRejectedRows !== undefined) rows.onRejectedRows = flags.onRejectedRows;
  if (flags.delimiter !== undefined) rows.delimiter = flags.delimiter === 'tab' ? '\t' : flags.delimiter;
  if (flags.encoding !== undefined) rows.encoding = flags.encoding;
  if (flags.rejectsPrefix !== undefined) rows.rejectsPrefix = flags.rejectsPrefix;
  return rows;
}

/** JSON numbers above 2^53 arrive rounded: the id would silently name another source. Quotes the file's own digits. */
function unsafeSourceIdProblem(fieldMappings: unknown, file: JsonFile | undefined): string | undefined {
  const sourceId = (fieldMappings as { sourceId?: unknown } | undefined)?.sourceId;
  if (typeof sourceId !== 'number' || Number.isSafeInteger(sourceId)) return undefined;
  const written = (file && integerLiteralFor(file.text, sourceId)) ?? String(sourceId);
  return `fieldMappings.sourceId ${written} is too large for a JSON number (it would be rounded); write it as a string: "sourceId": "${written}"`;
}

function withFlag(problem: string): string {
  const field = /^[A-Za-z]+/.exec(problem)?.[0] ?? '';
  const flag = FLAG_OF_FIELD[field];
  return flag ? `${flag}: ${problem}` : problem;
}

/** The validated importFile input (and a valid `--workflow-id`); throws a UsageError naming every problem. */
export function importInputFromFlags(
  flags: StartFlags,
  defaults: InputDefaults,
  read: ReadText = readText,
): ImportFileInput {
  const idProblem = flags.workflowId === undefined ? undefined : workflowIdProblem(flags.workflowId);
  if (idProblem) throw new UsageError(`--workflow-id ${idProblem}`);
  const usedInputFlags = Object.entries(INPUT_FLAGS)
    .filter(([field]) => flags[field as keyof StartFlags] !== undefined)
    .map(([, flag]) => flag);
  let raw: Record<string, unknown>;
  let file: JsonFile | undefined;
  let fromFile = false;
  if (flags.input !== undefined) {
    if (usedInputFlags.length > 0) {
      throw new UsageError(
        `use either --input or the input flags, not both (got --input and ${usedInputFlags.join(', ')})`,
      );
    }
    file = readJson(flags.input, '--input', read);
    const parsed = file.data;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new UsageError(`--input ${flags.input}: must hold one JSON object, the importFile input`);
    }
    raw = parsed as Record<string, unknown>;
    fromFile = true;
  } else {
    if (flags.bucket === undefined || flags.key === undefined || flags.entityType === undefined) {
      throw new UsageError('start needs --bucket, --key and --entity-type (or --input file.json); see start --help');
    }
    if (flags.mappingsFile !== undefined) file = readJson(flags.mappingsFile, '--mappings-file', read);
    raw = fromFlags(flags, file);
  }
  raw.tenant ??= defaults.tenant;
  raw.jobTimeoutMs ??= defaults.jobTimeoutMs;
  // Who started it, for the outcome metrics only.
  raw.trigger ??= 'cli';
  const lostPrecision = unsafeSourceIdProblem(raw.fieldMappings, file);
  if (lostPrecision) throw new UsageError(lostPrecision);
  const problems = importInputProblems(raw);
  if (problems.length > 0) {
    const where = fromFile ? `--input ${flags.input}: ` : '';
    throw new UsageError(`invalid import input: ${where}${(fromFile ? problems : problems.map(withFlag)).join('; ')}`);
  }
  return normaliseImportInput(raw as unknown as ImportFileInput);
}

/** Set when the input may remove list members: the operator is told before anything starts. */
export function destructiveListActionWarning(input: ImportFileInput): string | undefined {
  if (input.listAction === undefined || !DESTRUCTIVE_LIST_ACTIONS.includes(input.listAction)) return undefined;
  const effect =
    input.listAction === 'replace'
      ? 'removes every member of the target list before adding the file'
      : 'removes the listed members from the target list';
  return `warning: listAction ${input.listAction} ${effect}`;
}
