/**
 * `mcpSkill` against real MCP server processes: `skillstate mcp` itself and the reference
 * `@modelcontextprotocol/server-everything`, over stdio; a skillstate agent served over HTTP.
 * The connection is the skill's supervised child: killing the server restarts it, unmounting ends it.
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { createAgentSystem, defineAgent, type AgentRef, type AgentSystem, type Diagnostic } from 'skillstate';
import { childSystemId } from '../../machines/skill-lifecycle.js';
import { mcpSkill, serveMcp, type McpSkillOptions } from 'skillstate/mcp';
import type { ConnectionContext } from '../../src/mcp/skill.js';
import { counter } from 'skillstate/skills';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN, BUNDLED, eventually, FIXTURE_AGENT, httpServer, onCleanup, ONLY, SOURCE_ENV, stopProcess } from './processes.js';

const EVERYTHING = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');

const skillstateServer = (name = 'remote'): McpSkillOptions => ({
  name,
  command: process.execPath,
  args: [BIN, 'mcp', ...ONLY, '--agent', `${FIXTURE_AGENT}:Calculator`],
  env: SOURCE_ENV,
});
const OVERSIZED = fileURLToPath(new URL('./fixtures/oversized-server.mjs', import.meta.url));
const everything = (extra: Partial<McpSkillOptions> = {}): McpSkillOptions => ({ name: 'everything', command: process.execPath, args: [EVERYTHING, 'stdio'], ...extra }) as McpSkillOptions;

function newSystem(): AgentSystem {
  const system = createAgentSystem({ callTimeout: 30_000, onUnhandledDiagnostic: () => {}, onUnhandledError: () => {} });
  onCleanup(() => system.shutdown());
  return system;
}

/** The connection child's snapshot, read through XState's system (what the inspector shows). */
function connection(ref: AgentRef<object>, skill: string): { value: unknown; context: ConnectionContext } | undefined {
  const child = ref.actor.system.get(childSystemId(ref.id, skill, 'connection'));
  return child?.getSnapshot() as { value: unknown; context: ConnectionContext } | undefined;
}

