/**
 * An MCP server whose agent has stopped, as MCP clients see it: the SDK's own client, over stdio
 * and Streamable HTTP, against `skillstate mcp` (an action stops the agent) and against
 * `serveMcp` in this process (the system shuts down, or the agent is stopped).
 *
 * What a client sees: `notifications/tools/list_changed` (the agent's tools are gone), then every
 * request answered with a JSON-RPC error naming the agent and why, with `agent_stopped` as its
 * data's code; never the stopped agent's tools.
 */
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { createAgentSystem, defineAgent, type Diagnostic } from 'skillstate';
import { serveMcp } from 'skillstate/mcp';
import { counter } from 'skillstate/skills';
import { eventually, httpClient, onCleanup, ONLY, overHttp, overStdio, type Connected } from './processes.js';

const STOPPABLE = `${fileURLToPath(new URL('./fixtures/stoppable-agent.ts', import.meta.url))}:Stoppable`;

/** The error a request was answered with. */
async function refusal(request: Promise<unknown>): Promise<McpError> {
  const error = await request.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

function expectAgentStopped(error: McpError, agent: string): void {
  expect(error.message).toContain(`agent '${agent}' has stopped`);
  expect(error.data).toMatchObject({ code: 'agent_stopped', subject: agent });
}

describe.each([
  ['stdio', overStdio],
  ['http', overHttp],
] as const)('skillstate mcp over %s, once its agent has stopped', (_transport, connect: (args: string[]) => Promise<Connected>) => {
  it('tells the client its tools changed, then answers every request with agent_stopped, and says so on stderr', async () => {
    const { client, notifications, stderr } = await connect([...ONLY, '--agent', STOPPABLE]);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('retire');
    const retired = await client.callTool({ name: 'retire', arguments: {} });
    expect(retired.isError).toBeFalsy();
    await eventually(() => notifications.some((n) => n.method === 'notifications/tools/list_changed'), 'tools/list_changed');

    expectAgentStopped(await refusal(client.listTools()), 'stoppable');
    expectAgentStopped(await refusal(client.callTool({ name: 'increment', arguments: {} })), 'stoppable');
    // The session itself still answers: the client can tell the server is there and why it refuses.
    await expect(client.ping()).resolves.toEqual({});
    expect(stderr()).toContain("agent 'stoppable' has stopped: the MCP endpoint");
  });
});

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
