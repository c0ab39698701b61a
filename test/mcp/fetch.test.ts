/**
 * The MCP client's fetch against a real HTTP server on a port the system chose: many requests
 * sharing one long-lived signal leave no abort listener behind on it (plain fetch leaves one per
 * request), an abort of that signal still stops a response that is streaming, and a request that
 * fails releases its listener too. The watched fetch tells which answers mean the connection is
 * gone: none at all, or a 404 for the session.
 */
import { getEventListeners } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestScopedFetch, watchedFetch } from '../../src/mcp/fetch.js';

let server: Server;
let base: string;
const streams = new Set<ServerResponse>();

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/stream') {
      // Never ends on its own: one event now, then silence.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      streams.add(res);
      return;
    }
    const status = /^\/status\/(\d+)$/.exec(req.url ?? '');
    if (status) {
      res.writeHead(Number(status[1])).end();
      return;
    }
    if (req.url === '/empty') {
      res.writeHead(204).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'abc' }).end(JSON.stringify({ path: req.url }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const res of streams) res.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const listeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

describe('requestScopedFetch', () => {
  // Plain fetch leaves a listener on the signal per request until garbage collection takes it,
  // which the transport's one long-lived signal piles up; when that happens varies (a count of
  // them checked here once failed on Node 22), so only ours is checked.
  it('leaves no listener on a shared signal after many requests', async () => {
    const shared = new AbortController();
    for (let i = 0; i < 200; i++) {
      const response = await requestScopedFetch(`${base}/n${i}`, { method: 'POST', body: '{}', signal: shared.signal });
      expect(await response.json()).toEqual({ path: `/n${i}` });
      expect(response.status).toBe(200);
      expect(response.headers.get('mcp-session-id')).toBe('abc');
    }
    const empty = await requestScopedFetch(`${base}/empty`, { signal: shared.signal });
    expect(empty.status).toBe(204);
    expect(listeners(shared.signal)).toBe(0);
  });

  it('keeps the listener while a response streams, so an abort of the shared signal stops it', async () => {
    const shared = new AbortController();
    const response = await requestScopedFetch(`${base}/stream`, { signal: shared.signal });
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('data: first\n\n');
    expect(listeners(shared.signal)).toBe(1);
    const next = reader.read();
    shared.abort(new Error('connection closed'));
    await expect(next).rejects.toThrow();
    expect(listeners(shared.signal)).toBe(0);
  });

  it('releases the listener when the stream is cancelled or the request fails', async () => {
    const shared = new AbortController();
    const response = await requestScopedFetch(`${base}/stream`, { signal: shared.signal });
    await response.body!.cancel();
    expect(listeners(shared.signal)).toBe(0);

    await expect(requestScopedFetch('http://127.0.0.1:1/refused', { signal: shared.signal })).rejects.toThrow();
    expect(listeners(shared.signal)).toBe(0);
  });

  it('passes a request without a signal, or with one aborted already, to fetch as it is', async () => {
    expect(await (await requestScopedFetch(`${base}/plain`)).json()).toEqual({ path: '/plain' });
    const aborted = AbortSignal.abort(new Error('too late'));
    await expect(requestScopedFetch(`${base}/plain`, { signal: aborted })).rejects.toThrow('too late');
  });
});

describe('watchedFetch', () => {
  const session = { 'mcp-session-id': 'abc' };
  it.each([
    ['a 404 naming a session', 'POST', '/status/404', session, ['session gone']],
    ['a 404 to ending a session', 'DELETE', '/status/404', session, ['session gone']],
    // The optional stream of server messages: a server that offers none may answer 404.
    ['a 404 to opening the stream of server messages', 'GET', '/status/404', session, []],
    ['a 404 naming no session (a wrong URL)', 'POST', '/status/404', {}, []],
    ['a 400 naming a session', 'POST', '/status/400', session, []],
    ['a 401', 'POST', '/status/401', session, []],
    ['a 500', 'POST', '/status/500', session, []],
    ['an answer', 'POST', '/plain', session, []],
  ] as const)('%s (%s) leaves the answer as it is and tells what it shows', async (_case, method, path, headers, told) => {
    const heard: string[] = [];
    const watched = watchedFetch({ unanswered: (why) => void heard.push(`unanswered: ${why}`), sessionGone: () => void heard.push('session gone') }, { server: 'test', bytes: 1024 * 1024 });
    const response = await watched(`${base}${path}`, { method, headers: new Headers(headers), signal: new AbortController().signal });
    await response.body?.cancel();
    expect(response.status).toBe(path === '/plain' ? 200 : Number(path.slice('/status/'.length)));
    expect(heard).toEqual(told);
  });

  it('tells when a request gets no answer at all, but not when the connection aborted it', async () => {
    const heard: string[] = [];
    const watched = watchedFetch({ unanswered: (why) => void heard.push(why), sessionGone: () => void heard.push('session gone') }, { server: 'test', bytes: 1024 * 1024 });
    await expect(watched('http://127.0.0.1:1/refused', { signal: new AbortController().signal })).rejects.toThrow();
    expect(heard).toEqual([expect.stringMatching(/^fetch failed: .+/)]);

    const closing = new AbortController();
    const streaming = watched(`${base}/stream`, { signal: closing.signal });
    closing.abort(new Error('connection closed'));
    await expect(streaming.then((response) => response.text())).rejects.toThrow();
    expect(heard).toHaveLength(1);
  });
});
