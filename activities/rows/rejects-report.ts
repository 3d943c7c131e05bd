/**
 * The report of refused rows: canonical CSV (UTF-8, comma, CRLF), one line per
 * refused row with its row number in the source (the header is row 1), the
 * reason, and the row's fields under the source's own labels, so the operator
 * can fix the rows and import the columns after the first two. Its bytes are
 * a function of the file and the settings: a retried pass writes the same report.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { canonicalLine } from './canonical-csv.js';

export const REJECTS_LEADING_LABELS = ['Source Row', 'Reason'] as const;

export class RejectsReport {
  private labels: readonly string[] = [];
  private started = false;
  /** A write that failed while nothing awaited the sink: raised by the next add or close. */
  private failed: Error | undefined;

  constructor(private readonly sink: Writable | undefined) {
    // Heard from the start: an 'error' event nobody listens for ends the worker process.
    sink?.on('error', (err) => {
      this.failed ??= err;
    });
  }

  /** The source's header labels: the report's columns after the leading two. */
  setLabels(labels: readonly string[]): void {
    this.labels = labels;
  }

  async add(row: number, reason: string, fields: readonly string[]): Promise<void> {
    if (!this.sink) return;
    if (this.failed) throw this.failed;
    if (!this.started) {
      this.started = true;
      await this.write(canonicalLine([...REJECTS_LEADING_LABELS, ...this.labels]));
    }
    await this.write(canonicalLine([String(row), reason, ...fields]));
  }

  /** Ends the sink (empty when no row was refused) and waits until it has taken everything. */
  async close(): Promise<void> {
    if (!this.sink) return;
    if (this.failed) throw this.failed;
    this.sink.end();
    await finished(this.sink);
  }

  /** The pass stopped: the sink is let go unfinished (it is never uploaded); the pass's own error is the one raised. */
  abort(): void {
    this.sink?.destroy();
  }

  private async write(line: string): Promise<void> {
    if (!this.sink!.write(line)) await once(this.sink!, 'drain');
  }
}
