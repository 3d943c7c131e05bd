/**
 * `start --wait`: follow an import until it ends, with a progress bar on a
 * terminal (a line per change otherwise), and report how it ended.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import cliProgress from 'cli-progress';
import type { ImportFileResult } from '../../workflows/contracts/import-workflow.js';
import { formatBytes, queryProgress, RateMeter, uploadProgressOf, waitingNote } from './import-progress.js';

type ImportOutcome = { ok: true; result: ImportFileResult } | { ok: false; reason: string };

interface WatchOptions {
  pollMs?: number;
  /** Where the bar and progress lines go. */
  out?: NodeJS.WriteStream;
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
  try {
    for (;;) {
      const description = await handle.describe();
      if (description.status.name !== 'RUNNING') break;
      const progress = await queryProgress(handle);
      const upload = uploadProgressOf(description);
      total = upload?.totalBytes ?? progress?.totalBytes ?? total;
      if (upload) sent = upload.bytesSent;
      if (progress?.phase === 'awaiting-completion' || progress?.phase === 'completed') sent = total;
      const phase = progress?.jobState
        ? `${progress.phase} (job ${progress.jobState})`
        : (progress?.phase ?? 'starting');
      display.update(phase, sent, total, meter.add(Date.now(), sent), waitingNote(progress, handle.workflowId));
      await delay(options.pollMs ?? 1_000);
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
