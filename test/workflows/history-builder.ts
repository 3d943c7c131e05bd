/**
 * Builds Temporal histories (the JSON form `Worker.runReplayHistory` accepts)
 * for the few cases a recording would make too big (a 2,000-event ledger run,
 * a night of 600 children). Everything else is recorded from a server
 * instead (recorded-histories.ts), and this builder copies what those
 * recordings show, so a built history replays as a recorded one does:
 * - every workflow task is SCHEDULED, STARTED, COMPLETED; a command event
 *   points at the COMPLETED that produced it; activity and timer ids are the
 *   SDK's per-kind sequence numbers ("1", "2", ...);
 * - the first COMPLETED carries the SDK's sdkMetadata (core flags 1-3, SDK
 *   name and version) as the SDK writes it: without it a replay takes the
 *   SDK's older code paths (a recorded history also shows the lang flag 2 on
 *   the first task after a signal; no built history has a signal);
 * - an update is accepted in the task it arrives with, its events in the
 *   order the SDK sends them (for update-with-start: UpdateAccepted, the
 *   first task's commands, UpdateCompleted), with ids that are never reused;
 * - ids and times are strings; payloads are json/plain, base64 encoded. The
 *   workflow clock (Date.now() in workflow code) reads the WORKFLOW_TASK_STARTED
 *   event's time.
 */

type Json = Record<string, unknown>;

/** The SDK version the recorded histories name; the flags below are those it writes. */
const SDK_VERSION = '1.24.0';

interface Payload {
  metadata: { encoding: string };
  data?: string;
}

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

export function jsonPayload(value: unknown): Payload {
  if (value === undefined) return { metadata: { encoding: base64('binary/null') } };
  return { metadata: { encoding: base64('json/plain') }, data: base64(JSON.stringify(value)) };
}

const payloads = (values: unknown[]) => ({ payloads: values.map(jsonPayload) });

/** An ApplicationFailure as an activity or workflow reports it. */
export interface FailureSpec {
  message: string;
  type: string;
  nonRetryable?: boolean;
  details?: unknown[];
}

function failureJson(f: FailureSpec): Json {
  return {
    message: f.message,
    source: 'TypeScriptSDK',
    applicationFailureInfo: {
      type: f.type,
      nonRetryable: f.nonRetryable ?? true,
      ...(f.details ? { details: payloads(f.details) } : {}),
    },
  };
}

/** What became of an activity. */
export type ActivityOutcome = { returns: unknown } | { fails: FailureSpec };

interface ActivityRef {
  scheduledId: number;
  startedId?: number;
}

interface TimerRef {
  timerId: string;
  startedId: number;
}

interface UpdateRef {
  updateId: string;
  acceptedId: number;
}

export interface HistoryOptions {
  workflowType: string;
  args: unknown[];
  taskQueue?: string;
  /** ISO instant of the start event; the clock advances one second per event after it. */
  startTime?: string;
  runId?: string;
}

export interface History {
  events: Json[];
}

export class HistoryBuilder {
  private readonly events: Json[] = [];
  private nowMs: number;
  private lastCompletedId = 0;
  private activitySeq = 0;
  private timerSeq = 0;
  private updateSeq = 0;
  private readonly updateIds = new Set<string>();
  private coreFlagsWritten = false;
  readonly taskQueue: string;

  constructor(private readonly options: HistoryOptions) {
    this.taskQueue = options.taskQueue ?? 'replay-q';
    this.nowMs = Date.parse(options.startTime ?? '2026-01-01T00:00:00Z');
    const runId = options.runId ?? '22222222-2222-2222-2222-222222222222';
    this.push('EVENT_TYPE_WORKFLOW_EXECUTION_STARTED', 'workflowExecutionStartedEventAttributes', {
      workflowType: { name: options.workflowType },
      taskQueue: this.queue(this.taskQueue),
      input: payloads(options.args),
      workflowTaskTimeout: '10s',
      originalExecutionRunId: runId,
      identity: 'history-builder',
      firstExecutionRunId: runId,
      attempt: 1,
    });
    this.workflowTask();
  }

