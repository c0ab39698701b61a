/**
 * Skill names that are keys every object has (`constructor`, `prototype`, `toString`,
 * `hasOwnProperty`, `__proto__`...), end to end on real folders: validated, discovered, disclosed,
 * loaded with `load_skill`, mounted, reloaded with their state slice kept, and unmounted. A name
 * that is a reserved key keeps its slice under `<name>_skill`.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cmd, createAgentSystem, createSkillTools, defineAgent, defineDocumentSkill, createDocumentSkillRegistry, discoverSkills, isMounted, unmountSkill, type AgentSystem } from '../../src/index.js';
import { checkAgentInvariants } from '../../src/testing/index.js';
import { disclose, validateSkillDir } from '../../src/manifest/index.js';
import { documentStateKey } from '../../src/manifest/spec.js';
import { simpleSkill, tree } from './tree.js';

const systems: AgentSystem[] = [];
afterEach(async () => {
  for (const system of systems.splice(0)) await system.shutdown();
});

/** A SKILL.md named `name` (quoted, so that `__proto__` is a name and not YAML syntax). */
const skillNamed = (name: string, body = `# ${name} body\n`, extra = '') => simpleSkill(JSON.stringify(name), extra, body);

/**
 * Every key of `Object.prototype` and every key the plain-data helpers refuse, as a skill name:
 * the identifier it is registered under, and the state key its slice is kept under.
 */
const NAMES: readonly { name: string; id: string; stateKey: string }[] = [
  { name: 'constructor', id: 'constructor', stateKey: 'constructor_skill' },
  { name: 'prototype', id: 'prototype', stateKey: 'prototype_skill' },
  { name: 'toString', id: 'toString', stateKey: 'toString_skill' },
  { name: 'hasOwnProperty', id: 'hasOwnProperty', stateKey: 'hasOwnProperty_skill' },
  { name: 'valueOf', id: 'valueOf', stateKey: 'valueOf_skill' },
  { name: 'isPrototypeOf', id: 'isPrototypeOf', stateKey: 'isPrototypeOf_skill' },
  { name: 'propertyIsEnumerable', id: 'propertyIsEnumerable', stateKey: 'propertyIsEnumerable_skill' },
  { name: 'toLocaleString', id: 'toLocaleString', stateKey: 'toLocaleString_skill' },
  // Not identifiers as written: loaded under the identifier derived from them, which is no reserved key.
  { name: '__proto__', id: 'proto__', stateKey: 'proto__' },
  { name: '__defineGetter__', id: 'definegetter__', stateKey: 'definegetter__' },
  { name: '__lookupSetter__', id: 'lookupsetter__', stateKey: 'lookupsetter__' },
];

async function setup() {
  const files: Record<string, string> = {};
  for (const { name } of NAMES) files[`${name}/SKILL.md`] = skillNamed(name);
  const root = await tree(files);
  const registry = await discoverSkills({ extra: [root] });
  const Agent = defineAgent({ name: 'assistant', skills: [createSkillTools(registry)], registry });
  return { root, registry, Agent };
}

describe('a state key for every name', () => {
  it.each([
    ['constructor', 'constructor_skill'],
    ['prototype', 'prototype_skill'],
    ['toString', 'toString_skill'],
    ['__proto__', '__proto___skill'],
    ['pdf-tools', 'pdf-tools'],
    ['constructors', 'constructors'],
    ['技能', '技能'],
  ])('%s keeps its slice under %s', (name, key) => {
    expect(documentStateKey(name)).toBe(key);
  });
});

describe('validating', () => {
  it('constructor and prototype are valid names, by the reference and by skillstate', async () => {
    const root = await tree({ 'constructor/SKILL.md': skillNamed('constructor'), 'prototype/SKILL.md': skillNamed('prototype') });
    for (const name of ['constructor', 'prototype']) {
      for (const spec of ['agentskills', 'skillstate'] as const) {
        expect(await validateSkillDir(path.join(root, name), { spec })).toMatchObject({ valid: true, errors: [] });
      }
    }
  });

  it('the others break the name rules, in the reference words, and nothing else', async () => {
    const root = await tree({ 'toString/SKILL.md': skillNamed('toString'), '__proto__/SKILL.md': skillNamed('__proto__') });
    expect((await validateSkillDir(path.join(root, 'toString'), { spec: 'agentskills' })).errors).toEqual(["Skill name 'toString' must be lowercase"]);
    expect((await validateSkillDir(path.join(root, '__proto__'), { spec: 'agentskills' })).errors).toEqual([
      "Skill name '__proto__' contains invalid characters. Only letters, digits, and hyphens are allowed.",
    ]);
  });
});

describe('discovering and disclosing', () => {
  it('registers every one, with no error and nothing skipped', async () => {
    const { registry } = await setup();
    expect(registry.names()).toEqual(NAMES.map((item) => item.id).sort());
    expect(registry.diagnostics.filter((item) => item.level === 'error' || item.code === 'skill_skipped')).toEqual([]);
    for (const { name, id } of NAMES) {
      expect(registry.entry(id)!.manifest!.name).toBe(name);
      // Found by the name as written too.
      expect(registry.entry(name)?.name).toBe(id);
    }
    // No object was given a key it should not have.
    expect(Object.prototype).not.toHaveProperty('proto__');
    expect(({} as Record<string, unknown>).constructor).toBe(Object);
  });

  it('lists and discloses them by name', async () => {
    const { registry, Agent } = await setup();
    const listed = await cmd(Agent.new({ id: 'a' }), { action: 'list_skills' });
    expect(listed.results[0]!.ok && (listed.results[0]!.output as { skills: { name: string }[] }).skills.map((skill) => skill.name)).toEqual(NAMES.map((item) => item.id).sort());
    const shown = await disclose(registry, 'use the constructor skill', { preload: ['constructor'] });
    expect(shown.text).toContain('<skill_content name="constructor">');
    expect(shown.text).toContain('# constructor body');
  });
});

