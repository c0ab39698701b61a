/** Hot reload on real folders: registry.watch() and agents that follow it. */
import { mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentSystem, createSkillTools, defineAgent, discoverSkills, type AgentSystem, type DocumentSkillRegistry } from '../../src/index.js';
import { type SkillChange } from '../../src/manifest/document-registry.js';
import { simpleSkill, tree, writeTree } from './tree.js';
import { afterEdit } from './watched.js';

const zodUrl = new URL('../../node_modules/zod/index.js', import.meta.url).href;
const open: { registries: DocumentSkillRegistry[]; systems: AgentSystem[] } = { registries: [], systems: [] };
afterEach(async () => {
  for (const registry of open.registries.splice(0)) registry.watcher?.close();
  for (const system of open.systems.splice(0)) await system.shutdown();
});

async function watched(root: string, debounceMs = 20): Promise<DocumentSkillRegistry> {
  const registry = await discoverSkills({ extra: [root] }, { watch: { debounceMs } });
  open.registries.push(registry);
  return registry;
}

const toolset = (version: string, extra = '') => `
import { z } from '${zodUrl}';
export const Tools = {
  ping: { description: 'Ping', parameters: z.object({}), execute: () => 'pong ${version}' },
  ${extra}
};
`;

describe('registry.watch()', () => {
  it('applies added, changed and removed SKILL.md files and resources', async () => {
    const root = await tree({ 'one/SKILL.md': simpleSkill('one'), 'one/reference.md': 'first', 'one/docs/guide.md': 'guide 1' });
    const registry = await watched(root);
    expect(registry.watcher!.folders).toBe(3); // the source, the skill, its docs folder
    expect((await registry.content('one')).instructions).toBe('# Body\n\nInstructions.\n');

    expect(await afterEdit(registry, () => writeTree(root, { 'two/SKILL.md': simpleSkill('two') }))).toMatchObject({ added: ['two'], changed: [], removed: [] });
    expect(registry.names()).toEqual(['one', 'two']);

    const edited = await afterEdit(registry, () => writeFile(path.join(root, 'one', 'SKILL.md'), simpleSkill('one', 'version: 2.0.0', '# New body\n')));
    expect(edited).toMatchObject({ added: [], changed: ['one'], removed: [] });
    expect(registry.entry('one')!.version).toBe('2.0.0');
    expect((await registry.content('one')).instructions).toBe('# New body\n');

    expect(await afterEdit(registry, () => writeFile(path.join(root, 'one', 'docs', 'guide.md'), 'guide 2'))).toMatchObject({ changed: ['one'] });
    const guide = await (await registry.content('one')).resources.get('docs/guide.md')!.read();
    expect(Buffer.from(guide).toString()).toBe('guide 2');

    expect(await afterEdit(registry, () => writeFile(path.join(root, 'one', 'extra.md'), 'new resource'))).toMatchObject({ changed: ['one'] });
    expect([...(await registry.content('one')).resources.keys()]).toContain('extra.md');

    expect(await afterEdit(registry, () => rm(path.join(root, 'two'), { recursive: true }))).toMatchObject({ added: [], removed: ['two'] });
    expect(registry.names()).toEqual(['one']);
  });

  it('gathers a burst of writes into one change', async () => {
    const root = await tree({ 'one/SKILL.md': simpleSkill('one') });
    // Quiet for a second ends the burst: on a loaded machine the five writes can be further apart than 20 ms.
    const registry = await watched(root, 1_000);
    const changes: SkillChange[] = [];
    registry.watcher!.onChange((change) => changes.push(change));
    const change = await afterEdit(registry, async () => {
      for (let i = 0; i < 5; i++) await writeFile(path.join(root, 'one', 'SKILL.md'), simpleSkill('one', `version: 1.0.${i}`));
    });
    expect(change.changed).toEqual(['one']);
    expect(changes).toHaveLength(1);
    expect(registry.entry('one')!.version).toBe('1.0.4');
  });

  it('follows symbolic links: an edit in a linked skill folder is seen', async () => {
    const elsewhere = await tree({ 'linked/SKILL.md': simpleSkill('linked') });
    const root = await tree({ 'own/SKILL.md': simpleSkill('own') });
    await symlink(path.join(elsewhere, 'linked'), path.join(root, 'linked'));
    const registry = await watched(root);
    expect(registry.names()).toEqual(['linked', 'own']);
    const change = await afterEdit(registry, () => writeFile(path.join(elsewhere, 'linked', 'SKILL.md'), simpleSkill('linked', 'version: 3.0.0')));
    expect(change.changed).toEqual(['linked']);
    expect(registry.entry('linked')!.version).toBe('3.0.0');
  });

  it('keeps the old version of a skill whose SKILL.md becomes invalid, and says so', async () => {
    const root = await tree({ 'one/SKILL.md': simpleSkill('one') });
    const registry = await watched(root);
    const change = await afterEdit(registry, () => writeFile(path.join(root, 'one', 'SKILL.md'), '---\nname: one\n'));
    expect(change.changed).toEqual([]);
    expect(change.diagnostics).toEqual([expect.objectContaining({ level: 'error', code: 'skill_reload_failed', skill: 'one' })]);
    expect(change.diagnostics[0]!.message).toContain('the previous version stays');
    expect(registry.entry('one')!.description).toBe('The one skill. It does one things.');
  });

  it('a renamed skill folder is a removal and an addition', async () => {
    const root = await tree({ 'one/SKILL.md': simpleSkill('one') });
    const registry = await watched(root);
    const change = await afterEdit(registry, async () => {
      await mkdir(path.join(root, 'group'));
      await rename(path.join(root, 'one'), path.join(root, 'group', 'one'));
    });
    expect(registry.entry('one')!.rootPath).toBe(path.join(root, 'group', 'one'));
    expect(change.removed).toEqual([]);
    expect(change.changed).toEqual(['one']);
  });

  it('needs a discovered registry, and close() stops it', async () => {
    const root = await tree({ 'one/SKILL.md': simpleSkill('one') });
    const registry = await discoverSkills({ extra: [root] });
    const watcher = await registry.watch();
    expect(await registry.watch()).toBe(watcher);
    watcher.close();
    expect(registry.watcher).toBeUndefined();
    expect(watcher.folders).toBe(0);
    const { createDocumentSkillRegistry } = await import('../../src/index.js');
    await expect(createDocumentSkillRegistry().watch()).rejects.toMatchObject({ code: 'invalid_manifest' });
  });
});

