/**
 * How the CLI fails: one line on stderr naming what was wrong and what is
 * expected, and an exit code by the convention in exit-codes.ts. Never a
 * stack trace: an operator reads this, and a stack would hide the one line
 * that matters.
 */
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { CommanderError } from 'commander';
import { ConfigError } from '../../temporal.config.js';
import { EXIT, type ExitCode } from '../shared/exit-codes.js';
import { hasTransportInternals, transportFailureReason } from '../shared/transport-errors.js';

/** An error whose message is already the line the operator should read. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.failed,
  ) {
    super(message);
  }
}

/** A problem with how the command was called: nothing was attempted. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT.usage);
  }
}

/** Not an error: the operator stopped the command (Ctrl-C); its message is said as it is, without "error:". */
export class Interrupted extends CliError {
  constructor(message: string) {
    super(message, EXIT.interrupted);
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
  if (hasTransportInternals(message)) return transportFailureReason(err);
  return message.split('\n')[0] ?? 'unknown error';
}

export function exitCodeOf(err: unknown): ExitCode {
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  if (err instanceof ConfigError) return EXIT.usage;
  return err instanceof CliError ? err.exitCode : EXIT.failed;
}
