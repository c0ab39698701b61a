/**
 * `serveMcp(target, options)`: serves a running agent over MCP, on stdio or on Streamable HTTP.
 *
 * - stdio: one session on the process's stdin and stdout. Nothing but protocol is written to
 *   stdout; the server closes when stdin ends.
 * - HTTP: a Node HTTP server on 127.0.0.1 (unless `host` says otherwise) answering at `path`
 *   (default `/mcp`). With `token`, every request must carry `Authorization: Bearer <token>`.
 *   Stateful by default: each client gets a session (`Mcp-Session-Id`) with its own server, and
 *   so its own `list_changed` notifications; `stateless: true` answers each request on its own.
 *   While bound to a loopback address, requests whose `Host` is not a loopback name are refused
 *   (a DNS-rebinding page cannot reach the agent), and so are requests a browser sends from a
 *   page elsewhere (its `Origin`); bound elsewhere, a page's `Origin` must be the host it asks.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { AgentRef } from '../index.js';
import { createSessionServer, followTarget, isAgentRef, resolveTarget, type McpServerOptions, type McpTarget, type TargetWatch } from './server.js';
import { BoundedStdioServerTransport } from './stdio-server-transport.js';
import { stderrDiagnostics } from './skill-catalog.js';
import { diagnostic, type DiagnosticListener } from '../core/diagnostics.js';
import { errorInfo } from '../core/errors.js';
import { isLoopbackInterface, LOOPBACK_NAMES } from '../core/loopback.js';
import { describeGiven, describeValue } from '../core/plain.js';
import { RuntimeError } from '../core/runtime-error.js';
import { unknownOption } from '../core/options.js';

/** Serve on this process's stdin and stdout. */
export interface StdioServeOptions extends McpServerOptions {
  transport: 'stdio';
  /** What the endpoint does once the agent it serves has stopped: see `HttpServeOptions.whenStopped`. */
  whenStopped?: 'refuse' | 'close';
}

/** Serve Streamable HTTP. */
export interface HttpServeOptions extends McpServerOptions {
  transport: 'http';
  /** Port to listen on; 0 (the default) lets the system choose: read it from the handle. */
  port?: number;
  /** Address to bind (default `127.0.0.1`). */
  host?: string;
  /** The endpoint's path (default `/mcp`). */
  path?: string;
  /** When set, requests must carry `Authorization: Bearer <token>`; others get 401. */
  token?: string;
  /** Answer each request on its own, with no sessions (and so no notifications). Default false. */
  stateless?: boolean;
  /**
   * Milliseconds a session may stay idle — no request under way and no stream open — before it
   * is closed (default 1,800,000: 30 minutes). A client that vanished without ending its session
   * would otherwise hold its server for as long as the endpoint runs; a client whose session was
   * closed gets 404 and, as MCP asks, starts a new one.
   */
  sessionTimeout?: number;
  /**
   * What the endpoint does once the agent it serves has stopped: `'refuse'` (the default) stays
   * open and answers every request with `agent_stopped` (served by id, until an agent runs under
   * the id again); `'close'` answers the requests under way, then closes (`endpoint.closed`
   * resolves), for a program whose endpoint has nothing else to serve.
   */
  whenStopped?: 'refuse' | 'close';
}

/** The transport and its options. */
export type ServeMcpOptions = StdioServeOptions | HttpServeOptions;

/** A running MCP endpoint. */
export interface McpEndpoint {
  readonly transport: 'stdio' | 'http';
  /** The endpoint's URL (HTTP only). */
  readonly url: string | undefined;
  /** The port listened on (HTTP only). */
  readonly port: number | undefined;
  /** Open sessions. */
  sessions(): number;
  /** Resolves when the endpoint has closed (stdin ended, or `close()`). */
  readonly closed: Promise<void>;
  /** Closes every session and the listener. The agent keeps running. */
  close(): Promise<void>;
}

const SERVER_OPTIONS = { name: true, version: true, instructions: true, registry: true, callTimeout: true, onDiagnostic: true } as const satisfies Record<keyof McpServerOptions, true>;
const STDIO_OPTIONS = { ...SERVER_OPTIONS, transport: true, whenStopped: true } as const satisfies Record<keyof StdioServeOptions, true>;
const HTTP_OPTIONS = { ...SERVER_OPTIONS, transport: true, whenStopped: true, port: true, host: true, path: true, token: true, stateless: true, sessionTimeout: true } as const satisfies Record<keyof HttpServeOptions, true>;

