/**
 * Splits a byte stream into newline-delimited lines of at most `limit` bytes, holding no more than
 * `limit` bytes of any line. A longer line is skipped as it arrives: its bytes are counted and
 * dropped up to the newline that ends it, keeping only its first and last `EDGE_BYTES`, which is
 * where a JSON-RPC message says which request it answers.
 *
 * Pure: no I/O, no JSON.
 */

/** How many bytes of a skipped line's start and end are kept. */
export const EDGE_BYTES = 256;

/** A line longer than the limit, skipped: its size in bytes, and the text it starts and ends with. */
export interface SkippedLine {
  size: number;
  head: string;
  tail: string;
}

/** Where the lines go, in stream order. */
export interface LineSink {
  line(text: string): void;
  skipped(line: SkippedLine): void;
}

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/** The last `EDGE_BYTES` of `kept` followed by `more`, copied so a large chunk is not retained. */
function lastBytes(kept: Buffer, more: Buffer): Buffer {
  if (more.length >= EDGE_BYTES) return Buffer.from(more.subarray(more.length - EDGE_BYTES));
  const joined = Buffer.concat([kept, more]);
  return joined.length > EDGE_BYTES ? joined.subarray(joined.length - EDGE_BYTES) : joined;
}

/** Newline-delimited lines of a byte stream, each held only up to a limit. */
export class BoundedLines {
  private parts: Buffer[] = [];
  private length = 0;
  private skipping: { size: number; head: Buffer; tail: Buffer } | undefined;

  constructor(
    private readonly limit: number,
    private readonly sink: LineSink,
  ) {}

  /** Takes the next chunk of the stream; every line it completes goes to the sink. */
  push(chunk: Buffer): void {
    for (let start = 0; ; ) {
      const end = chunk.indexOf(NEWLINE, start);
      // The common case, a whole line within the chunk and nothing held: read in place.
      if (end !== -1 && this.length === 0 && this.skipping === undefined && end - start <= this.limit) {
        this.sink.line(chunk.toString('utf8', start, end > start && chunk[end - 1] === CARRIAGE_RETURN ? end - 1 : end));
        start = end + 1;
        continue;
      }
      const piece = chunk.subarray(start, end === -1 ? chunk.length : end);
      if (piece.length > 0) this.take(piece);
      if (end === -1) return;
      this.endLine();
      start = end + 1;
    }
  }

  /** Forgets the line in progress. */
  clear(): void {
    this.parts = [];
    this.length = 0;
    this.skipping = undefined;
  }

  private take(piece: Buffer): void {
    const { skipping } = this;
    if (skipping) {
      skipping.size += piece.length;
      if (skipping.head.length < EDGE_BYTES) skipping.head = Buffer.concat([skipping.head, piece], Math.min(EDGE_BYTES, skipping.head.length + piece.length));
      skipping.tail = lastBytes(skipping.tail, piece);
      return;
    }
    if (this.length + piece.length <= this.limit) {
      this.parts.push(piece);
      this.length += piece.length;
      return;
    }
    // Past the limit: keep the edges of what was held, and from now on only count.
    const held = [...this.parts, piece];
    const size = this.length + piece.length;
    const head = Buffer.concat(held, Math.min(EDGE_BYTES, size));
    const tail = held.reduce(lastBytes, Buffer.alloc(0));
    this.clear();
    this.skipping = { size, head, tail };
  }

  private endLine(): void {
    const { skipping, parts, length } = this;
    this.clear();
    if (skipping) {
      this.sink.skipped({ size: skipping.size, head: skipping.head.toString('utf8'), tail: skipping.tail.toString('utf8') });
      return;
    }
    this.sink.line(Buffer.concat(parts, length).toString('utf8').replace(/\r$/, ''));
  }
}
