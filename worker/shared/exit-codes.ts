/**
 * One exit-code convention for the worker and the CLI, so a script or an
 * orchestrator can tell "fix how you called it" from "it ran and failed".
 *
 * | code | meaning | e.g. |
 * |---|---|---|
 * | 0 | done | an import started or completed; `status` of a running, waiting or completed workflow; a signal sent |
 * | 1 | it ran and failed | `start --wait`: the import failed; `status`: the workflow failed, was cancelled, terminated or timed out; `retry`/`abandon`/`cancel` refused (not an import waiting for an operator / not a running import); `schedules trigger` skipped by the server; a dry run that would not go ahead; Temporal unreachable or lost |
 * | 2 | nothing was attempted | a usage error (flag, argument, input) or a configuration error (variable) |
 * | 130 | stopped | Ctrl-C (SIGINT) or SIGTERM before it was done: `start --wait` (the import goes on), the demo |
 *
 * A reader that closes the pipe early (`import-worker budget | head -1`) is not a failure: the CLI ends quietly.
 */
export const EXIT = {
  ok: 0,
  /** It ran and failed: see the table above. */
  failed: 1,
  /** Nothing was attempted: a usage error (flag, argument, input) or a configuration error (variable). */
  usage: 2,
  /** Stopped by Ctrl-C (SIGINT) or SIGTERM before it was done: `start --wait` (the import goes on), the demo. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
