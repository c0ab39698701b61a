/**
 * A skill whose SKILL.md is still in its folder but no longer loads (an editor's half-written
 * save) keeps its previous version, however the registry comes to look at it again: its own edit,
 * a rescan for another folder's change, or `refresh()`. Agents keep it mounted. What a watcher does
 * to a followed system's agents reaches that system's `onDiagnostic` listeners. Real folders, the
 * real watcher, a real system.
 */
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentSystem, createSkillTools, defineAgent, discoverSkills, type AgentSystem, type Diagnostic, type DocumentSkillRegistry } from '../../src/index.js';
import { simpleSkill, tree } from './tree.js';
import { afterEdit } from './watched.js';

const open: { registries: DocumentSkillRegistry[]; systems: AgentSystem[] } = { registries: [], systems: [] };
afterEach(async () => {
  for (const registry of open.registries.splice(0)) registry.watcher?.close();
  for (const system of open.systems.splice(0)) await system.shutdown();
});

/** A SKILL.md saved half-written: its description's quote never closes. */
const HALF_SAVED = '---\nname: alpha\ndescription: "unclosed\n---\nbody\n';

/** Two skills loaded on a running agent of a system that follows the watched registry, every diagnostic of the system kept. */
async function setup() {
  const root = await tree({ 'alpha/SKILL.md': simpleSkill('alpha'), 'beta/SKILL.md': simpleSkill('beta') });
  const registry = await discoverSkills({ extra: [root] }, { watch: { debounceMs: 20 } });
  open.registries.push(registry);
  const system = createAgentSystem({ resolvers: [registry], onUnhandledDiagnostic: () => {} });
  open.systems.push(system);
  const heard: Array<{ diagnostic: Diagnostic; agentId: string | undefined }> = [];
  system.onDiagnostic((diagnostic, agentId) => void heard.push({ diagnostic, agentId }));
  registry.watcher!.follow(system);
  const agent = system.spawn(defineAgent({ name: 'assistant', skills: [createSkillTools(registry)] }), { id: 'w' });
  await agent.callTool('load_skill', { name: 'alpha' });
  await agent.callTool('load_skill', { name: 'beta' });
  const mounted = () => agent.getSnapshot().mounted.map((record) => record.name);
  return { root, registry, system, agent, heard, mounted };
}

describe('a skill whose SKILL.md no longer loads, while its folder is still there', () => {
  it('keeps its previous version when another folder changes and the sources are scanned again; agents keep it', async () => {
    const { root, registry, mounted } = await setup();
    const description = registry.entry('alpha')!.description;

    const broken = await afterEdit(registry, () => writeFile(path.join(root, 'alpha', 'SKILL.md'), HALF_SAVED));
    expect(broken.diagnostics.map((item) => item.code)).toEqual(['skill_reload_failed']);

    const change = await afterEdit(registry, () => rm(path.join(root, 'beta'), { recursive: true }));
    expect(change.removed).toEqual(['beta']);
    expect(change.changed).toEqual([]);
    expect(registry.has('alpha')).toBe(true);
    expect(registry.entry('alpha')!.description).toBe(description);
    expect(mounted()).toEqual(['skills', 'alpha']);
    const failed = registry.diagnostics.filter((item) => item.code === 'skill_reload_failed');
    expect(failed).toEqual([expect.objectContaining({ level: 'error', skill: 'alpha', subject: path.join(root, 'alpha') })]);
    expect(failed[0]!.message.startsWith(`skill 'alpha' is still in ${path.join(root, 'alpha')} but cannot be loaded: ${path.join(root, 'alpha', 'SKILL.md')}: Invalid YAML in frontmatter: `)).toBe(true);
    expect(failed[0]!.message).toContain('the previous version stays');
    // Its body as it was loaded: an agent loading it now gets the version that worked.
    expect((await registry.content('alpha')).instructions).toBe('# Body\n\nInstructions.\n');
  });

  it('keeps it when its own edit and another folder\'s removal come in one batch, and takes the repaired file later', async () => {
    const { root, registry, mounted } = await setup();
    const change = await afterEdit(registry, async () => {
      await writeFile(path.join(root, 'alpha', 'SKILL.md'), HALF_SAVED);
      await rm(path.join(root, 'beta'), { recursive: true });
    });
    expect(change.removed).toEqual(['beta']);
    expect(change.changed).not.toContain('alpha');
    expect(mounted()).toEqual(['skills', 'alpha']);

    const repaired = await afterEdit(registry, () => writeFile(path.join(root, 'alpha', 'SKILL.md'), simpleSkill('alpha', 'version: 2.0.0')));
    expect(repaired.changed).toEqual(['alpha']);
    expect(registry.entry('alpha')!.version).toBe('2.0.0');
    expect(mounted()).toEqual(['skills', 'alpha']);
  });

  it('keeps it through refresh(), which reports why', async () => {
    const root = await tree({ 'alpha/SKILL.md': simpleSkill('alpha'), 'beta/SKILL.md': simpleSkill('beta') });
    const registry = await discoverSkills({ extra: [root] });
    await writeFile(path.join(root, 'alpha', 'SKILL.md'), HALF_SAVED);
    const diagnostics = await registry.refresh();
    expect(diagnostics).toEqual([
      expect.objectContaining({ code: 'skill_skipped', subject: path.join(root, 'alpha') }),
      expect.objectContaining({ code: 'skill_reload_failed', skill: 'alpha', subject: path.join(root, 'alpha') }),
    ]);
    expect(registry.names()).toEqual(['alpha', 'beta']);
    expect(registry.diagnostics.map((item) => item.code)).toEqual(['skill_skipped', 'skill_reload_failed']);

    // Gone from its folder, it goes.
    await rm(path.join(root, 'alpha'), { recursive: true });
    await registry.refresh();
    expect(registry.names()).toEqual(['beta']);
  });

  it('a misnamed copy that lost the name to it does not take the name by its breakage', async () => {
    const root = await tree({ 'report/SKILL.md': simpleSkill('report', '', '# Current\n'), 'archive-report/SKILL.md': simpleSkill('report', '', '# Archived\n') });
    const registry = await discoverSkills({ extra: [root] });
    expect(registry.entry('report')!.rootPath).toBe(path.join(root, 'report'));
    expect((await registry.content('report')).instructions).toBe('# Current\n');

    await writeFile(path.join(root, 'report', 'SKILL.md'), HALF_SAVED.replace('alpha', 'report'));
    for (let scan = 0; scan < 2; scan++) {
      const diagnostics = await registry.refresh();
      expect(registry.entry('report')!.rootPath).toBe(path.join(root, 'report'));
      expect((await registry.content('report')).instructions).toBe('# Current\n');
      expect(diagnostics.filter((item) => item.code !== 'manifest_name_mismatch').map((item) => item.code)).toEqual(['skill_skipped', 'skill_reload_failed', 'skill_shadowed']);
      expect(registry.shadowed).toEqual([{ name: 'report', kept: { source: 'extra', path: path.join(root, 'report') }, shadowed: { source: 'extra', path: path.join(root, 'archive-report') } }]);
    }

    // Repaired, it is read again; removed, the copy takes the name.
    await writeFile(path.join(root, 'report', 'SKILL.md'), simpleSkill('report', 'version: 2.0.0', '# Repaired\n'));
    await registry.refresh();
    expect(registry.entry('report')!.version).toBe('2.0.0');
    await rm(path.join(root, 'report'), { recursive: true });
    await registry.refresh();
    expect(registry.entry('report')!.rootPath).toBe(path.join(root, 'archive-report'));
  });

  it('a skill never loaded whose first scan finds it broken is skipped, as before: there is no version to keep', async () => {
    const root = await tree({ 'alpha/SKILL.md': HALF_SAVED, 'beta/SKILL.md': simpleSkill('beta') });
    const registry = await discoverSkills({ extra: [root] });
    expect(registry.names()).toEqual(['beta']);
    expect(registry.diagnostics.map((item) => item.code)).toEqual(['skill_skipped']);
  });
});

