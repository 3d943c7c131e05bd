/**
 * How the demo learns it should stop: the first SIGINT or SIGTERM. A terminal's
 * Ctrl-C reaches every process of the foreground group, and npm and tsx each
 * relay it once more, so one keypress arrives up to three times: the later
 * ones are swallowed while the stack tears down, and the listeners stay
 * installed until the process ends (under tsx, a SIGINT that finds no listener
 * ends the process at once, leaving the local S3's folder behind).
 */
const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

export class StopRequested extends Error {
  override readonly name = 'StopRequested';
  constructor(readonly signal: NodeJS.Signals) {
    super(`stopped by ${signal}`);
  }
}

export interface StopSignal {
  /** Set once a signal arrived. */
  readonly requested: StopRequested | undefined;
  /** Aborted at the first signal, with the StopRequested as its reason. */
  readonly signal: AbortSignal;
  /** Rejects with StopRequested at the first signal. */
  readonly whenRequested: Promise<never>;
  /** Throws StopRequested if a signal arrived: called between start-up steps. */
  throwIfRequested(): void;
}

export function listenForStop(): StopSignal {
  let requested: StopRequested | undefined;
  const controller = new AbortController();
  let reject: (err: StopRequested) => void = () => undefined;
  const whenRequested = new Promise<never>((_, rej) => {
    reject = rej;
  });
  // Only a waiter that races it sees it; nobody waiting is no unhandled rejection.
  whenRequested.catch(() => undefined);
  const onSignal = (signal: NodeJS.Signals) => {
    if (requested) return;
    requested = new StopRequested(signal);
    reject(requested);
    controller.abort(requested);
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
  return {
    get requested() {
      return requested;
    },
    signal: controller.signal,
    whenRequested,
    throwIfRequested() {
      if (requested) throw requested;
    },
  };
}
