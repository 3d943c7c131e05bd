/**
 * Nightly histories for the shared HistoryBuilder (test/workflows): child
 * workflow events (start initiated, started, completed), and the inputs
 * nightlyImport gives its activities, so a built night records what a real
 * one does. Failed and refused child starts appear in the recorded nights.
 */

import type { ListFeedObjectsResult } from '../../workflows/contracts/activities.js';
import type { NightlyImportInput } from '../../workflows/contracts/nightly.js';
import { LIST_PAGE_SIZE } from '../../workflows/nightly-run.js';
import { type ActivityOutcome, HistoryBuilder, type HistoryOptions, jsonPayload } from './history-builder.js';

type Json = Record<string, unknown>;

interface ChildRef {
  workflowId: string;
  workflowType: string;
  initiatedId: number;
  startedId?: number;
}

/** The builder's event writer; private there, because only builders add events. */
type EventWriter = { push(eventType: string, attributesKey: string, attributes: Json): number };

export class NightlyHistoryBuilder extends HistoryBuilder {
  private readonly night: NightlyImportInput;
  /** The continuation token the next listing starts from. */
  private listFrom: string | undefined;

  constructor(options: HistoryOptions) {
    super(options);
    this.night = options.args[0] as NightlyImportInput;
    this.listFrom = this.night.continuationToken;
  }

  /** An activity of the night; the two nightly activities get the input the workflow gives them. */
  override activity(
    activityType: string,
    outcome: ActivityOutcome,
    options: { input?: unknown; taskQueue?: string } = {},
  ): this {
    const { feed } = this.night;
    let input = options.input;
    if (input === undefined && activityType === 'readBudgetUsage') input = { tenant: feed.tenant };
    if (input === undefined && activityType === 'listFeedObjects') {
      input = {
        bucket: feed.bucket,
        prefix: feed.prefix,
        pattern: feed.pattern,
        continuationToken: this.listFrom,
        maxKeys: LIST_PAGE_SIZE,
      };
      if ('returns' in outcome) this.listFrom = (outcome.returns as ListFeedObjectsResult).nextContinuationToken;
    }
    return super.activity(activityType, outcome, { ...options, input });
  }

  private write(eventType: string, attributesKey: string, attributes: Json): number {
    return (this as unknown as EventWriter).push(eventType, attributesKey, attributes);
  }

  private lastWorkflowTaskCompletedId(): string {
    const completed = this.build().events.filter((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED');
    return String(completed.at(-1)?.eventId);
  }

  private execution(ref: ChildRef) {
    return { workflowId: ref.workflowId, runId: `run-${ref.workflowId}` };
  }

  /** The last workflow task started a child (the command's event). */
  initiateChild(workflowType: string, workflowId: string, input: unknown): ChildRef {
    const initiatedId = this.write(
      'EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED',
      'startChildWorkflowExecutionInitiatedEventAttributes',
      {
        namespace: 'default',
        workflowId,
        workflowType: { name: workflowType },
        taskQueue: { name: this.taskQueue, kind: 'TASK_QUEUE_KIND_NORMAL' },
        input: { payloads: [jsonPayload(input)] },
        workflowExecutionTimeout: '0s',
        workflowRunTimeout: '0s',
        workflowTaskTimeout: '10s',
        parentClosePolicy: 'PARENT_CLOSE_POLICY_ABANDON',
        workflowIdReusePolicy: 'WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY',
        workflowTaskCompletedEventId: this.lastWorkflowTaskCompletedId(),
      },
    );
    return { workflowId, workflowType, initiatedId };
  }

  childStarted(ref: ChildRef): this {
    ref.startedId = this.write(
      'EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED',
      'childWorkflowExecutionStartedEventAttributes',
      {
        namespace: 'default',
        initiatedEventId: String(ref.initiatedId),
        workflowExecution: this.execution(ref),
        workflowType: { name: ref.workflowType },
      },
    );
    return this.workflowTask();
  }

  childCompleted(ref: ChildRef, result: unknown): this {
    this.write('EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED', 'childWorkflowExecutionCompletedEventAttributes', {
      result: { payloads: [jsonPayload(result)] },
      namespace: 'default',
      workflowExecution: this.execution(ref),
      workflowType: { name: ref.workflowType },
      initiatedEventId: String(ref.initiatedId),
      startedEventId: String(ref.startedId),
    });
    return this.workflowTask();
  }
}
