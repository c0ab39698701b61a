/**
 * Two folders of one source claiming one name: the one whose folder bears the name wins, as the
 * specification requires a skill's folder to be named as the skill, whichever is found first; a
 * `skill_shadowed` warning names both and says which was kept and why. Between sources, the more
 * specific source still wins. And `discoverSkills` refuses options it does not take.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cmd, createSkillTools, defineAgent, discoverSkills, type Diagnostic } from '../../src/index.js';
import { simpleSkill, tree } from './tree.js';

const report = (body: string) => simpleSkill('report', '', `# ${body}\n`);
const shadowedWarnings = (diagnostics: readonly Diagnostic[]) => diagnostics.filter((item) => item.code === 'skill_shadowed');

describe('two folders of one source with one name', () => {
  it('the folder named as the skill wins over one found before it', async () => {
    const root = await tree({ 'archive-report/SKILL.md': report('Archived report'), 'report/SKILL.md': report('Current report') });
    const registry = await discoverSkills({ extra: [root] });
    expect(registry.entry('report')!.rootPath).toBe(path.join(root, 'report'));
    expect((await registry.content('report')).instructions).toBe('# Current report\n');
    expect(registry.shadowed).toEqual([{ name: 'report', kept: { source: 'extra', path: path.join(root, 'report') }, shadowed: { source: 'extra', path: path.join(root, 'archive-report') } }]);
    const [warning, ...others] = shadowedWarnings(registry.diagnostics);
    expect(others).toEqual([]);
    expect(warning).toMatchObject({
      level: 'warning',
      skill: 'report',
      subject: path.join(root, 'archive-report'),
      details: { kept: path.join(root, 'report'), shadowed: path.join(root, 'archive-report'), reason: 'folder_name' },
      message: `skill 'report' in extra (${path.join(root, 'archive-report')}) is shadowed by extra (${path.join(root, 'report')}); both folders hold a skill named 'report', and ${path.join(root, 'report')} is kept because its folder bears the skill's name, as the specification requires, and ${path.join(root, 'archive-report')} does not (rename the folder or the skill)`,
    });
    // The mismatch itself is still reported for the folder that lost.
    expect(registry.diagnostics.some((item) => item.code === 'manifest_name_mismatch' && item.subject === path.join(root, 'archive-report', 'SKILL.md'))).toBe(true);

    // The model loads the body of the folder named as the skill.
    const Agent = defineAgent({ name: 'assistant', skills: [createSkillTools(registry)], registry });
    const loaded = await cmd(Agent.new({ id: 'a' }), { action: 'load_skill', params: { name: 'report' } });
    expect(loaded.results[0]).toMatchObject({ ok: true, output: { rootPath: path.join(root, 'report'), instructions: expect.stringContaining('# Current report') } });
  });

  it('the folder named as the skill keeps the name when it is found first, and the warning says why', async () => {
    const root = await tree({ 'report/SKILL.md': report('Current report'), 'report-old/SKILL.md': report('Old report') });
    const registry = await discoverSkills({ extra: [root] });
    expect(registry.entry('report')!.rootPath).toBe(path.join(root, 'report'));
    expect(shadowedWarnings(registry.diagnostics)).toEqual([
      expect.objectContaining({ subject: path.join(root, 'report-old'), details: expect.objectContaining({ reason: 'folder_name' }), message: expect.stringContaining(`${path.join(root, 'report')} is kept because its folder bears the skill's name`) }),
    ]);
  });

  it('a folder named as the skill deeper in the source wins over a misnamed one nearer its top', async () => {
    const root = await tree({ 'drafts/SKILL.md': report('Draft'), 'team/report/SKILL.md': report('Team report') });
    const registry = await discoverSkills({ extra: [root] });
    expect(registry.entry('report')!.rootPath).toBe(path.join(root, 'team', 'report'));
    expect(shadowedWarnings(registry.diagnostics).map((item) => item.subject)).toEqual([path.join(root, 'drafts')]);
  });

  it('between two folders alike, the first found keeps the name', async () => {
    const root = await tree({ 'a-copy/SKILL.md': report('First copy'), 'b-copy/SKILL.md': report('Second copy') });
    const registry = await discoverSkills({ extra: [root] });
    expect(registry.entry('report')!.rootPath).toBe(path.join(root, 'a-copy'));
    expect(shadowedWarnings(registry.diagnostics)).toEqual([
      expect.objectContaining({ subject: path.join(root, 'b-copy'), details: expect.objectContaining({ reason: 'first_found' }), message: `skill 'report' in extra (${path.join(root, 'b-copy')}) is shadowed by extra (${path.join(root, 'a-copy')})` }),
    ]);
  });
});

describe('two sources with one name', () => {
  it('the more specific source wins, whatever its folder is named', async () => {
    const project = await tree({ 'archive-report/SKILL.md': report('Project report') });
    const user = await tree({ 'report/SKILL.md': report('User report') });
    const registry = await discoverSkills({ project, user }, { trust: 'all', trustFile: false });
    expect(registry.entry('report')).toMatchObject({ source: 'project', rootPath: path.join(project, 'archive-report') });
    expect(shadowedWarnings(registry.diagnostics)).toEqual([
      expect.objectContaining({ subject: path.join(user, 'report'), details: expect.objectContaining({ reason: 'source' }), message: `skill 'report' in user (${path.join(user, 'report')}) is shadowed by project (${path.join(project, 'archive-report')})` }),
    ]);
  });

  it('two extra folders are two sources: the one listed first wins', async () => {
    const first = await tree({ 'archive-report/SKILL.md': report('First') });
    const second = await tree({ 'report/SKILL.md': report('Second') });
    const registry = await discoverSkills({ extra: [first, second] });
    expect(registry.entry('report')!.rootPath).toBe(path.join(first, 'archive-report'));
  });
});

describe('discoverSkills options', () => {
  it('refuses an option it does not take, naming it and the one probably meant', async () => {
    const root = await tree({ 'report/SKILL.md': report('Report') });
    await expect(discoverSkills({ extra: [root] }, { wach: true } as never)).rejects.toMatchObject({
      name: 'ManifestError',
      code: 'invalid_options',
      subject: 'wach',
      message: expect.stringMatching(/^unknown option 'wach'; did you mean 'watch'\? \(discoverSkills options are: maxDepth, .*watch/),
      details: { option: 'wach', suggestion: 'watch' },
    });
    await expect(discoverSkills({ extra: [root] }, { trustfile: false } as never)).rejects.toMatchObject({ details: { option: 'trustfile', suggestion: 'trustFile' } });
    await expect(discoverSkills({ extra: [root] }, null as never)).rejects.toMatchObject({ code: 'invalid_options', subject: 'options' });
    await expect(discoverSkills({ extra: [root] }, { maxDepth: 2, onDiagnostic: () => {} })).resolves.toBeDefined();
  });
});
