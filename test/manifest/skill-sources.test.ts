/**
 * Which sources discovery scans: `defaultSkillSources({ bundled })` adds the application's own
 * folder to the project and user folders; a sources object given to `discoverSkills` is taken as
 * it is, and `{ bundled }` alone says the project and user folders were left out.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultSkillSources } from '../../src/manifest/index.js';
import { discoverSkills } from '../../src/index.js';
import { simpleSkill, tree } from './tree.js';

async function places() {
  const cwd = await tree({ '.agent/skills/mine/SKILL.md': simpleSkill('mine') });
  const home = await tree({ '.agent/skills/theirs/SKILL.md': simpleSkill('theirs') });
  const app = await tree({ 'shipped/SKILL.md': simpleSkill('shipped') });
  return { cwd, home, app };
}

const found = (registry: Awaited<ReturnType<typeof discoverSkills>>) => registry.entries().map((entry) => [entry.name, entry.source]);

describe('discoverSkills({ bundled }) and defaultSkillSources({ bundled })', () => {
  it('defaultSkillSources({ bundled }) keeps the project and user folders and adds the application’s', async () => {
    const { cwd, home, app } = await places();
    const registry = await discoverSkills(defaultSkillSources({ cwd, home, bundled: app }), { trust: 'all' });
    expect(found(registry)).toEqual([['mine', 'project'], ['shipped', 'bundled'], ['theirs', 'user']]);
    expect(registry.diagnostics.filter((note) => note.code === 'source_not_scanned')).toEqual([]);
  });

  it('discoverSkills({ bundled }) scans that folder alone, and a source_not_scanned note says the project and user folders were left out', async () => {
    const { app } = await places();
    const registry = await discoverSkills({ bundled: app });
    expect(found(registry)).toEqual([['shipped', 'bundled']]);
    expect(registry.diagnostics).toContainEqual(
      expect.objectContaining({
        level: 'info',
        code: 'source_not_scanned',
        message: "project and user skills are not scanned: the sources name 'bundled' only; defaultSkillSources({ bundled }) adds it to them (project: false and user: false say you meant it)",
      }),
    );
  });

  it('says nothing when the project and user folders are left out on purpose, or other sources are named', async () => {
    const { app } = await places();
    const deliberate = await discoverSkills({ project: false, user: false, bundled: app });
    expect(found(deliberate)).toEqual([['shipped', 'bundled']]);
    const extra = await discoverSkills({ extra: [app] });
    for (const registry of [deliberate, extra]) expect(registry.diagnostics.filter((note) => note.code === 'source_not_scanned')).toEqual([]);
  });

  it('defaultSkillSources adds extra folders and examples too', async () => {
    const { cwd, home, app } = await places();
    const sources = defaultSkillSources({ cwd, home, extra: [app], examples: ['hello-extended'] });
    expect(sources).toEqual({ project: path.join(cwd, '.agent', 'skills'), user: path.join(home, '.agent', 'skills'), bundled: false, extra: [app], examples: ['hello-extended'] });
    const registry = await discoverSkills(sources, { trust: 'all' });
    expect(found(registry)).toEqual([['hello-extended', 'example'], ['mine', 'project'], ['shipped', 'extra'], ['theirs', 'user']]);
  });
});