describe('what a watcher does to the agents of a system it follows', () => {
  it('reaches the system\'s onDiagnostic listeners, about the agent', async () => {
    const { root, registry, heard, mounted } = await setup();
    await afterEdit(registry, () => rm(path.join(root, 'beta'), { recursive: true }));
    expect(mounted()).toEqual(['skills', 'alpha']);
    expect(heard).toEqual([{ diagnostic: expect.objectContaining({ level: 'warning', code: 'skill_removed', skill: 'beta', subject: 'w' }), agentId: 'w' }]);
    expect(heard[0]!.diagnostic.message).toBe("skill 'beta' was removed from disk; it was unmounted from agent 'w'");
  });

  it('a system no longer followed hears nothing more', async () => {
    const root = await tree({ 'alpha/SKILL.md': simpleSkill('alpha') });
    const registry = await discoverSkills({ extra: [root] }, { watch: { debounceMs: 20 } });
    open.registries.push(registry);
    const system = createAgentSystem({ resolvers: [registry], onUnhandledDiagnostic: () => {} });
    open.systems.push(system);
    const heard: Diagnostic[] = [];
    system.onDiagnostic((diagnostic) => void heard.push(diagnostic));
    const unfollow = registry.watcher!.follow(system);
    const agent = system.spawn(defineAgent({ name: 'assistant', skills: [createSkillTools(registry)] }), { id: 'w' });
    await agent.callTool('load_skill', { name: 'alpha' });
    unfollow();
    await afterEdit(registry, () => rm(path.join(root, 'alpha'), { recursive: true }));
    expect(heard).toEqual([]);
    expect(agent.getSnapshot().mounted.map((record) => record.name)).toEqual(['skills', 'alpha']);
  });
});

describe('registry.watch() options', () => {
  it('refuses a misspelled option, naming the one meant, and values it cannot use', async () => {
    const root = await tree({ 'alpha/SKILL.md': simpleSkill('alpha') });
    const registry = await discoverSkills({ extra: [root] });
    await expect(registry.watch({ debounce: 5 } as never)).rejects.toMatchObject({
      code: 'invalid_options',
      message: "unknown option 'debounce'; did you mean 'debounceMs'? (watch options are: debounceMs, onChange)",
    });
    await expect(registry.watch({ debounceMs: -1 })).rejects.toMatchObject({ code: 'invalid_options', message: "watch's debounceMs must be a number of milliseconds, 0 or more, got -1" });
    await expect(registry.watch({ onChange: 'log' as never })).rejects.toMatchObject({ code: 'invalid_options', message: "watch's onChange must be a function, got a string, 'log'" });
    await expect(discoverSkills({ extra: [root] }, { watch: { debounce: 5 } as never })).rejects.toMatchObject({ code: 'invalid_options', details: { option: 'debounce', suggestion: 'debounceMs' } });
    expect(registry.watcher).toBeUndefined();
  });
});