describe('load_skill, reload and unmount', () => {
  it.each(NAMES)('$name: loads, mounts under $stateKey, reloads with its slice kept, unmounts', async ({ name, id, stateKey }) => {
    const { root, registry, Agent } = await setup();
    const agent = Agent.new({ id: 'a' });
    const loaded = await cmd(agent, { action: 'load_skill', params: { name } });
    const result = loaded.results[0]!;
    if (!result.ok) throw new Error(result.error.message);
    expect(result.output).toMatchObject({ skill: id, alreadyLoaded: false, instructions: `<skill_content name="${id}">\n# ${name} body\n</skill_content>` });
    expect(isMounted(loaded.agent, id)).toBe(true);
    expect(loaded.agent.mounted.find((record) => record.name === id)).toMatchObject({ stateKey });
    const state = loaded.agent.state as Record<string, unknown>;
    expect(Object.hasOwn(state, stateKey)).toBe(true);
    expect(state[stateKey]).toEqual({});
    // The agent's state is still plain data: no own key shadows what every object has.
    if (stateKey !== name) expect(Object.hasOwn(state, name)).toBe(false);
    expect(JSON.parse(JSON.stringify(loaded.agent)).state).toHaveProperty([stateKey]);

    // Loaded again: nothing mounted again.
    const again = await cmd(loaded.agent, { action: 'load_skill', params: { name: id } });
    expect(again.results[0]).toMatchObject({ ok: true, output: { alreadyLoaded: true } });
    expect(again.agent.mounted.filter((record) => record.name === id)).toHaveLength(1);

    // Changed on disk and loaded again: the new version replaces the old, under the same key.
    await writeFile(path.join(root, name, 'SKILL.md'), skillNamed(name, `# ${name} body, second version\n`, 'version: 2.0.0'));
    await registry.refresh();
    const reloaded = await cmd(again.agent, { action: 'load_skill', params: { name: id } });
    expect(reloaded.results[0]).toMatchObject({ ok: true, output: { skill: id, version: '2.0.0', alreadyLoaded: true, instructions: expect.stringContaining('second version') } });
    expect(reloaded.agent.mounted.filter((record) => record.name === id)).toEqual([expect.objectContaining({ stateKey })]);
    expect((reloaded.agent.state as Record<string, unknown>)[stateKey]).toEqual(state[stateKey]);

    const unmounted = unmountSkill(reloaded.agent, id);
    if (!unmounted.ok) throw new Error(unmounted.error.message);
    expect(isMounted(unmounted.agent, id)).toBe(false);
    expect(Object.hasOwn(unmounted.agent.state, stateKey)).toBe(false);
  });

  it('a running agent loads, restores from JSON and unmounts a skill named constructor', async () => {
    const { registry, Agent } = await setup();
    const system = createAgentSystem({ resolvers: [registry], onUnhandledDiagnostic: () => {} });
    systems.push(system);
    const ref = system.spawn(Agent, { id: 'a1' });
    await expect(ref.callTool('load_skill', { name: 'constructor' })).resolves.toMatchObject({ skill: 'constructor' });
    const view = ref.getSnapshot();
    expect(view.agent.mounted.map((record) => [record.name, record.stateKey])).toEqual([
      ['skills', 'skills'],
      ['constructor', 'constructor_skill'],
    ]);
    expect(view.lifecycles.constructor).toBe('active');

    // Another process: the registry loads the skill, and the agent comes back with it mounted.
    const fresh = await discoverSkills({ extra: [path.dirname(registry.entry('constructor')!.rootPath!)] });
    await fresh.load(['constructor']);
    const restored = defineAgent({ name: 'assistant', skills: [createSkillTools(fresh)] }).restore(JSON.parse(JSON.stringify(view.agent)), { skills: fresh.resolver() });
    expect(restored.ok && isMounted(restored.value, 'constructor')).toBe(true);

    await ref.unmount('constructor');
    expect(ref.getSnapshot().agent.mounted.map((record) => record.name)).toEqual(['skills']);
    // Its lifecycle recorded as inactive, as any unmounted skill's (not Object's own `constructor`).
    expect(Object.hasOwn(ref.getSnapshot().lifecycles, 'constructor')).toBe(true);
    expect(ref.getSnapshot().lifecycles.constructor).toBe('inactive');
    expect(checkAgentInvariants(ref, [])).toEqual([]);
  });

  it('an in-memory skill named constructor loads too', async () => {
    const registry = createDocumentSkillRegistry();
    registry.register(defineDocumentSkill({ name: 'constructor', description: 'Builds things. Use when building.', instructions: '# Build' }));
    const Agent = defineAgent({ name: 'assistant', skills: [createSkillTools(registry)], registry });
    const loaded = await cmd(Agent.new({ id: 'a' }), { action: 'load_skill', params: { name: 'constructor' } });
    expect(loaded.results[0]).toMatchObject({ ok: true, output: { skill: 'constructor' } });
    expect(isMounted(loaded.agent, 'constructor')).toBe(true);
  });
});