async function ready(ref: AgentRef<object>, skill: string, notPid?: number): Promise<number> {
  await eventually(() => {
    const snapshot = connection(ref, skill);
    return snapshot?.value === 'ready' && snapshot.context.pid !== notPid;
  }, `connection of '${skill}' ready`, 15_000);
  return connection(ref, skill)!.context.pid!;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('mcpSkill', () => {
  it('mounts a skillstate agent served on stdio: its tools are actions, arguments are checked, typed failures keep their reason', async () => {
    const remote = await mcpSkill(skillstateServer());
    expect(remote.actions.map((action) => action.name)).toEqual(expect.arrayContaining(['increment', 'get_count', 'divide', 'describe_number']));
    const system = newSystem();
    const ref = system.spawn(defineAgent({ name: 'host', skills: [remote] }), { id: 'host' });
    await ready(ref, 'remote');
    expect(ref.toolset().tools.find((tool) => tool.function.name === 'divide')?.function.parameters).toMatchObject({ type: 'object', required: ['a', 'b'] });

    expect(await ref.callTool('increment', { by: 3 })).toEqual({ count: 3 });
    expect(await ref.callTool('increment', {})).toEqual({ count: 4 });
    await expect(ref.callTool('divide', { a: 1 })).rejects.toMatchObject({ code: 'invalid_params', message: expect.stringContaining("required property 'b'") });
    await expect(ref.callTool('divide', { a: 1, b: 0 })).rejects.toMatchObject({
      code: 'action_failed',
      details: { reason: 'division_by_zero' },
      message: expect.stringContaining('cannot divide by zero'),
    });
    expect(await ref.callTool('get_count', {})).toEqual({ count: 4 });
  });

  it.each([
    ['server-everything', () => everything(), 'echo', { message: 'hi' }, 'hi'],
    ['skillstate mcp', () => skillstateServer('everything'), 'describe_number', { n: 4 }, { even: true, square: 16 }],
  ] as const)('restarts the connection when the %s process dies, and ends the process on unmount', async (_server, options, tool, args, expected) => {
    const system = newSystem();
    const ref = system.spawn(defineAgent({ name: 'host', skills: [counter] }), { id: 'host' });
    const report = await ref.mount(await mcpSkill(options()));
    expect(report.changed).toBe(true);
    const first = await ready(ref, 'everything');
    const answer = await ref.callTool(tool, args);
    if (typeof expected === 'string') expect(answer).toContain(expected);
    else expect(answer).toEqual(expected);

    process.kill(first, 'SIGKILL');
    const second = await ready(ref, 'everything', first);
    expect(second).not.toBe(first);
    expect(alive(second)).toBe(true);
    expect(ref.getSnapshot().lifecycles.everything).toBe('active');
    const again = await ref.callTool(tool, args);
    if (typeof expected === 'string') expect(again).toContain(expected);
    else expect(again).toEqual(expected);

    await ref.unmount('everything');
    await eventually(() => !alive(second), 'the server process to end');
    expect(connection(ref, 'everything')).toBeUndefined();
    expect(ref.toolset().tools.map((t) => t.function.name)).not.toContain(tool);
  });

  it('past its restart budget the skill is failed, and the agent keeps answering', async () => {
    const system = newSystem();
    const ref = system.spawn(defineAgent({ name: 'host', skills: [counter, await mcpSkill(everything({ maxRestarts: 1, withinMs: 60_000 }))] }), { id: 'host' });
    const first = await ready(ref, 'everything');
    process.kill(first, 'SIGKILL');
    process.kill(await ready(ref, 'everything', first), 'SIGKILL');
    await eventually(() => ref.getSnapshot().lifecycles.everything === 'failed', 'the skill to fail');
    await expect(ref.callTool('echo', { message: 'x' })).rejects.toMatchObject({ code: 'action_failed', details: { reason: 'mcp_unreachable' } });
    expect(await ref.callTool('increment', {})).toEqual({ count: 1 });
  });

  it('bounds calls in time and in size, and says clearly when a server cannot be reached', async () => {
    const system = newSystem();
    const skill = await mcpSkill(everything({ callTimeout: 300, maxOutputBytes: 2_000 }));
    const ref = system.spawn(defineAgent({ name: 'host', skills: [skill] }), { id: 'host' });
    const pid = await ready(ref, 'everything');
    await expect(ref.callTool('trigger-long-running-operation', { duration: 5, steps: 2 })).rejects.toMatchObject({ details: { reason: 'mcp_timeout' } });
    await expect(ref.callTool('echo', { message: 'x'.repeat(5_000) })).rejects.toMatchObject({ details: { reason: 'mcp_output_too_large' } });
    // Past the message limit on stdio (2,000 + 64 KiB): discarded as it arrives, the server kept.
    await expect(ref.callTool('echo', { message: 'x'.repeat(100_000) })).rejects.toMatchObject({ details: { reason: 'mcp_output_too_large' } });
    expect(await ref.callTool('echo', { message: 'still here' })).toContain('still here');
    expect(connection(ref, 'everything')?.context.pid).toBe(pid);

    // A name is checked before the server is: the command here would be started otherwise.
    await expect(mcpSkill({ command: 'skillstate-no-such-command' } as McpSkillOptions)).rejects.toMatchObject({ code: 'invalid_skill', subject: 'name', message: expect.stringContaining("mcpSkill needs a 'name'") });
    await expect(mcpSkill({ name: 'nowhere' } as McpSkillOptions)).rejects.toMatchObject({ code: 'invalid_skill', message: "mcpSkill 'nowhere' needs a command (stdio) or a url (HTTP)" });
    await expect(mcpSkill({ name: 'missing', command: 'skillstate-no-such-command' })).rejects.toMatchObject({ code: 'mcp_unreachable', message: expect.stringContaining("mcpSkill 'missing'") });
    await expect(mcpSkill({ name: 'exits', command: process.execPath, args: ['-e', "console.error('boom: missing config'); process.exit(3)"] })).rejects.toMatchObject({
      code: 'mcp_unreachable',
      message: expect.stringContaining('its stderr ends: boom: missing config'),
    });
    const junk = "process.stdin.on('data', () => process.stdout.write('this is not json\\n'))";
    await expect(mcpSkill({ name: 'junk', command: process.execPath, args: ['-e', junk], connectTimeout: 1_000 })).rejects.toMatchObject({
      code: 'mcp_protocol_error',
      message: expect.stringContaining('the server sent malformed messages'),
    });
    await expect(mcpSkill({ name: 'closed', url: 'http://127.0.0.1:9/mcp', connectTimeout: 2_000 })).rejects.toMatchObject({ code: 'mcp_unreachable' });
  });

  it('over stdio, an answer far past maxOutputBytes is mcp_output_too_large, and the same server process answers the next call', async () => {
    const system = newSystem();
    const diagnostics: Diagnostic[] = [];
    system.onDiagnostic((diagnostic) => void diagnostics.push(diagnostic));
    // 1,000 bytes of output, so any message past 1,000 + 64 KiB is discarded as it arrives.
    const oversized = await mcpSkill({ name: 'oversized', command: process.execPath, args: [OVERSIZED], maxOutputBytes: 1_000 });
    const ref = system.spawn(defineAgent({ name: 'host', skills: [oversized] }), { id: 'host' });
    const pid = await ready(ref, 'oversized');
    expect(await ref.callTool('pid', {})).toBe(String(pid));

    for (const tool of ['id_first', 'id_last', 'id_inside']) {
      await expect(ref.callTool(tool, { bytes: 3_000_000 }), tool).rejects.toMatchObject({
        code: 'action_failed',
        details: { reason: 'mcp_output_too_large', details: { limit: 1_000, size: expect.any(Number) } },
        // An id in the middle of the message cannot be read: the message says the call may not be the one answered.
        message: expect.stringMatching(tool === 'id_inside' ? /sent a message of \d{7} bytes \(the limit is 1000\) whose request could not be read/ : /answered \d{7} bytes; the limit is 1000/),
      });
      expect(await ref.callTool('pid', {}), `the server after ${tool}`).toBe(String(pid));
    }
    // A notification that large is dropped without failing the call it came before.
    expect(await ref.callTool('noisy', { bytes: 3_000_000 })).toBe('after the noise');
    // Past maxOutputBytes but within the message limit: read whole, then refused.
    await expect(ref.callTool('id_last', { bytes: 5_000 })).rejects.toMatchObject({ details: { reason: 'mcp_output_too_large', details: { limit: 1_000 } } });
    expect(await ref.callTool('id_first', { bytes: 10 })).toBe('y'.repeat(10));

    expect(connection(ref, 'oversized')?.context.pid).toBe(pid);
    expect(alive(pid)).toBe(true);
    expect(ref.getSnapshot().lifecycles.oversized).toBe('active');
    expect(diagnostics.filter((diagnostic) => diagnostic.code === 'child_restarted')).toEqual([]);
  });

  it('over HTTP, a server killed and started again on the same port is reconnected with a new session, and the restart is reported', async () => {
    const serving = [...ONLY, '--agent', `${FIXTURE_AGENT}:Calculator`];
    const first = await httpServer(serving);
    const port = Number(new URL(first.url).port);
    const system = newSystem();
    const diagnostics: Diagnostic[] = [];
    system.onDiagnostic((diagnostic) => void diagnostics.push(diagnostic));
    const remote = await mcpSkill({ name: 'remote', url: first.url });
    const ref = system.spawn(defineAgent({ name: 'host', skills: [remote] }), { id: 'host' });
    await ready(ref, 'remote');
    expect(await ref.callTool('increment', { by: 2 })).toEqual({ count: 2 });
    // A tool's own failure is an answer: the connection stays as it is.
    await expect(ref.callTool('divide', { a: 1, b: 0 })).rejects.toMatchObject({ details: { reason: 'division_by_zero' } });
    await expect(ref.callTool('explode', {})).rejects.toMatchObject({ details: { reason: 'exploded' } });
    expect(await ref.callTool('increment', {})).toEqual({ count: 3 });
    const restarts = () => diagnostics.filter((diagnostic) => diagnostic.code === 'child_restarted' && diagnostic.skill === 'remote');
    expect(restarts()).toEqual([]);

    first.child.kill('SIGKILL');
    await stopProcess(first.child);
    const second = await httpServer(serving, undefined, port);
    expect(second.url).toBe(first.url);
    // The old session is gone: a request of the old connection (this call, or the notification
    // stream reconnecting) finds it so, and the skill's lifecycle restarts the connection.
    const during = await ref.callTool('get_count', {}).catch((error: unknown) => error);
    if (during instanceof Error) expect(during).toMatchObject({ details: { reason: 'mcp_unreachable' } });
    await eventually(() => restarts().length > 0, 'the connection to be restarted');
    await ready(ref, 'remote');

    // The new server process starts from scratch, on a session of its own.
    expect(await ref.callTool('increment', {})).toEqual({ count: 1 });
    expect(await ref.callTool('increment', {})).toEqual({ count: 2 });
    expect(ref.getSnapshot().lifecycles.remote).toBe('active');
    // One drop, one restart: the new connection waited for the server rather than failing again.
    expect(restarts()).toHaveLength(1);
    expect(restarts()[0]).toMatchObject({ level: 'warning', message: expect.stringContaining("child 'connection' of skill 'remote'") });
    expect(restarts()[0]!.message).toMatch(/no longer knows the session|cannot be reached/);
  });

  it('a server whose tools/list never stops paging is refused, not listened to forever', async () => {
    const endless = `
      let page = 0;
      require('readline').createInterface({ input: process.stdin }).on('line', (line) => {
        const message = JSON.parse(line);
        if (message.id === undefined) return;
        const result = message.method === 'initialize'
          ? { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'endless', version: '1.0.0' } }
          : { tools: [], nextCursor: 'page-' + ++page };
        process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }) + '\\n');
      });`;
    await expect(mcpSkill({ name: 'endless', command: process.execPath, args: ['-e', endless], connectTimeout: 2_000 })).rejects.toMatchObject({
      code: 'mcp_protocol_error',
      message: expect.stringContaining("mcpSkill 'endless'"),
    });
  }, 20_000);

  it("follows the server's tools/list_changed: the skill is remounted with the new tools, on the same connection", async () => {
    const docs = await mcpSkill({ name: 'docs', command: process.execPath, args: [BIN, 'mcp', ...ONLY, '--path', path.join(BUNDLED, 'hello-extended')], env: SOURCE_ENV });
    const system = newSystem();
    const ref = system.spawn(defineAgent({ name: 'host', skills: [docs] }), { id: 'host' });
    const pid = await ready(ref, 'docs');
    const names = () => ref.toolset().tools.map((tool) => tool.function.name);
    expect(names()).toEqual(['load_skill', 'list_skills', 'read_skill_resource']);

    await ref.callTool('load_skill', { name: 'hello-extended' });
    await eventually(() => names().includes('say_hello'), 'say_hello to become a tool of the agent');
    expect(names()).toEqual(['load_skill', 'list_skills', 'read_skill_resource', 'say_hello', 'wave']);
    expect(ref.getSnapshot().registeredActions).toEqual(expect.arrayContaining(['docs/say_hello', 'docs/wave', 'docs/load_skill']));
    expect(await ref.callTool('say_hello', { name: 'Ada' })).toMatchObject({ output: 'Hello, Ada.' });
    // The same server process answered throughout: the remount kept the connection.
    expect(connection(ref, 'docs')?.context.pid).toBe(pid);
    expect(ref.getSnapshot().lifecycles.docs).toBe('active');
  });

  it('tells a server refusing its bearer token (mcp_unauthorized, with the HTTP status) from one that cannot be reached (mcp_unreachable)', async () => {
    const { url, child } = await httpServer([...ONLY, '--token', 'sesame', '--agent', `${FIXTURE_AGENT}:Calculator`]);
    const refused = await mcpSkill({ name: 'calc', url, headers: { authorization: 'Bearer wrong' } }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'mcp_unauthorized', skill: 'calc', details: { status: 401 } });
    expect((refused as Error).message).toContain(`MCP server 'calc' (${url}), connecting: the server refused the request (HTTP 401`);
    expect((refused as Error).message).toContain('check the token in its headers');
    await expect(mcpSkill({ name: 'calc', url })).rejects.toMatchObject({ code: 'mcp_unauthorized', details: { status: 401 } });
    // The right token is let in.
    expect((await mcpSkill({ name: 'calc', url, headers: { authorization: 'Bearer sesame' } })).name).toBe('calc');
    await stopProcess(child);
    await expect(mcpSkill({ name: 'calc', url, headers: { authorization: 'Bearer sesame' } })).rejects.toMatchObject({ code: 'mcp_unreachable' });
  });

  it('says what a server forbidding the request (HTTP 403) said, not to check a token it took: a served agent reached through a proxy by another host name', async () => {
    const system = newSystem();
    const served = system.spawn(defineAgent({ name: 'counter-agent', skills: [counter] }), { id: 'served' });
    const endpoint = await serveMcp(served, { transport: 'http', token: 'sesame' });
    onCleanup(() => endpoint.close());
    const target = new URL(endpoint.url!);
    // A reverse proxy that passes requests on with the host name it is reached by.
    const proxy = createServer((req, res) => {
      const forwarded = request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: 'agents.example' } }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      req.pipe(forwarded);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    onCleanup(() => new Promise<void>((resolve) => proxy.close(() => resolve())));
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}${target.pathname}`;
    const refused = await mcpSkill({ name: 'proxied', url, headers: { authorization: 'Bearer sesame' } }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'mcp_unauthorized', skill: 'proxied', details: { status: 403 } });
    expect((refused as Error).message).toContain('the server refused the request (HTTP 403: this server answers loopback host names only); it forbids this request');
    expect((refused as Error).message).not.toContain('check the token in its headers');
  });

  it('round trip: an agent mounts another skillstate agent served over HTTP, with a bearer token', async () => {
    const system = newSystem();
    const served = system.spawn(defineAgent({ name: 'counter-agent', skills: [counter] }), { id: 'served' });
    const endpoint = await serveMcp(served, { transport: 'http', token: 'sesame' });
    onCleanup(() => endpoint.close());
    await expect(mcpSkill({ name: 'nope', url: endpoint.url!, headers: { authorization: 'Bearer wrong' } })).rejects.toMatchObject({ code: 'mcp_unauthorized' });

    const remote = await mcpSkill({ name: 'remote', url: endpoint.url!, headers: { authorization: 'Bearer sesame' } });
    const client = system.spawn(defineAgent({ name: 'client', skills: [remote] }), { id: 'client' });
    await ready(client, 'remote');
    expect(await client.callTool('increment', { by: 2 })).toEqual({ count: 2 });
    expect(served.getSnapshot().state).toMatchObject({ counter: { count: 2 } });
    expect(endpoint.sessions()).toBe(1);
    await client.unmount('remote');
    await eventually(() => endpoint.sessions() === 0, 'the session to end');
  });
});
