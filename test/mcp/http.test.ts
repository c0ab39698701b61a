/**
 * `serveMcp` in this process, reached by the SDK's client over real HTTP on a port the system
 * chose: sessions and their notifications, stateless mode, the bearer token, loopback-only host
 * names, and targets given as a system and an id.
 */
import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Notification } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { createAgentSystem, defineAgent } from 'skillstate';
import { serveMcp, type HttpServeOptions } from 'skillstate/mcp';
import { arithmetic, counter } from 'skillstate/skills';
import { eventually, onCleanup } from './processes.js';

async function served(options: Partial<HttpServeOptions> = {}) {
  const system = createAgentSystem({ onUnhandledDiagnostic: () => {} });
  onCleanup(() => system.shutdown());
  const agent = system.spawn(defineAgent({ name: 'calc', skills: [counter] }), { id: 'calc' });
  const endpoint = await serveMcp({ system, id: 'calc' }, { transport: 'http', ...options });
  onCleanup(() => endpoint.close());
  return { system, agent, endpoint };
}

async function connect(url: string, headers?: Record<string, string>) {
  const notifications: Notification[] = [];
  const client = new Client({ name: 'test', version: '1.0.0' });
  client.fallbackNotificationHandler = async (notification) => void notifications.push(notification);
  // Notifications travel on the stream the client opens with a GET once the session starts: know when it is open.
  let listening = false;
  const watched: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (init?.method === 'GET' && response.ok) listening = true;
    return response;
  };
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: watched, ...(headers ? { requestInit: { headers } } : {}) }));
  onCleanup(() => client.close());
  return { client, notifications, listening: () => listening };
}

/** A raw POST, for what the SDK client never sends. */
function post(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
  });
}

describe('serveMcp over HTTP', () => {
  it('binds 127.0.0.1 on a chosen port; each session hears about mounts made on the agent', async () => {
    const { agent, endpoint } = await served();
    expect(endpoint.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const a = await connect(endpoint.url!);
    const b = await connect(endpoint.url!);
    expect(endpoint.sessions()).toBe(2);
    await eventually(() => a.listening() && b.listening(), 'both notification streams to open');
    await agent.mount(arithmetic);
    for (const { notifications } of [a, b]) await eventually(() => notifications.some((n) => n.method === 'notifications/tools/list_changed'), 'list_changed on every session');
    expect((await a.client.listTools()).tools.map((tool) => tool.name)).toContain('divide');
    await agent.unmount(arithmetic);
    await eventually(() => a.notifications.filter((n) => n.method === 'notifications/tools/list_changed').length === 2, 'list_changed after unmount');
    expect((await b.client.listTools()).tools.map((tool) => tool.name)).not.toContain('divide');
  });

  it('refuses requests without the bearer token, and requests for a non-loopback host name', async () => {
    const { endpoint } = await served({ token: 'sesame' });
    await expect(connect(endpoint.url!)).rejects.toThrow();
    await expect(connect(endpoint.url!, { authorization: 'Bearer wrong' })).rejects.toThrow();
    const { client } = await connect(endpoint.url!, { authorization: 'Bearer sesame' });
    expect((await client.callTool({ name: 'increment', arguments: {} })).structuredContent).toEqual({ count: 1 });
    expect(await post(endpoint.url!, { authorization: 'Bearer sesame', host: 'evil.example:80' })).toBe(403);
    expect(await post(endpoint.url!, { authorization: 'Bearer sesame', 'mcp-session-id': 'no-such-session' })).toBe(404);
    expect(await post(endpoint.url!.replace('/mcp', '/other'), { authorization: 'Bearer sesame' })).toBe(404);
  });

  it('bound to any loopback address, it still refuses a non-loopback host name (no DNS rebinding)', async () => {
    for (const host of ['127.0.0.2', '::ffff:127.0.0.1']) {
      const { endpoint } = await served({ host });
      expect(await post(endpoint.url!, { host: 'evil.example:80' })).toBe(403);
      expect(await post(endpoint.url!, { host: `localhost:${endpoint.port}` })).not.toBe(403);
    }
  });

  it('stateless mode answers every request on its own, against the same agent', async () => {
    const { agent, endpoint } = await served({ stateless: true });
    const first = await connect(endpoint.url!);
    await first.client.callTool({ name: 'increment', arguments: { by: 2 } });
    const second = await connect(endpoint.url!);
    expect((await second.client.callTool({ name: 'get_count', arguments: {} })).structuredContent).toEqual({ count: 2 });
    expect(endpoint.sessions()).toBe(0);
    expect(agent.getSnapshot().state).toMatchObject({ counter: { count: 2 } });
  });

  it('a target naming no agent is a typed error listing the running ones', async () => {
    const system = createAgentSystem();
    onCleanup(() => system.shutdown());
    system.spawn(defineAgent({ name: 'calc', skills: [counter] }), { id: 'calc' });
    await expect(serveMcp({ system, id: 'nobody' }, { transport: 'http' })).rejects.toMatchObject({ code: 'unknown_agent', message: expect.stringContaining('running agents: calc') });
  });

  it('refuses options it cannot use, naming each, before it listens: a misspelled token would serve the agent to anyone', async () => {
    const system = createAgentSystem();
    onCleanup(() => system.shutdown());
    const agent = system.spawn(defineAgent({ name: 'calc', skills: [counter] }), { id: 'calc' });
    await expect(serveMcp(agent, { transport: 'http', tokn: 'sesame' } as HttpServeOptions)).rejects.toMatchObject({ code: 'invalid_options', subject: 'tokn', details: { suggestion: 'token' } });
    await expect(serveMcp(agent, { transport: 'stdio', port: 3000 } as never)).rejects.toMatchObject({ code: 'invalid_options', subject: 'port' });
    await expect(serveMcp(agent, { transport: 'carrier-pigeon' } as never)).rejects.toMatchObject({ code: 'invalid_options', subject: 'transport', message: expect.stringContaining("'carrier-pigeon'") });
    await expect(serveMcp(agent, { transport: 'http', port: 99_999 })).rejects.toMatchObject({ code: 'invalid_options', subject: 'port', message: expect.stringContaining('got 99999') });
    await expect(serveMcp(undefined as never, { transport: 'http' })).rejects.toMatchObject({ code: 'invalid_options', subject: 'target' });
    // The agent was never served and still answers.
    expect(await agent.callTool('increment', {})).toEqual({ count: 1 });
  });

  it('close() ends the sessions and the listener; the agent keeps running', async () => {
    const { agent, endpoint } = await served();
    const { client } = await connect(endpoint.url!);
    await client.callTool({ name: 'increment', arguments: {} });
    await endpoint.close();
    await endpoint.closed;
    await expect(client.callTool({ name: 'increment', arguments: {} })).rejects.toThrow();
    expect(agent.getSnapshot().status).toBe('idle');
    expect(await agent.callTool('get_count', {})).toEqual({ count: 1 });
  });
});

describe('the SDK is loaded only on demand', () => {
  it('nothing outside skillstate/mcp imports it statically (the mcp command imports it when it runs)', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const root = new URL('../../', import.meta.url);
    const files = readdirSync(new URL('src', root), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts') && !file.startsWith('mcp'));
    const offenders = files.filter((file) => /^import[^;]*from '(?:@modelcontextprotocol\/|(?:\.\.?\/)+mcp\/)/m.test(readFileSync(new URL(`src/${file}`, root), 'utf8')));
    expect(files.length).toBeGreaterThan(20);
    expect(offenders).toEqual([]);
  });
});
