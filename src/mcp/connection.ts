/**
 * One MCP client connection to one server: started as a subprocess (stdio) or reached by URL
 * (Streamable HTTP), with the server's tool list kept current (`tools/list_changed` refreshes it),
 * time-outs on connecting and on every call, a cap on the size of messages and results (each
 * message read only up to it, on stdio as over HTTP), and every
 * failure turned into a typed `McpFailure` (`mcp_unreachable`, `mcp_unauthorized`, `mcp_timeout`,
 * `mcp_protocol_error`, `mcp_output_too_large`, `mcp_tool_error`).
 *
 * It never crashes its owner: a dropped connection is reported once through `onDropped`, and the
 * skill's child actor turns that into a crash its supervisor restarts. Over stdio the connection
 * drops when the process ends. Over HTTP there is no connection to watch, so a request tells: one
 * that gets no answer at all (refused, reset, no such host), or a 404 for the session (the server
 * restarted or ended it), drops the connection. A tool's own error, a JSON-RPC error or any other
 * HTTP status is the answer to one request and leaves it up.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, type CallToolResult, type ServerCapabilities, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { AnySchema, SchemaOutput } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { tracedToolCall } from './mcp-spans.js';
import { ABANDONED_ANSWER, watchedFetch } from './fetch.js';
import type { ErrorInfo } from '../core/error-info.js';
import { formatIssues, toIssues } from '../core/errors.js';
import { serverErrorMessage } from './protocol-error.js';
import { refusalText, refusedStatus } from './refusal.js';
import { BoundedStdioTransport, oversizedAnswer } from './stdio-transport.js';

/** How to reach a server: a command to start (stdio), or a URL (Streamable HTTP). */
export type McpServerAddress =
  | { command: string; args?: readonly string[]; env?: Readonly<Record<string, string>>; cwd?: string }
  | { url: string | URL; headers?: Readonly<Record<string, string>> };

/** The bounds every connection works within. */
export interface ConnectionLimits {
  /** Milliseconds to connect and list the tools (default 10,000). */
  connectTimeout: number;
  /** Milliseconds a tool call may take (default 30,000). */
  callTimeout: number;
  /** Largest tool result, in bytes of JSON (default 1 MiB). */
  maxOutputBytes: number;
}

/** The most tools/list pages read from one server before it counts as misbehaving. */
const MAX_TOOL_PAGES = 1_000;

/** Room a message (a stdio line, an HTTP answer or event) gets past `maxOutputBytes` for its JSON-RPC envelope and escaping. */
const ENVELOPE_BYTES = 64 * 1024;

/** The defaults of `ConnectionLimits`. */
export const DEFAULT_LIMITS: ConnectionLimits = { connectTimeout: 10_000, callTimeout: 30_000, maxOutputBytes: 1024 * 1024 };

/** Why talking to the server failed; `reason` is stable. */
export type McpFailureReason = 'mcp_unreachable' | 'mcp_unauthorized' | 'mcp_timeout' | 'mcp_protocol_error' | 'mcp_output_too_large' | 'mcp_tool_error' | 'mcp_tool_removed';

/** A failure talking to a server, with its stable reason. */
export class McpFailure extends Error {
  constructor(
    readonly reason: McpFailureReason,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'McpFailure';
  }
}

/**
 * A failure to reach a server or read from it as the typed error callers get (`mcpSkill` and
 * `mountMcpSkills`): `mcp_unauthorized` (with the HTTP `status`), `mcp_timeout`,
 * `mcp_protocol_error`, else `mcp_unreachable`. `message` says who asked.
 */
export function mcpErrorInfo(failure: McpFailure, message: string, fields: { skill?: string; subject?: string }): ErrorInfo {
  if (failure.reason === 'mcp_unauthorized') return { code: 'mcp_unauthorized', message, ...fields, details: { status: failure.details?.status as number } };
  return { code: failure.reason === 'mcp_timeout' || failure.reason === 'mcp_protocol_error' ? failure.reason : 'mcp_unreachable', message, ...fields };
}

/** Where a connection is. */
export type ConnectionState = 'connecting' | 'ready' | 'closed';

/** A person-readable name for a server address. */
export function describeAddress(address: McpServerAddress): string {
  return 'command' in address ? [address.command, ...(address.args ?? [])].join(' ') : String(address.url);
}

const STDERR_TAIL = 2048;

/** What a connection tells its owner. */
export interface ConnectionEvents {
  /** The connection dropped after it was ready (said once; never after `close()`). */
  onDropped?(failure: McpFailure): void;
  /** The server's tool list changed. */
  onToolsChanged?(tools: Tool[]): void;
}

