/**
 * The client side of MCP over stdio, with a limit on the size of each message the server writes.
 *
 * The SDK's `StdioClientTransport` still starts, writes to and stops the server process (its
 * command lookup, environment and shutdown stay the SDK's); only its read buffer, the object it
 * appends each chunk of stdout to and reads messages from, is replaced by a `MessageReader` over
 * `BoundedLines`. (Should an SDK version keep no such buffer, the SDK's own limit applies: a
 * message past it closes the transport.) A message past the limit is never held whole: its bytes
 * are dropped as they arrive, up to the newline that ends it, keeping only its first and last few
 * hundred bytes. The request it answers is found from its `id`, which serializers write either
 * first (`{"jsonrpc":"2.0","id":…`) or last (`…,"id":…}`, as the TypeScript SDK writes results),
 * and that request gets an error answer in its place (`OUTPUT_TOO_LARGE`, the size in its data).
 * When no id can be read, every request still waiting at that moment gets one. Nothing is closed:
 * the process keeps running and the next request is answered as usual.
 */
import { StdioClientTransport, type StdioServerParameters } from '@modelcontextprotocol/sdk/client/stdio.js';
import { deserializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { isJSONRPCErrorResponse, isJSONRPCNotification, isJSONRPCRequest, isJSONRPCResultResponse, McpError, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { BoundedLines, type SkippedLine } from './bounded-lines.js';

/** The error code answering a request whose answer was past the limit (a code JSON-RPC leaves to implementations). */
export const OUTPUT_TOO_LARGE = -32_090;

/** What an `OUTPUT_TOO_LARGE` answer carries. */
export interface OversizedAnswer {
  reason: 'mcp_output_too_large';
  /** Bytes of the discarded message (of it read, with `cutOff`). */
  size: number;
  /** The limit it was past, in bytes. */
  limit: number;
  /** True when which request the message answered could not be read: every waiting one failed. */
  unattributed?: true;
  /** True when reading stopped at the limit (over HTTP): `size` is what was read, the answer was larger. */
  cutOff?: true;
}

/** The data of an `OUTPUT_TOO_LARGE` error, when `error` is one. */
export function oversizedAnswer(error: unknown): OversizedAnswer | undefined {
  if (!(error instanceof McpError) || error.code !== OUTPUT_TOO_LARGE) return undefined;
  const data = error.data as Partial<OversizedAnswer> | undefined;
  return data?.reason === 'mcp_output_too_large' && typeof data.size === 'number' && typeof data.limit === 'number' ? (data as OversizedAnswer) : undefined;
}

/** A JSON-RPC id: a number or a string, or null in an answer to a request that could not be read. */
const ID_VALUE = String.raw`(-?\d+|"(?:[^"\\]|\\.)*"|null)`;
/** `{"jsonrpc":"2.0","id":…` or `{"id":…`: the id among the first members. */
const ID_FIRST = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID_VALUE}\s*[,}]`);
/** `…,"id":…}`: the id as the last member. */
const ID_LAST = new RegExp(String.raw`[{,]\s*"id"\s*:\s*${ID_VALUE}\s*\}\s*$`);
/** A request or notification of the server's own names its method among its first members. */
const METHOD_FIRST = new RegExp(String.raw`^\s*\{\s*(?:"(?:jsonrpc|id)"\s*:\s*${ID_VALUE}\s*,\s*){0,2}"method"\s*:`);

/** The id a skipped message gives, when it can be read from its edges. */
export function idOf(line: SkippedLine): RequestId | null | undefined {
  const raw = ID_FIRST.exec(line.head)?.[1] ?? ID_LAST.exec(line.tail)?.[1];
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw) as RequestId | null;
  } catch {
    return undefined;
  }
}

/**
 * Reads the server's stdout in the shape the SDK's transport expects of its buffer: `append` each
 * chunk, then `readMessage` until it gives null; `clear` when the transport closes. It also knows
 * which requests are waiting for an answer, to answer them when their message is too large.
 */
class MessageReader {
  private readonly ready: ({ message: JSONRPCMessage } | { error: Error })[] = [];
  private readonly waiting = new Set<RequestId>();
  private readonly lines: BoundedLines;

  constructor(private readonly limit: number) {
    this.lines = new BoundedLines(limit, { line: (text) => this.parse(text), skipped: (line) => this.answerSkipped(line) });
  }

  /** Notes a message the client sends: a request waits for its answer; a cancellation ends the wait. */
  sent(message: JSONRPCMessage): void {
    if (isJSONRPCRequest(message)) this.waiting.add(message.id);
    else if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') this.waiting.delete(message.params?.requestId as RequestId);
  }

  /** Forgets a request whose message could not be sent. */
  unsent(message: JSONRPCMessage): void {
    if (isJSONRPCRequest(message)) this.waiting.delete(message.id);
  }

  append(chunk: Buffer): void {
    this.lines.push(chunk);
  }

  readMessage(): JSONRPCMessage | null {
    const next = this.ready.shift();
    if (next === undefined) return null;
    if ('error' in next) throw next.error;
    return next.message;
  }

  clear(): void {
    this.lines.clear();
    this.ready.length = 0;
    this.waiting.clear();
  }

  private parse(text: string): void {
    if (text.trim() === '') return;
    try {
      const message = deserializeMessage(text);
      if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) this.waiting.delete(message.id as RequestId);
      this.ready.push({ message });
    } catch (error) {
      this.ready.push({ error: error instanceof Error ? error : new Error(String(error)) });
    }
  }

  /** Answers, in its place, the request a skipped message answered (or every waiting one, when its id cannot be read). */
  private answerSkipped(line: SkippedLine): void {
    // A request or notification of the server's own answers nothing of ours: it is only dropped.
    if (METHOD_FIRST.test(line.head)) return;
    const id = idOf(line);
    const answered = id === undefined ? [...this.waiting] : id !== null && this.waiting.has(id) ? [id] : [];
    const data: OversizedAnswer = { reason: 'mcp_output_too_large', size: line.size, limit: this.limit, ...(id === undefined ? { unattributed: true as const } : {}) };
    for (const request of answered) {
      this.waiting.delete(request);
      const message =
        id === undefined
          ? `a message of ${line.size} bytes, past the limit of ${this.limit}, came while this request waited and was discarded as it arrived; which request it answered could not be read, so every one waiting failed`
          : `the server's answer was ${line.size} bytes, past the limit of ${this.limit}; it was discarded as it arrived`;
      this.ready.push({ message: { jsonrpc: '2.0', id: request, error: { code: OUTPUT_TOO_LARGE, message, data } } });
    }
  }
}

/** Options of the SDK's stdio transport, and the largest message read from the server, in bytes. */
export interface BoundedStdioOptions extends Omit<StdioServerParameters, 'maxBufferSize'> {
  maxMessageBytes: number;
}

/** The SDK's stdio client transport, reading each message only up to `maxMessageBytes`. */
export class BoundedStdioTransport extends StdioClientTransport {
  private readonly reader: MessageReader | undefined;

  constructor({ maxMessageBytes, ...server }: BoundedStdioOptions) {
    super({ ...server, maxBufferSize: maxMessageBytes });
    const slot = this as unknown as { _readBuffer?: Partial<Record<keyof MessageReader, unknown>> };
    const own = slot._readBuffer;
    if (own && typeof own.append === 'function' && typeof own.readMessage === 'function' && typeof own.clear === 'function') {
      this.reader = new MessageReader(maxMessageBytes);
      slot._readBuffer = this.reader;
    }
  }

  override async send(message: JSONRPCMessage): Promise<void> {
    this.reader?.sent(message);
    try {
      await super.send(message);
    } catch (error) {
      this.reader?.unsent(message);
      throw error;
    }
  }
}
