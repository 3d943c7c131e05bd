/**
 * Workflow interceptors for replay tests, bundled with the workflow code: they
 * report, through a sink, the children a run starts (with their ids), its
 * continue-as-new arguments and its result. Replay alone compares command
 * kinds and order; these let a test check the ids and the tally too.
 */
import { proxySinks, type Sinks, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

export interface RecorderSinks extends Sinks {
  recorder: {
    childStarted(workflowType: string, workflowId: string, args: unknown[]): void;
    continuedAsNew(args: unknown[]): void;
    completed(result: unknown): void;
  };
}

const { recorder } = proxySinks<RecorderSinks>();

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      async execute(input, next) {
        const result = await next(input);
        recorder.completed(result);
        return result;
      },
    },
  ],
  outbound: [
    {
      startChildWorkflowExecution(input, next) {
        recorder.childStarted(input.workflowType, input.options.workflowId, input.options.args ?? []);
        return next(input);
      },
      continueAsNew(input, next) {
        recorder.continuedAsNew(input.args);
        return next(input);
      },
    },
  ],
});
