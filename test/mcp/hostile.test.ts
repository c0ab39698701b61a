/**
 * MCP both ways against peers that misbehave: raw HTTP requests no well-behaved client sends to
 * `serveMcp`, and servers behind `mcpSkill` that break the protocol (the `hostile-server.mjs`
 * fixture, a real subprocess on stdio).
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgentSystem, createDocumentSkillRegistry, defineAgent, discoverSkills, type Diagnostic } from 'skillstate';
import { mcpSkill, mountMcpSkills, serveMcp, type HttpServeOptions } from 'skillstate/mcp';
import { counter } from 'skillstate/skills';
import { BIN, eventually, ONLY, onCleanup, overStdio, stopProcess } from './processes.js';

const HOSTILE = fileURLToPath(new URL('./fixtures/hostile-server.mjs', import.meta.url));

async function served(options: Partial<HttpServeOptions> = {}) {
  const system = createAgentSystem({ onUnhandledDiagnostic: () => {} });
  onCleanup(() => system.shutdown());
  const agent = system.spawn(defineAgent({ name: 'calc', skills: [counter] }), { id: 'calc' });
  const endpoint = await serveMcp(agent, { transport: 'http', ...options });
  onCleanup(() => endpoint.close());
  return { agent, endpoint };
}

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

/** A raw POST (node:http sends the `Host` and `Origin` given, which `fetch` would not), answered with its status and body. */
function post(url: string, message: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(typeof message === 'string' ? message : JSON.stringify(message));
  });
}

