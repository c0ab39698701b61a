/**
 * Watching agents in the Stately inspector from Node. `@xstate/inspect` is XState v4 only; for
 * v5 the Stately inspector is fed by `@statelyai/inspect`: a small local server
 * (`createInspectorServer`) that the browser page connects to, and a WebSocket inspector the
 * application streams every actor, event and snapshot to. `startInspector()` starts both and
 * returns the `inspect` observer to give `createAgentSystem({ inspect })`.
 */
import { connect, createServer } from 'node:net';
import { createWebSocketInspector } from '@statelyai/inspect';
import { createInspectorServer } from '@statelyai/inspect/server';
import type { InspectionEvent, Observer } from 'xstate';
import { errorInfo } from '../core/errors.js';
import { RuntimeError } from './errors.js';

/** Options of `startInspector`. */
export interface InspectorOptions {
  /** Port of the local inspector server (HTTP page + WebSocket). Default: a free port. */
  port?: number;
  /** Open the inspector page in the default browser. Default false (the URL is returned). */
  open?: boolean;
}

/** A running inspector started by `startInspector`: its URL, the XState `inspect` option, and `stop()`. */
export interface InspectorHandle {
  /** Pass this to `createAgentSystem({ inspect })`. */
  inspect: Observer<InspectionEvent>;
  /** The page to open in a browser: it embeds the Stately inspector and relays the events. */
  url: string;
  /** The WebSocket the application streams to (other clients connected to it receive the events). */
  socketUrl: string;
  port: number;
  /** Closes the connection and the server. */
  stop(): Promise<void>;
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

/** The part of the `ws` socket inside `@statelyai/inspect`'s WebSocket adapter that stopping cleanly needs. */
interface InspectorSocket {
  readyState: number;
  onerror: unknown;
  onclose: unknown;
  on(event: 'error', listener: () => void): void;
  once(event: 'open' | 'close', listener: () => void): void;
}

function socketOf(inspector: ReturnType<typeof createWebSocketInspector>): InspectorSocket | undefined {
  return (inspector.adapter as unknown as { ws?: InspectorSocket }).ws;
}

/** Resolves once something accepts connections on the loopback port (the server listens asynchronously). */
async function listening(port: number, attempts = 100): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new RuntimeError(errorInfo('signal_failed', `the inspector server did not start listening on port ${port}`));
}

/**
 * Starts the inspector server and connects a WebSocket inspector to it.
 *
 * @example
 * const inspector = await startInspector();
 * console.log(`open ${inspector.url}`);
 * const system = createAgentSystem({ inspect: inspector.inspect });
 */
export async function startInspector(options: InspectorOptions = {}): Promise<InspectorHandle> {
  const port = options.port ?? (await freePort());
  const server = createInspectorServer({ port, autoOpen: options.open ?? false });
  await listening(port);
  const socketUrl = `ws://127.0.0.1:${port}`;
  const inspector = createWebSocketInspector({ url: socketUrl });
  const socket = socketOf(inspector);
  if (socket && socket.readyState === 0) {
    // Wait for the connection, so events flow from the first actor on and stop() finds it open.
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new RuntimeError(errorInfo('signal_failed', `could not connect to the inspector server at ${socketUrl}`))), 5_000);
      socket.once('open', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  return {
    inspect: inspector.inspect,
    url: `http://localhost:${port}`,
    socketUrl,
    port,
    async stop() {
      // The inspector reconnects on any socket error, forever, every 5 s; a deliberate stop must
      // not count as one, so its handlers are detached before the socket is closed.
      const socket = socketOf(inspector);
      let closed: Promise<unknown> = Promise.resolve();
      if (socket) {
        socket.onerror = null;
        socket.onclose = null;
        socket.on('error', () => {});
        if (socket.readyState < 3) closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      }
      inspector.stop();
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 500))]);
      server.stop();
    },
  };
}