  /** The workflow clock now: the time of the last WORKFLOW_TASK_STARTED event. */
  get workflowClock(): number {
    const started = [...this.events].reverse().find((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_TASK_STARTED');
    return Date.parse(String(started?.eventTime));
  }

  /** Number of events so far. */
  get length(): number {
    return this.events.length;
  }

  /** One workflow task: scheduled, started (the workflow clock), completed. */
  workflowTask(): this {
    const scheduledId = this.push('EVENT_TYPE_WORKFLOW_TASK_SCHEDULED', 'workflowTaskScheduledEventAttributes', {
      taskQueue: this.queue(this.taskQueue),
      startToCloseTimeout: '10s',
      attempt: 1,
    });
    const startedId = this.push('EVENT_TYPE_WORKFLOW_TASK_STARTED', 'workflowTaskStartedEventAttributes', {
      scheduledEventId: String(scheduledId),
      identity: 'history-builder',
      requestId: `wft-${scheduledId}`,
    });
    this.lastCompletedId = this.push('EVENT_TYPE_WORKFLOW_TASK_COMPLETED', 'workflowTaskCompletedEventAttributes', {
      scheduledEventId: String(scheduledId),
      startedEventId: String(startedId),
      identity: 'history-builder',
      sdkMetadata: this.sdkMetadata(),
      meteringMetadata: {},
    });
    return this;
  }

  /** The flags the SDK writes the first time it uses them (see its flags.ts), as a recorded history shows. */
  private sdkMetadata(): Json {
    const metadata: Json = {};
    if (!this.coreFlagsWritten) {
      Object.assign(metadata, { coreUsedFlags: [1, 2, 3], sdkName: 'temporal-typescript', sdkVersion: SDK_VERSION });
      this.coreFlagsWritten = true;
    }
    return metadata;
  }

  scheduleActivity(
    activityType: string,
    options: { input?: unknown; taskQueue?: string; startToCloseMs?: number; heartbeatMs?: number } = {},
  ): ActivityRef {
    const activityId = String(++this.activitySeq);
    const scheduledId = this.push('EVENT_TYPE_ACTIVITY_TASK_SCHEDULED', 'activityTaskScheduledEventAttributes', {
      activityId,
      activityType: { name: activityType },
      taskQueue: this.queue(options.taskQueue ?? this.taskQueue),
      ...(options.input !== undefined ? { input: payloads([options.input]) } : {}),
      scheduleToCloseTimeout: '0s',
      scheduleToStartTimeout: '0s',
      startToCloseTimeout: `${(options.startToCloseMs ?? 120_000) / 1000}s`,
      heartbeatTimeout: `${(options.heartbeatMs ?? 0) / 1000}s`,
      workflowTaskCompletedEventId: String(this.lastCompletedId),
    });
    return { scheduledId };
  }

  startActivity(ref: ActivityRef, attempt = 1): this {
    ref.startedId = this.push('EVENT_TYPE_ACTIVITY_TASK_STARTED', 'activityTaskStartedEventAttributes', {
      scheduledEventId: String(ref.scheduledId),
      identity: 'history-builder',
      requestId: `act-${ref.scheduledId}`,
      attempt,
    });
    return this;
  }

  closeActivity(ref: ActivityRef, outcome: ActivityOutcome): this {
    if (ref.startedId === undefined) this.startActivity(ref);
    const ids = { scheduledEventId: String(ref.scheduledId), startedEventId: String(ref.startedId) };
    if ('returns' in outcome) {
      this.push('EVENT_TYPE_ACTIVITY_TASK_COMPLETED', 'activityTaskCompletedEventAttributes', {
        result: payloads([outcome.returns]),
        ...ids,
        identity: 'history-builder',
      });
    } else {
      this.push('EVENT_TYPE_ACTIVITY_TASK_FAILED', 'activityTaskFailedEventAttributes', {
        failure: failureJson(outcome.fails),
        ...ids,
        identity: 'history-builder',
        retryState: 'RETRY_STATE_NON_RETRYABLE_FAILURE',
      });
    }
    return this;
  }

  /** The common case: the last workflow task scheduled it, it ran, and its result woke the workflow. */
  activity(
    activityType: string,
    outcome: ActivityOutcome,
    options: { input?: unknown; taskQueue?: string } = {},
  ): this {
    const ref = this.scheduleActivity(activityType, options);
    this.startActivity(ref);
    return this.closeActivity(ref, outcome).workflowTask();
  }

  startTimer(ms: number): TimerRef {
    const timerId = String(++this.timerSeq);
    const startedId = this.push('EVENT_TYPE_TIMER_STARTED', 'timerStartedEventAttributes', {
      timerId,
      startToFireTimeout: `${ms / 1000}s`,
      workflowTaskCompletedEventId: String(this.lastCompletedId),
    });
    return { timerId, startedId };
  }

  /** A timer the workflow cancelled (a condition that came true before its timeout). */
  cancelTimer(ref: TimerRef): this {
    this.push('EVENT_TYPE_TIMER_CANCELED', 'timerCanceledEventAttributes', {
      timerId: ref.timerId,
      startedEventId: String(ref.startedId),
      workflowTaskCompletedEventId: String(this.lastCompletedId),
      identity: 'history-builder',
    });
    return this;
  }

  /**
   * An update the last workflow task accepted (its validator passed). Then
   * the events of that task's commands, then `completeUpdate`: for
   * update-with-start, call it right after the constructor.
   */
  acceptUpdate(name: string, args: unknown[], updateId = `update-${++this.updateSeq}`): UpdateRef {
    if (this.updateIds.has(updateId)) {
      throw new Error(`update id ${updateId} is used twice: a server answers the second from the first`);
    }
    this.updateIds.add(updateId);
    const scheduledId = [...this.events]
      .reverse()
      .find((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_TASK_SCHEDULED')?.eventId;
    const acceptedId = this.push(
      'EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED',
      'workflowExecutionUpdateAcceptedEventAttributes',
      {
        protocolInstanceId: updateId,
        acceptedRequestMessageId: `${updateId}/request`,
        acceptedRequestSequencingEventId: scheduledId,
        acceptedRequest: {
          meta: { updateId, identity: 'history-builder' },
          input: { header: {}, name, args: payloads(args) },
        },
      },
    );
    return { updateId, acceptedId };
  }

  /** ... and the handler's answer. */
  completeUpdate(ref: UpdateRef, result: unknown): this {
    this.push('EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED', 'workflowExecutionUpdateCompletedEventAttributes', {
      meta: { updateId: ref.updateId, identity: 'history-builder' },
      acceptedEventId: String(ref.acceptedId),
      outcome: { success: payloads([result]) },
    });
    return this;
  }

  /** An update delivered in its own workflow task, accepted and answered there (the update id is the requestId's role). */
  update(name: string, args: unknown[], result: unknown, updateId?: string): this {
    this.workflowTask();
    return this.completeUpdate(this.acceptUpdate(name, args, updateId), result);
  }

  continueAsNew(args: unknown[]): History {
    this.push('EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW', 'workflowExecutionContinuedAsNewEventAttributes', {
      newExecutionRunId: '33333333-3333-3333-3333-333333333333',
      workflowType: { name: this.options.workflowType },
      taskQueue: this.queue(this.taskQueue),
      input: payloads(args),
      workflowRunTimeout: '0s',
      workflowTaskTimeout: '10s',
      workflowTaskCompletedEventId: String(this.lastCompletedId),
      initiator: 'CONTINUE_AS_NEW_INITIATOR_WORKFLOW',
    });
    return this.build();
  }

  /** The history as it stands (for a workflow still running). */
  build(): History {
    return { events: this.events.map((e) => ({ ...e })) };
  }

  private queue(name: string) {
    return { name, kind: 'TASK_QUEUE_KIND_NORMAL' };
  }

  private push(eventType: string, attributesKey: string, attributes: Json): number {
    const eventId = this.events.length + 1;
    if (eventId > 1) this.nowMs += 1000;
    this.events.push({
      eventId: String(eventId),
      eventTime: new Date(this.nowMs).toISOString(),
      eventType,
      taskId: String(1_048_576 + eventId),
      [attributesKey]: attributes,
    });
    return eventId;
  }
}
