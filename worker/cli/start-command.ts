/** `import-worker start`: validate the input, start importFile, optionally follow it to the end. */
import { WorkflowExecutionAlreadyStartedError, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { loadClientConfig } from '../../temporal.config.js';
import type { importFile } from '../../workflows/import-file.js';
import type { ImportFileResult } from '../../workflows/policy/import-workflow-contract.js';
import { CliError } from './cli-error.js';
import { workflowUiLink } from './connect.js';
import { type CliContext, withClient } from './context.js';
import { formatBytes } from './import-progress.js';
import {
  defaultWorkflowId,
  destructiveListActionWarning,
  importInputFromFlags,
  type StartFlags,
} from './start-input.js';
import { watchImport } from './watch-import.js';

export interface StartOptions extends StartFlags {
  wait?: boolean;
}

export function describeResult(result: ImportFileResult): string {
  const upload = result.uploadSkipped
    ? 'data already accepted earlier, not sent again'
    : `${formatBytes(result.bytes)} uploaded`;
  return `completed: job ${result.jobId}, ${upload}${result.jobReused ? ', job reused' : ''}`;
}

export async function startCommand(options: StartOptions, ctx: CliContext): Promise<void> {
  const config = loadClientConfig(ctx.env);
  const input = importInputFromFlags(options, config.tenant);
  const warning = destructiveListActionWarning(input);
  if (warning) ctx.warn(warning);
  const workflowId = options.workflowId ?? defaultWorkflowId(input, ctx.now());

  await withClient(ctx, config.temporal, async ({ client }) => {
    let handle: WorkflowHandleWithFirstExecutionRunId<typeof importFile>;
    try {
      handle = await client.workflow.start<typeof importFile>('importFile', {
        taskQueue: config.temporal.taskQueue,
        workflowId,
        args: [input],
      });
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) {
        throw new CliError(`workflow id ${workflowId} is already running; pass another --workflow-id`);
      }
      throw err;
    }
    ctx.print(`started importFile ${workflowId}`);
    ctx.print(`  ${workflowUiLink(config.temporal, workflowId)}`);
    if (!options.wait) return;

    const outcome = await watchImport(handle);
    if (!outcome.ok) throw new CliError(`import failed: ${outcome.reason}`);
    ctx.print(describeResult(outcome.result));
  });
}
