/**
 * One exit-code convention for the worker and the CLI, so a script or an
 * orchestrator can tell "fix how you called it" from "it ran and failed".
 */
export const EXIT = {
  ok: 0,
  /** It ran and failed: an import failed, Temporal could not be reached, a workflow was not running. */
  failed: 1,
  /** Nothing was attempted: a usage error (flag, argument, input) or a configuration error (variable). */
  usage: 2,
  /** Stopped by Ctrl-C (SIGINT) or SIGTERM before it was done: `start --wait` (the import goes on), the demo. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