describe('serveMcp against a hostile client', () => {
  it('refuses, with 403, a browser request from a page elsewhere (its Origin), stateful or stateless', async () => {
    for (const stateless of [false, true]) {
      const { agent, endpoint } = await served({ stateless });
      for (const origin of ['http://evil.example', 'null', 'http://127.0.0.1.evil.example:80']) {
        const { status, body } = await post(endpoint.url!, INITIALIZE, { origin });
        expect(status, `origin ${origin}`).toBe(403);
        expect(body).toContain(`origin '${origin}'`);
      }
      // Stateless, a blind tools/call needs no session: the Origin is all that stops it.
      const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'increment', arguments: {} } };
      expect((await post(endpoint.url!, call, { origin: 'http://evil.example', 'mcp-protocol-version': '2025-11-25' })).status).toBe(403);
      expect(agent.getSnapshot().state).toMatchObject({ counter: { count: 0 } });
      // A page on this machine (the MCP Inspector's, say), and a program sending no Origin, get in.
      expect((await post(endpoint.url!, INITIALIZE, { origin: 'http://localhost:6274' })).status).toBe(200);
      expect((await post(endpoint.url!, INITIALIZE)).status).toBe(200);
    }
  });

  it('a request whose params do not fit its method is -32602 (invalid params) naming the field, and the session goes on', async () => {
    const registry = await discoverSkills({ examples: ['csv-tools'], project: false, user: false, bundled: false });
    const { endpoint } = await served({ registry });
    const client = new Client({ name: 'raw', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(endpoint.url!)));
    onCleanup(() => client.close());
    const ask = (method: string, params: Record<string, unknown>) => client.request({ method, params } as never, z.object({}).loose());
    await expect(ask('resources/read', { uri: 5 })).rejects.toMatchObject({ code: ErrorCode.InvalidParams, message: expect.stringContaining('invalid resources/read request: params.uri: Invalid input: expected string, received number') });
    await expect(ask('skills/get', {})).rejects.toMatchObject({ code: ErrorCode.InvalidParams, message: expect.stringContaining('params.uri') });
    await expect(ask('prompts/get', { name: ['skills'] })).rejects.toMatchObject({ code: ErrorCode.InvalidParams, message: expect.stringContaining('params.name') });
    await expect(ask('tools/call', { name: 5 })).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
    await expect(ask('tools/call', { name: 'increment', arguments: [1] })).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
    expect((await client.callTool({ name: 'increment', arguments: {} })).structuredContent).toEqual({ count: 1 });
  });

  it('on stdio, a request past the 10 MiB limit is answered -32600 (invalid request) with its size, and the session goes on', async () => {
    const { client } = await overStdio(ONLY);
    const huge = client.callTool({ name: 'list_skills', arguments: { padding: 'a'.repeat(12 * 1024 * 1024) } });
    await expect(huge).rejects.toMatchObject({ code: ErrorCode.InvalidRequest, message: expect.stringMatching(/too large: a message of 125\d{5} bytes, past the limit of 10485760/) });
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('list_skills');
  });

  it('closes a session left idle past sessionTimeout (a client gone without ending it); one with its stream open stays', async () => {
    const { endpoint } = await served({ sessionTimeout: 1_000 });
    // A: the SDK's client, which keeps its notification stream open.
    let listening = false;
    const watched: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (init?.method === 'GET' && response.ok) listening = true;
      return response;
    };
    const client = new Client({ name: 'stays', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(endpoint.url!), { fetch: watched }));
    onCleanup(() => client.close());
    await eventually(() => listening, 'the notification stream to open');
    // B: initializes, then vanishes without a DELETE.
    const headers = await new Promise<Record<string, string>>((resolve, reject) => {
      const req = request(endpoint.url!, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } }, (res) => {
        res.resume();
        res.on('end', () => resolve({ 'mcp-session-id': String(res.headers['mcp-session-id']), 'mcp-protocol-version': '2025-11-25' }));
      });
      req.on('error', reject);
      req.end(JSON.stringify(INITIALIZE));
    });
    expect(endpoint.sessions()).toBe(2);
    await eventually(() => endpoint.sessions() === 1, 'the idle session to be closed', 5_000);
    expect((await post(endpoint.url!, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, headers)).status).toBe(404);
    expect((await client.callTool({ name: 'increment', arguments: {} })).structuredContent).toEqual({ count: 1 });
    for (const options of [{ sessionTimeout: 0 }, { sessionTimeout: -1 }, { sessionTimeout: '60s' }, { sessionTimeout: 60_000, stateless: true }]) {
      await expect(served(options as Partial<HttpServeOptions>)).rejects.toMatchObject({ code: 'invalid_options', subject: 'sessionTimeout' });
    }
  });

  it('on stdio, a line that is not JSON is answered -32700, JSON that is no MCP message -32600 (with a request\'s id), and the session goes on', async () => {
    const child = spawn(process.execPath, [BIN, 'mcp', ...ONLY], { stdio: ['pipe', 'pipe', 'ignore'] });
    onCleanup(() => stopProcess(child));
    const answers: { id?: unknown; error?: { code: number }; result?: unknown }[] = [];
    const listed = new Promise<void>((resolve) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        answers.push(JSON.parse(line) as (typeof answers)[number]);
        if (answers.at(-1)!.id === 2) resolve();
      });
    });
    const lines = [JSON.stringify(INITIALIZE), 'not json at all', '{"jsonrpc":"2.0","id":7,"method":5}', '{"jsonrpc":"2.0","id":9,"result":"not an object"}', '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'];
    child.stdin!.write(lines.map((line) => `${line}\n`).join(''));
    await listed;
    const errors = answers.filter((answer) => answer.error).map((answer) => [answer.id, answer.error!.code]);
    // The malformed answer (id 9) is of the server's own numbering: it is not answered.
    expect(errors).toEqual([
      [undefined, ErrorCode.ParseError],
      [7, ErrorCode.InvalidRequest],
    ]);
    expect(answers.find((answer) => answer.id === 2)?.result).toMatchObject({ tools: expect.any(Array) });
  });

  it('bound to another interface without a token, it says anyone who can reach it may call the agent', async () => {
    const notes: Diagnostic[] = [];
    await served({ host: '0.0.0.0', onDiagnostic: (note) => notes.push(note) });
    expect(notes).toEqual([expect.objectContaining({ level: 'warning', code: 'mcp_unauthenticated', subject: '0.0.0.0', message: expect.stringContaining('with no token') })]);
    const quiet: Diagnostic[] = [];
    await served({ host: '0.0.0.0', token: 'secret', onDiagnostic: (note) => quiet.push(note) });
    await served({ onDiagnostic: (note) => quiet.push(note) });
    expect(quiet).toEqual([]);
  });

  it('bound to another interface, only a page of the host a request names may call it', async () => {
    const { endpoint } = await served({ host: '0.0.0.0', onDiagnostic: () => {} });
    const url = `http://127.0.0.1:${endpoint.port}/mcp`;
    expect((await post(url, INITIALIZE, { host: `mcp.example:${endpoint.port}`, origin: 'http://evil.example' })).status).toBe(403);
    expect((await post(url, INITIALIZE, { host: `mcp.example:${endpoint.port}`, origin: `http://mcp.example:${endpoint.port}` })).status).toBe(200);
  });
});

/** `mcpSkill` over the hostile server in `mode`, mounted on an agent. */
async function mountHostile(mode: string, options: { callTimeout?: number } = {}, diagnostics: Diagnostic[] = []) {
  const skill = await mcpSkill({ name: 'hostile', command: process.execPath, args: [HOSTILE, mode], ...options });
  const system = createAgentSystem({ onUnhandledDiagnostic: (item) => diagnostics.push(item) });
  onCleanup(() => system.shutdown());
  return system.spawn(defineAgent({ name: 'host', skills: [skill] }), { id: 'host' });
}

