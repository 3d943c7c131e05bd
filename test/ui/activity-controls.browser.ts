/**
 * docs/operating.md "Activity controls in the Temporal UI", done by clicking in the
 * Temporal Web UI (the workflow page's Pending Activities tab) on the full
 * stack: dev server with its UI, s3rver, the service simulator and the real
 * worker (WORKER_HEARTBEAT_THROTTLE=1s, test/ui/stack.ts). Each test imports
 * its own object (its own object version, so its own job record) and holds
 * one step of the import in the middle of its I/O, then pauses and unpauses
 * it, or resets it with or without its heartbeat details:
 * - uploadData: the simulator reads the PUT's body slowly (chaos throttle), so
 *   the PUT is still streaming, short of the last 64 KiB the record fences;
 * - createImportJob: the simulator makes the job from the POST (its last byte
 *   sent under the record's lease) and answers late (delayNext);
 * - awaitJobCompletion: the simulator keeps the job `processing`
 *   (holdProcessing) while the worker's job watcher sweeps the list.
 * Whatever the control, the simulator's record must show one job and one
 * complete body. Screenshots of every step go to test-artifacts/ui/<test>/.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { importFile } from '../../workflows/import-file.js';
import { launchChromium, screenshotter } from './browser.js';
import { PendingActivity } from './pending-activity.js';
import { BUCKET, startStack, type UiStack } from './stack.js';
import { WorkflowPage } from './workflow-page.js';

const PendingState = temporal.api.enums.v1.PendingActivityState;
const EventType = temporal.api.enums.v1.EventType;

type Step = 'uploadData' | 'createImportJob' | 'awaitJobCompletion';
type PendingInfo = temporal.api.workflow.v1.IPendingActivityInfo;

const rows = (count: number) =>
  `Account Name,Account Domain\n${Array.from({ length: count }, (_, i) => `Account ${i},a${i}.example.com`).join('\n')}\n`;
/**
 * 26 MB of rows for the upload's tests: larger than what the loopback's socket buffers take in unread
 * (several MB), so a pause finds the worker still writing its body, its fenced last 64 KiB not yet sent.
 * Read at 256 KiB/s the PUT would last well over a minute: the control, not the end of the body, ends it.
 */
const LARGE_CSV = rows(800_000);
/** The other steps' files: the upload runs at full speed, and is larger than the 64 KiB the fence holds. */
const SMALL_CSV = rows(20_000);
const csvFor = (step: Step) => (step === 'uploadData' ? LARGE_CSV : SMALL_CSV);
const SLOW_PUT = { seed: 1, rates: { throttleUpload: 1 }, throttleBytesPerSec: 256 * 1024 };
/**
 * The create's answer comes this late: well past the time the UI takes to show the activity and send
 * the control, even on a loaded machine, and under the worker's request timeout set for this file (so
 * the call is still waiting when the control arrives).
 */
