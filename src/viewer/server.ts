/**
 * The inspection server: one HTTP server on the loopback interface (unless told otherwise) that
 * relays the inspection stream over WebSocket and serves the two pages that read it — the local
 * viewer (`/local/`, files of this package and Mermaid from its own `node_modules`, nothing
 * fetched from elsewhere) and the Stately inspector bridge (`/stately`, which embeds the hosted
 * Stately page and so needs the internet).
 *
 * Every message an application sends is relayed to every other client, its actor ids in the
 * connection's own namespace so that several applications stay apart. A viewer that connects
 * late gets every actor seen so far, each actor's latest snapshot, and the last `history` events.
 *
 * Never here: redaction (it happens in the application, before a message leaves the process).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { WebSocket, WebSocketServer } from 'ws';
import { isLoopbackInterface } from '../core/loopback.js';
import { AppNamespace } from './apps.js';
import { SteerRelay } from './steer-relay.js';
import { refusal } from './steering.js';
import type { InspectionMessage } from './messages.js';

/** Which page `/` leads to. */
export type ViewerKind = 'local' | 'stately';

export interface ViewerServerOptions {
  /** Interface to listen on. Default `127.0.0.1`: only this machine can connect. */
  host?: string;
  /** Port. Default: a free one. */
  port?: number;
  /** The page `/` leads to. Default `local`. */
  home?: ViewerKind;
  /** How many events a late viewer is sent. Default 1,000. Actors and their latest snapshots are always sent. */
  history?: number;
  /** Messages to start with (a recorded trace): every viewer gets them as if they had been sent live. */
  messages?: readonly InspectionMessage[];
  /** Shown in the local viewer's title bar. */
  title?: string;
  /**
   * Let the local viewer steer the applications that opt in too (send signals, call actions,
   * chat, mount, stop). Default false: read-only. Loopback only; every steering request must
   * carry the session token that `localUrl` holds (`#token=...`).
   */
  interactive?: boolean;
}

export interface ViewerServer {
  /** The home page (`/`), which leads to the chosen viewer. */
  readonly url: string;
  /** The local viewer (with `#token=...` when steering is on: the page sends it with every steering request). */
  readonly localUrl: string;
  /** The session token steering requests must carry; undefined when read-only. */
  readonly token: string | undefined;
  /** The Stately inspector bridge page (needs the internet). */
  readonly statelyUrl: string;
  /** The WebSocket an application streams to and viewers read from. */
  readonly socketUrl: string;
  /** The interface and port actually listened on. */
  readonly host: string;
  readonly port: number;
  /** Closes every connection and the server. */
  stop(): Promise<void>;
}

const MAX_ACTORS = 10_000;

/**
 * How far a client may fall behind (bytes queued for it and not yet taken) before it is
 * disconnected: a viewer that stops reading would otherwise hold every message since in memory.
 * The page reconnects and is sent the replay.
 */
const MAX_BACKLOG = 16 * 1024 * 1024;

/** The folder holding the local viewer's files: `viewer/` at the package root, from the sources or from the build. */
function assetsFolder(): string {
  for (const relative of ['../../viewer/', '../../../viewer/']) {
    const folder = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(`${folder}index.html`)) return folder;
  }
  throw new Error('the local viewer files (viewer/ in the skillstate package) are missing');
}

/**
 * Mermaid's script: the copy the build puts in viewer/vendor/ (what the package ships), or, in a
 * checkout that was not built, the development install's.
 */
function mermaidScript(): string {
  const vendored = `${assetsFolder()}vendor/mermaid.min.js`;
  return existsSync(vendored) ? vendored : createRequire(import.meta.url).resolve('mermaid/dist/mermaid.min.js');
}

const JAVASCRIPT = 'text/javascript; charset=utf-8';
/** One of the page's own files, from the viewer folder. */
const file = (name: string, type: string) => ({ file: () => `${assetsFolder()}${name}`, type });

