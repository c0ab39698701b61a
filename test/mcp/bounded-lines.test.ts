/**
 * `BoundedLines`: however the stream is cut into chunks, every line up to the limit comes out
 * whole, and every longer one comes out as skipped, with its size and its first and last bytes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BoundedLines, EDGE_BYTES, type SkippedLine } from '../../src/mcp/bounded-lines.js';

type Out = { line: string } | { skipped: SkippedLine };

function read(limit: number, chunks: readonly Buffer[]): Out[] {
  const out: Out[] = [];
  const lines = new BoundedLines(limit, { line: (line) => void out.push({ line }), skipped: (skipped) => void out.push({ skipped }) });
  for (const chunk of chunks) lines.push(chunk);
  return out;
}

/** What `read` gives, worked out from the whole stream at once (ASCII text). */
function expected(limit: number, stream: string): Out[] {
  const complete = stream.split('\n').slice(0, -1);
  return complete.map((line) =>
    line.length <= limit ? { line: line.replace(/\r$/, '') } : { skipped: { size: line.length, head: line.slice(0, EDGE_BYTES), tail: line.slice(-EDGE_BYTES) } },
  );
}

/** Cuts `bytes` at the given offsets. */
function cut(bytes: Buffer, offsets: readonly number[]): Buffer[] {
  const points = [...new Set(offsets.map((offset) => offset % (bytes.length + 1)))].sort((a, b) => a - b);
  return [...points, bytes.length].map((end, i) => bytes.subarray(i === 0 ? 0 : points[i - 1]!, end));
}

describe('BoundedLines', () => {
  it('gives short lines whole and skips long ones, keeping their edges, wherever the chunks are cut', () => {
    const line = fc.oneof(fc.string({ unit: fc.constantFrom('a', 'b', '"', '{', '}', ':', '\r'), maxLength: 40 }), fc.string({ unit: fc.constantFrom('x', 'y'), minLength: 300, maxLength: 1_200 }));
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 600 }), fc.array(line, { maxLength: 8 }), fc.string({ unit: fc.constantFrom('z'), maxLength: 700 }), fc.array(fc.nat(), { maxLength: 12 }), (limit, lines, unfinished, offsets) => {
        const stream = lines.map((text) => `${text}\n`).join('') + unfinished;
        expect(read(limit, cut(Buffer.from(stream), offsets))).toEqual(expected(limit, stream));
      }),
      { numRuns: 300 },
    );
  });

  it('reads the line after a skipped one, in the same chunk', () => {
    const big = `{"result":"${'y'.repeat(5_000)}","jsonrpc":"2.0","id":7}`;
    expect(read(100, [Buffer.from(`${big}\n{"id":8}\r\n{"id":`)])).toEqual([{ skipped: { size: big.length, head: big.slice(0, EDGE_BYTES), tail: big.slice(-EDGE_BYTES) } }, { line: '{"id":8}' }]);
  });
});
