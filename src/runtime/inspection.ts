/**
 * Watching agents from Node. `startInspector()` starts the inspection server (loopback only
 * unless a `host` is given) and returns the `inspect` observer to give
 * `createAgentSystem({ inspect })`. Every actor, event and snapshot is streamed to the server in
 * the Stately inspector's format, after the optional redaction, and two pages read it: the local
 * viewer (offline, served from this package) and the Stately inspector bridge (hosted, online).
 * `@xstate/inspect` is XState v4 only; the message format is `@statelyai/inspect`'s.
 *
 * Redaction runs here, in the application: what is redacted never leaves the process.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { basename } from 'node:path';
import { createInspector } from '@statelyai/inspect';
import type { InspectionEvent, Observer } from 'xstate';
import WebSocket from 'ws';
import { describeThrown, errorInfo } from '../core/errors.js';
import { APP_HELLO, type AppHello } from '../viewer/apps.js';
import { redactInspectionMessage, toPlain, type InspectionMessage, type InspectionRedactor } from '../viewer/messages.js';
import { startViewerServer, type ViewerKind, type ViewerServer } from '../viewer/server.js';
import { RuntimeError } from '../core/runtime-error.js';
import { closeFlushed, Outbox, type InspectorStopped } from './inspector-outbox.js';
import { CHAT_DELTA, refusal, STEER_ANSWER, STEER_COMMAND, STEERING_OPS, type SteerAnswer, type SteerCommandMessage } from '../viewer/steering.js';
import { carryOut } from './steering.js';
import { unknownOption } from '../core/options.js';
import type { AgentSystem } from './system.js';

export type { InspectorStopped } from './inspector-outbox.js';

/** Options of `startInspector`. */
export interface InspectorOptions {
  /** Port of the inspection server (HTTP pages + WebSocket). Default: a free port. */
  port?: number;
  /**
   * Interface the server listens on. Default `127.0.0.1`: only this machine can connect. Give
   * `0.0.0.0` (or an address) deliberately to let other machines watch, and consider `redact`.
   */
  host?: string;
  /**
   * Which viewer `url` opens: `'local'` (the default: offline, served from this package) or
   * `'stately'` (the hosted Stately inspector, which needs the internet). Both pages read the same
   * stream whichever is chosen (`localUrl`, `statelyUrl`).
   */
  viewer?: ViewerKind;
  /** Open `url` in the default browser. Default false (the URL is returned). */
  open?: boolean;
  /**
   * What leaves the process. `true`: the default redaction (`redactInspectionMessage`: contexts
   * and event payloads become `'[redacted]'`, names, states and event types stay). A function:
   * your own (return the message to send, changed or not, or `undefined` to send nothing).
   * Default: everything is sent as it is.
   */
  redact?: boolean | InspectionRedactor;
  /** Stream to a server that is already running (`skillstate inspect` prints its socket URL) instead of starting one. */
  connect?: string;
  /** How many events a viewer that connects late is sent. Default 1,000. */
  history?: number;
  /**
   * What viewers call this application. Default: its script's file name. Several applications
   * can stream to one `skillstate inspect`: each one's actors are kept apart and shown under its
   * label (and process id).
   */
  label?: string;
  /**
   * Let the local viewer steer the system given to `attach`: send signals, call actions from
   * forms, chat, approve tool calls, mount and unmount skills, stop agents. Default false: the
   * page only watches. The server it starts is then loopback only, and every steering request must
   * carry the session token in `localUrl` (`#token=...`). With `connect`, the server must be
   * started with `skillstate inspect --interactive` too.
   */
  interactive?: boolean;
}


const INSPECTOR_OPTIONS = { port: true, host: true, viewer: true, open: true, redact: true, connect: true, history: true, label: true, interactive: true } as const satisfies Record<keyof InspectorOptions, true>;

/** A running inspector started by `startInspector`: its URL, the XState `inspect` option, `attach(system)` (the system the studio describes and, with `interactive: true`, steers), and `stop()`. */
export interface InspectorHandle {
  /** Pass this to `createAgentSystem({ inspect })`. */
  inspect: Observer<InspectionEvent>;
  /** The page of the chosen viewer (`localUrl` or `statelyUrl`). */
  url: string;
  /** The local viewer: state diagrams and the event log, no request leaving this machine (with `#token=...` when it may steer). */
  localUrl: string;
  /** The Stately inspector bridge (needs the internet). */
  statelyUrl: string;
  /** The WebSocket the application streams to (other clients connected to it receive the events). */
  socketUrl: string;
  /** The interface the server listens on (`127.0.0.1` unless `host` was given). */
  host: string;
  port: number;
  /**
   * Sends what is still on its way, then closes the connection and, unless it connected to a
   * server it did not start, the server. Bounded by `timeout` (milliseconds, default 5,000): past
   * it, the connection is cut and what was left unsent is reported, on stderr and in the result.
   */
  stop(options?: { timeout?: number }): Promise<InspectorStopped>;
  /**
   * The system the local viewer describes (each agent's actions with their input schemas, its
   * routes) and, with `interactive: true`, steers. Read-only without `interactive`.
   */
  attach(system: AgentSystem): void;
}

