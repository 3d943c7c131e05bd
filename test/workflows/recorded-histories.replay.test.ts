/**
 * The determinism guard: every history recorded from a real server
 * (test/workflows/histories/, `npm run record:histories`) replays with
 * today's workflow code. A change that would break a running import, ledger
 * or night fails here before it ships: the replayer rejects a command of
 * another kind or order, and the comparison below rejects a changed update
 * result, continue-as-new input, child id, result or failure.
 *
 * The current recordings (the folder's top level) must also match in every
 * activity input and timer duration: a difference there means the code's
 * behaviour changed and the recordings are stale (`npm run record:histories`,
 * then review the diff). Histories of released versions (subfolders) may
 * differ there: their recorded commands are what ran. A new fixture in the
 * folder is covered without a change here.
 */
import path from 'node:path';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { DeterminismViolationError } from '@temporalio/workflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTracing } from '../../worker/process/tracing.js';
import { loadRecordedHistories } from './recorded-histories.js';
import { answersOf, asHistoryHoldsIt, bundleForReplay, recordOfHistory, replay } from './replay.js';

const fixtures = loadRecordedHistories();

let code: string;

beforeAll(async () => {
  code = await bundleForReplay();
}, 60_000);

describe('recorded histories replay with today’s workflow code', () => {
  it('there are recorded histories of every workflow the worker runs', () => {
    const types = new Set(fixtures.map((f) => f.recorded.workflowType));
    expect([...types].sort()).toEqual(expect.arrayContaining(['budgetLedger', 'importFile', 'nightlyImport']));
  });

  it('field mappings cost a happy-path import eleven events: the activity and its release signal to the lock', () => {
    // applyFieldMappings (3 activity + 3 workflow-task events), and the release signal to the lock
    // (initiated and its outcome, 2, in a task of its own, 3).
    const events = (file: string) => fixtures.find((f) => f.file === file)?.recorded.history.events.length ?? 0;
    expect(events('import-happy-path-with-mappings.json') - events('import-happy-path-without-mappings.json')).toBe(11);
  });

  it.each(fixtures.map((f) => [f.file, f.recorded] as const))('%s', async (file, recorded) => {
    const done = await replay(code, recorded.history, recorded.workflowId);
    const recordedRun = recordOfHistory(recorded.history);
    if (file.includes(path.sep)) {
      expect(answersOf(done)).toEqual(answersOf(recordedRun));
    } else {
      expect(asHistoryHoldsIt(done, recordedRun)).toEqual(recordedRun);
    }
  });
});

describe('a worker with tracing on replays them too', () => {
  // The bundle is the same either way (the import workflows' tracing interceptors are always in it); tracing
  // on adds the SDK's plugin: its activity interceptors and the sink of workflow spans. The longest recording
  // of each workflow type, so the ledger's Updates, the nightly's children and an import's signals are in.
  const longest = (type: string) =>
    fixtures
      .filter((f) => f.recorded.workflowType === type)
      .reduce((a, b) => (b.recorded.history.events.length > a.recorded.history.events.length ? b : a));
  const exporter = new InMemorySpanExporter();
  const tracing = createTracing(new SimpleSpanProcessor(exporter));
  afterAll(() => tracing.shutdown());

  it.each(['importFile', 'nightlyImport', 'budgetLedger'])('the longest %s recording', async (type) => {
    const { file, recorded } = longest(type);
    const done = await replay(code, recorded.history, recorded.workflowId, tracing);
    const recordedRun = recordOfHistory(recorded.history);
    if (file.includes(path.sep)) expect(answersOf(done)).toEqual(answersOf(recordedRun));
    else expect(asHistoryHoldsIt(done, recordedRun)).toEqual(recordedRun);
    // The spans were exported when the run ran; a replay does not send them again.
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});

describe('the guard bites', () => {
  const happy = () =>
    structuredClone(fixtures.find((f) => f.file === 'import-happy-path-with-mappings.json')!.recorded);

  it('a recorded run whose commands differ from the code (its mappings dropped from the input) fails the replay', async () => {
    const recorded = happy();
    const started = recorded.history.events[0] as {
      workflowExecutionStartedEventAttributes: { input: { payloads: { data: string }[] } };
    };
    const payload = started.workflowExecutionStartedEventAttributes.input.payloads[0]!;
    const input = JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8'));
    delete input.fieldMappings;
    payload.data = Buffer.from(JSON.stringify(input)).toString('base64');
    await expect(replay(code, recorded.history, recorded.workflowId)).rejects.toThrow(DeterminismViolationError);
  });

  it('a recorded result the code no longer returns is a difference, though the replayer accepts it', async () => {
    const recorded = happy();
    const done = await replay(code, recorded.history, recorded.workflowId);
    const expected = recordOfHistory(recorded.history);
    expect(asHistoryHoldsIt(done, expected)).toEqual(expected);
    expect({ ...done, result: { ...(done.result as object), jobId: 1 } }).not.toEqual(expected);
  });
});
