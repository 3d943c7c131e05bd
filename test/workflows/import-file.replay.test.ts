/**
 * The importFile workflow, replayed in the real SDK sandbox against histories
 * built from scenarios. Each test states the exact event sequence a scenario
 * must produce; the replay fails if the workflow's commands differ.
 */
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ImportFileInput } from '../../workflows/policy/import-input.js';
import { DEFAULT_AWAIT_RETRY_TIMEOUT_MS } from '../../workflows/policy/import-workflow-contract.js';
import { type FailureSpec, type History, HistoryBuilder } from './history-builder.js';
import {
  budgetExhausted,
  importInput,
  inspected,
  jobCompleted,
  jobCreated,
  mappingsApplied,
  uploaded,
} from './import-fixtures.js';

const workflowsPath = path.resolve(import.meta.dirname, '../../workflows/index.ts');
const silent = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
let code: string;

beforeAll(async () => {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  ({ code } = await bundleWorkflowCode({ workflowsPath, logger: silent }));
});

const replay = (history: History) => Worker.runReplayHistory({ workflowBundle: { code } }, history, 'import-wf');
const UPLOADS = { taskQueue: 'replay-q-uploads' };
const withoutMappings: ImportFileInput = { ...importInput, fieldMappings: undefined };

function importHistory(input: ImportFileInput = importInput) {
  return new HistoryBuilder({ workflowType: 'importFile', args: [input], startTime: '2026-01-01T10:00:00Z' });
}

/** The happy path up to and including the job's creation. */
function upToJobCreated(input: ImportFileInput = importInput) {
  const h = importHistory(input).activity('inspectSource', { returns: inspected });
  if (input.fieldMappings) h.activity('applyFieldMappings', { returns: mappingsApplied });
  return h.activity('createImportJob', { returns: jobCreated });
}

const failure = (type: string, message: string): FailureSpec => ({ type, message });

