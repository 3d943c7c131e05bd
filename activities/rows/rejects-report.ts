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
  private started = false;

  constructor(
    private readonly sink: Writable | undefined,
    private readonly header: readonly string[],
  ) {}

  async add(row: number, reason: string, fields: readonly string[]): Promise<void> {
    if (!this.sink) return;
    if (!this.started) {
      this.started = true;
      await this.write(canonicalLine([...REJECTS_LEADING_LABELS, ...this.header]));
    }
    await this.write(canonicalLine([String(row), reason, ...fields]));
  }

  /** Ends the sink (empty when no row was refused) and waits until it has taken everything. */
  async close(): Promise<void> {
    if (!this.sink) return;
    this.sink.end();
    await finished(this.sink);
  }

  abort(err: unknown): void {
    this.sink?.destroy(err instanceof Error ? err : new Error(String(err)));
  }

  private async write(line: string): Promise<void> {
    if (!this.sink!.write(line)) await once(this.sink!, 'drain');
  }
}
