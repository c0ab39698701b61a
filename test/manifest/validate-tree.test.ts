/**
 * Validating a folder of skills: every skill below it is checked, and every folder the search
 * passes over is named with discovery's words; a folder that may hide an unchecked skill makes
 * the tree invalid. (A folder that cannot be read is covered by test/cli/validate.test.ts, which
 * runs the command as an unprivileged user.)
 */
import { symlink } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateSkillDir } from '../../src/manifest/index.js';
import { scanSkillSources } from '../../src/manifest/discover.js';
import { validateSkillTree } from '../../src/manifest/validate-tree.js';
import { simpleSkill, skillMd, tree } from './tree.js';

const reasons = (skipped: readonly { dir: string; skip: { reason: string } }[], root: string) =>
  skipped.map((item) => [path.relative(root, item.dir), item.skip.reason]);

describe('validateSkillTree', () => {
  it('names every folder it passes over, with the reason', async () => {
    const root = await tree({
      'ok/SKILL.md': simpleSkill('ok'),
      '.hidden/SKILL.md': skillMd('name: bad_name\ndescription: d'),
      'node_modules/pkg/SKILL.md': simpleSkill('pkg'),
      'a/b/c/d/e/deep/SKILL.md': skillMd('name: Deep_Bad\ndescription: d'),
      'notes/readme.txt': 'no skill here',
    });
    await symlink(path.join(root, 'ok'), path.join(root, 'ok-again'));
    const checked = await validateSkillTree(root);
    expect(checked.results.map((result) => [path.relative(root, result.dir), result.valid])).toEqual([['ok', true]]);
    expect(reasons(checked.skipped, root)).toEqual([
      ['.hidden', 'hidden'],
      [path.join('a', 'b', 'c', 'd', 'e'), 'too_deep'],
      ['node_modules', 'ignored'],
      ['notes', 'no_skill_md'],
      ['ok-again', 'already_seen'],
    ]);
    expect(checked.skipped.find((item) => item.skip.reason === 'too_deep')).toMatchObject({
      level: 'warning',
      message: `${path.join(root, 'a', 'b', 'c', 'd', 'e')} skipped: deeper than 4 levels below ${root}`,
    });
    // The folder past the depth limit may hold a skill that was never checked: the tree is not valid.
    expect(checked.valid).toBe(false);
  });

  it('uses the words and levels of discovery for the same folders', async () => {
    const root = await tree({
      'ok/SKILL.md': simpleSkill('ok'),
      '.cache/x/SKILL.md': simpleSkill('x'),
      'node_modules/pkg/SKILL.md': simpleSkill('pkg'),
      'group/a/b/c/deep/SKILL.md': simpleSkill('deep'),
      'empty/readme.txt': '',
    });
    await symlink(path.join(root, 'ok'), path.join(root, 'group', 'link'));
    const checked = await validateSkillTree(root);
    const scan = await scanSkillSources({ extra: [root] }, { maxDepth: 4 });
    const discovered = scan.diagnostics.filter((item) => item.code === 'skill_skipped').map((item) => [item.subject, item.level, item.message]);
    expect(checked.skipped.map((item) => [item.dir, item.level, item.message]).sort()).toEqual(discovered.sort());
    expect(checked.skipped.length).toBe(5);
  });

  it('is valid when it passes over only what is skipped by design', async () => {
    const root = await tree({ 'ok/SKILL.md': simpleSkill('ok'), '.git/x/SKILL.md': 'not a skill', 'docs/readme.md': '# Docs' });
    const checked = await validateSkillTree(root);
    expect(checked.valid).toBe(true);
    expect(checked.skipped.map((item) => [item.skip.reason, item.level])).toEqual([
      ['ignored', 'info'],
      ['no_skill_md', 'info'],
    ]);
  });

  it('does not call a folder empty when part of it was passed over for its depth', async () => {
    const root = await tree({ 'ok/SKILL.md': simpleSkill('ok'), 'a/b/c/d/e/SKILL.md': simpleSkill('e') });
    const checked = await validateSkillTree(root);
    expect(reasons(checked.skipped, root)).toEqual([[path.join('a', 'b', 'c', 'd', 'e'), 'too_deep']]);
  });

  it('checks a SKILL.md that is not a regular file instead of passing over its folder', async () => {
    const root = await tree({ 'ok/SKILL.md': simpleSkill('ok'), 'odd/SKILL.md/inside.txt': 'a folder named SKILL.md' });
    const checked = await validateSkillTree(root);
    expect(checked.results.map((result) => [path.relative(root, result.dir), result.valid])).toEqual([
      ['odd', false],
      ['ok', true],
    ]);
    expect(checked.results[0]!.errors.join()).toContain('is a directory, not a regular file');
    expect(checked.skipped).toEqual([]);
  });
});

describe('a folder with both SKILL.md and skill.md', () => {
  const both = () =>
    tree({ 'both/SKILL.md': skillMd('name: both\ndescription: upper'), 'both/skill.md': skillMd('name: both\ndescription: lower file, never read') });

  it('validates SKILL.md and warns that skill.md is ignored, naming both files', async () => {
    const root = await both();
    const result = await validateSkillDir(path.join(root, 'both'));
    expect(result).toMatchObject({ valid: true, file: path.join(root, 'both', 'SKILL.md') });
    expect(result.warnings).toContainEqual(
      expect.objectContaining({
        code: 'manifest_file_ignored',
        message: `${path.join(root, 'both')} holds both SKILL.md and skill.md: SKILL.md is used and skill.md is ignored; remove or rename one`,
        details: { used: path.join(root, 'both', 'SKILL.md'), ignored: path.join(root, 'both', 'skill.md') },
      }),
    );
  });

  it('is reported by discovery too', async () => {
    const root = await both();
    const scan = await scanSkillSources({ extra: [root] });
    expect(scan.entries.map((entry) => [entry.name, entry.description])).toEqual([['both', 'upper']]);
    expect(scan.diagnostics).toContainEqual(expect.objectContaining({ level: 'warning', code: 'manifest_file_ignored', skill: 'both', subject: path.join(root, 'both', 'skill.md') }));
  });

  it('says nothing when there is one manifest, or both names are one file', async () => {
    const root = await tree({ 'upper/SKILL.md': simpleSkill('upper'), 'lower/skill.md': simpleSkill('lower'), 'linked/SKILL.md': simpleSkill('linked') });
    await symlink('SKILL.md', path.join(root, 'linked', 'skill.md'));
    const scan = await scanSkillSources({ extra: [root] });
    expect(scan.entries.map((entry) => entry.name).sort()).toEqual(['linked', 'lower', 'upper']);
    expect(scan.diagnostics.filter((item) => item.code === 'manifest_file_ignored')).toEqual([]);
    for (const name of ['upper', 'lower', 'linked']) expect((await validateSkillDir(path.join(root, name))).warnings).toEqual([]);
  });
});