describe('importFile replays', () => {
  it('happy path with field mappings: five activities and a fixed 35 events', async () => {
    const history = upToJobCreated()
      .activity('uploadData', { returns: uploaded }, { ...UPLOADS, tookMs: 3_600_000 })
      .activity('awaitJobCompletion', { returns: jobCompleted }, { tookMs: 7_200_000 })
      .completeWorkflow({});
    await replay(history);
    expect(history.events).toHaveLength(35);
  });

  it('happy path without field mappings: the mapping step is skipped, 29 events', async () => {
    const history = upToJobCreated(withoutMappings)
      .activity('uploadData', { returns: uploaded }, UPLOADS)
      .activity('awaitJobCompletion', { returns: jobCompleted })
      .completeWorkflow({});
    await replay(history);
    expect(history.events).toHaveLength(29);
  });

  it('a spent createJob budget is a durable timer, then the step runs again and the import completes', async () => {
    const h = importHistory()
      .activity('inspectSource', { returns: inspected })
      .activity('applyFieldMappings', { returns: mappingsApplied })
      .activity('createImportJob', { fails: budgetExhausted('createJob', '2026-01-02T00:00:00.000Z') });
    const history = h
      .timer(Date.parse('2026-01-02T00:00:00Z') - h.now)
      .activity('createImportJob', { returns: jobCreated })
      .activity('uploadData', { returns: uploaded }, UPLOADS)
      .activity('awaitJobCompletion', { returns: jobCompleted })
      .completeWorkflow({});
    await replay(history);
  });

  it('a spent jobStatus budget while waiting for the job: timer, then the wait resumes', async () => {
    const h = upToJobCreated()
      .activity('uploadData', { returns: uploaded }, UPLOADS)
      .activity('awaitJobCompletion', {
        fails: { ...budgetExhausted('jobStatus', '2026-01-02T00:00:00.000Z'), type: 'DailyLimitReached' },
      });
    const history = h
      .timer(Date.parse('2026-01-02T00:00:00Z') - h.now)
      .activity('awaitJobCompletion', { returns: jobCompleted })
      .completeWorkflow({});
    await replay(history);
  });

  it('a failed job fails the workflow', async () => {
    const history = upToJobCreated()
      .activity('uploadData', { returns: uploaded }, UPLOADS)
      .activity('awaitJobCompletion', { fails: failure('JobFailed', 'job 4242 failed: 3 rows rejected') })
      .failWorkflow(failure('JobFailed', 'awaitJobCompletion failed (JobFailed): job 4242 failed: 3 rows rejected'));
    await replay(history);
  });

  it('a failed job fails the workflow even with onFailure await-retry', async () => {
    const input: ImportFileInput = { ...withoutMappings, onFailure: 'await-retry' };
    const history = upToJobCreated(input)
      .activity('uploadData', { returns: uploaded }, UPLOADS)
      .activity('awaitJobCompletion', { fails: failure('JobTimedOut', 'job 4242 still running after 24 h') })
      .failWorkflow(
        failure('JobTimedOut', 'awaitJobCompletion failed (JobTimedOut): job 4242 still running after 24 h'),
      );
    await replay(history);
  });

  it('an operator-fixable error with onFailure fail (the default) fails the workflow at once', async () => {
    const history = importHistory()
      .activity('inspectSource', { fails: failure('InvalidCsvHeader', 'header lacks the mapped column "Name"') })
      .failWorkflow(failure('InvalidCsvHeader', 'inspectSource failed (InvalidCsvHeader): header lacks "Name"'));
    await replay(history);
  });

  it('await-retry: the workflow waits, a retry signal re-runs the failed step, and the import completes', async () => {
    const input: ImportFileInput = { ...withoutMappings, onFailure: 'await-retry' };
    const h = upToJobCreated(input).activity(
      'uploadData',
      { fails: failure('Forbidden', 'no import permission') },
      UPLOADS,
    );
    const wait = h.startTimer(DEFAULT_AWAIT_RETRY_TIMEOUT_MS);
    h.advance(3_600_000).signal('retry').workflowTask().cancelTimer(wait);
    const history = h
      .activity('uploadData', { returns: uploaded }, UPLOADS)
      .activity('awaitJobCompletion', { returns: jobCompleted })
      .completeWorkflow({});
    await replay(history);
  });

  it('await-retry after the file changed: the retry inspects the new file before uploading it', async () => {
    const input: ImportFileInput = { ...withoutMappings, onFailure: 'await-retry' };
    const h = upToJobCreated(input).activity(
      'uploadData',
      { fails: failure('SourceChanged', 'the object changed since it was inspected') },
      UPLOADS,
    );
    const wait = h.startTimer(DEFAULT_AWAIT_RETRY_TIMEOUT_MS);
    h.signal('retry').workflowTask().cancelTimer(wait);
    const history = h
      .activity('inspectSource', { returns: { ...inspected, etag: '"fedcba9876543210"' } })
      .activity('uploadData', { returns: uploaded }, UPLOADS)
      .activity('awaitJobCompletion', { returns: jobCompleted })
      .completeWorkflow({});
    await replay(history);
  });

  it('await-retry: an abandon signal fails the workflow', async () => {
    const input: ImportFileInput = { ...withoutMappings, onFailure: 'await-retry' };
    const h = importHistory(input).activity('inspectSource', { fails: failure('SourceNotFound', 'no such object') });
    const wait = h.startTimer(DEFAULT_AWAIT_RETRY_TIMEOUT_MS);
    h.signal('abandon').workflowTask().cancelTimer(wait);
    await replay(h.failWorkflow(failure('SourceNotFound', 'inspectSource failed (SourceNotFound): abandoned')));
  });

  it('await-retry: no signal within the timeout fails the workflow', async () => {
    const input: ImportFileInput = { ...withoutMappings, onFailure: 'await-retry', awaitRetryTimeoutMs: 60_000 };
    const history = importHistory(input)
      .activity('inspectSource', { fails: failure('SourceNotFound', 'no such object') })
      .timer(60_000)
      .failWorkflow(failure('SourceNotFound', 'inspectSource failed (SourceNotFound): no retry signal'));
    await replay(history);
  });

  it('after a reset past the upload: the job is found again, the upload is skipped, the import completes', async () => {
    const history = importHistory()
      .activity('inspectSource', { returns: inspected })
      .activity('applyFieldMappings', { returns: { ...mappingsApplied, changed: false } })
      .activity('createImportJob', { returns: { ...jobCreated, reused: true, state: 'queued' } })
      .activity('uploadData', { returns: { ...uploaded, skipped: true, bytesSent: 0 } }, UPLOADS)
      .activity('awaitJobCompletion', { returns: jobCompleted })
      .completeWorkflow({});
    await replay(history);
  });

  it('invalid input fails the workflow before any activity', async () => {
    const bad = { ...importInput, entityType: 'Lead', listAction: 'append' } as unknown as ImportFileInput;
    await replay(importHistory(bad).failWorkflow(failure('InvalidInput', 'invalid importFile input')));
  });

  it('a history whose commands differ from the code (no mapping step) fails with DeterminismViolationError', async () => {
    const history = importHistory()
      .activity('inspectSource', { returns: inspected })
      .activity('createImportJob', { returns: jobCreated })
      .activity('uploadData', { returns: uploaded }, UPLOADS)
      .activity('awaitJobCompletion', { returns: jobCompleted })
      .completeWorkflow({});
    await expect(replay(history)).rejects.toThrow(DeterminismViolationError);
  });

  it('a history that completes where the code fails (invalid input) fails with DeterminismViolationError', async () => {
    const bad = { ...importInput, dataImportName: '' };
    await expect(replay(importHistory(bad).completeWorkflow({}))).rejects.toThrow(DeterminismViolationError);
  });
});
