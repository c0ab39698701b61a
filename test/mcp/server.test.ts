/**
 * `createMcpServer` and `toolsForAgent` must agree: a model sees the same tools through MCP as
 * through a model loop. The SDK's client on the SDK's in-memory transport, a real agent system.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgentSystem, defineAction, defineAgent, defineSkill, toolsForAgent } from 'skillstate';
import { createMcpServer } from 'skillstate/mcp';
import { arithmetic, calculator, counter } from 'skillstate/skills';
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