const ASSETS: Record<string, { file: () => string; type: string }> = {
  '/local/': file('index.html', 'text/html; charset=utf-8'),
  '/local/viewer.css': file('viewer.css', 'text/css; charset=utf-8'),
  // The page's modules, one concern each: plain files, no build step.
  ...Object.fromEntries(['viewer.js', 'agent-panel.js', 'conversation.js', 'diagram.js', 'dom.js', 'schema-form.js', 'state.js', 'status.js', 'steer.js', 'steps.js'].map((name) => [`/local/${name}`, file(name, JAVASCRIPT)])),
  '/local/mermaid.min.js': { file: mermaidScript, type: JAVASCRIPT },
  '/stately': file('stately.html', 'text/html; charset=utf-8'),
};

/** Nothing on the local page may reach past this server. */
const LOCAL_POLICY = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'";

function hostnameOf(header: string | undefined): string {
  if (!header) return '';
  return header.startsWith('[') ? header.slice(0, header.indexOf(']') + 1) : header.split(':')[0]!;
}

/**
 * What a late viewer is sent: actors, then the recent events and snapshots in the order they
 * happened (so that the page can step through them), then each actor's latest snapshot that fell
 * out of that window.
 */
class Replay {
  private readonly actors = new Map<string, string>();
  private readonly snapshots = new Map<string, string>();
  private readonly recent: string[] = [];
  constructor(private readonly history: number) {}

  keep(text: string): void {
    let message: InspectionMessage | null;
    try {
      message = JSON.parse(text) as InspectionMessage | null;
    } catch {
      return;
    }
    // Other JSON a program sends (`null`, `7`) is relayed as it came, never kept.
    if (typeof message !== 'object' || message === null) return;
    if (message.type === '@xstate.actor') {
      this.actors.set(message.sessionId, text);
      if (this.actors.size > MAX_ACTORS) {
        const oldest = this.actors.keys().next().value!;
        this.actors.delete(oldest);
        this.snapshots.delete(oldest);
      }
      return;
    }
    if (message.type === '@xstate.snapshot') {
      if (!this.actors.has(message.sessionId)) return;
      this.snapshots.set(message.sessionId, text);
    } else if (message.type !== '@xstate.event') return;
    this.recent.push(text);
    // An event and the snapshot it caused count as one: `history` events, with their snapshots.
    if (this.recent.length > 2 * this.history) this.recent.splice(0, this.recent.length - 2 * this.history);
  }

  messages(): string[] {
    const recent = new Set(this.recent);
    return [...this.actors.values(), ...this.recent, ...[...this.snapshots.values()].filter((text) => !recent.has(text))];
  }
}

/** The largest steering request read. */
const MAX_BODY = 1_000_000;

