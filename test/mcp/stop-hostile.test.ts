/**
 * A served agent that leaves memory without stopping: passivated (a system with `idleMs`), it is
 * woken by the next request and served as before. Neither its endpoint's owner nor its clients
 * are told it stopped, and a skill mounted after it woke still tells clients its tools changed.
 * And one that stops while a tool call is under way: that call is answered, as a failed tool call
 * saying the agent stopped, and later requests are refused.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgentSystem, createSqliteStore, defineAction, defineAgent, defineSkill, result, type Diagnostic, type TraceRecord } from 'skillstate';
import { serveMcp } from 'skillstate/mcp';
import { arithmetic, counter } from 'skillstate/skills';
import { eventually, httpClient, onCleanup } from './processes.js';

const folders: string[] = [];
afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

const Calc = defineAgent({ name: 'calc', skills: [counter] });

/** `calc` served over HTTP by a system that passivates an agent idle for `idleMs`. */
async function servedPassivating(idleMs: number) {
  const folder = await mkdtemp(join(tmpdir(), 'skillstate-mcp-passivate-'));
  folders.push(folder);
  const passivations: Array<() => void> = [];
  const trace = (record: TraceRecord) => {
    if (record.kind === 'passivate') for (const done of passivations.splice(0)) done();
  };
  const system = createAgentSystem({ definitions: [Calc], skills: [counter, arithmetic], store: createSqliteStore({ path: join(folder, 'agents.db') }), passivate: { idleMs }, trace, onUnhandledDiagnostic: () => {} });
  onCleanup(() => system.shutdown());
  const agent = system.spawn(Calc, { id: 'calc' });
  const diagnostics: Diagnostic[] = [];
  const endpoint = await serveMcp(agent, { transport: 'http', onDiagnostic: (item) => void diagnostics.push(item) });
  onCleanup(() => endpoint.close());
  /** Resolves once the agent is passivated (at once when it is already). */
  const passivated = () => (agent.status === 'passivated' ? Promise.resolve() : new Promise<void>((resolve) => passivations.push(resolve)));
  return { system, agent, endpoint, diagnostics, passivated, ...(await httpClient(endpoint.url!)) };
}

describe('serveMcp of an agent that is passivated', () => {
  it('is not reported stopped, and its clients are not told its tools went', async () => {
    const { agent, client, diagnostics, notifications, passivated } = await servedPassivating(20);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('increment');
    await passivated();
    expect(agent.status).toBe('passivated');
    expect(diagnostics.filter((item) => item.code === 'mcp_agent_stopped')).toEqual([]);
    // A request wakes it and is served.
    const called = await client.callTool({ name: 'increment', arguments: {} });
    expect(called.isError).toBeFalsy();
    expect(notifications.filter((n) => n.method === 'notifications/tools/list_changed')).toEqual([]);
  });

  it('tells its clients the tools changed when a skill is mounted after it woke', async () => {
    // Idle long enough after it woke for the mount below to find it awake.
    const { agent, client, notifications, passivated } = await servedPassivating(500);
    await passivated();
    await client.callTool({ name: 'increment', arguments: {} });
    expect(agent.status).not.toBe('passivated');
    const changes = () => notifications.filter((n) => n.method === 'notifications/tools/list_changed').length;
    const before = changes();
    await agent.mount(arithmetic);
    await eventually(() => changes() > before, 'tools/list_changed after the mount');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('add');
  });
});

describe('serveMcp of an agent stopped while a tool call runs', () => {
  it('answers the call as a failed tool call naming agent_stopped, then refuses the next request', async () => {
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const slow = defineSkill({
      name: 'slow',
      actions: [
        defineAction({
          name: 'hang',
          description: 'Works until its work is no longer wanted',
          input: z.object({}),
          run: async (_params, ctx) => {
            started();
            await new Promise((resolve) => ctx.abortSignal.addEventListener('abort', resolve, { once: true }));
            return result('too late');
          },
        }),
      ],
    });
    const system = createAgentSystem({ onUnhandledDiagnostic: () => {} });
    onCleanup(() => system.shutdown());
    const agent = system.spawn(defineAgent({ name: 'slow', skills: [slow] }), { id: 'slow' });
    const endpoint = await serveMcp(agent, { transport: 'http', onDiagnostic: () => {} });
    onCleanup(() => endpoint.close());
    const { client } = await httpClient(endpoint.url!);
    const call = client.callTool({ name: 'hang', arguments: {} });
    await running;
    await agent.stop();
    const answered = await call;
    expect(answered.isError).toBe(true);
    expect(answered._meta).toMatchObject({ 'skillstate/error': { code: 'agent_stopped' } });
    await expect(client.callTool({ name: 'hang', arguments: {} })).rejects.toMatchObject({ code: -32003 });
  });
});