/**
 * The options, checked: the transport is one of the two, the port one a socket can take, and no
 * key is unknown (a misspelled `token` would otherwise serve the agent to anyone).
 */
function checkServeOptions(options: ServeMcpOptions): void {
  const transport = (options as { transport?: unknown } | undefined)?.transport;
  if (transport !== 'stdio' && transport !== 'http') {
    throw new RuntimeError(errorInfo('invalid_options', `serveMcp needs { transport: 'stdio' } or { transport: 'http', ... }, got transport ${typeof transport === 'string' ? `'${transport}'` : describeValue(transport)}`, { subject: 'transport', details: { option: 'transport', value: transport } }));
  }
  const unknown = unknownOption(`serveMcp (${transport})`, options, transport === 'http' ? HTTP_OPTIONS : STDIO_OPTIONS);
  if (unknown) throw new RuntimeError(unknown);
  const port = (options as HttpServeOptions).port;
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port <= 65535)) {
    throw new RuntimeError(errorInfo('invalid_options', `serveMcp's port must be a whole number from 0 (any free port) to 65535, got ${typeof port === 'number' ? port : describeValue(port)}`, { subject: 'port', details: { option: 'port', value: port } }));
  }
  const whenStopped: unknown = options.whenStopped;
  if (whenStopped !== undefined && whenStopped !== 'refuse' && whenStopped !== 'close') {
    throw new RuntimeError(errorInfo('invalid_options', `serveMcp's whenStopped must be 'refuse' or 'close', got ${describeGiven(whenStopped)}`, { subject: 'whenStopped', details: { option: 'whenStopped', value: whenStopped } }));
  }
  const sessionTimeout = (options as HttpServeOptions).sessionTimeout;
  if (sessionTimeout !== undefined && !(typeof sessionTimeout === 'number' && sessionTimeout > 0)) {
    throw new RuntimeError(errorInfo('invalid_options', `serveMcp's sessionTimeout must be a number of milliseconds above 0 (Infinity: sessions never expire), got ${describeValue(sessionTimeout)}`, { subject: 'sessionTimeout', details: { option: 'sessionTimeout', value: sessionTimeout } }));
  }
  if (sessionTimeout !== undefined && (options as HttpServeOptions).stateless === true) {
    throw new RuntimeError(errorInfo('invalid_options', "serveMcp's sessionTimeout bounds idle sessions, and with stateless: true there are none: drop one of the two", { subject: 'sessionTimeout', details: { option: 'sessionTimeout', value: sessionTimeout } }));
  }
}

/** Serves the agent over MCP. Resolves once the transport listens. */
export async function serveMcp(target: McpTarget, options: ServeMcpOptions): Promise<McpEndpoint> {
  checkServeOptions(options);
  const first = resolveTarget(target);
  let served: ServedEndpoint | undefined;
  const closeWhenStopped = options.whenStopped === 'close';
  const watch = reportStop(target, first, () => served?.endpoint.url, closeWhenStopped, options.onDiagnostic ?? stderrDiagnostics, () => {
    if (closeWhenStopped && served) void served.answered().then(() => served!.endpoint.close());
  });
  // Each session follows the target from the agent the endpoint follows when the session starts.
  const session = (): Server => createSessionServer(target, watch.current(), options);
  try {
    served = options.transport === 'stdio' ? await serveStdio(session, options) : await serveHttp(session, options);
  } catch (error) {
    watch.close();
    throw error;
  }
  const { endpoint } = served;
  void endpoint.closed.then(() => watch.close());
  // Stopped while the transport was being set up.
  if (closeWhenStopped && watch.current().status === 'stopped') void endpoint.close();
  return endpoint;
}

/** An endpoint, and when the requests it is answering have been answered. */
interface ServedEndpoint {
  endpoint: McpEndpoint;
  /** Resolves once no request is being answered (at once when none is). */
  answered(): Promise<void>;
}

/** Requests being answered, counted, and whoever waits for there to be none. */
class Answering {
  private count = 0;
  private readonly waiting: (() => void)[] = [];

  started(): void {
    this.count++;
  }