describe('agents following a watched registry', () => {
  async function setup() {
    const root = await tree({
      'tooly/SKILL.md': simpleSkill('tooly', 'toolsets:\n  - "tools:Tools"', '# Tooly v1\n'),
      'tooly/tools.mjs': toolset('v1'),
      'other/SKILL.md': simpleSkill('other'),
    });
    const registry = await watched(root);
    const Assistant = defineAgent({ name: 'assistant', skills: [createSkillTools(registry)], registry });
    const system = createAgentSystem({ resolvers: [registry], onUnhandledDiagnostic: () => {} });
    open.systems.push(system);
    const agent = system.spawn(Assistant, { id: 'a1' });
    await agent.callTool('load_skill', { name: 'tooly' });
    await agent.callTool('load_skill', { name: 'other' });
    registry.watcher!.follow(system);
    return { root, registry, system, agent };
  }

  it('an agent with a changed skill loaded gets the new body and tools at its next step', async () => {
    const { root, registry, agent } = await setup();
    await expect(agent.callTool('ping', {})).resolves.toBe('pong v1');
    expect(agent.toolset().tools.map((tool) => tool.function.name)).not.toContain('pong');
    await afterEdit(registry, async () => {
      await writeFile(path.join(root, 'tooly', 'tools.mjs'), toolset('v2', `pong: { description: 'Pong', parameters: z.object({}), execute: () => 'ping' },`));
      await writeFile(path.join(root, 'tooly', 'SKILL.md'), simpleSkill('tooly', 'toolsets:\n  - "tools:Tools"', '# Tooly v2\n'));
    });
    await expect(agent.callTool('ping', {})).resolves.toBe('pong v2');
    await expect(agent.callTool('pong', {})).resolves.toBe('ping');
    const view = agent.getSnapshot();
    expect(view.registeredActions).toEqual(expect.arrayContaining(['tooly/ping', 'tooly/pong']));
    expect(view.lifecycles.tooly).toBe('active');
    expect(registry.get('tooly')!.instructions).toBe('# Tooly v2\n');
    expect(view.agent.mounted.map((record) => record.name)).toEqual(['skills', 'tooly', 'other']);
  });

  it('a removed skill is unmounted from the agent, with a diagnostic', async () => {
    const { root, registry, agent } = await setup();
    const change = await afterEdit(registry, () => rm(path.join(root, 'tooly'), { recursive: true }));
    expect(change.removed).toEqual(['tooly']);
    expect(change.diagnostics).toEqual([expect.objectContaining({ level: 'warning', code: 'skill_removed', skill: 'tooly', message: "skill 'tooly' was removed from disk; it was unmounted from agent 'a1'" })]);
    expect(agent.getSnapshot().mounted.map((record) => record.name)).toEqual(['skills', 'other']);
    await expect(agent.callTool('ping', {})).rejects.toMatchObject({ code: 'unknown_action' });
  });

  it('a new version whose tools cannot load is refused with a diagnostic; the agent keeps the old one', async () => {
    const { root, registry, agent } = await setup();
    const change = await afterEdit(registry, () => writeFile(path.join(root, 'tooly', 'tools.mjs'), 'export const Tools = 42;\n'));
    expect(change.diagnostics).toEqual([expect.objectContaining({ level: 'warning', code: 'skill_reload_refused', skill: 'tooly' })]);
    expect(change.diagnostics[0]!.message).toContain("agent 'a1' refused the new version");
    await expect(agent.callTool('ping', {})).resolves.toBe('pong v1');
  });
});
