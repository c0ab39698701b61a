/**
 * The inspection server against programs that misbehave: any local program may connect to its
 * socket, so what one sends or fails to read must not stop the server or grow its memory without
 * bound, and the server answers on whichever loopback address it was bound to.
 */
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startViewerServer, type ViewerServer } from '../../src/viewer/server.js';

const servers: ViewerServer[] = [];
const sockets: WebSocket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate();
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

async function started(options: Parameters<typeof startViewerServer>[0] = {}): Promise<ViewerServer> {
  const server = await startViewerServer(options);
  servers.push(server);
  return server;
}

async function connected(server: ViewerServer): Promise<WebSocket> {
  const socket = new WebSocket(server.socketUrl);
  sockets.push(socket);
  await once(socket, 'open');
  return socket;
}

/** Resolves with the first message `socket` receives that contains `marker`. */
function received(socket: WebSocket, marker: string): Promise<string> {
  return new Promise((resolve) => {
    const listener = (data: WebSocket.RawData) => {
      if (!String(data).includes(marker)) return;
      socket.off('message', listener);
      resolve(String(data));
    };
    socket.on('message', listener);
  });
}

describe('the inspection server, sent what it does not expect', () => {
  it('relays JSON that is not an object (null, a number) and keeps serving', async () => {
    const server = await started();
    const viewer = await connected(server);
    const app = await connected(server);
    const seen: string[] = [];
    viewer.on('message', (data) => seen.push(String(data)));
    const done = received(viewer, 'after');
    for (const text of ['null', '7', '"text"', '[1]', JSON.stringify({ type: 'after' })]) app.send(text);
    await done;
    expect(seen).toEqual(['null', '7', '"text"', '[1]', JSON.stringify({ type: 'after' })]);
    // A viewer that connects afterwards is served too (the replay kept none of them).
    const late = await connected(server);
    expect(late.readyState).toBe(WebSocket.OPEN);
  });

  it('disconnects a viewer that stops reading instead of queueing the stream for it without end', async () => {
    const server = await started();
    const stalled = await connected(server);
    const reader = await connected(server);
    const app = await connected(server);
    stalled.on('error', () => {}); // the server may reset the connection
    stalled.pause(); // it takes nothing more from its socket: the server's queue for it grows
    const closed = once(stalled, 'close');
    const piece = JSON.stringify({ type: 'bulk', text: 'x'.repeat(1024 * 1024) });
    const last = received(reader, 'last');
    for (let i = 0; i < 64; i++) app.send(piece);
    app.send(JSON.stringify({ type: 'last' }));
    await last; // the server has relayed every piece by now
    stalled.resume();
    await closed;
    // The viewer that reads stays connected.
    expect(reader.readyState).toBe(WebSocket.OPEN);
  });
});

describe('the inspection server, told to listen where it cannot', () => {
  it('rejects its start, naming why, when its port is taken', async () => {
    const first = await started();
    await expect(startViewerServer({ port: first.port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});

describe('the inspection server on a loopback address other than 127.0.0.1', () => {
  it('serves requests to its own address', async () => {
    const server = await started({ host: '127.0.0.2' });
    expect(server.url).toBe(`http://127.0.0.2:${server.port}`);
    const response = await fetch(`${server.url}/local/config.json`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ title: 'skillstate', interactive: false });
  });
});
