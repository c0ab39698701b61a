/**
 * One MCP client connection to one server: started as a subprocess (stdio) or reached by URL
 * (Streamable HTTP), with the server's tool list kept current (`tools/list_changed` refreshes it),
 * time-outs on connecting and on every call, a cap on the size of messages and results, and every
 * failure turned into a typed `McpFailure` (`mcp_unreachable`, `mcp_timeout`, `mcp_protocol_error`,
 * `mcp_output_too_large`, `mcp_tool_error`).
 *
 * It never crashes its owner: a dropped connection (the process died, the socket closed) is
 * reported once through `onDropped`; the skill's child actor turns that into a crash its
 * supervisor restarts.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { requestScopedFetch } from './fetch.js';

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

/** The defaults of `ConnectionLimits`. */
/** The most tools/list pages read from one server before it counts as misbehaving. */
const MAX_TOOL_PAGES = 1_000;

export const DEFAULT_LIMITS: ConnectionLimits = { connectTimeout: 10_000, callTimeout: 30_000, maxOutputBytes: 1024 * 1024 };

/** Why talking to the server failed; `reason` is stable. */
export type McpFailureReason = 'mcp_unreachable' | 'mcp_timeout' | 'mcp_protocol_error' | 'mcp_output_too_large' | 'mcp_tool_error' | 'mcp_tool_removed';

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

/** Where a connection is. */
export type ConnectionState = 'connecting' | 'ready' | 'closed';

/** A person-readable name for a server address. */
export function describeAddress(address: McpServerAddress): string {
  return 'command' in address ? [address.command, ...(address.args ?? [])].join(' ') : String(address.url);
}

const STDERR_TAIL = 2048;

/** One client connection to one server. */
export class McpConnection {
  state: ConnectionState = 'connecting';
  tools: Tool[] = [];
  private readonly client: Client;
  private transport: Transport | undefined;
  private closing = false;
  private lastError: Error | undefined;
  private stderrTail = '';

  constructor(
    private readonly label: string,
    private readonly address: McpServerAddress,
    private readonly limits: ConnectionLimits,
    private readonly events: { onDropped?(failure: McpFailure): void; onToolsChanged?(tools: Tool[]): void } = {},
  ) {
    this.client = new Client(
      { name: 'skillstate', version: '0.1.0' },
      {
        listChanged: {
          tools: {
            onChanged: (error, tools) => {
              if (error || !tools) return;
              this.tools = tools;
              this.events.onToolsChanged?.(tools);
            },
          },
        },
      },
    );
    this.client.onerror = (error) => {
      this.lastError = error;
    };
    this.client.onclose = () => {
      const wasOpen = this.state !== 'closed';
      this.state = 'closed';
      if (wasOpen && !this.closing) this.events.onDropped?.(new McpFailure('mcp_unreachable', `MCP server '${this.label}' closed the connection${this.hint()}`));
    };
  }

  /** The server process's id (stdio), once started. */
  get pid(): number | undefined {
    return this.transport instanceof StdioClientTransport ? (this.transport.pid ?? undefined) : undefined;
  }

  /** What the server wrote last on stderr, or the last transport error: said when something fails. */
  private hint(): string {
    const stderr = this.stderrTail.trim();
    if (stderr) return `; its stderr ends: ${stderr.slice(-400)}`;
    return this.lastError ? `; last error: ${this.lastError.message}` : '';
  }

  private makeTransport(): Transport {
    const { address } = this;
    if ('command' in address) {
      const transport = new StdioClientTransport({
        command: address.command,
        args: [...(address.args ?? [])],
        ...(address.env ? { env: { ...address.env } } : {}),
        ...(address.cwd ? { cwd: address.cwd } : {}),
        stderr: 'pipe',
        // A message larger than any result we accept is refused before it is buffered whole.
        maxBufferSize: this.limits.maxOutputBytes + 64 * 1024,
      });
      transport.stderr?.on('data', (chunk: Buffer) => {
        this.stderrTail = (this.stderrTail + chunk.toString()).slice(-STDERR_TAIL);
      });
      return transport;
    }
    const url = address.url instanceof URL ? address.url : new URL(address.url);
    return new StreamableHTTPClientTransport(url, {
      fetch: requestScopedFetch,
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
    this.transport = this.makeTransport();
    try {
      await this.client.connect(this.transport, { timeout: this.limits.connectTimeout });
      this.tools = await this.listTools();
    } catch (error) {
      await this.close();
      throw this.failure(error, 'connecting');
    }
    if (this.closing) return;
    this.state = 'ready';
  }

  private async listTools(): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      // A server may page on without end (empty pages, each answered in time): bound the pages too.
      if (++pages > MAX_TOOL_PAGES) {
        throw new McpFailure('mcp_protocol_error', `MCP server '${this.label}' kept paging its tools/list past ${MAX_TOOL_PAGES} pages (${tools.length} tools so far)`);
      }
      const page = await this.client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: this.limits.connectTimeout });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined && tools.length < 10_000);
    return tools;
  }

  /** Calls a tool. Rejects with an `McpFailure`; a tool's own error result is `mcp_tool_error`. */
  async call(tool: string, args: Record<string, unknown>): Promise<CallToolResult> {
    if (this.state !== 'ready') throw new McpFailure('mcp_unreachable', `MCP server '${this.label}' is not connected (${this.state})${this.hint()}`);
    let result: CallToolResult;
    try {
      result = (await this.client.callTool({ name: tool, arguments: args }, undefined, { timeout: this.limits.callTimeout })) as CallToolResult;
    } catch (error) {
      throw this.failure(error, `calling '${tool}'`);
    }
    const size = Buffer.byteLength(JSON.stringify(result));
    if (size > this.limits.maxOutputBytes) {
      throw new McpFailure('mcp_output_too_large', `tool '${tool}' of MCP server '${this.label}' answered ${size} bytes; the limit is ${this.limits.maxOutputBytes}`, {
        size,
        limit: this.limits.maxOutputBytes,
      });
    }
    return result;
  }

  /** Closes the connection (and ends the server process, for stdio). Never rejects. */
  async close(): Promise<void> {
    this.closing = true;
    this.state = 'closed';
    try {
      // Over HTTP the session outlives the socket unless it is ended explicitly.
      if (this.transport instanceof StreamableHTTPClientTransport && this.transport.sessionId) await this.transport.terminateSession();
      await this.client.close();
    } catch {
      // Closing a connection that already broke has nothing left to report.
    }
  }

  private failure(error: unknown, doing: string): McpFailure {
    if (error instanceof McpFailure) return error;
    const where = `MCP server '${this.label}' (${describeAddress(this.address)}), ${doing}`;
    if (error instanceof McpError) {
      if (error.code === ErrorCode.RequestTimeout) {
        // Silence after messages that could not be read: the server speaks something else than MCP.
        if (this.lastError) return new McpFailure('mcp_protocol_error', `${where}: no valid answer in time; the server sent malformed messages (${this.lastError.message})`);
        return new McpFailure('mcp_timeout', `${where}: no answer in time (${error.message})${this.hint()}`);
      }
      if (error.code === ErrorCode.ConnectionClosed) return new McpFailure('mcp_unreachable', `${where}: the connection closed${this.hint()}`);
      return new McpFailure('mcp_protocol_error', `${where}: ${error.message}${this.hint()}`, { code: error.code });
    }
    const message = error instanceof Error ? error.message : String(error);
    return new McpFailure('mcp_unreachable', `${where}: ${message}${this.hint()}`);
  }
}
