/**
 * Lenient loading follows the Agent Skills client implementation guide: warn and still load
 * wherever the skill can be used, and give every folder that is skipped a diagnostic naming it
 * and saying why. Skills run through real discovery over real folders.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createDocumentSkillRegistry, defineDocumentSkill, discoverSkills } from '../../src/index.js';
import { parseSkillManifest } from '../../src/manifest/index.js';
import { loadSkillFolder } from '../../src/manifest/folder.js';
import { skillMd, tree } from './tree.js';

const BIN = fileURLToPath(new URL('../../bin/skillstate.js', import.meta.url));

describe('names the specification refuses load under an identifier derived from them', () => {
  const long = `${'Very Long Skill Name '.repeat(4)}End`; // 87 characters, spaces and capitals
  it.each([
    ['Active Directory Attacks', 'active-directory-attacks'],
    ['my.skill', 'my-skill'],
    ['-draft', 'draft'],
    ['PDF Tools v2.0', 'pdf-tools-v2-0'],
    // Three "very-long-skill-name-" are 63 characters; the 64th is the next "v".
    [long, 'very-long-skill-name-very-long-skill-name-very-long-skill-name-v'],
    ['a'.repeat(70), 'a'.repeat(64)],
  ])('%s loads as %s, with a warning giving both, and is found by either', async (written, id) => {
    const root = await tree({ 'some-folder/SKILL.md': skillMd(`name: ${written}\ndescription: A published skill whose name is not an identifier`) });
    const registry = await discoverSkills({ extra: [root] });
    expect(registry.names()).toEqual([id]);
    const entry = registry.entry(id)!;
    expect(entry.manifest).toMatchObject({ name: written, id });
    const warning = registry.diagnostics.find((item) => item.code === 'manifest_name_derived');
    expect(warning).toMatchObject({ level: 'warning', skill: id });
    expect(warning!.message).toContain(`Skill name '${written}'`);
    expect(warning!.message).toContain(`registered and loaded as '${id}'`);
    expect(registry.entry(written)?.name).toBe(id);
    expect((await registry.activate(written)).entry.name).toBe(id);
  });

  it('a name from which no identifier can be made is skipped, and the folder is named with the reason', async () => {
    const root = await tree({ 'dots/SKILL.md': skillMd('name: "..."\ndescription: Nothing usable in the name') });
    const registry = await discoverSkills({ extra: [root] });
    expect(registry.names()).toEqual([]);
    const skipped = registry.diagnostics.find((item) => item.code === 'skill_skipped');
    expect(skipped).toMatchObject({ level: 'error', subject: path.join(root, 'dots'), details: { reason: 'invalid_manifest' } });
    expect(skipped!.message).toContain("Skill name '...' cannot be used by skillstate");
  });

  it('a name is reported as written and looked up after NFKC: ﬁle is found as file', async () => {
    const root = await tree({ 'file/SKILL.md': skillMd('name: ﬁle\ndescription: A ligature in the name') });
    const registry = await discoverSkills({ extra: [root] });
    expect(registry.names()).toEqual(['ﬁle']);
    expect(registry.diagnostics.filter((item) => item.level !== 'info')).toEqual([]);
    expect(registry.has('file')).toBe(true);
    expect((await registry.activate('file')).entry.name).toBe('ﬁle');
    expect(registry.has('fi')).toBe(false);
  });
});

describe('looking a skill up by a name written another way', () => {
  const memory = (name: string) => ({ name, description: `The ${name} skill, for the lookup.`, instructions: 'Body.' });

  it('finds the first skill registered under that name after NFKC, and follows skills registered, replaced and removed since', async () => {
    const registry = createDocumentSkillRegistry();
    registry.register(defineDocumentSkill(memory('ﬁle')));
    // A lookup makes the keys; skills registered after it are found too.
    expect(registry.entry('file')?.name).toBe('ﬁle');
    registry.register(defineDocumentSkill(memory('ｓｔａｍｐ')));
    expect(registry.entry('stamp')?.name).toBe('ｓｔａｍｐ');
    expect(registry.has('nothing')).toBe(false);
    // Removed: its other spellings find nothing any more.
    expect(registry.unregister('ﬁle')).toBe(true);
    expect(registry.has('file')).toBe(false);
    expect(registry.entry('stamp')?.name).toBe('ｓｔａｍｐ');
    // Registered again under a name written the first way: found by every spelling again.
    registry.register(defineDocumentSkill(memory('file')));
    expect(registry.entry('ﬁle')?.name).toBe('file');
  });
});

describe('syntax the reference validator refuses is loaded, with a warning saying so', () => {
  it.each([
    ['flow style', 'allowed-tools: [Read, Bash]', 4],
    ['an anchor', 'license: &l MIT\ncompatibility: *l', 4],
    ['a tag', 'license: !!str MIT', 4],
    ['a tab', 'license: MIT\tor Apache', 4],
  ])('%s', (construct, lines, line) => {
    const parsed = parseSkillManifest(skillMd(`name: my-skill\ndescription: A test skill\n${lines}`), { dirName: 'my-skill' });
    expect(parsed.diagnostics.map((item) => [item.code, item.level])).toEqual([['manifest_reference_syntax', 'warning']]);
    expect(parsed.diagnostics[0]!.message).toBe(`front matter line ${line} uses ${construct}, which the Agent Skills reference validator refuses (Invalid YAML in frontmatter); skillstate reads it as YAML`);
  });

  it('a byte-order mark is read past, with a note', () => {
    const parsed = parseSkillManifest(`\ufeff${skillMd('name: my-skill\ndescription: A test skill')}`);
    expect(parsed.manifest.name).toBe('my-skill');
    expect(parsed.diagnostics.map((item) => item.code)).toEqual(['manifest_bom']);
  });
});

describe('a SKILL.md that is a broken symbolic link', () => {
  async function brokenSkill(): Promise<{ root: string; folder: string; target: string }> {
    const root = await tree({ 'good/SKILL.md': skillMd('name: good\ndescription: A working skill') });
    const folder = path.join(root, 'broken');
    await mkdir(folder);
    const target = path.join(root, 'moved-away.md');
    await symlink(target, path.join(folder, 'SKILL.md'));
    return { root, folder, target };
  }

  it('is skipped with an error naming the folder, the link and its target', async () => {
    const { root, folder, target } = await brokenSkill();
    const registry = await discoverSkills({ extra: [root] });
    expect(registry.names()).toEqual(['good']);
    const skipped = registry.diagnostics.filter((item) => item.code === 'skill_skipped');
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toMatchObject({ level: 'error', subject: folder, details: { reason: 'invalid_manifest' } });
    expect(skipped[0]!.message).toBe(`${folder} skipped: ${path.join(folder, 'SKILL.md')}: is a symbolic link to ${target}, which does not exist; the skill is not loaded`);
  });

  it('loading the folder itself fails with invalid_manifest, the reason and the target in its details', async () => {
    const { folder, target } = await brokenSkill();
    await expect(loadSkillFolder(folder)).rejects.toMatchObject({ code: 'invalid_manifest', subject: path.join(folder, 'SKILL.md'), details: { reason: 'broken_link', target } });
  });

  it('skillstate list --path names it and exits 1, also when the link is the folder named', { timeout: 60_000 }, async () => {
    const { root, folder } = await brokenSkill();
    for (const named of [root, folder]) {
      const result = spawnSync(process.execPath, [BIN, 'list', '--no-user', '--no-project', '--path', named], { cwd: root, encoding: 'utf8', timeout: 30_000, env: { ...process.env, HOME: root } });
      expect(result.status).toBe(1);
      expect(result.stdout).toContain(`error: ${folder} skipped: ${path.join(folder, 'SKILL.md')}: is a symbolic link to`);
    }
  });
});