/** A free TCP port on the loopback interface. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

function redactorOf(option: InspectorOptions['redact']): InspectionRedactor | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === true) return redactInspectionMessage;
  if (typeof option === 'function') return option;
  throw new RuntimeError(errorInfo('invalid_config', `startInspector: redact must be true, false or a function, not ${typeof option}`, { subject: 'redact' }));
}

function openBrowser(url: string): void {
  const [command, args] = process.platform === 'darwin' ? ['open', [url]] : process.platform === 'win32' ? ['cmd', ['/c', 'start', '', url]] : ['xdg-open', [url]];
  try {
    const child = spawn(command, args as string[], { stdio: 'ignore', detached: true });
    child.on('error', () => process.stderr.write(`[skillstate] could not open a browser; open ${url}\n`));
    child.unref();
  } catch {
    process.stderr.write(`[skillstate] could not open a browser; open ${url}\n`);
  }
}

async function connectSocket(url: string): Promise<WebSocket> {
  let socket: WebSocket;
  try {
    socket = new WebSocket(url);
  } catch (error) {
    throw new RuntimeError(errorInfo('invalid_config', `startInspector: connect must be a ws:// URL, not ${JSON.stringify(url)}: ${describeThrown(error)}`, { subject: 'connect' }));
  }
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error('no answer within 5 s')), 5_000);
    const fail = (error: Error) => {
      clearTimeout(timer);
      socket.terminate();
      reject(new RuntimeError(errorInfo('signal_failed', `could not connect to the inspection server at ${url}: ${error.message}`)));
    };
    socket.once('open', () => {
      clearTimeout(timer);
      resolve();
    });
    socket.once('error', fail);
  });
  // Later errors (the server going away) end the stream; they must not crash the application.
  socket.on('error', () => {});
  return socket;
}

/**
 * How deep a snapshot is copied before it is sent (the inspector's default, 10, cuts a
 * conversation's tool calls in an agent's state to `[Object]`).
 */
const SERIALIZATION_DEPTH = 20;

/** How long `stop()` waits for what is still on its way, by default. */
const STOP_TIMEOUT = 5_000;

function labelOf(option: unknown): string {
  if (option === undefined) return basename(process.argv[1] ?? '') || `node ${process.pid}`;
  if (typeof option === 'string' && option.trim() !== '') return option.trim();
  throw new RuntimeError(errorInfo('invalid_config', `startInspector: label must be a non-empty string, not ${JSON.stringify(option)}`, { subject: 'label' }));
}

/**
 * Starts the inspection server (or connects to a running one) and returns the observer to give
 * `createAgentSystem({ inspect })`.
 *
 * @example
 * const inspector = await startInspector({ redact: true });
 * console.log(`open ${inspector.url}`); // the local viewer, offline
 * const system = createAgentSystem({ inspect: inspector.inspect });
 */
