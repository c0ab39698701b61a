/**
 * An MCP server whose agent has stopped, as MCP clients see it: the SDK's own client, over
 * Streamable HTTP, against `serveMcp` in this process (the system shuts down, or the agent is
 * stopped). (`skillstate mcp`, whose system is its own, exits instead: test/cli/mcp-agent-stopped.test.ts.)
 *
 * What a client sees: `notifications/tools/list_changed` (the agent's tools are gone), then every
 * request answered with a JSON-RPC error naming the agent and why, with `agent_stopped` as its
 * data's code; never the stopped agent's tools.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgentSystem, defineAction, defineAgent, Effects, result, type Diagnostic } from 'skillstate';
import { serveMcp } from 'skillstate/mcp';
import { counter } from 'skillstate/skills';
import { eventually, httpClient, onCleanup, refusal } from './processes.js';

function expectAgentStopped(error: McpError, agent: string): void {
  expect(error.message).toContain(`agent '${agent}' has stopped`);
  expect(error.data).toMatchObject({ code: 'agent_stopped', subject: agent });
}

async function servedOverHttp() {
  const system = createAgentSystem({ onUnhandledDiagnostic: () => {} });
  onCleanup(() => system.shutdown());
  const agent = system.spawn(defineAgent({ name: 'calc', skills: [counter] }), { id: 'calc' });
  const diagnostics: Diagnostic[] = [];
  const endpoint = await serveMcp(agent, { transport: 'http', onDiagnostic: (item) => void diagnostics.push(item) });
  onCleanup(() => endpoint.close());
  return { system, agent, endpoint, diagnostics, ...(await httpClient(endpoint.url!)) };
}

describe('serveMcp in this process, once its agent has stopped', () => {
  it('system.shutdown(): the connected client hears tools/list_changed, and tools/list and tools/call are refused with agent_stopped', async () => {
    const { system, endpoint, client, notifications, diagnostics } = await servedOverHttp();
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('increment');
    expect(diagnostics).toEqual([]);
    await system.shutdown();
    await eventually(() => notifications.some((n) => n.method === 'notifications/tools/list_changed'), 'tools/list_changed');
    // Whoever runs the endpoint is told, once.
    expect(diagnostics).toEqual([expect.objectContaining({ level: 'warning', code: 'mcp_agent_stopped', subject: 'calc', message: `agent 'calc' has stopped: the MCP endpoint at ${endpoint.url} answers every request with agent_stopped until it is closed` })]);
    expectAgentStopped(await refusal(client.listTools()), 'calc');
    expectAgentStopped(await refusal(client.callTool({ name: 'increment', arguments: {} })), 'calc');
  });

  it('agent.stop(): a client that connects afterwards is refused the same way, not shown the old tools', async () => {
    const { agent, endpoint } = await servedOverHttp();
    await agent.stop();
    const late = new Client({ name: 'late', version: '1.0.0' });
    await late.connect(new StreamableHTTPClientTransport(new URL(endpoint.url!)));
    onCleanup(() => late.close());
    expectAgentStopped(await refusal(late.listTools()), 'calc');
  });

  it('endpoint.close(): the client can no longer reach the agent, and the agent keeps running', async () => {
    const { agent, endpoint, client } = await servedOverHttp();
    await endpoint.close();
    await expect(client.listTools()).rejects.toThrow();
    expect(agent.status).not.toBe('stopped');
  });
});

describe("serveMcp with whenStopped: 'close'", () => {
  it('answers the call that stopped the agent, then closes; the diagnostic says it closes', async () => {
    const retire = defineAction({ name: 'retire', description: 'Stops this agent', input: z.object({}), run: () => result('retiring', { effects: [Effects.stop({ reason: 'retired' })] }) });
    const system = createAgentSystem({ onUnhandledDiagnostic: () => {} });
    onCleanup(() => system.shutdown());
    const agent = system.spawn(defineAgent({ name: 'calc', skills: [counter], actions: [retire] }), { id: 'calc' });
    const diagnostics: Diagnostic[] = [];
    const endpoint = await serveMcp(agent, { transport: 'http', whenStopped: 'close', onDiagnostic: (item) => void diagnostics.push(item) });
    onCleanup(() => endpoint.close());
    const { client } = await httpClient(endpoint.url!);
    expect((await client.callTool({ name: 'retire', arguments: {} })).content).toEqual([{ type: 'text', text: 'retiring' }]);
    await endpoint.closed;
    expect(agent.status).toBe('stopped');
    expect(diagnostics).toEqual([expect.objectContaining({ code: 'mcp_agent_stopped', message: `agent 'calc' has stopped: the MCP endpoint at ${endpoint.url} answers the requests under way, then closes` })]);
  });

  it('refuses a whenStopped it does not know', async () => {
    const system = createAgentSystem({ onUnhandledDiagnostic: () => {} });
    onCleanup(() => system.shutdown());
    const agent = system.spawn(defineAgent({ name: 'calc', skills: [counter] }), { id: 'calc' });
    await expect(serveMcp(agent, { transport: 'stdio', whenStopped: 'exit' as never })).rejects.toMatchObject({ code: 'invalid_options', subject: 'whenStopped', message: "serveMcp's whenStopped must be 'refuse' or 'close', got a string, 'exit'" });
  });
});