/** How a connection connects. */
export interface ConnectOptions {
  /**
   * Over HTTP, a server that does not answer at all is tried again, pausing up to a second
   * between tries, until `connectTimeout`: a server that is restarting is waited for. Off, the
   * first try that gets no answer fails.
   */
  waitForServer?: boolean;
  /** List the server's tools on connecting (default true); a host reading only skills does not. */
  listTools?: boolean;
}

/** How the SDK reports an answer to no request it is waiting for. */
const LATE_ANSWER = /^Received a response for an unknown message ID/;

/** The first tool name a list holds twice: a call names its tool, so the second could never be reached. */
function duplicateTool(tools: readonly Tool[]): string | undefined {
  const seen = new Set<string>();
  for (const { name } of tools) {
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
}

/** An SDK result that failed the check against its MCP schema (a zod error: `ZodError`, or `$ZodError` from zod/v4/core), as `path: problem; ...`. */
function invalidResult(error: unknown): string | undefined {
  const issues = (error as { issues?: unknown } | undefined)?.issues;
  if (!(error instanceof Error) || !/^\$?ZodError$/.test(error.name) || !Array.isArray(issues)) return undefined;
  return formatIssues(toIssues(issues as Parameters<typeof toIssues>[0]));
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A tool's answer past `maxOutputBytes`: read and measured, discarded as it arrived, or read until the limit and no further. */
function outputTooLarge(server: string, tool: string, size: number, limit: number, how: { unattributed?: true; cutOff?: true } = {}): McpFailure {
  const message = how.unattributed
    ? `while tool '${tool}' of MCP server '${server}' was called, the server sent a message of ${size} bytes (the limit is ${limit}) whose request could not be read, so every call waiting failed`
    : how.cutOff
      ? `tool '${tool}' of MCP server '${server}' answered more than the limit of ${limit} bytes; reading stopped after ${size} bytes`
      : `tool '${tool}' of MCP server '${server}' answered ${size} bytes; the limit is ${limit}`;
  return new McpFailure('mcp_output_too_large', message, how.cutOff ? { size, limit, cutOff: true } : { size, limit });
}

/** One client connection to one server. */
export class McpConnection {
  state: ConnectionState = 'connecting';
  tools: Tool[] = [];
  private client: Client | undefined;
  private transport: Transport | undefined;
  private closing = false;
  private lastError: Error | undefined;
  private stderrTail = '';
  /** Why the connection dropped, once it has. */
  private droppedBecause: string | undefined;
  /** Why the current attempt to connect got no answer at all over HTTP, if it did not. */
  private unanswered: string | undefined;
  /** The current client's transport has closed. */
  private clientClosed = false;

  constructor(
    private readonly label: string,
    private readonly address: McpServerAddress,
    private readonly limits: ConnectionLimits,
    private readonly events: ConnectionEvents = {},
    private readonly options: ConnectOptions = {},
  ) {}

  /** The server process's id (stdio), once started. */
  get pid(): number | undefined {
    return this.transport instanceof BoundedStdioTransport ? (this.transport.pid ?? undefined) : undefined;
  }

  /**
   * What the server wrote last on stderr, or the last transport error: said when something fails.
   * `said` is the failure's own message, when it is that error already (not said twice).
   */
  private hint(said?: string): string {
    const stderr = this.stderrTail.trim();
    if (stderr) return `; its stderr ends: ${stderr.slice(-400)}`;
    return this.lastError && this.lastError.message !== said ? `; last error: ${this.lastError.message}` : '';
  }

  /** Reports the connection dropped, once, if it was ready and is not being closed. */
  private drop(because: string): void {
    if (this.state !== 'ready' || this.closing) return;
    this.state = 'closed';
    this.droppedBecause = because;
    this.events.onDropped?.(new McpFailure('mcp_unreachable', `MCP server '${this.label}' ${because}`));
  }

  private newClient(): Client {
    const client = new Client(
      { name: 'skillstate', version: '0.1.0' },
      {
        listChanged: {
          tools: {
            onChanged: (error, tools) => {
              if (error || !tools || client !== this.client) return;
              const twice = duplicateTool(tools);
              // A list no skill can be made of: connecting again reads it afresh, and fails saying why.
              if (twice !== undefined) return this.drop(`listed tool '${twice}' twice after its tools changed`);
              this.tools = tools;
              this.events.onToolsChanged?.(tools);
            },
          },
        },
      },
    );
    client.onerror = (error) => {
      // An answer to a request the client gave up on (it timed out, and a cancellation was sent)
      // arrives late, or is no longer read (over HTTP): MCP asks that it be ignored, and it says
      // nothing of the server's messages.
      if (client === this.client && !LATE_ANSWER.test(error.message) && !error.message.includes(ABANDONED_ANSWER)) this.lastError = error;
    };
    client.onclose = () => {
      if (client !== this.client) return;
      this.clientClosed = true;
      this.drop(`closed the connection${this.hint()}`);
    };
    return client;
  }

  private makeTransport(): Transport {
    const { address } = this;
    if ('command' in address) {
      const transport = new BoundedStdioTransport({
        command: address.command,
        args: [...(address.args ?? [])],
        ...(address.env ? { env: { ...address.env } } : {}),
        ...(address.cwd ? { cwd: address.cwd } : {}),
        stderr: 'pipe',
        maxMessageBytes: this.limits.maxOutputBytes + ENVELOPE_BYTES,
      });
      transport.stderr?.on('data', (chunk: Buffer) => {
        this.stderrTail = (this.stderrTail + chunk.toString()).slice(-STDERR_TAIL);
      });
      return transport;
    }
    const url = address.url instanceof URL ? address.url : new URL(address.url);
    const watched = watchedFetch(
      {
        unanswered: (why) => {
          this.unanswered = `cannot be reached (${why})`;
          this.drop(this.unanswered);
        },
        sessionGone: () => this.drop('no longer knows the session (the server restarted, or ended it)'),
      },
      { server: this.label, bytes: this.limits.maxOutputBytes + ENVELOPE_BYTES },
    );
    return new StreamableHTTPClientTransport(url, {
      fetch: watched,
      ...(address.headers ? { requestInit: { headers: { ...address.headers } } } : {}),
    });
  }

  private opening: Promise<void> | undefined;

  /** Resolves once the connection is ready, or has failed (never rejects). */
  settled(): Promise<void> {
    return (this.opening ?? Promise.resolve()).then(
      () => {},
      () => {},
    );
  }

  /** Connects and lists the tools. Rejects with an `McpFailure`. */
  open(): Promise<void> {
    return (this.opening ??= this.connect());
  }

  private async connect(): Promise<void> {
    const deadline = Date.now() + this.limits.connectTimeout;
    for (let pause = 100; ; pause = Math.min(pause * 2, 1_000)) {
      try {
        await this.attempt(deadline);
        break;
      } catch (error) {
        const failure = this.failure(error, 'connecting');
        const retry = this.options.waitForServer === true && this.unanswered !== undefined && Date.now() + pause < deadline;
        if (!retry) {
          await this.close();
          throw failure;
        }
        await this.closeClient();
        await sleep(pause);
        // Closed while waiting: `close()` has ended everything already.
        if (this.closing) throw failure;
      }
    }
    if (this.closing) return;
    this.unanswered = undefined;
    this.state = 'ready';
  }

  /** One attempt to connect and list the tools, on a client and transport of its own. */
  private async attempt(deadline: number): Promise<void> {
    this.unanswered = undefined;
    this.clientClosed = false;
    this.lastError = undefined;
    const client = (this.client = this.newClient());
    this.transport = this.makeTransport();
    await client.connect(this.transport, { timeout: Math.max(deadline - Date.now(), 1) });
    if (this.options.listTools !== false) this.tools = await this.listTools(client);
    // The server may have gone between its last answer and now.
    if (this.clientClosed) throw new McpFailure('mcp_unreachable', `MCP server '${this.label}' (${describeAddress(this.address)}) closed the connection while connecting${this.hint()}`);
  }

  private async listTools(client: Client): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      // A server may page on without end (empty pages, each answered in time): bound the pages too.
      if (++pages > MAX_TOOL_PAGES) {
        throw new McpFailure('mcp_protocol_error', `MCP server '${this.label}' kept paging its tools/list past ${MAX_TOOL_PAGES} pages (${tools.length} tools so far)`);
      }
      const page = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: this.limits.connectTimeout });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined && tools.length < 10_000);
    const twice = duplicateTool(tools);
    if (twice !== undefined) throw new McpFailure('mcp_protocol_error', `MCP server '${this.label}' lists tool '${twice}' twice; MCP asks that a server's tool names be unique, and a call names only its tool, so which of the two would answer cannot be told`);
    return tools;
  }

  /** Calls a tool. Rejects with an `McpFailure`; a tool's own error result is `mcp_tool_error`. */
  async call(tool: string, args: Record<string, unknown>): Promise<CallToolResult> {
    const { client } = this;
    if (this.state !== 'ready' || !client) throw new McpFailure('mcp_unreachable', `MCP server '${this.label}' is not connected (${this.state})${this.hint()}`);
    let result: CallToolResult;
    try {
      result = await tracedToolCall(this.label, tool, async (meta) => (await client.callTool(meta ? { name: tool, arguments: args, _meta: meta } : { name: tool, arguments: args }, undefined, { timeout: this.limits.callTimeout })) as CallToolResult);
    } catch (error) {
      const oversized = oversizedAnswer(error);
      if (oversized) throw outputTooLarge(this.label, tool, oversized.size, this.limits.maxOutputBytes, oversized);
      throw this.failure(error, `calling '${tool}'`);
    }
    const size = Buffer.byteLength(JSON.stringify(result));
    if (size > this.limits.maxOutputBytes) throw outputTooLarge(this.label, tool, size, this.limits.maxOutputBytes);
    return result;
  }

  /** What the server declared in its handshake, once connected. */
  get serverCapabilities(): ServerCapabilities | undefined {
    return this.client?.getServerCapabilities();
  }

  /**
   * Sends a request and checks its result against `schema`. Rejects with an `McpFailure`; a
   * JSON-RPC error answered by the server is `mcp_protocol_error` with its `code` in `details`.
   */
  async request<T extends AnySchema>(method: string, params: Record<string, unknown>, schema: T, timeout = this.limits.callTimeout): Promise<SchemaOutput<T>> {
    const { client } = this;
    if (this.state !== 'ready' || !client) throw new McpFailure('mcp_unreachable', `MCP server '${this.label}' is not connected (${this.state})${this.hint()}`);
    try {
      return await client.request({ method, params }, schema, { timeout });
    } catch (error) {
      throw this.failure(error, `asking ${method}`);
    }
  }

  /** Closes the connection (and ends the server process, for stdio). Never rejects. */
  async close(): Promise<void> {
    this.closing = true;
    this.state = 'closed';
    await this.closeClient();
  }

  private async closeClient(): Promise<void> {
    const { client, transport } = this;
    try {
      // Over HTTP the session outlives the socket unless it is ended explicitly.
      if (transport instanceof StreamableHTTPClientTransport && transport.sessionId && !this.droppedBecause) await transport.terminateSession();
    } catch {
      // A session the server no longer has needs no ending.
    }
    try {
      await client?.close();
    } catch {
      // Closing a connection that already broke has nothing left to report.
    }
  }

  private failure(error: unknown, doing: string): McpFailure {
    if (error instanceof McpFailure) return error;
    const where = `MCP server '${this.label}' (${describeAddress(this.address)}), ${doing}`;
    const unreachable = this.droppedBecause ?? this.unanswered;
    if (unreachable) return new McpFailure('mcp_unreachable', `${where}: the server ${unreachable}`);
    const status = refusedStatus(error);
    if (status !== undefined) {
      // 401: no credentials it takes; 403: it knows them and forbids this (a token without the
      // rights, or a request it does not take from where it came, such as a host name it does not serve).
      const fix = status === 401 ? 'check the token in its headers (Authorization: Bearer <token>)' : 'it forbids this request: check the rights of the token in its headers, and the address the request reaches it by';
      return new McpFailure('mcp_unauthorized', `${where}: the server refused the request (HTTP ${status}: ${refusalText(error as Error)}); ${fix}`, { status });
    }
    if (error instanceof McpError) {
      if (error.code === ErrorCode.RequestTimeout) {
        // Silence after messages that could not be read: the server speaks something else than MCP.
        if (this.lastError) return new McpFailure('mcp_protocol_error', `${where}: no valid answer in time; the server sent malformed messages (${this.lastError.message})`);
        return new McpFailure('mcp_timeout', `${where}: no answer in time (${error.message})${this.hint()}`);
      }
      if (error.code === ErrorCode.ConnectionClosed) return new McpFailure('mcp_unreachable', `${where}: the connection closed${this.hint()}`);
      const oversized = oversizedAnswer(error);
      if (oversized) return new McpFailure('mcp_output_too_large', `${where}: ${serverErrorMessage(error)}`, { size: oversized.size, limit: this.limits.maxOutputBytes, ...(oversized.cutOff ? { cutOff: true } : {}) });
      return new McpFailure('mcp_protocol_error', `${where}: ${serverErrorMessage(error)}${this.hint()}`, { code: error.code });
    }
    const invalid = invalidResult(error);
    if (invalid !== undefined) return new McpFailure('mcp_protocol_error', `${where}: the server's answer is not valid MCP (${invalid})`);
    const message = error instanceof Error ? error.message : String(error);
    return new McpFailure('mcp_unreachable', `${where}: ${message}${this.hint(message)}`);
  }
}
