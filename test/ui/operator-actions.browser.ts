/**
 * The operator paths of docs/operating.md "When an import fails", done in the Temporal
 * Web UI in a real browser (Debian's Chromium through playwright-core) on the
 * full stack: dev server with its UI, s3rver, the service simulator, and the
 * real worker. The test never signals or resets through the SDK: every
 * operator action is a click in the UI. Screenshots of each step go to
 * test-artifacts/ui/<test>/.
 *
 * Run with `npm run test:ui` (test/ui/vitest.config.ts); Chromium comes from
 * test/ui/install-chromium.sh.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ImportFileInput } from '../../workflows/contracts/import-input.js';
import { progressQuery, retrySignal } from '../../workflows/contracts/messages.js';
import type { importFile } from '../../workflows/import-file.js';
import { launchChromium, screenshotter } from './browser.js';
import { BUCKET, startStack, type UiStack } from './stack.js';
import { WorkflowPage } from './workflow-page.js';

const EventType = temporal.api.enums.v1.EventType;
const CSV = 'Account Name,Account Domain\nAcme,acme.example.com\nGlobex,globex.example.com\n';

const until = async <T>(read: () => Promise<T>, ready: (value: T) => boolean): Promise<T> => {
  for (;;) {
    const value = await read();
    if (ready(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

describe('operator actions in the Temporal Web UI', () => {
  let stack: UiStack;
  let browser: Browser;
  let page: Page;
  let ui: WorkflowPage;
  const started: string[] = [];

  beforeAll(async () => {
    // A job stays `processing` this long after its upload: time for the test to break the next status poll.
    stack = await startStack({ processingMs: 8_000 });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  beforeEach(async () => {
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.setDefaultTimeout(30_000);
    ui = new WorkflowPage(page, stack.temporal.uiUrl, stack.namespace);
  });

  afterEach(async () => {
    await page?.close();
    // An import a failed test left running would take the next test's injected fault.
    for (const id of started.splice(0)) {
      const handle = stack.client.workflow.getHandle(id);
      if ((await handle.describe()).status.name === 'RUNNING') await handle.terminate('test ended');
    }
  });

  const input = (key: string, name: string, more: Partial<ImportFileInput> = {}): ImportFileInput => ({
    source: { bucket: BUCKET, key },
    dataImportName: name,
    entityType: 'Account',
    listAction: 'insert',
    ...more,
  });

  const start = (workflowId: string, args: ImportFileInput) => {
    started.push(workflowId);
    return stack.client.workflow.start<typeof importFile>('importFile', {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [args],
    });
  };

  const putFile = (key: string) =>
    stack.s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: CSV, ContentType: 'text/csv' }));

  /** The service's jobs of one import: each test names its import's job after its workflow id. */
  async function jobsOf(workflowId: string) {
    return (await stack.sim.jobs()).filter((job) => job.dataImportName?.includes(workflowId));
  }

  async function requestsTo(endpoint: string, path?: string) {
    return (await stack.sim.requests()).filter((r) => r.endpoint === endpoint && (!path || r.path === path));
  }

  it('sends `retry` to an import waiting after a fixable failure, and the import completes', async () => {
    const shot = screenshotter('retry-signal');
    const workflowId = `ui-retry-${Date.now()}`;
    const key = 'drops/late-accounts.csv';
    // The file is not there yet: inspectSource fails with SourceNotFound, which an operator can fix.
    const handle = await start(workflowId, input(key, workflowId, { onFailure: 'await-retry' }));
    const waiting = await until(
      () => handle.query(progressQuery),
      (p) => p.awaitingRetry !== undefined,
    );
    expect(waiting.awaitingRetry).toMatchObject({ step: 'inspectSource', failureType: 'SourceNotFound' });

    await ui.open(workflowId);
    await ui.waitForStatus('Running');
    await shot(page, 'waiting-for-retry');

    await putFile(key); // the cause, fixed
    const dialog = await ui.openSignalDialog(retrySignal.name);
    await shot(page, 'signal-dialog-retry');
    await ui.submit(dialog, 'Submit');
    await page.getByText('Workflow signaled.').first().waitFor();
    await shot(page, 'signal-sent');

    const result = await handle.result();
    await ui.waitForStatus('Completed');
    await shot(page, 'completed');

    expect(result).toMatchObject({ state: 'completed', bytes: CSV.length, jobReused: false, uploadSkipped: false });
    const history = await handle.fetchHistory();
    const signals = (history.events ?? []).filter(
      (e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
    );
    expect(signals.map((e) => e.workflowExecutionSignaledEventAttributes?.signalName)).toEqual([retrySignal.name]);
    const jobs = await jobsOf(workflowId);
    expect(jobs).toMatchObject([{ id: result.jobId, state: 'completed', uploads: 1, bytesReceived: CSV.length }]);
  });

  type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;

  /** The first workflow task: from there every step runs again. */
  const firstWorkflowTask = (history: History) =>
    history.events?.find((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)?.eventId;

  /** docs/operating.md "When an import fails": the last workflow task before the failed step (here awaitJobCompletion). */
  const lastTaskBeforeFailedStep = (history: History) => {
    // The failed step's own scheduling: a failure notification is scheduled after it.
    const scheduled = history.events?.filter(
      (e) =>
        e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
        e.activityTaskScheduledEventAttributes?.activityType?.name === 'awaitJobCompletion',
    );
    return scheduled?.at(-1)?.activityTaskScheduledEventAttributes?.workflowTaskCompletedEventId;
  };

  /**
   * An import that fails after the service accepted its upload (a 403 on the next status poll), the
   * cause fixed, then a Reset in the UI to the chosen workflow task: it must complete with the same
   * job, no second job and no second PUT, whatever steps the reset runs again.
   */
  async function resetAfterFixedFailure(
    name: string,
    resetPoint: (history: History) => Long | number | null | undefined,
    rerun: { jobReused: boolean; uploadSkipped: boolean },
  ) {
    const shot = screenshotter(name);
    const workflowId = `ui-${name}-${Date.now()}`;
    const key = `drops/${name}.csv`;
    await putFile(key);
    const handle = await start(workflowId, input(key, workflowId));

    const [job] = await until(
      () => jobsOf(workflowId),
      (jobs) => jobs[0]?.uploads === 1,
    );
    await stack.sim.failNext('jobStatus', 403);
    const failure = await handle.result().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const cause = (failure as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect(cause.type).toBe('Forbidden');
    expect(cause.message).toMatch(/^awaitJobCompletion failed \(Forbidden\): /);
    const failedRunId = (await handle.describe()).runId;

    await ui.open(workflowId);
    await ui.waitForStatus('Failed');
    await shot(page, 'failed-forbidden');

    await stack.sim.clearFaults(); // the cause, fixed
    const createsBefore = (await requestsTo('createJob')).length;
    const putPath = `/import/v1/job/${job?.id}/data`;
    expect(await requestsTo('submitData', putPath)).toHaveLength(1);

    const eventId = Number(resetPoint(await handle.fetchHistory()));
    expect(eventId).toBeGreaterThan(0);
    const dialog = await ui.openResetDialog(eventId, 'service permission restored (403 fixed)');
    await shot(page, 'reset-dialog');
    await ui.submit(dialog, 'Confirm');
    await ui.resetNotice().waitFor();
    await shot(page, 'reset-done');

    const latest = await handle.describe();
    expect(latest.runId).not.toBe(failedRunId);
    const result = await stack.client.workflow.getHandle<typeof importFile>(workflowId, latest.runId).result();
    await ui.followResetLink();
    await ui.waitForStatus('Completed');
    await shot(page, 'reset-run-completed');

    expect(result).toMatchObject({ jobId: job?.id, state: 'completed', ...rerun });
    expect(await jobsOf(workflowId)).toMatchObject([{ id: job?.id, state: 'completed', uploads: 1 }]);
    expect(await requestsTo('createJob')).toHaveLength(createsBefore);
    expect(await requestsTo('submitData', putPath)).toHaveLength(1);
  }

  it('Resets a failed import to its first workflow task after the cause is fixed: every step runs again, yet no second job and no second PUT', async () => {
    await resetAfterFixedFailure('reset-to-first-task', firstWorkflowTask, { jobReused: true, uploadSkipped: true });
  });

  it('Resets a failed import to the last workflow task before the failed step (the documented path): it completes with no second job and no second PUT', async () => {
    await resetAfterFixedFailure('reset-before-failed-step', lastTaskBeforeFailedStep, {
      jobReused: false,
      uploadSkipped: false,
    });
  });
});