  ended(): void {
    if (--this.count === 0) for (const done of this.waiting.splice(0)) done();
  }

  /** Resolves once no request is being answered. */
  none(): Promise<void> {
    return this.count === 0 ? Promise.resolve() : new Promise((resolve) => this.waiting.push(resolve));
  }
}

/**
 * Says that the agent stopped while the endpoint serves it: its clients are refused from then on
 * (`agent_stopped`), and whoever runs the endpoint should know why. Once for a ref; for an id, once
 * per agent that stops under it (the next one is served).
 */
function reportStop(target: McpTarget, first: AgentRef<object>, url: () => string | undefined, closes: boolean, onDiagnostic: DiagnosticListener, stopped: () => void): TargetWatch {
  const what = closes
    ? 'answers the requests under way, then closes'
    : `answers every request with agent_stopped ${isAgentRef(target) ? 'until it is closed' : `until an agent runs under the id '${first.id}' again, or it is closed`}`;
  // Followed through passivation: an agent passivated is not stopped, and the one woken later is watched.
  return followTarget(target, first, {
    stopped: () => {
      const at = url();
      onDiagnostic(
        diagnostic('warning', 'mcp_agent_stopped', `agent '${first.id}' has stopped: the MCP endpoint${at ? ` at ${at}` : ''} ${what}`, {
          subject: first.id,
          details: { agent: first.id },
        }),
      );
      stopped();
    },
  });
}

/**
 * Serves on stdin and stdout. When stdin ends, the requests already read are answered first
 * (each within its call timeout), then the server closes.
 */
async function serveStdio(session: () => Server, options: StdioServeOptions): Promise<ServedEndpoint> {
  const server = session();
  const transport = new BoundedStdioServerTransport();
  let open = true;
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  const close = async () => {
    if (!open) return;
    open = false;
    process.stdin.off('end', onEnd);
    await server.close();
    markClosed();
  };
  const answering = new Set<string | number>();
  const count = new Answering();
  let ended = false;
  const onEnd = () => {
    ended = true;
    if (answering.size === 0) void close();
  };
  process.stdin.on('end', onEnd);
  server.onclose = ((previous) => () => {
    previous?.();
    void close();
  })(server.onclose);
  await server.connect(transport);
  // The requests read and not yet answered, so that the end of stdin waits for their answers.
  const receive = transport.onmessage;
  transport.onmessage = (message) => {
    if ('method' in message && 'id' in message && !answering.has(message.id)) {
      answering.add(message.id);
      count.started();
    }
    receive?.(message);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message) => {
    try {
      await send(message);
    } finally {
      if (!('method' in message) && 'id' in message && message.id !== undefined && answering.delete(message.id)) {
        count.ended();
        if (ended && answering.size === 0) void close();
      }
    }
  };
  return { endpoint: { transport: 'stdio', url: undefined, port: undefined, sessions: () => (open ? 1 : 0), closed, close }, answered: () => count.none() };
}

/** How long a session may stay idle by default: 30 minutes. */
const SESSION_TIMEOUT = 30 * 60_000;

function hostName(header: string | undefined): string | undefined {
  if (!header) return undefined;
  if (header.startsWith('[')) return header.slice(1, header.indexOf(']'));
  return header.split(':')[0];
}

/**
 * Whether a request's `Origin` (sent by browsers) may reach the endpoint: none at all (a host
 * program), a page on this machine when bound to a loopback address, else a page of the very
 * host the request names. Anything else is a web page elsewhere reaching in (DNS rebinding,
 * cross-site requests), which MCP's Streamable HTTP transport requires be refused with 403.
 */
function originAllowed(origin: string | undefined, host: string | undefined, loopbackOnly: boolean): boolean {
  if (origin === undefined) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    // `null` (a sandboxed frame, a file) or anything unreadable names no page we can trust.
    return false;
  }
  return loopbackOnly ? LOOPBACK_NAMES.has(url.hostname) : url.host === host;
}

