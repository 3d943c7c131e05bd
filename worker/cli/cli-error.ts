/**
 * How the CLI fails: one line on stderr naming what was wrong and what is
 * expected, and a non-zero exit code. Never a stack trace: an operator reads
 * this, and a stack would hide the one line that matters.
 */
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { ConfigError } from '../../temporal.config.js';

/** An error whose message is already the line the operator should read. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** The one line an error becomes. */
export function errorLine(err: unknown): string {
  if (err instanceof CliError || err instanceof ConfigError) return err.message;
  if (err instanceof WorkflowNotFoundError) {
    return `no workflow with id ${err.workflowId ?? '(unknown)'} in this namespace`;
  }
  if (err instanceof WorkflowFailedError) return `workflow failed: ${err.cause?.message ?? err.message}`;
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n')[0] ?? 'unknown error';
}

export function exitCodeOf(err: unknown): number {
  return err instanceof CliError ? err.exitCode : 1;
}
