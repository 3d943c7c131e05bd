/**
 * Where each field of one row lies in its bytes (a quoted field's content,
 * without its quotes) and what it holds; reused row after row, so reading a
 * row makes no arrays of its own.
 */
export class FieldBounds {
  count = 0;
  starts = new Int32Array(64);
  ends = new Int32Array(64);
  /** Whether the field holds doubled quotes, to be undone in its text. */
  escaped = new Uint8Array(64);
  /** Whether the field needs quotes in the canonical line: it holds a comma, a quote or a line break. */
  needs = new Uint8Array(64);

  add(start: number, end: number, escaped: boolean, needs: boolean): void {
    if (this.count === this.starts.length) this.widen();
    const i = this.count++;
    this.starts[i] = start;
    this.ends[i] = end;
    this.escaped[i] = escaped ? 1 : 0;
    this.needs[i] = needs ? 1 : 0;
  }

  private widen(): void {
    const size = this.starts.length * 2;
    const grown = <T extends Int32Array | Uint8Array>(old: T, into: T): T => {
      into.set(old);
      return into;
    };
    this.starts = grown(this.starts, new Int32Array(size));
    this.ends = grown(this.ends, new Int32Array(size));
    this.escaped = grown(this.escaped, new Uint8Array(size));
    this.needs = grown(this.needs, new Uint8Array(size));
  }
}
