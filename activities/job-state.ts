/**
 * What a job's state means, for every activity that reads one. The service
 * names four states (`new`, `processing`, `completed`, `failed`) but does not
 * promise their case, so `New` and `COMPLETED` mean what they say. Any other
 * word is a state this worker does not understand: it must neither skip an
 * upload nor wait a day on it, so it becomes a clear failure for an operator.
 */
import { failure } from './failures.js';

type KnownJobState = 'new' | 'processing' | 'completed' | 'failed';

const KNOWN: readonly KnownJobState[] = ['new', 'processing', 'completed', 'failed'];

/** The state in the spec's spelling, or undefined when it is none of the four. */
export function knownJobState(raw: unknown): KnownJobState | undefined {
  if (typeof raw !== 'string') return undefined;
  const lower = raw.trim().toLowerCase();
  return KNOWN.find((state) => state === lower);
}

/** The failure for a job in a state this worker does not understand. */
export function unexpectedJobState(jobId: string, raw: unknown, doing: string) {
  return failure(
    'UnexpectedJobState',
    `import job ${jobId} is in state ${JSON.stringify(raw)}, which is none of new, processing, completed or failed; ` +
      `${doing}. Check the job in the service, then retry or abandon the import`,
    { jobId, state: String(raw) },
  );
}
