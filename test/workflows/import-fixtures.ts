/**
 * One import, described once: the input and what each activity answers on
 * the happy path. Replay histories and the real-server tests both use it.
 */
import type {
  ApplyFieldMappingsResult,
  AwaitJobCompletionResult,
  CreateImportJobResult,
  InspectSourceResult,
  PlanRowsResult,
  UploadDataResult,
} from '../../workflows/contracts/activities.js';
import type { ImportFileInput } from '../../workflows/contracts/import-input.js';
import type { FailureSpec } from './history-builder.js';

export const importInput: ImportFileInput = {
  source: { bucket: 'imports', key: 'accounts/2026-01-01.csv' },
  dataImportName: 'Accounts 2026-01-01',
  entityType: 'Account',
  tenant: 'acme',
  fieldMappings: {
    sourceId: '9007199254740993',
    objectType: 'account',
    mappings: [{ sourceFieldLabel: 'Name', serviceFieldName: 'name', dataType: 'string' }],
  },
};

export const inspected: InspectSourceResult = {
  sizeBytes: 1_048_576,
  etag: '"0123456789abcdef"',
  dialect: { compression: 'none', encoding: 'utf-8', hasBom: false, delimiter: ',', lineEnd: 'LF' },
  header: ['Name'],
  warnings: [],
};

/** A file already in the service's form: sent byte for byte. */
export const rowsPlanned: PlanRowsResult = {
  plan: {
    dialect: inspected.dialect,
    rules: { header: ['Name'], required: [], typed: [] },
    maxPartBytes: 5_000_000_000,
    maxRowBytes: 16 * 1024 * 1024,
    body: 'original',
    rowsRead: 1000,
    rowsSent: 1000,
    rowsRejected: 0,
    parts: [
      {
        number: 1,
        firstRow: 2,
        lastRow: 1001,
        rowsSent: 1000,
        startByte: 0,
        bytes: 1_048_576,
        sha256: 'ab'.repeat(32),
      },
    ],
  },
  rows: { dialect: 'uncompressed, utf-8, ",", LF', body: 'original', read: 1000, sent: 1000, rejected: 0 },
};

export const mappingsApplied: ApplyFieldMappingsResult = {
  changed: true,
  apiCalls: { getFieldMappings: 2, putFieldMappings: 1 },
};

export const jobCreated: CreateImportJobResult = {
  jobId: '4242',
  reused: false,
  state: 'created',
  apiCalls: { listJobs: 1, createJob: 1 },
};

export const uploaded: UploadDataResult = {
  bytesSent: inspected.sizeBytes,
  skipped: false,
  state: 'queued',
  apiCalls: { jobStatus: 1, submitData: 1 },
};

export const jobCompleted: AwaitJobCompletionResult = {
  state: 'completed',
  polls: 3,
  apiCalls: { jobStatus: 3 },
};

export function budgetExhausted(endpoint: string, resetsAt: string): FailureSpec {
  return {
    message: `daily budget of ${endpoint} is spent until ${resetsAt}`,
    type: 'BudgetExhausted',
    details: [{ endpoint, resetsAt }],
  };
}