export async function startInspector(options: InspectorOptions = {}): Promise<InspectorHandle> {
  // A misspelled `redact` would otherwise stream every state and payload as it is.
  const unknown = unknownOption('startInspector', options, INSPECTOR_OPTIONS);
  if (unknown) throw new RuntimeError(unknown);
  if (options.port !== undefined && !(Number.isInteger(options.port) && options.port >= 0 && options.port <= 65535)) {
    throw new RuntimeError(errorInfo('invalid_config', `startInspector: port must be a whole number from 0 (any free port) to 65535, not ${JSON.stringify(options.port)}`, { subject: 'port' }));
  }
  const redact = redactorOf(options.redact);
  if (options.viewer !== undefined && options.viewer !== 'local' && options.viewer !== 'stately') {
    throw new RuntimeError(errorInfo('invalid_config', `startInspector: viewer must be 'local' or 'stately', not ${JSON.stringify(options.viewer)}`, { subject: 'viewer' }));
  }
  let server: ViewerServer | undefined;
  let socketUrl: string;
  if (options.connect !== undefined) socketUrl = options.connect;
  else {
    try {
      server = await startViewerServer({ host: options.host, port: options.port, home: options.viewer ?? 'local', history: options.history, interactive: options.interactive === true });
    } catch (error) {
      throw new RuntimeError(errorInfo('signal_failed', `the inspection server could not listen on ${options.host ?? '127.0.0.1'}:${options.port ?? 'a free port'}: ${describeThrown(error)}`));
    }
    socketUrl = server.socketUrl;
  }
  let socket: WebSocket;
  try {
    socket = await connectSocket(socketUrl);
  } catch (error) {
    await server?.stop();
    throw error;
  }
  const label = labelOf(options.label);
  let attached: AgentSystem | undefined;
  // Commands from the server: described or carried out on the attached system, each answered by its id.
  socket.on('message', (data) => {
    let message: SteerCommandMessage;
    try {
      message = JSON.parse(String(data)) as SteerCommandMessage;
    } catch {
      return;
    }
    if (message?.type !== STEER_COMMAND || typeof message.id !== 'string') return;
    const answer = (result: SteerAnswer) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: STEER_ANSWER, id: message.id, ...result }));
    };
    const op = message.command?.op;
    if (!attached) answer(refusal('not_attached'));
    else if (STEERING_OPS.has(op) && options.interactive !== true) answer(refusal('read_only', 'this application did not opt in (startInspector({ interactive: true }))'));
    else void carryOut(attached, message.command).then(answer);
  });
  socket.send(JSON.stringify({ type: APP_HELLO, label, pid: process.pid } satisfies AppHello));
  let redactionFailed = false;
  // Events the socket could not take because the connection had closed before stop() (the server
  // went away): said once on stderr as it happens, and counted in what stop() returns.
  let dropped = 0;
  let stopping = false;
  const inspector = createInspector({
    send(event) {
      if (socket.readyState !== WebSocket.OPEN) {
        if (stopping) return;
        if (dropped++ === 0) process.stderr.write(`[skillstate] the connection to the inspection server at ${socketUrl} closed: inspection events are dropped from now on\n`);
        return;
      }
      let message = toPlain(event) as InspectionMessage | undefined;
      if (redact && message) {
        try {
          message = redact(message);
        } catch (error) {
          // Never sent unredacted: a redactor that throws drops the message.
          message = undefined;
          if (!redactionFailed) process.stderr.write(`[skillstate] the inspector's redact function threw; such messages are dropped and later failures are not reported: ${describeThrown(error)}\n`);
          redactionFailed = true;
        }
      }
      if (message) socket.send(JSON.stringify(message));
    },
  }, { serializationDepthLimit: SERIALIZATION_DEPTH });
  const outbox = new Outbox((event) => inspector.inspect.next?.(event));
  const owned = server;
  const base = owned ? new URL(owned.url) : new URL(socketUrl.replace(/^ws/, 'http'));
  const origin = `${base.protocol}//${base.host}`;
  const localUrl = owned?.token ? `${origin}/local/#token=${owned.token}` : `${origin}/local/`;
  const statelyUrl = `${origin}/stately`;
  const url = (options.viewer ?? 'local') === 'local' ? localUrl : options.connect !== undefined ? statelyUrl : origin;
  if (options.open) openBrowser(url);
  return {
    inspect: outbox.inspect,
    url,
    localUrl,
    statelyUrl,
    socketUrl,
    host: owned?.host ?? base.hostname,
    port: owned?.port ?? Number(base.port),
    attach(system) {
      attached = system;
      // A model's answer as it is written, for the page's chat: only when the page may steer, and
      // never with a redaction (a piece of an answer is data, which no redactor has seen).
      if (options.interactive === true && !redact) {
        system.subscribe('chat.delta', (signal) => {
          const data = signal.data as { agent?: unknown; turn?: unknown; step?: unknown; text?: unknown } | undefined;
          if (socket.readyState === WebSocket.OPEN && typeof data?.agent === 'string' && typeof data.text === 'string') {
            socket.send(JSON.stringify({ type: CHAT_DELTA, agent: data.agent, turn: data.turn, step: data.step, text: data.text }));
          }
        });
      }
    },
    async stop(stopOptions = {}) {
      const timeout = stopOptions.timeout ?? STOP_TIMEOUT;
      if (typeof timeout !== 'number' || !(timeout >= 0)) {
        throw new RuntimeError(errorInfo('invalid_config', `inspector.stop: timeout must be a number of milliseconds, not ${JSON.stringify(timeout)}`, { subject: 'timeout' }));
      }
      // Once stop() closes the connection itself, what comes later is not lost to a server gone
      // away; when the server went first, what was on its way is counted as it is dropped.
      if (socket.readyState === WebSocket.OPEN) stopping = true;
      const closed = await closeFlushed(socket, outbox, timeout);
      stopping = true;
      const stopped = dropped ? { flushed: false, unsent: closed.unsent + dropped } : closed;
      if (dropped) {
        process.stderr.write(`[skillstate] the inspector stopped after its connection to ${socketUrl} had closed: ${dropped} event(s) were dropped\n`);
      } else if (!stopped.flushed) {
        process.stderr.write(`[skillstate] the inspector stopped before everything was sent to ${socketUrl}: ${stopped.unsent} event(s) were still waiting after ${timeout} ms (stop({ timeout }) waits longer)\n`);
      }
      await owned?.stop();
      return stopped;
    },
  };
}
