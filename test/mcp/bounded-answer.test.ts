/**
 * `boundedAnswer`: an MCP server's HTTP answer as the client's transport reads it. Within the
 * limit it is the server's answer, byte for byte, however the network cuts it into chunks; past
 * it, reading stops and the POST's requests are answered with `OUTPUT_TOO_LARGE` in its place.
 */
import { describe, expect, it } from 'vitest';
import { boundedAnswer } from '../../src/mcp/bounded-answer.js';
import { OUTPUT_TOO_LARGE } from '../../src/mcp/stdio-transport.js';

const POST = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'x' } });

/** A body that arrives as the given chunks; `pulled` counts the chunks read from it. */
function chunked(chunks: string[]) {
  const encoded = chunks.map((chunk) => new TextEncoder().encode(chunk));
  const counter = { pulled: 0, cancelled: false };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = encoded[counter.pulled++];
      if (next === undefined) controller.close();
      else controller.enqueue(next);
    },
    cancel: () => void (counter.cancelled = true),
    // Pulled only when read, so `pulled` counts what was read.
  }, { highWaterMark: 0 });
  return { body, counter };
}

function answer(chunks: string[], contentType: string, limit: number, headers: Record<string, string> = {}) {
  const { body, counter } = chunked(chunks);
  const response = boundedAnswer(new Response(body, { headers: { 'content-type': contentType, ...headers } }), POST, 'srv', limit);
  return { text: () => response.text(), counter };
}

/** Every way of cutting `text` in two, and in three at the same place and one byte on. */
function cuts(text: string): string[][] {
  const all: string[][] = [[text]];
  for (let at = 1; at < text.length; at++) {
    all.push([text.slice(0, at), text.slice(at)]);
    if (at + 1 < text.length) all.push([text.slice(0, at), text.slice(at, at + 1), text.slice(at + 1)]);
  }
  return all;
}

describe('boundedAnswer', () => {
  const events = 'event: message\ndata: {"a":1}\n\n: keep-alive\r\n\r\nid: 2\ndata: {"b":2}\r\n\r\ndata: last';
  it('passes an event stream within the limit on byte for byte, however it is cut into chunks', async () => {
    for (const chunks of cuts(events)) expect(await answer(chunks, 'text/event-stream', 64).text(), JSON.stringify(chunks)).toBe(events);
  });

  it('passes a JSON answer within the limit on whole, however it is cut', async () => {
    const json = JSON.stringify({ jsonrpc: '2.0', id: 7, result: { content: [] } });
    for (const chunks of cuts(json)) expect(await answer(chunks, 'application/json; charset=utf-8', json.length).text()).toBe(json);
  });

  it('an event past the limit: the events before it pass, then reading stops and the request is answered OUTPUT_TOO_LARGE', async () => {
    const { text, counter } = answer(['data: {"small":1}\n\n', 'data: "', 'y'.repeat(40), 'y'.repeat(40), 'never read'], 'text/event-stream', 64);
    const [first, second, rest] = (await text()).split('\n\n');
    expect(first).toBe('data: {"small":1}');
    expect(rest).toBe('');
    expect(second!.startsWith('event: message\ndata: ')).toBe(true);
    const error = JSON.parse(second!.slice('event: message\ndata: '.length)) as { id: number; error: { code: number; message: string; data: unknown } };
    expect(error).toMatchObject({ id: 7, error: { code: OUTPUT_TOO_LARGE, data: { reason: 'mcp_output_too_large', size: 87, limit: 64, cutOff: true } } });
    expect(error.error.message).toBe("MCP server 'srv' sent an answer past the limit of 64 bytes; reading stopped after 87 bytes");
    expect(counter).toEqual({ pulled: 4, cancelled: true });
  });

  it('a JSON answer past the limit, or announced past it by its Content-Length, is never passed on', async () => {
    const long = answer(['{"jsonrpc":"2.0","id":7,"result":"', 'y'.repeat(100), 'never read'], 'application/json', 64);
    expect(JSON.parse(await long.text())).toMatchObject({ id: 7, error: { code: OUTPUT_TOO_LARGE, data: { size: 134, limit: 64, cutOff: true } } });
    expect(long.counter).toEqual({ pulled: 2, cancelled: true });
    const announced = answer(['never read'], 'application/json', 64, { 'content-length': '1000' });
    const told = JSON.parse(await announced.text()) as { error: { message: string; data: unknown } };
    expect(told.error).toMatchObject({ message: "MCP server 'srv' answered 1000 bytes (its Content-Length), past the limit of 64; none of it was read", data: { size: 1000, limit: 64 } });
    expect(announced.counter.pulled).toBe(0);
  });

  it('any other body (an error page) is cut at the limit', async () => {
    const page = answer(['x'.repeat(50), 'y'.repeat(50), 'never read'], 'text/html', 64);
    expect(await page.text()).toBe('x'.repeat(50) + 'y'.repeat(14));
    expect(page.counter.cancelled).toBe(true);
  });
});
