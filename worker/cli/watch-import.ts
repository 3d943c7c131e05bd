/**
 * `start --wait`: follow an import until it ends, with a progress bar on a
 * terminal (a line per change otherwise), and report how it ended.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import cliProgress from 'cli-progress';
import type { ImportFileResult, ImportProgress } from '../../workflows/contracts/import-workflow.js';
import { formatBytes, queryProgress, RateMeter, uploadProgressOf, waitingNote } from './import-progress.js';
import { hasWorkflowPoller, noWorkerNote } from './task-queue-pollers.js';

/** How often a watch of an import no worker has answered for asks whether any worker polls its task queue. */
const NO_WORKER_CHECK_MS = 5_000;

export type ImportOutcome = { ok: true; result: ImportFileResult } | { ok: false; reason: string };

interface WatchOptions {
  pollMs?: number;
  /** Where the bar and progress lines go. */
  out?: NodeJS.WriteStream;
  /** Stops following (the import goes on): the bar is taken down and the watch rejects with the abort reason. */
  signal?: AbortSignal;
  /** Default NO_WORKER_CHECK_MS. */
  noWorkerCheckMs?: number;
}

interface Display {
  update(phase: string, sent: number, total: number, rate: number, note: string): void;
  stop(): void;
}

function barDisplay(out: NodeJS.WriteStream): Display {
  const bar = new cliProgress.SingleBar(
    {
      stream: out,
      format: '{phase} |{bar}| {percentage}% {sent} of {totalText} {rate}/s {note}',
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(1, 0, { phase: 'starting', sent: '', totalText: '', rate: '', note: '' });
  return {
    update(phase, sent, total, rate, note) {
      bar.setTotal(Math.max(total, 1));
      bar.update(sent, {
        phase,
        sent: formatBytes(sent),
        totalText: formatBytes(total),
        rate: formatBytes(rate),
        note,
      });
    },
    stop: () => bar.stop(),
  };
}

function lineDisplay(out: NodeJS.WriteStream): Display {
  let last = '';
  return {
    update(phase, sent, total, _rate, note) {
      const line = `${phase}${total > 0 && sent > 0 ? ` ${formatBytes(sent)} of ${formatBytes(total)}` : ''}${note ? ` (${note})` : ''}`;
      // Without a terminal, only changes of phase or of the waiting note are worth a line.
      const key = `${phase}|${note}`;
      if (key !== last) out.write(`${line}\n`);
      last = key;
    },
    stop() {},
  };
}

/**
 * Whether no worker polls the task queue, asked at most every `everyMs`. While none does, the progress
 * query is not sent: it would wait for its timeout (many seconds) and leave `starting` on the screen.
 */
function workerCheck(handle: WorkflowHandle, everyMs: number) {
  let checkedAt = Number.NEGATIVE_INFINITY;
  let missing = false;
  return async (taskQueue: string): Promise<boolean> => {
    if (Date.now() - checkedAt < everyMs) return missing;
    checkedAt = Date.now();
    // A failed check claims nothing: the query then tells.
    missing = !(await hasWorkflowPoller(handle.client, taskQueue).catch(() => true));
    return missing;
  };
}

export function failureReason(err: unknown): string {
  const cause = err instanceof WorkflowFailedError ? (err.cause ?? err) : err;
  if (cause instanceof ApplicationFailure && cause.type) return `${cause.type}: ${cause.message}`;
  return cause instanceof Error ? cause.message : String(cause);
}

export async function watchImport(handle: WorkflowHandle, options: WatchOptions = {}): Promise<ImportOutcome> {
  const out = options.out ?? process.stderr;
  const display = out.isTTY ? barDisplay(out) : lineDisplay(out);
  const meter = new RateMeter();
  let sent = 0;
  let total = 0;
  const { signal } = options;
  const noWorker = workerCheck(handle, options.noWorkerCheckMs ?? NO_WORKER_CHECK_MS);
  // Once a worker answered, it is there: the check is for imports nobody has picked up.
  let answered = false;
  try {
    for (;;) {
      signal?.throwIfAborted();
      const description = await handle.describe();
      if (description.status.name !== 'RUNNING') break;
      const missing: boolean = !answered && (await noWorker(description.taskQueue));
      const progress: ImportProgress | undefined = missing ? undefined : await queryProgress(handle);
      answered ||= progress !== undefined;
      const upload = uploadProgressOf(description);
      total = upload?.totalBytes ?? progress?.totalBytes ?? total;
      if (upload) sent = upload.bytesSent;
      if (progress?.phase === 'awaiting-completion' || progress?.phase === 'completed') sent = total;
      const phase = progress?.jobState
        ? `${progress.phase} (job ${progress.jobState})`
        : (progress?.phase ?? 'starting');
      const note = missing ? noWorkerNote(description.taskQueue) : waitingNote(progress, handle.workflowId);
      display.update(phase, sent, total, meter.add(Date.now(), sent), note);
      // An abort ends the pause early; the loop's check then throws its reason.
      await delay(options.pollMs ?? 1_000, undefined, { signal }).catch(() => undefined);
    }
  } finally {
    display.stop();
  }
  try {
    return { ok: true, result: (await handle.result()) as ImportFileResult };
  } catch (err) {
    return { ok: false, reason: failureReason(err) };
  }
}
