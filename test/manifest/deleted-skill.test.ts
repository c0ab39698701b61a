/**
 * A skill discovered and never loaded whose folder, or SKILL.md, was deleted meanwhile: loading it
 * is `skill_not_found`, naming what is missing and what to do, never a raw `ENOENT`.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cmd, createSkillTools, defineAgent, discoverSkills, ManifestError } from '../../src/index.js';
import { simpleSkill, tree } from './tree.js';

async function setup() {
  const root = await tree({ 'notes/SKILL.md': simpleSkill('notes'), 'notes/guide.md': '# Guide', 'other/SKILL.md': simpleSkill('other') });
  const registry = await discoverSkills({ extra: [root] });
  const Agent = defineAgent({ name: 'assistant', skills: [createSkillTools(registry)], registry });
  return { root, registry, agent: Agent.new({ id: 'a' }) };
}

describe('a skill deleted after discovery', () => {
  it('its folder gone: load_skill fails with skill_not_found, naming the folder and what to do', async () => {
    const { root, registry, agent } = await setup();
    const folder = path.join(root, 'notes');
    await rm(folder, { recursive: true });
    const failed = await cmd(agent, { action: 'load_skill', params: { name: 'notes' } });
    expect(failed.agent).toBe(agent);
    const result = failed.results[0]!;
    expect(result).toMatchObject({ ok: false, error: { code: 'action_failed', details: { reason: 'skill_not_found' } } });
    const message = `skill 'notes' is no longer on disk: its folder ${folder} was removed after the skill was discovered; it cannot be loaded until it is put back (a rescan of the skill folders stops offering the skill)`;
    expect(!result.ok && result.error.message).toBe(`action 'load_skill' failed: ${message}`);
    expect(!result.ok && result.error.message).not.toContain('ENOENT');

    // A program asking the registry gets the same, as a ManifestError.
    const error = await registry.activate('notes').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ManifestError);
    expect(error).toMatchObject({ code: 'skill_not_found', skill: 'notes', subject: path.join(folder, 'SKILL.md'), message });
    expect((error as Error).cause).toMatchObject({ code: 'ENOENT' });

    // Refreshed, the registry no longer offers it; the other skill is untouched.
    await registry.refresh();
    expect(registry.names()).toEqual(['other']);
    const unknown = await cmd(agent, { action: 'load_skill', params: { name: 'notes' } });
    expect(unknown.results[0]).toMatchObject({ ok: false, error: { details: { reason: 'unknown_skill' } } });
    expect((await cmd(agent, { action: 'load_skill', params: { name: 'other' } })).results[0]).toMatchObject({ ok: true });
  });

  it('its SKILL.md alone gone: the message names the file', async () => {
    const { root, registry } = await setup();
    const file = path.join(root, 'notes', 'SKILL.md');
    await rm(file);
    await expect(registry.content('notes')).rejects.toMatchObject({
      code: 'skill_not_found',
      message: `skill 'notes' is no longer on disk: ${file} was removed after the skill was discovered; it cannot be loaded until it is put back (a rescan of the skill folders stops offering the skill)`,
    });
  });
});