const LATE_ANSWER_MS = 150_000;
const REQUEST_TIMEOUT = '3m';
/** The worker's throttle is 1 s and the activities heartbeat every 1-2 s: a pause must land well within this. */
const PROMPT_MS = 8_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const until = async <T>(read: () => Promise<T>, ready: (value: T) => boolean, timeoutMs = 60_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ready(value)) return value;
    if (Date.now() > deadline) throw new Error(`not ready after ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await sleep(100);
  }
};

const decode = (payload: temporal.api.common.v1.IPayload | undefined): unknown =>
  payload?.data ? JSON.parse(Buffer.from(payload.data).toString('utf8')) : undefined;

describe('activity controls in the Temporal Web UI', () => {
  let stack: UiStack;
  let browser: Browser;
  let page: Page;
  let ui: WorkflowPage;
  const started: string[] = [];

  beforeAll(async () => {
    // Jobs process in a second: the job wait's tests hold their job for as long as they need (holdProcessing).
    // The simulator commits and lists a job at once, so a short lease and service lag are honest here: a
    // paused or reset create's or upload's next attempt then waits about 16 s (lease + delivery bound + lag)
    // instead of 23 s (the default lease, 10 s) before it reads the service.
    stack = await startStack({
      processingMs: 1_000,
      workerEnv: { COMPANY_DATA_REQUEST_TIMEOUT: REQUEST_TIMEOUT, IMPORT_RECORD_LEASE: '3s', IMPORT_RECORD_LAG: '3s' },
    });
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
    await stack.sim.clearFaults();
    await stack.sim.chaos(null);
    for (const id of started.splice(0)) {
      const handle = stack.client.workflow.getHandle(id);
      if ((await handle.describe()).status.name === 'RUNNING') await handle.terminate('test ended');
    }
  });

  /**
   * An import of an object of its own: one object version has one job record, and a version whose
   * record already knows its job would skip the create and the upload.
   */
  const start = async (workflowId: string, csv: string) => {
    const key = `drops/${workflowId}.csv`;
    await stack.s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: csv, ContentType: 'text/csv' }));
    started.push(workflowId);
    return stack.client.workflow.start<typeof importFile>('importFile', {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [
        {
          source: { bucket: BUCKET, key },
          dataImportName: workflowId,
          entityType: 'Account',
          listAction: 'insert',
        },
      ],
    });
  };

  const pending = async (handle: WorkflowHandle, step: Step): Promise<PendingInfo | undefined> =>
    (await handle.describe()).raw.pendingActivities?.find((a) => a.activityType?.name === step);

  const requestsTo = async (endpoint: string) => (await stack.sim.requests()).filter((r) => r.endpoint === endpoint);

  /** The service's jobs of one import: each test names its job after its workflow id. */
  const jobsOf = async (workflowId: string) =>
    (await stack.sim.jobs()).filter((job) => job.dataImportName?.includes(workflowId));

  /** Sets the simulator up so that `step` will be caught in the middle of its I/O. */
  async function prepare(step: Step): Promise<void> {
    if (step === 'uploadData') await stack.sim.chaos(SLOW_PUT);
    if (step === 'createImportJob')
      await stack.sim.fault({ kind: 'delayNext', endpoint: 'createJob', ms: LATE_ANSWER_MS });
    if (step === 'awaitJobCompletion') await stack.sim.fault({ kind: 'holdProcessing' });
  }

  /** Waits until `step` is running and inside its slow call. */
  async function caught(handle: WorkflowHandle, step: Step): Promise<void> {
    const info = await until(
      () => pending(handle, step),
      (a) => a?.state === PendingState.PENDING_ACTIVITY_STATE_STARTED,
    );
    expect(info?.attempt).toBe(1);
    if (step === 'uploadData') {
      // Bytes moving: a heartbeat already reported some, not all.
      await until(
        async () => decode((await pending(handle, step))?.heartbeatDetails?.payloads?.[0]) as { bytesSent?: number },
        (d) => (d?.bytesSent ?? 0) > 0,
      );
    } else if (step === 'createImportJob') {
      await until(
        () => requestsTo('createJob'),
        (rs) => rs.some((r) => r.status === 0),
      );
    } else {
      // The job is processing, and a sweep of the watcher that began after it got there listed it.
      const [job] = await until(
        () => jobsOf(handle.workflowId),
        (jobs) => jobs[0]?.state === 'processing',
      );
      const processingSince = job?.updatedAt ?? '';
      await until(
        () => requestsTo('listJobs'),
        (rs) => rs.some((r) => r.query?.includes('state=processing') && r.status === 200 && r.at > processingSince),
      );
    }
  }

  /**
   * Lets the next attempt run at full speed. The upload's slow read and the create's late answer were
   * drawn when their request began, so the running attempt stays held; a held job ends at once.
   */
  async function release(): Promise<void> {
    await stack.sim.chaos(null);
    await stack.sim.clearFaults();
  }

  /** One job, completed, holding exactly one complete body of `size` bytes: whatever the controls did. */
  async function expectOneJobOneBody(workflowId: string, jobId: string, size: number): Promise<void> {
    const jobs = await jobsOf(workflowId);
    expect(jobs).toMatchObject([{ id: jobId, state: 'completed', uploads: 1, bytesReceived: size }]);
    expect(jobs[0]?.acceptedBodies).toHaveLength(1);
    expect(jobs[0]?.acceptedBodies[0]?.bytes).toBe(size);
    const record = await stack.sim.record();
    expect(record.bodiesByJob[jobId]).toHaveLength(1);
  }

  /** Which attempt completed `step` (its ActivityTaskStarted event, written when it completed). */
  async function completingAttempt(handle: WorkflowHandle, step: Step): Promise<number | null | undefined> {
    const events = (await handle.fetchHistory()).events ?? [];
    const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === step)?.eventId;
    const startedEvent = events.find(
      (e) =>
        e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED &&
        Number(e.activityTaskStartedEventAttributes?.scheduledEventId) === Number(scheduled),
    );
    return startedEvent?.activityTaskStartedEventAttributes?.attempt;
  }

  const steps: Step[] = ['uploadData', 'createImportJob', 'awaitJobCompletion'];

  it.each(steps)(
    'Pause stops a running %s promptly, Unpause continues it, and the import completes with one job and one body',
    async (step) => {
      const shot = screenshotter(`pause-${step}`);
      const workflowId = `ui-pause-${step}-${Date.now()}`;
      const size = Buffer.byteLength(csvFor(step));
      await prepare(step);
      const handle = await start(workflowId, csvFor(step));
      await caught(handle, step);

      const activity = new PendingActivity(page, step);
      await ui.open(workflowId);
      await ui.waitForStatus('Running');
      await activity.openTab();
      await activity.waitForBadge('STARTED');
      await shot(page, 'running');

      await activity.pause('operator: hold this step', () => shot(page, 'pause-dialog'));
      const pausedAt = Date.now();
      // The attempt itself stopped (it failed as paused), not just the next one held back.
      const paused = await until(
        () => pending(handle, step),
        (a) => a?.state === PendingState.PENDING_ACTIVITY_STATE_PAUSED,
        PROMPT_MS,
      );
      expect(Date.now() - pausedAt).toBeLessThan(PROMPT_MS);
      expect(paused?.lastFailure?.applicationFailureInfo?.type).toBe('ActivityPause');
      await activity.waitForBadge('PAUSED');
      await shot(page, 'paused');

      if (step === 'uploadData') {
        // The PUT was cut short of its length: never answered, and nothing committed.
        const details = decode(paused?.heartbeatDetails?.payloads?.[0]) as { bytesSent: number; totalBytes: number };
        expect(details.bytesSent).toBeGreaterThan(0);
        expect(details.bytesSent).toBeLessThan(size);
        await sleep(1_000);
        const [job] = await jobsOf(workflowId);
        expect(job).toMatchObject({ state: 'new', uploads: 0, bytesReceived: 0, acceptedBodies: [] });
        const puts = (await requestsTo('submitData')).filter((r) => r.path === `/import/v1/job/${job?.id}/data`);
        expect(puts.length).toBeGreaterThan(0);
        expect(puts.filter((r) => r.status === 200)).toEqual([]);
      }
      if (step === 'createImportJob') {
        // The create reached the service before the pause cut its answer off: the job exists, unanswered.
        expect(await jobsOf(workflowId)).toHaveLength(1);
      }

      await release();
      await activity.unpause(() => shot(page, 'unpause-dialog'));
      const result = await handle.result();
      await ui.waitForStatus('Completed');
      await shot(page, 'completed');

      expect(result).toMatchObject({ state: 'completed', bytes: size });
      // Not the paused attempt: it stopped, and the one Unpause started did the work.
      expect(await completingAttempt(handle, step)).toBe(2);
      // The create's job was found by its key after the pause, not made a second time.
      expect(result.jobReused).toBe(step === 'createImportJob');
      await expectOneJobOneBody(workflowId, result.jobId, size);
    },
  );

  const resets = steps.flatMap((step) => [
    { step, clear: false, details: 'keeping' },
    { step, clear: true, details: 'clearing' },
  ]);

  it.each(resets)(
    'Reset of a running $step, $details its heartbeat details, starts it again: no second job, no second body',
    async ({ step, clear }) => {
      const shot = screenshotter(`reset-${step}-${clear ? 'clear' : 'keep'}-details`);
      const workflowId = `ui-reset-${step}-${clear ? 'clear' : 'keep'}-${Date.now()}`;
      const size = Buffer.byteLength(csvFor(step));
      await prepare(step);
      const handle = await start(workflowId, csvFor(step));
      await caught(handle, step);

      const activity = new PendingActivity(page, step);
      await ui.open(workflowId);
      await ui.waitForStatus('Running');
      await activity.openTab();
      await activity.waitForBadge('STARTED');
      await shot(page, 'running');

      await activity.reset(clear, () => shot(page, 'reset-dialog'));
      // The job wait's attempt waits on the held job itself: it stays held until that attempt stopped.
      if (step !== 'awaitJobCompletion') await release();
      // The running attempt hears of the reset at its next heartbeat and stops; a new attempt starts.
      const after = await until(
        () => pending(handle, step),
        (a) => a === undefined || a.lastFailure?.applicationFailureInfo?.type === 'ActivityReset',
        PROMPT_MS + 5_000,
      );
      if (step === 'awaitJobCompletion') await release();
      await shot(page, 'reset-done');
      const result = await handle.result();
      await ui.waitForStatus('Completed');
      await shot(page, 'completed');

      // The reset attempt stopped (failed as reset) rather than finished: the next one did the work.
      expect(after?.lastFailure?.applicationFailureInfo?.type ?? 'ActivityReset').toBe('ActivityReset');
      expect(await completingAttempt(handle, step)).toBe(2);
      expect(result).toMatchObject({ state: 'completed', bytes: size });
      expect(result.jobReused).toBe(step === 'createImportJob');
      await expectOneJobOneBody(workflowId, result.jobId, size);
      const puts = (await requestsTo('submitData')).filter((r) => r.path === `/import/v1/job/${result.jobId}/data`);
      // The reset upload's PUT was cut off unanswered and the next attempt's was taken; the other steps sent one PUT.
      expect(puts.map((r) => r.status === 200)).toEqual(step === 'uploadData' ? [false, true] : [true]);
    },
  );
});