describe('mcpSkill and mountMcpSkills against a hostile server', () => {
  it('a tools/list naming one tool twice is refused as a protocol error naming the tool', async () => {
    await expect(mcpSkill({ name: 'hostile', command: process.execPath, args: [HOSTILE, 'duplicate'] })).rejects.toMatchObject({
      code: 'mcp_protocol_error',
      message: expect.stringMatching(/lists tool 'echo' twice/),
    });
  });

  it('a tool list naming a tool twice after a list_changed drops the connection, saying so; the restarted server is used again', async () => {
    const diagnostics: Diagnostic[] = [];
    const agent = await mountHostile('duplicate-later', {}, diagnostics);
    await expect(agent.callTool('echo', {})).resolves.toBe('ok');
    await eventually(() => diagnostics.some((item) => item.code === 'child_restarted' && item.message.includes("listed tool 'echo' twice")), 'the connection to drop over the duplicate', 5_000);
    await expect(agent.callTool('echo', {})).resolves.toBe('ok');
    expect(agent.toolset().tools.map((tool) => tool.function.name)).toEqual(['echo']);
  });

  it('a tool whose inputSchema is not JSON Schema is a protocol error saying where, not an unreachable server', async () => {
    const refused = mcpSkill({ name: 'hostile', command: process.execPath, args: [HOSTILE, 'not-schema'] });
    await expect(refused).rejects.toMatchObject({ code: 'mcp_protocol_error', message: expect.stringContaining('tools.0.inputSchema.properties') });
  });

  it('a result whose content MCP does not define fails the call as a protocol error; the server stays up', async () => {
    const agent = await mountHostile('unknown-content');
    const failed = agent.callTool('echo', {});
    await expect(failed).rejects.toMatchObject({ code: 'action_failed', details: { reason: 'mcp_protocol_error' }, message: expect.stringContaining('content.0') });
    await expect(agent.callTool('echo', {})).rejects.toMatchObject({ details: { reason: 'mcp_protocol_error' } });
  });

  it('an answer that comes after its call timed out is ignored: the next slow call is a timeout, not a protocol error', async () => {
    const agent = await mountHostile('late', { callTimeout: 100 });
    await expect(agent.callTool('echo', {})).rejects.toMatchObject({ details: { reason: 'mcp_timeout' } });
    // The server answers the first call as this one arrives, then holds this one past its timeout.
    await expect(agent.callTool('echo', {})).rejects.toMatchObject({ details: { reason: 'mcp_timeout' } });
  });

  it('a published SKILL.md read far larger than its entry says is skill_unverified (size), discarded as it arrives, and the entry fetched again', async () => {
    const diagnostics: Diagnostic[] = [];
    const registry = createDocumentSkillRegistry({ onDiagnostic: (item) => diagnostics.push(item) });
    const mount = await mountMcpSkills(registry, { name: 'hostile', command: process.execPath, args: [HOSTILE, 'swollen-skill'] });
    onCleanup(() => mount.close());
    expect(mount.skills()).toEqual(['tiny']);
    await expect(registry.content('tiny')).rejects.toMatchObject({ code: 'skill_unverified', details: { reason: 'size', server: 'hostile', uri: 'skill://tiny/SKILL.md' }, message: expect.stringContaining('where the entry says 73') });
    expect(diagnostics.some((item) => item.code === 'mcp_skill_refreshed' && item.skill === 'tiny')).toBe(true);
  });

  it('an HTTP server answering a call with a 500 fails that call, saying what it said once, and the next call is answered', async () => {
    let calls = 0;
    // Just enough Streamable HTTP, answering JSON; the first tools/call gets a 500.
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        if (req.method !== 'POST') return void res.writeHead(405).end();
        const { id, method, params } = JSON.parse(body) as { id?: number; method: string; params: { protocolVersion?: string } };
        const reply = (result: unknown) => void res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'one' }).end(JSON.stringify({ jsonrpc: '2.0', id, result }));
        if (id === undefined) return void res.writeHead(202).end();
        if (method === 'initialize') return reply({ protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'flaky', version: '1' } });
        if (method === 'tools/list') return reply({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] });
        if (++calls === 1) return void res.writeHead(500, { 'content-type': 'text/plain' }).end('internal kaboom');
        return reply({ content: [{ type: 'text', text: 'ok' }] });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onCleanup(() => new Promise((resolve) => server.close(resolve)));
    const skill = await mcpSkill({ name: 'flaky', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` });
    const diagnostics: Diagnostic[] = [];
    const system = createAgentSystem({ onUnhandledDiagnostic: (item) => diagnostics.push(item) });
    onCleanup(() => system.shutdown());
    const agent = system.spawn(defineAgent({ name: 'host', skills: [skill] }), { id: 'host' });
    const failed = await agent.callTool('echo', {}).catch((error: Error) => error);
    expect(failed).toMatchObject({ code: 'action_failed', message: expect.stringContaining('internal kaboom') });
    expect((failed as Error).message.split('internal kaboom')).toHaveLength(2);
    await expect(agent.callTool('echo', {})).resolves.toBe('ok');
    expect(diagnostics.filter((item) => item.code === 'child_restarted')).toEqual([]);
  });
});
