/**
 * `import-worker start`: validate the input, start importFile, optionally
 * follow it to the end. Without `--workflow-id` the import is named after the
 * object version (as the nightly names its children) and an id whose import
 * completed is not reused: an object version already imported, by hand or by
 * a night, is reported and not imported again (under any workflow id: the
 * version's job record holds its job).
 */
import {
  type Client,
  WorkflowExecutionAlreadyStartedError,
  type WorkflowHandle,
  type WorkflowHandleWithFirstExecutionRunId,
  WorkflowIdReusePolicy,
} from '@temporalio/client';
import { loadClientConfig, loadInputDefaults } from '../../temporal.config.js';
import type { ImportFileResult } from '../../workflows/contracts/import-workflow.js';
import type { importFile } from '../../workflows/import-file.js';
import { CliError, Interrupted } from './cli-error.js';
import { workflowUiLink } from './connect.js';
import { type CliContext, withClient } from './context.js';
import { describeRows, formatBytes } from './import-progress.js';
import { serverFailureLine } from './server-errors.js';
import { destructiveListActionWarning, importInputFromFlags, type StartFlags } from './start-input.js';
import { type VersionImport, versionImportOf } from './version-import.js';
import { type ImportOutcome, watchImport } from './watch-import.js';

interface StartOptions extends StartFlags {
  wait?: boolean;
}

export function describeResult(result: ImportFileResult): string {
  const upload = result.uploadSkipped
    ? 'data already accepted earlier, not sent again'
    : `${formatBytes(result.bytes)} uploaded`;
  const reused = result.jobReused ? ', job reused' : '';
  if (!result.parts) return `completed: job ${result.jobId}, ${upload}${reused}`;
  const jobs = result.parts.map((part) => part.jobId).join(', ');
  return `completed in ${result.parts.length} parts: jobs ${jobs}, ${upload}${reused ? ', jobs reused' : ''}`;
}

export async function startCommand(options: StartOptions, ctx: CliContext): Promise<void> {
  const config = loadClientConfig(ctx.env);
  const input = importInputFromFlags(options, loadInputDefaults(ctx.env));
  const warning = destructiveListActionWarning(input);
  if (warning) ctx.warn(warning);
  const version = options.workflowId === undefined ? await versionImportOf(ctx.env, input.source) : undefined;
  const workflowId = options.workflowId ?? (version as VersionImport).workflowId;

  await withClient(ctx, config.temporal, async ({ client }) => {
    let handle: WorkflowHandleWithFirstExecutionRunId<typeof importFile>;
    try {
      handle = await client.workflow.start<typeof importFile>('importFile', {
        taskQueue: config.temporal.taskQueue,
        workflowId,
        args: [input],
        // An object version's import runs again only after a failure; an explicit id is the operator's choice.
        ...(version ? { workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY } : {}),
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      if (!version) throw new CliError(`workflow id ${workflowId} is already running; pass another --workflow-id`);
      throw new CliError(await alreadyImported(client, input.source, version));
    }
    ctx.print(`started importFile ${workflowId}`);
    ctx.print(`  ${workflowUiLink(config.temporal, workflowId)}`);
    if (!options.wait) return;

    const outcome = await followUntilStopped(handle).catch((err: unknown) => {
      const lost = serverFailureLine(err, config.temporal);
      if (lost === undefined) throw err;
      throw new CliError(
        `stopped following ${workflowId}: ${lost}; the import goes on in Temporal: follow it with import-worker status ${workflowId}`,
      );
    });
    if (!outcome.ok) throw new CliError(`import failed: ${outcome.reason}`);
    ctx.print(describeResult(outcome.result));
    if (outcome.result.rows) ctx.print(describeRows(outcome.result.rows));
  });
}

const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/**
 * watchImport until the import ends or the operator presses Ctrl-C (or the process gets SIGTERM): then
 * the progress bar is taken down (cursor and line wrapping restored) and the command says the import goes on.
 */
async function followUntilStopped(handle: WorkflowHandle): Promise<ImportOutcome> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  try {
    return await watchImport(handle, { signal: stop.signal });
  } catch (err) {
    if (!stop.signal.aborted) throw err;
    throw new Interrupted(
      `stopped following ${handle.workflowId}; the import goes on. Follow it with: import-worker status ${handle.workflowId}`,
    );
  } finally {
    for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
  }
}

/** Why an object version's import was not started: it runs, or it completed. */
async function alreadyImported(
  client: Client,
  source: { bucket: string; key: string },
  version: VersionImport,
): Promise<string> {
  const object = `s3://${source.bucket}/${source.key} (ETag ${version.etag})`;
  const status = (await client.workflow.getHandle(version.workflowId).describe()).status.name;
  if (status === 'RUNNING') {
    return `${object} is already being imported by workflow ${version.workflowId}; nothing started (follow it with import-worker status ${version.workflowId})`;
  }
  // Another workflow id would not import it again either: the version's job record answers with the job
  // that already holds it. Only a new version of the object (a new ETag) is imported anew.
  return (
    `${object} was already imported by workflow ${version.workflowId}; nothing started. ` +
    'To import the file again, upload it again: S3 gives the new upload a new ETag, and a new version is a new import'
  );
}
