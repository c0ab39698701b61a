/**
 * `boundedAnswer` against answers cut and ended the awkward ways a server may send them: lines
 * ended by CR alone (which the event-stream format allows as much as LF and CRLF), every byte a
 * chunk of its own, a character of several UTF-8 bytes cut at the limit, an answer exactly at the
 * limit and one byte past it.
 */
import { describe, expect, it } from 'vitest';
import { boundedAnswer } from '../../src/mcp/bounded-answer.js';
import { OUTPUT_TOO_LARGE } from '../../src/mcp/stdio-transport.js';

const POST = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'x' } });

/** A body of the given chunks (bytes), read one at a time; it stays open after them when `open`. */
function body(chunks: Uint8Array[], open = false): ReadableStream<Uint8Array> {
  let next = 0;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const chunk = chunks[next++];
        if (chunk !== undefined) controller.enqueue(chunk);
        else if (!open) controller.close();
        // Open: nothing more, ever.
        else return new Promise<void>(() => {});
        return undefined;
      },
    },
    { highWaterMark: 0 },
  );
}

const bytes = (text: string) => new TextEncoder().encode(text);
/** `text` as one chunk per byte. */
const perByte = (text: string) => [...bytes(text)].map((byte) => Uint8Array.of(byte));

function answered(chunks: Uint8Array[], contentType: string, limit: number, open = false): Response {
  return boundedAnswer(new Response(body(chunks, open), { headers: { 'content-type': contentType } }), POST, 'srv', limit);
}

describe('boundedAnswer of an event stream', () => {
  const crOnly = 'data: {"a":1}\r\rdata: {"b":2}\r\rdata: {"c":3}\r\r';

  it('ends events at lines ended by CR alone: each event is held alone, not the whole stream as one', async () => {
    // Each event is 15 bytes, within the limit; the three together are not.
    const response = answered([bytes(crOnly)], 'text/event-stream', 20);
    expect(await response.text()).toBe(crOnly);
  });

  it('passes an event ended by CR alone on before the stream ends', async () => {
    const reader = answered(perByte('data: {"a":1}\r\r'), 'text/event-stream', 64, true).body!.getReader();
    let seen = '';
    const decoder = new TextDecoder();
    while (!seen.includes('{"a":1}\r\r')) seen += decoder.decode((await reader.read()).value);
    expect(seen).toBe('data: {"a":1}\r\r');
    await reader.cancel();
  });

  it('passes CRLF events sent a byte at a time on whole, and stops at the one past the limit', async () => {
    const small = 'data: {"a":1}\r\n\r\n';
    const big = `data: "${'y'.repeat(40)}"\r\n\r\n`;
    const text = await answered(perByte(small + big), 'text/event-stream', small.length).text();
    expect(text.startsWith(small)).toBe(true);
    const last = JSON.parse(text.slice(small.length).split('data: ')[1]!) as { id: number; error: { code: number; data: { limit: number } } };
    expect(last).toMatchObject({ id: 7, error: { code: OUTPUT_TOO_LARGE, data: { limit: small.length } } });
  });
});

describe('boundedAnswer of a JSON answer', () => {
  const json = JSON.stringify({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'é€😀' }] } });
  const size = bytes(json).length;

  it('passes an answer of exactly the limit in bytes on, multi-byte characters cut across chunks', async () => {
    expect(size).toBeGreaterThan(json.length);
    expect(await answered(perByte(json), 'application/json', size).text()).toBe(json);
  });

  it('answers OUTPUT_TOO_LARGE one byte past the limit, counting bytes, not characters', async () => {
    const text = await answered(perByte(json), 'application/json', size - 1).text();
    expect(JSON.parse(text)).toMatchObject({ id: 7, error: { code: OUTPUT_TOO_LARGE, data: { limit: size - 1, size } } });
  });
});
