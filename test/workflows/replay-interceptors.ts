/**
 * Workflow interceptors for replay tests, bundled with the workflow code. The
 * replayer compares only the kind and order of commands; these report, through
 * a sink, what each command carried (activity inputs, timer durations, child
 * ids, continue-as-new arguments) and what the run answered (update results,
 * its result or failure), so a test can compare them with the history.
 */
import { ApplicationFailure, proxySinks, type Sinks, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

export interface ReplayRecorderSinks extends Sinks {
  replayRecorder: {
    activity(activityType: string, args: unknown[]): void;
    timer(durationMs: number): void;
    child(workflowType: string, workflowId: string, args: unknown[]): void;
    update(updateId: string, name: string, outcome: { result: unknown } | { failure: string }): void;
    continuedAsNew(args: unknown[]): void;
    completed(result: unknown): void;
    failed(type: string | undefined, message: string): void;
  };
}

const { replayRecorder } = proxySinks<ReplayRecorderSinks>();

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      async execute(input, next) {
        try {
          const result = await next(input);
          replayRecorder.completed(result);
          return result;
        } catch (err) {
          if (err instanceof ApplicationFailure) replayRecorder.failed(err.type ?? undefined, err.message);
          throw err;
        }
      },
      async handleUpdate(input, next) {
        try {
          const result = await next(input);
          replayRecorder.update(input.updateId, input.name, { result });
          return result;
        } catch (err) {
          replayRecorder.update(input.updateId, input.name, { failure: (err as Error).message });
          throw err;
        }
      },
    },
  ],
  outbound: [
    {
      scheduleActivity(input, next) {
        replayRecorder.activity(input.activityType, input.args);
        return next(input);
      },
      startTimer(input, next) {
        replayRecorder.timer(input.durationMs);
        return next(input);
      },
      startChildWorkflowExecution(input, next) {
        replayRecorder.child(input.workflowType, input.options.workflowId, input.options.args ?? []);
        return next(input);
      },
      continueAsNew(input, next) {
        replayRecorder.continuedAsNew(input.args);
        return next(input);
      },
    },
  ],
});