/** A request's body as text, or undefined past `MAX_BODY`. */
async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Starts the inspection server; resolves once it listens. */
export async function startViewerServer(options: ViewerServerOptions = {}): Promise<ViewerServer> {
  // An empty host (an unset variable passed on) would bind every interface: refused, not guessed.
  if (options.host !== undefined && (typeof options.host !== 'string' || options.host.trim() === '')) {
    throw new TypeError(`host must be an address to listen on, such as '127.0.0.1', not ${JSON.stringify(options.host)}; leave it out for 127.0.0.1`);
  }
  const host = options.host ?? '127.0.0.1';
  const home = options.home ?? 'local';
  const replay = new Replay(options.history ?? 1_000);
  for (const message of options.messages ?? []) replay.keep(JSON.stringify(message));
  const loopbackOnly = isLoopbackInterface(host);
  if (options.interactive && !loopbackOnly) {
    throw new TypeError(`interactive: true steers agents from the page and is served on loopback only, not on ${host}`);
  }
  const steering = new SteerRelay(options.interactive === true);
  // A page on another site can make the browser talk to a loopback port under a name it controls
  // (DNS rebinding); on loopback, only loopback names and addresses (such as 127.0.0.2, which the
  // server may be bound to) are served.
  const hostAllowed = (request: IncomingMessage) => !loopbackOnly || isLoopbackInterface(hostnameOf(request.headers.host).replace(/^\[(.*)\]$/, '$1'));

  const http = createServer((request, response) => void serve(request, response));
  async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (!hostAllowed(request)) {
      response.writeHead(403, { 'content-type': 'text/plain' }).end('refused: this server answers to loopback names only\n');
      return;
    }
    const path = new URL(request.url ?? '/', 'http://server').pathname;
    if (path === '/' || path === '/local') {
      response.writeHead(302, { location: home === 'local' || path === '/local' ? '/local/' : '/stately' }).end();
      return;
    }
    if (path === '/favicon.ico') {
      response.writeHead(204).end();
      return;
    }
    if (path === '/local/config.json') {
      response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify({ title: options.title ?? 'skillstate', interactive: steering.token !== undefined }));
      return;
    }
    if (path === '/local/steer') {
      if (request.method !== 'POST') {
        response.writeHead(405, { allow: 'POST', 'content-type': 'text/plain' }).end('POST a command\n');
        return;
      }
      const body = await readBody(request);
      const { status, answer } = body === undefined ? { status: 413, answer: refusal('invalid_command', `the body is over ${MAX_BODY} bytes`) } : await steering.request(request, body);
      response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(answer));
      return;
    }
    const asset = ASSETS[path];
    if (!asset || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    try {
      const body = await readFile(asset.file());
      const headers: Record<string, string> = { 'content-type': asset.type, 'x-content-type-options': 'nosniff' };
      if (path.startsWith('/local/')) headers['content-security-policy'] = LOCAL_POLICY;
      response.writeHead(200, headers).end(request.method === 'HEAD' ? undefined : body);
    } catch (error) {
      response.writeHead(500, { 'content-type': 'text/plain' }).end(`${error instanceof Error ? error.message : String(error)}\n`);
    }
  }

  const sockets = new WebSocketServer({
    server: http,
    // A browser says where the page that opens a socket comes from: only this server's own pages
    // may read the stream. Programs (the application) send no Origin.
    verifyClient: ({ req, origin }: { req: IncomingMessage; origin?: string }) => {
      if (!hostAllowed(req)) return false;
      if (!origin) return true;
      try {
        return new URL(origin).host === req.headers.host;
      } catch {
        return false;
      }
    },
  });
  // The socket server passes on the HTTP server's errors; the one that matters, failing to listen
  // (a port in use, an address not of this machine), rejects the start below.
  sockets.on('error', () => {});
  let connections = 0;
  sockets.on('connection', (socket) => {
    for (const text of replay.messages()) socket.send(text);
    // Only applications send: a connection becomes one with its first message.
    let namespace: AppNamespace | undefined;
    socket.on('message', (data) => {
      const raw = String(data);
      // Steering never travels over the socket: a command sent on it is refused, not relayed.
      if (SteerRelay.isCommand(raw)) {
        const { id } = JSON.parse(raw) as { id?: unknown };
        socket.send(JSON.stringify({ type: '@skillstate.answer', id, ...refusal(steering.token ? 'over_websocket' : 'read_only') }));
        return;
      }
      if (!namespace) {
        namespace = new AppNamespace(`app${++connections}`);
        steering.join(namespace.app.id, socket);
      }
      if (steering.answered(raw, socket)) return;
      const text = namespace.relay(raw);
      if (text === undefined) return;
      replay.keep(text);
      for (const client of sockets.clients) {
        if (client === socket || client.readyState !== WebSocket.OPEN) continue;
        if (client.bufferedAmount > MAX_BACKLOG) client.terminate();
        else client.send(text);
      }
    });
    socket.on('error', () => {});
  });

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const address = http.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const origin = `http://${shown === '0.0.0.0' || shown === '[::]' ? '127.0.0.1' : shown}:${address.port}`;
  return {
    url: origin,
    localUrl: `${origin}/local/${steering.token ? `#token=${steering.token}` : ''}`,
    token: steering.token,
    statelyUrl: `${origin}/stately`,
    socketUrl: `${origin.replace('http:', 'ws:')}/`,
    host: address.address,
    port: address.port,
    async stop() {
      steering.close();
      for (const client of sockets.clients) client.terminate();
      await new Promise<void>((resolve) => sockets.close(() => resolve()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
