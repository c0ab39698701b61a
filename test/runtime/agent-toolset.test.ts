/**
 * `ref.toolset()`: a running agent's toolset for a language model is an object — the list of
 * function tools under `tools`, their bindings, the diagnostics and the way back from a tool call —
 * recomputed from the skills mounted now. `tools()` is its former name.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { agentToolset } from '../../src/core/tools.js';
import { defineAgent, type AgentSystem } from '../../src/index.js';
import { arithmetic, counter } from '../../skills/index.js';
import { quietSystem } from './fixtures.js';

let system: AgentSystem | undefined;
afterEach(async () => {
  await system?.shutdown();
  system = undefined;
});

describe('ref.toolset() returns { tools, bindings, diagnostics, toInstruction }, not an array', () => {
  it("gives the current skills' function tools under tools, as agentToolset does, and follows mounts", async () => {
    system = quietSystem();
    const Desk = defineAgent({ name: 'desk', skills: [counter] });
    const agent = system.spawn(Desk);
    const toolset = agent.toolset();
    expect(Array.isArray(toolset)).toBe(false);
    expect(toolset.tools.map((tool) => tool.function.name)).toEqual(['increment', 'decrement', 'reset', 'get_count']);
    expect(toolset.tools).toEqual(agentToolset(Desk.new()).tools);
    expect(toolset.bindings.get('increment')).toMatchObject({ action: 'increment', skill: 'counter' });
    expect(toolset.diagnostics).toEqual([]);
    expect(toolset.toInstruction('increment', '{"by":2}')).toEqual({ ok: true, instruction: { action: 'increment', params: { by: 2 }, skill: 'counter' } });

    await agent.mount(arithmetic);
    expect(agent.toolset().tools.map((tool) => tool.function.name)).toEqual(['increment', 'decrement', 'reset', 'get_count', 'add', 'subtract', 'multiply', 'divide']);
    expect(agent.toolset({ strict: true }).tools.every((tool) => tool.function.strict === true)).toBe(true);
  });

  it('tools() is the deprecated name of toolset(): the same toolset', () => {
    system = quietSystem();
    const agent = system.spawn(defineAgent({ name: 'desk', skills: [counter] }));
    expect(agent.tools()).toEqual(agent.toolset());
  });
});