function sameToken(given: string | undefined, token: string): boolean {
  const expected = Buffer.from(`Bearer ${token}`);
  const actual = Buffer.from(given ?? '');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

async function serveHttp(session: () => Server, options: HttpServeOptions): Promise<ServedEndpoint> {
  const host = options.host ?? '127.0.0.1';
  const path = options.path ?? '/mcp';
  const loopbackOnly = isLoopbackInterface(host);
  // Reachable from other machines, and answering anyone who can reach it: said, not refused (a
  // trusted network, or a proxy in front that authenticates, is the user's call).
  if (!loopbackOnly && options.token === undefined) {
    (options.onDiagnostic ?? stderrDiagnostics)(
      diagnostic('warning', 'mcp_unauthenticated', `serving on ${host}, an address other machines can reach, with no token: anyone who can reach it can call the agent's tools; give a token (Authorization: Bearer) or bind 127.0.0.1`, { subject: host, details: { host } }),
    );
  }
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const open = new Set<{ close(): Promise<void> }>();
  const answering = new Answering();
  const sessionTimeout = options.sessionTimeout ?? SESSION_TIMEOUT;
  /** Each session's requests and streams under way, and when the last of them ended. */
  const activity = new Map<StreamableHTTPServerTransport, { busy: number; idleSince: number; close(): Promise<void> }>();
  const track = (transport: StreamableHTTPServerTransport, res: ServerResponse) => {
    const session = activity.get(transport);
    if (!session) return;
    session.busy++;
    res.once('close', () => {
      if (--session.busy === 0) session.idleSince = Date.now();
    });
  };
  const sweep = () => {
    const now = Date.now();
    for (const session of activity.values()) if (session.busy === 0 && now - session.idleSince >= sessionTimeout) void session.close();
  };
  const sweeper = Number.isFinite(sessionTimeout) && !options.stateless ? setInterval(sweep, Math.min(sessionTimeout, 60_000)) : undefined;
  sweeper?.unref();

  const handleStateless = async (req: IncomingMessage, res: ServerResponse) => {
    const server = session();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const entry = { close: () => server.close() };
    open.add(entry);
    res.on('close', () => {
      open.delete(entry);
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  };

  const handleSession = async (req: IncomingMessage, res: ServerResponse) => {
    const id = req.headers['mcp-session-id'];
    if (typeof id === 'string') {
      const transport = sessions.get(id);
      if (!transport) return refuse(res, 404, `no session '${id}': it ended or never existed; initialize a new one`);
      track(transport, res);
      return transport.handleRequest(req, res);
    }
    if (req.method !== 'POST') return refuse(res, 400, 'no Mcp-Session-Id header: start a session with an initialize request (POST)');
    const server = session();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => void sessions.set(sessionId, transport),
    });
    const entry = { close: () => server.close() };
    open.add(entry);
    activity.set(transport, { busy: 0, idleSince: Date.now(), close: entry.close });
    track(transport, res);
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
      open.delete(entry);
      activity.delete(transport);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res);
    // A first request that was not an initialize made no session: nothing to keep.
    if (!transport.sessionId) {
      activity.delete(transport);
      await server.close();
    }
  };

  const http = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== path) return refuse(res, 404, `the MCP endpoint is ${path}`);
    if (loopbackOnly && !LOOPBACK_NAMES.has(hostName(req.headers.host) ?? '')) return refuse(res, 403, 'this server answers loopback host names only');
    if (!originAllowed(req.headers.origin, req.headers.host, loopbackOnly)) return refuse(res, 403, `requests from origin '${req.headers.origin}' are refused: ${loopbackOnly ? 'only pages on this machine may call this server' : 'only pages of the host this server answers as may call it'}`);
    if (options.token !== undefined && !sameToken(req.headers.authorization, options.token)) {
      return refuse(res, 401, 'missing or wrong bearer token', { 'www-authenticate': 'Bearer' });
    }
    // A POST carries requests (or notifications): answered once its response is over. A GET is
    // the stream of server messages, open for as long as the session.
    if (req.method === 'POST') {
      answering.started();
      res.once('close', () => answering.ended());
    }
    (options.stateless ? handleStateless : handleSession)(req, res).catch((error: unknown) => {
      if (!res.headersSent) refuse(res, 500, error instanceof Error ? error.message : String(error));
      else res.end();
    });
  });

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const { port } = http.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      if (sweeper) clearInterval(sweeper);
      await Promise.allSettled([...open].map((entry) => entry.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      markClosed();
    })());
  return { endpoint: { transport: 'http', url: `http://${urlHost}:${port}${path}`, port, sessions: () => sessions.size, closed, close }, answered: () => answering.none() };
}
