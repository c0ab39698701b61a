/**
 * `createMcpServer` and `toolsForAgent` must agree: a model sees the same tools through MCP as
 * through a model loop. The SDK's client on the SDK's in-memory transport, a real agent system.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, GetPromptRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgentSystem, defineAction, defineAgent, defineSkill, discoverSkills } from 'skillstate';
import { toolsForAgent } from 'skillstate/tools';
import { createMcpServer } from 'skillstate/mcp';
import { arithmetic, calculator, counter } from 'skillstate/skills';
import { serverErrorMessage } from '../../src/mcp/protocol-error.js';
import { onCleanup } from './processes.js';

const reset = defineAction({ name: 'reset', description: 'Another skill\'s reset', input: z.object({ hard: z.boolean().default(false) }), run: () => ({ done: true }) });
const other = defineSkill({ name: 'other', actions: [reset] });

describe('createMcpServer', () => {
  it('lists exactly the tools toolsForAgent gives, renamed clashes included, and calls reach them', async () => {
    const system = createAgentSystem({ onUnhandledDiagnostic: () => {} });
    onCleanup(() => system.shutdown());
    const agent = system.spawn(defineAgent({ name: 'many', skills: [counter, arithmetic, calculator, other] }), { id: 'many' });
    const [near, far] = InMemoryTransport.createLinkedPair();
    await createMcpServer(agent).connect(far);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(near);
    onCleanup(() => client.close());

    const { tools } = await client.listTools();
    const expected = toolsForAgent(agent.getSnapshot().agent);
    expect(tools.map((tool) => [tool.name, tool.description, tool.inputSchema])).toEqual(expected.map((tool) => [tool.function.name, tool.function.description, tool.function.parameters]));
    expect(tools.map((tool) => tool.name)).toContain('other_reset');
    expect((await client.callTool({ name: 'other_reset', arguments: {} })).structuredContent).toEqual({ done: true });
    expect((await client.callTool({ name: 'reset', arguments: { to: 7 } })).structuredContent).toEqual({ count: 7 });
  });
});

describe('errors on the MCP wire', () => {
  /** A client connected to `server` on the SDK's in-memory transport. */
  async function clientOf(server: Server): Promise<Client> {
    const [near, far] = InMemoryTransport.createLinkedPair();
    await server.connect(far);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(near);
    onCleanup(() => client.close());
    return client;
  }

  it('a refused resource and an unknown prompt read "MCP error -32602: …" on the client, the prefix once', async () => {
    const system = createAgentSystem({ onUnhandledDiagnostic: () => {} });
    onCleanup(() => system.shutdown());
    const agent = system.spawn(defineAgent({ name: 'calc', skills: [calculator] }), { id: 'calc' });
    const registry = await discoverSkills({ examples: ['csv-tools'] });
    const client = await clientOf(createMcpServer(agent, { registry }));
    const refused = await client.readResource({ uri: 'skill://csv-tools/../hello-extended/SKILL.md' }).then(
      () => undefined,
      (error: McpError) => error,
    );
    expect(refused).toBeInstanceOf(McpError);
    expect(refused!.code).toBe(ErrorCode.InvalidParams);
    expect(refused!.message).toMatch(/^MCP error -32602: skill:\/\/csv-tools\/\.\.\/hello-extended\/SKILL\.md is refused: .* \[resource_refused\]$/);
    expect(refused!.data).toMatchObject({ uri: 'skill://csv-tools/../hello-extended/SKILL.md', code: 'resource_refused', skill: 'csv-tools' });
    await expect(client.getPrompt({ name: 'nope' })).rejects.toThrow(/^MCP error -32602: no prompt named 'nope'; the prompt is 'skills'$/);
  });

  it("a client reading a server that doubles the prefix (one throwing the SDK's McpError) reports it once", async () => {
    const server = new Server({ name: 'doubling', version: '1.0.0' }, { capabilities: { prompts: {} } });
    server.setRequestHandler(GetPromptRequestSchema, () => {
      throw new McpError(ErrorCode.InvalidParams, 'no such prompt');
    });
    const client = await clientOf(server);
    const error = (await client.getPrompt({ name: 'any' }).catch((thrown: unknown) => thrown)) as McpError;
    // What the SDK does on its own: the prefix twice.
    expect(error.message).toBe('MCP error -32602: MCP error -32602: no such prompt');
    expect(serverErrorMessage(error)).toBe('MCP error -32602: no such prompt');
  });
});
