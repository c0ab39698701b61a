/**
 * The server side of MCP over stdio, with a limit on the size of each message the client writes.
 *
 * The SDK's `StdioServerTransport` holds stdin in one buffer, and a message past its limit
 * (10 MiB) closes the transport: the server ends, answering nothing and saying nothing. Here its
 * read buffer is replaced by `BoundedLines`: a message past the limit is never held whole, its
 * bytes dropped as they arrive, and the request it was is answered `-32600` (invalid request) with
 * its size, as a request too large for Streamable HTTP is answered 413. A line that is not JSON
 * is answered `-32700` (parse error), and JSON that is not a JSON-RPC message `-32600` (with its
 * id when it is a request), as JSON-RPC asks and as Streamable HTTP answers; the SDK's transport
 * answers neither. The session goes on.
 * (Should an SDK version keep no such buffer, the SDK's own behaviour applies.)
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { deserializeMessage, STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { ErrorCode, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { BoundedLines, type SkippedLine } from './bounded-lines.js';
import { idOf } from './stdio-transport.js';

/** The largest message read from the client, in bytes: the SDK's own limit. */
export const MAX_REQUEST_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE;

/** The SDK's stdio server transport, reading each message only up to `limit` bytes. */
export class BoundedStdioServerTransport extends StdioServerTransport {
  constructor(private readonly limit = MAX_REQUEST_BYTES) {
    super();
    const slot = this as unknown as { _readBuffer?: Partial<Record<'append' | 'readMessage' | 'clear', unknown>> };
    const own = slot._readBuffer;
    if (!own || typeof own.append !== 'function' || typeof own.readMessage !== 'function' || typeof own.clear !== 'function') return;
    const ready: ({ message: JSONRPCMessage } | { error: Error })[] = [];
    const lines = new BoundedLines(limit, {
      line: (text) => {
        if (text.trim() === '') return;
        try {
          ready.push({ message: deserializeMessage(text) });
        } catch (error) {
          this.answerUnreadable(text);
          ready.push({ error: error instanceof Error ? error : new Error(String(error)) });
        }
      },
      skipped: (line) => this.refuse(line),
    });
    slot._readBuffer = {
      append: (chunk: Buffer) => lines.push(chunk),
      readMessage: () => {
        const next = ready.shift();
        if (next === undefined) return null;
        if ('error' in next) throw next.error;
        return next.message;
      },
      clear: () => {
        lines.clear();
        ready.length = 0;
      },
    };
  }

  /** Answers a line that is not a JSON-RPC message: no id when none can be read (MCP's error answers may omit it). */
  private answerUnreadable(text: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return this.answer(undefined, ErrorCode.ParseError, 'Parse error: the line is not JSON');
    }
    const message = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as { id?: unknown; method?: unknown; result?: unknown; error?: unknown };
    // A malformed answer to one of this server's requests is not answered: its id is of this side's numbering.
    if (message.method === undefined && ('result' in message || 'error' in message)) return;
    const id = message.method !== undefined && (typeof message.id === 'string' || typeof message.id === 'number') ? message.id : undefined;
    this.answer(id, ErrorCode.InvalidRequest, 'Invalid Request: not a JSON-RPC 2.0 message MCP defines');
  }

  private answer(id: string | number | undefined, code: number, message: string): void {
    this.send({ jsonrpc: '2.0', ...(id === undefined ? {} : { id }), error: { code, message } } as JSONRPCMessage).catch((error: unknown) => this.onerror?.(error instanceof Error ? error : new Error(String(error))));
  }

  /** Answers a request discarded for its size; a message whose id cannot be read is reported to `onerror`. */
  private refuse(line: SkippedLine): void {
    const message = `a message of ${line.size} bytes, past the limit of ${this.limit}, was discarded as it arrived`;
    const id = idOf(line);
    if (id === undefined || id === null) {
      this.onerror?.(new Error(`${message}; no request id could be read from it, so nothing was answered`));
      return;
    }
    this.answer(id, ErrorCode.InvalidRequest, `the request was too large: ${message}`);
  }
}
