/**
 * An MCP server's HTTP answer, read only up to a limit: the client side of Streamable HTTP holds no
 * more of one message than it would over stdio.
 *
 * The SDK's transport reads a JSON answer whole (`response.json()`) and an SSE stream event by
 * event, each as long as the server makes it: a huge or endless answer would be held in memory
 * without bound. Here the body the transport reads is a bounded view of the server's:
 *
 * - a JSON answer is passed on once whole and within the limit. Past it (or announced past it by
 *   its `Content-Length`), reading stops, and the requests the POST carried are answered in its
 *   place with `OUTPUT_TOO_LARGE` (the bytes read and the limit in its data), as a message too
 *   large on stdio is;
 * - an SSE stream is passed on event by event, each event once whole. An event past the limit
 *   stops the reading the same way: the POST's requests get `OUTPUT_TOO_LARGE` as the stream's
 *   last events; a stream that answers no request of ours (the GET stream of server messages)
 *   fails with an error naming the server and the limit;
 * - any other body (an error page) is cut at the limit.
 *
 * No JSON is parsed but the body the client sent, for its request ids.
 *
 * A compressed body (`Content-Encoding: gzip`, `br`, `deflate`) is decoded by `fetch` as it is read,
 * before it reaches this view: the limit counts decoded bytes, so a small body that decodes to a
 * huge one is cut off at the limit, decoded no further.
 */
import { OUTPUT_TOO_LARGE, type OversizedAnswer } from './stdio-transport.js';

/** A JSON-RPC request id. */
export type RequestId = string | number;

const isId = (id: unknown): id is RequestId => typeof id === 'string' || typeof id === 'number';

/**
 * What a JSON-RPC message or batch the client POSTed carries: the ids of its requests, and the ids
 * of the requests it cancels (`notifications/cancelled`).
 */
export function postedIds(body: unknown): { requests: RequestId[]; cancelled: RequestId[] } {
  const requests: RequestId[] = [];
  const cancelled: RequestId[] = [];
  if (typeof body !== 'string') return { requests, cancelled };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { requests, cancelled };
  }
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  for (const message of messages as { method?: unknown; id?: unknown; params?: { requestId?: unknown } }[]) {
    if (typeof message?.method !== 'string') continue;
    if (isId(message.id)) requests.push(message.id);
    else if (message.method === 'notifications/cancelled' && isId(message.params?.requestId)) cancelled.push(message.params.requestId);
  }
  return { requests, cancelled };
}

/** The JSON-RPC answers, in place of the one that was too large, to each request the POST carried. */
function oversizedAnswers(ids: readonly RequestId[], server: string, data: OversizedAnswer): string[] {
  const message = data.cutOff
    ? `MCP server '${server}' sent an answer past the limit of ${data.limit} bytes; reading stopped after ${data.size} bytes`
    : `MCP server '${server}' answered ${data.size} bytes (its Content-Length), past the limit of ${data.limit}; none of it was read`;
  return ids.map((id) => JSON.stringify({ jsonrpc: '2.0', id, error: { code: OUTPUT_TOO_LARGE, message, data } }));
}

const encoder = new TextEncoder();
const LF = 0x0a;
const CR = 0x0d;

