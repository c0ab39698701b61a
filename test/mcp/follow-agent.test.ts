/**
 * What an MCP server serving an agent follows, as the SDK's own client sees it over Streamable HTTP:
 *
 * - an agent passivated, woken by the application (not by a request of the client), whose step
 *   mounts a skill, and passivated again at once: the client is told its tools changed, and lists
 *   the new ones;
 * - served by `{ system, id }`, the id: once its agent stops and another is spawned under the same
 *   id, the client is told the tools changed and is served the new agent's; served by a ref, that
 *   agent only: the new one of the same id is not served.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgentSystem, createSqliteStore, defineAction, defineAgent, defineSkill, result, type Diagnostic, type TraceRecord } from 'skillstate';
import { serveMcp } from 'skillstate/mcp';
import { arithmetic, counter } from 'skillstate/skills';
import { eventually, httpClient, onCleanup, refusal } from './processes.js';

const extra = defineSkill({
  name: 'extra',
  actions: [defineAction({ name: 'extra_tool', description: 'A tool the agent gains at run time', input: z.object({}), run: () => 'extra' })],
});

/** An agent whose `grow` signal mounts `extra`. */
const Grower = defineAgent({
  name: 'grower',
  skills: [counter],
  actions: [defineAction({ name: 'grow', description: 'Mounts the extra skill', input: z.object({}), run: () => result('grown', { mount: [extra] }) })],
  routes: [{ path: 'grow', target: { action: 'grow' } }],
});

const listChanged = (notifications: { method: string }[]) => notifications.filter((n) => n.method === 'notifications/tools/list_changed').length;

describe('serveMcp of an agent woken by the application, changed, and passivated again', () => {
  it('tells the client its tools changed, and lists the new ones', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'skillstate-mcp-wake-'));
    // Removed last, once the system has shut down.
    onCleanup(() => rm(folder, { recursive: true, force: true }));
    const records: TraceRecord[] = [];
    const system = createAgentSystem({
      definitions: [Grower],
      skills: [counter, extra],
      store: createSqliteStore({ path: join(folder, 'agents.db') }),
      passivate: { idleMs: 10 },
      trace: (record) => void records.push(record),
      onUnhandledDiagnostic: () => {},
    });
    onCleanup(() => system.shutdown());
    const agent = system.spawn(Grower, { id: 'grower' });
    const endpoint = await serveMcp(agent, { transport: 'http', onDiagnostic: () => {} });
    onCleanup(() => endpoint.close());
    const { client, notifications } = await httpClient(endpoint.url!);
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('extra_tool');
    const passivations = () => records.filter((record) => record.kind === 'passivate' && record.agent === 'grower').length;
    await eventually(() => agent.status === 'passivated', 'the agent to be passivated');
    const before = { passivations: passivations(), changes: listChanged(notifications) };

    // Woken by the application: no request of the client's is under way.
    system.get('grower')!.send('grow');
    await eventually(() => passivations() > before.passivations, 'the agent to be passivated again');
    expect(records.some((record) => record.kind === 'wake' && record.agent === 'grower')).toBe(true);
    await eventually(() => listChanged(notifications) > before.changes, 'tools/list_changed');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('extra_tool');
    expect(await client.callTool({ name: 'extra_tool', arguments: {} })).toMatchObject({ content: [{ type: 'text', text: 'extra' }] });
  });
});

const Calc = defineAgent({ name: 'calc', skills: [counter] });
const Adder = defineAgent({ name: 'adder', skills: [arithmetic] });

describe('serveMcp of { system, id }', () => {
  it('serves the agent spawned again under the id once the first stopped, telling the client its tools changed', async () => {
    const system = createAgentSystem({ onUnhandledDiagnostic: () => {} });
    onCleanup(() => system.shutdown());
    const first = system.spawn(Calc, { id: 'calc' });
    const diagnostics: Diagnostic[] = [];
    const endpoint = await serveMcp({ system, id: 'calc' }, { transport: 'http', onDiagnostic: (item) => void diagnostics.push(item) });
    onCleanup(() => endpoint.close());
    const { client, notifications } = await httpClient(endpoint.url!);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('increment');

    await first.stop();
    await eventually(() => listChanged(notifications) === 1, 'tools/list_changed as the agent stops');
    expect((await refusal(client.listTools())).code).toBe(-32003);
    expect(diagnostics).toEqual([
      expect.objectContaining({ code: 'mcp_agent_stopped', subject: 'calc', message: `agent 'calc' has stopped: the MCP endpoint at ${endpoint.url} answers every request with agent_stopped until an agent runs under the id 'calc' again, or it is closed` }),
    ]);

    const second = system.spawn(Adder, { id: 'calc' });
    await eventually(() => listChanged(notifications) === 2, 'tools/list_changed as the new agent appears');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(second.toolset().tools.map((tool) => tool.function.name));
    expect((await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })).structuredContent).toEqual({ result: 5 });

    // And the one after it, stopped too: the same again.
    await second.stop();
    await eventually(() => listChanged(notifications) === 3, 'tools/list_changed as the second agent stops');
    expect((await refusal(client.callTool({ name: 'add', arguments: { a: 1, b: 1 } }))).code).toBe(-32003);
    expect(diagnostics).toHaveLength(2);
  });

  it('a client that connects while no agent runs under the id is refused, then served once one does', async () => {
    const system = createAgentSystem({ onUnhandledDiagnostic: () => {} });
    onCleanup(() => system.shutdown());
    const first = system.spawn(Calc, { id: 'calc' });
    const endpoint = await serveMcp({ system, id: 'calc' }, { transport: 'http', onDiagnostic: () => {} });
    onCleanup(() => endpoint.close());
    await first.stop();
    const { client, notifications } = await httpClient(endpoint.url!);
    expect((await refusal(client.listTools())).code).toBe(-32003);
    system.spawn(Calc, { id: 'calc' });
    await eventually(() => listChanged(notifications) === 1, 'tools/list_changed as the new agent appears');
    const called = await client.callTool({ name: 'increment', arguments: {} });
    expect(called.isError).toBeFalsy();
    expect(system.get('calc')!.getSnapshot().state).toMatchObject({ counter: { count: 1 } });
  });
});

describe('serveMcp of a ref', () => {
  it('stays bound to that agent: a new agent spawned under its id is not served', async () => {
    const system = createAgentSystem({ onUnhandledDiagnostic: () => {} });
    onCleanup(() => system.shutdown());
    const first = system.spawn(Calc, { id: 'calc' });
    const endpoint = await serveMcp(first, { transport: 'http', onDiagnostic: () => {} });
    onCleanup(() => endpoint.close());
    const { client, notifications } = await httpClient(endpoint.url!);
    await first.stop();
    await eventually(() => listChanged(notifications) === 1, 'tools/list_changed as the agent stops');
    const second = system.spawn(Calc, { id: 'calc' });
    expect((await refusal(client.callTool({ name: 'increment', arguments: {} }))).code).toBe(-32003);
    expect(second.getSnapshot().state).toMatchObject({ counter: { count: 0 } });
    expect(listChanged(notifications)).toBe(1);
  });
});
