/** Document skills on running agents: load_skill as a tool call, mount by name, restore. */
import { afterEach, describe, expect, it } from 'vitest';
import { createSkillTools, discoverSkills, type AgentSystem, type DocumentSkillRegistry } from '../../src/index.js';
import { EXAMPLE_SKILLS_DIR } from '../../src/manifest/discover.js';
import { createSignal, defineAgent, notebook, quietSystem } from './fixtures.js';

let systems: AgentSystem[] = [];
afterEach(async () => {
  for (const system of systems) await system.shutdown();
  systems = [];
});

async function setup(): Promise<{ registry: DocumentSkillRegistry; system: AgentSystem; Assistant: ReturnType<typeof defineAgent> }> {
  const registry = await discoverSkills({ bundled: EXAMPLE_SKILLS_DIR });
  const Assistant = defineAgent({ name: 'assistant', skills: [notebook, createSkillTools(registry)], registry });
  const system = quietSystem({ resolvers: [registry], definitions: [Assistant] });
  systems.push(system);
  return { registry, system, Assistant };
}

describe('document skills on a running agent', () => {
  it("a model's load_skill tool call mounts the skill: lifecycle active, toolset registered, its tools callable", async () => {
    const { system, Assistant } = await setup();
    const agent = system.spawn(Assistant, { id: 'assistant-1' });
    expect(agent.toolset().tools.map((tool) => tool.function.name)).toEqual(expect.arrayContaining(['load_skill', 'list_skills', 'read_skill_resource']));
    const loaded = (await agent.callTool('load_skill', '{"name":"hello-extended"}')) as { rootPath: string };
    expect(loaded.rootPath).toBe(`${EXAMPLE_SKILLS_DIR}/hello-extended`);
    expect(agent.getSnapshot().lifecycles['hello-extended']).toBe('active');
    expect(agent.getSnapshot().registeredActions).toEqual(expect.arrayContaining(['hello-extended/say_hello', 'hello-extended/wave']));
    expect(agent.toolset().tools.map((tool) => tool.function.name)).toEqual(expect.arrayContaining(['say_hello', 'wave']));
    await expect(agent.callTool('wave', { name: 'Bob', times: 2 })).resolves.toEqual({ output: '👋👋 Bob' });
    await expect(agent.callTool('say_hello', { name: 'Ada', style: 'excited' })).resolves.toMatchObject({ output: 'Hello, Ada!!' });
    await expect(agent.callTool('teleport', {})).rejects.toMatchObject({ code: 'unknown_action' });
  });

  it('mounts a discovered skill by name, loading it first, in mailbox order', async () => {
    const { system, Assistant } = await setup();
    const agent = system.spawn(Assistant);
    const mounted = agent.mount('csv-tools');
    const after = agent.call(createSignal('notes.list'));
    await expect(mounted).resolves.toMatchObject({ skill: 'csv-tools', changed: true });
    await after;
    expect(agent.getSnapshot().mounted.map((m) => m.name)).toEqual(['notebook', 'skills', 'csv-tools']);
    await expect(agent.mount('no-such-skill')).rejects.toMatchObject({ code: 'unknown_skill' });
  });

  it('restores an agent whose document skills were loaded, in a new system, loading them again', async () => {
    const first = await setup();
    const agent = first.system.spawn(first.Assistant, { id: 'durable' });
    await agent.callTool('load_skill', { name: 'hello-extended' });
    const snapshot = JSON.parse(JSON.stringify(agent.persist()));

    const second = await setup();
    expect(() => second.system.restore(snapshot)).toThrow(expect.objectContaining({ code: 'unknown_skill' }));
    const restored = await second.system.loadAndRestore(snapshot);
    expect(restored.getSnapshot().lifecycles).toMatchObject({ 'hello-extended': 'active' });
    await expect(restored.callTool('wave', { name: 'again' })).resolves.toEqual({ output: '👋 again' });
  });
});