/** A JSON answer passed on once whole, or replaced by `OUTPUT_TOO_LARGE` answers past `limit`. */
function boundedJson(body: ReadableStream<Uint8Array>, declared: number | undefined, ids: readonly RequestId[], server: string, limit: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const answerInstead = async (data: OversizedAnswer, controller: ReadableStreamDefaultController<Uint8Array>) => {
    await reader.cancel().catch(() => {});
    const answers = oversizedAnswers(ids, server, data);
    controller.enqueue(encoder.encode(answers.length === 1 ? answers[0] : `[${answers.join(',')}]`));
    controller.close();
  };
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      if (declared !== undefined && declared > limit) return answerInstead({ reason: 'mcp_output_too_large', size: declared, limit }, controller);
      const held: Uint8Array[] = [];
      let size = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > limit) return answerInstead({ reason: 'mcp_output_too_large', size, limit, cutOff: true }, controller);
        held.push(value);
      }
      for (const chunk of held) controller.enqueue(chunk);
      controller.close();
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** An SSE stream passed on event by event, each held only up to `limit` bytes. */
function boundedEvents(body: ReadableStream<Uint8Array>, ids: readonly RequestId[], server: string, limit: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  /** The event being read: its bytes so far, their size, and whether its last, unended line has content. */
  let event: Uint8Array[] = [];
  let size = 0;
  let lineHasContent = false;
  /** The last byte taken was a CR: an LF right after it ends the same line (CRLF), not another. */
  let afterCR = false;
  /** Events passed on so far. */
  let passed = 0;
  /**
   * Takes in a chunk, passing on each event it ends; false once the event being read is past the
   * limit. A line ends at CRLF, LF or CR alone, as the event-stream format has it; an empty line
   * ends the event.
   */
  const take = (chunk: Uint8Array, controller: ReadableStreamDefaultController<Uint8Array>): boolean => {
    let start = 0;
    for (let at = 0; at < chunk.length; at++) {
      const byte = chunk[at];
      if (byte !== LF && byte !== CR) {
        lineHasContent = true;
        afterCR = false;
        continue;
      }
      const crlf = byte === LF && afterCR;
      afterCR = byte === CR;
      if (crlf) {
        // The LF of the CRLF that ended the event passed on last (its CR ended a chunk): it goes on after it.
        if (at === start && event.length === 0 && size === 0) {
          controller.enqueue(chunk.subarray(at, at + 1));
          start = at + 1;
        }
        continue;
      }
      const empty = !lineHasContent;
      lineHasContent = false;
      if (!empty) continue;
      // An empty line ends the event: it is passed on whole, with the LF of its CRLF when that is here already.
      let end = at + 1;
      if (byte === CR && chunk[end] === LF) {
        end++;
        afterCR = false;
        at++;
      }
      size += end - start;
      if (size > limit) return false;
      event.push(chunk.subarray(start, end));
      for (const part of event) controller.enqueue(part);
      passed++;
      event = [];
      size = 0;
      start = end;
    }
    size += chunk.length - start;
    if (size > limit) return false;
    if (start < chunk.length) event.push(chunk.subarray(start));
    return true;
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Read on until something is passed on: a pull that enqueues nothing is not called again.
      for (const before = passed; passed === before; ) {
        const { done, value } = await reader.read();
        if (done) {
          // A last event the server did not end: passed on, for the transport's parser to judge.
          for (const part of event) controller.enqueue(part);
          controller.close();
          return;
        }
        if (take(value, controller)) continue;
        await reader.cancel().catch(() => {});
        if (ids.length === 0) {
          controller.error(new Error(`MCP server '${server}' sent a message past the limit of ${limit} bytes on its event stream; reading stopped after ${size} bytes`));
          return;
        }
        const data: OversizedAnswer = { reason: 'mcp_output_too_large', size, limit, cutOff: true };
        for (const answer of oversizedAnswers(ids, server, data)) controller.enqueue(encoder.encode(`event: message\ndata: ${answer}\n\n`));
        controller.close();
        return;
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** Any other body, cut at `limit` bytes. */
function truncated(body: ReadableStream<Uint8Array>, limit: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let size = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      const room = limit - size;
      size += value.byteLength;
      if (value.byteLength < room) return controller.enqueue(value);
      controller.enqueue(value.subarray(0, room));
      await reader.cancel().catch(() => {});
      controller.close();
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** The media type of a `Content-Type`, without its parameters, in lower case. */
function mediaType(contentType: string | null): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * `response`, whose body is read only up to `limit` bytes per message (see above). `sent` is the
 * body of the request it answers; `server` names the server in errors.
 */
export function boundedAnswer(response: Response, sent: unknown, server: string, limit: number): Response {
  return boundedAnswerTo(response, postedIds(sent).requests, server, limit);
}

/** `boundedAnswer`, given the ids of the requests the POST carried (`postedIds`). */
export function boundedAnswerTo(response: Response, ids: readonly RequestId[], server: string, limit: number): Response {
  if (response.body === null) return response;
  const type = mediaType(response.headers.get('content-type'));
  let body: ReadableStream<Uint8Array>;
  if (response.ok && type === 'text/event-stream') body = boundedEvents(response.body, ids, server, limit);
  else if (response.ok && type === 'application/json') {
    // `fetch` decodes a compressed body before it is read here, so the limit counts decoded bytes,
    // and the Content-Length (of the encoded body) says nothing of their number.
    const encoded = (response.headers.get('content-encoding') ?? 'identity').trim().toLowerCase() !== 'identity';
    const length = encoded ? Number.NaN : Number(response.headers.get('content-length') ?? Number.NaN);
    body = boundedJson(response.body, Number.isFinite(length) ? length : undefined, ids, server, limit);
  } else body = truncated(response.body, limit);
  const headers = new Headers(response.headers);
  // The body passed on is not the one the length was of.
  headers.delete('content-length');
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}
