import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { discoverSkills, type Diagnostic } from '../../src/index.js';
import { validateSkillDir } from '../../src/manifest/index.js';
import { EXAMPLE_SKILLS_DIR, scanSkillSources } from '../../src/manifest/discover.js';
import { simpleSkill, skillMd, tree, writeTree } from './tree.js';
import { runUnprivileged, unprivilegedCheckout } from '../unprivileged.js';

/**
 * Scans `root` in a real subprocess without privileges (as `nobody` when the tests run as root,
 * since root reads any folder) and returns the scan's diagnostics.
 */
function scanAsUnprivileged(root: string): Diagnostic[] {
  const checkout = unprivilegedCheckout().root;
  const discover = pathToFileURL(path.join(checkout, 'src', 'manifest', 'discover.ts')).href;
  const program = `const { scanSkillSources } = await import(${JSON.stringify(discover)}); const scan = await scanSkillSources({ extra: [${JSON.stringify(root)}] }, { trust: 'all' }); console.log(JSON.stringify(scan.diagnostics));`;
  const child = runUnprivileged('the scan', ['--import', 'tsx', '--input-type=module', '-e', program], { cwd: checkout, env: { ...process.env, HOME: root } });
  if (child.status !== 0) throw new Error(`the scan failed: ${child.stderr}`);
  return JSON.parse(child.stdout) as Diagnostic[];
}

const skipped = (diagnostics: readonly { code: string; subject?: string; details?: Record<string, unknown> }[], reason: string) =>
  diagnostics.filter((d) => d.code === 'skill_skipped' && d.details?.reason === reason).map((d) => d.subject);

describe('discoverSkills', () => {
  it('finds skill folders in every source, front matter only', async () => {
    const root = await tree({ 'alpha/SKILL.md': simpleSkill('alpha'), 'beta/skill.md': simpleSkill('beta'), 'group/gamma/SKILL.md': simpleSkill('gamma') });
    const registry = await discoverSkills({ extra: [root] });
    expect(registry.names()).toEqual(['alpha', 'beta', 'gamma']);
    expect(registry.entry('gamma')).toMatchObject({ source: 'extra', rootPath: path.join(root, 'group', 'gamma'), description: 'The gamma skill. It does gamma things.', briefDescription: 'The gamma skill. It does gamma things.' });
  });

  it('refuses sources that would scan nothing without a word, naming the key', async () => {
    const root = await tree({ 'alpha/SKILL.md': simpleSkill('alpha') });
    await expect(discoverSkills({ paths: [root] } as never)).rejects.toMatchObject({ code: 'invalid_options', subject: 'paths', message: expect.stringContaining('project, user, bundled, extra, examples') });
    // The CLI's --path is `extra` here: the name a newcomer brings from the command line is pointed there.
    await expect(discoverSkills({ path: [root] } as never)).rejects.toMatchObject({
      message: "unknown option 'path'; did you mean 'extra'? (discoverSkills sources options are: project, user, bundled, extra, examples)",
      details: { option: 'path', suggestion: 'extra' },
    });
    await expect(discoverSkills({ paths: [root] } as never)).rejects.toMatchObject({ details: { option: 'paths', suggestion: 'extra' } });
    await expect(discoverSkills({ extra: root } as never)).rejects.toMatchObject({ code: 'invalid_options', subject: 'extra', message: expect.stringContaining(`extra: [${JSON.stringify(root)}]`) });
    await expect(discoverSkills({ bundled: 5 } as never)).rejects.toMatchObject({ code: 'invalid_options', subject: 'bundled' });
    await expect(discoverSkills(null as never)).rejects.toMatchObject({ code: 'invalid_options', subject: 'sources' });
    expect((await discoverSkills({ extra: [root] })).names()).toEqual(['alpha']);
  });

  it('does not read bodies at discovery', async () => {
    const body = `# Big\n\n${'lorem ipsum '.repeat(20_000)}\n`; // ~240 KB
    const root = await tree({ 'big/SKILL.md': simpleSkill('big', '', body) });
    const scan = await scanSkillSources({ extra: [root] });
    expect(scan.stats.skills).toBe(1);
    expect(scan.stats.bytesRead).toBeLessThan(8192);
    const registry = await discoverSkills({ extra: [root] });
    expect((await registry.content('big')).instructions).toBe(body);
  });

  it('gives precedence to project over user over bundled over extra, naming both paths', async () => {
    const project = await tree({ 'dup/SKILL.md': simpleSkill('dup'), 'only-project/SKILL.md': simpleSkill('only-project') });
    const user = await tree({ 'dup/SKILL.md': simpleSkill('dup') });
    const bundled = await tree({ 'dup/SKILL.md': simpleSkill('dup'), 'b/SKILL.md': simpleSkill('b') });
    const extra = await tree({ 'b/SKILL.md': simpleSkill('b') });
    const registry = await discoverSkills({ project, user, bundled, extra: [extra] });
    expect(registry.entry('dup')).toMatchObject({ source: 'project', rootPath: path.join(project, 'dup') });
    expect(registry.entry('b')).toMatchObject({ source: 'bundled' });
    expect(registry.shadowed).toEqual([
      { name: 'dup', kept: { source: 'project', path: path.join(project, 'dup') }, shadowed: { source: 'user', path: path.join(user, 'dup') } },
      { name: 'dup', kept: { source: 'project', path: path.join(project, 'dup') }, shadowed: { source: 'bundled', path: path.join(bundled, 'dup') } },
      { name: 'b', kept: { source: 'bundled', path: path.join(bundled, 'b') }, shadowed: { source: 'extra', path: path.join(extra, 'b') } },
    ]);
    const warning = registry.diagnostics.find((d) => d.code === 'skill_shadowed')!;
    expect(warning.message).toBe(`skill 'dup' in user (${path.join(user, 'dup')}) is shadowed by project (${path.join(project, 'dup')})`);
  });

  it('skips hidden folders, node_modules and .git, and says so; plain files pass without a word', async () => {
    const root = await tree({
      'ok/SKILL.md': simpleSkill('ok'),
      '.hidden/SKILL.md': simpleSkill('hidden'),
      'node_modules/pkg/SKILL.md': simpleSkill('pkg'),
      '.git/x/SKILL.md': simpleSkill('x'),
      'arithmetic.ts': 'export {}',
      'empty/readme.txt': 'nothing',
    });
    const registry = await discoverSkills({ extra: [root] });
    expect(registry.names()).toEqual(['ok']);
    expect(skipped(registry.diagnostics, 'hidden')).toEqual([path.join(root, '.hidden')]);
    expect(skipped(registry.diagnostics, 'ignored').sort()).toEqual([path.join(root, '.git'), path.join(root, 'node_modules')]);
    expect(skipped(registry.diagnostics, 'no_skill_md')).toEqual([path.join(root, 'empty')]);
    expect(registry.diagnostics.some((d) => d.subject?.endsWith('arithmetic.ts'))).toBe(false);
  });

  it('reports invalid manifests and keeps going', async () => {
    const root = await tree({ 'bad/SKILL.md': '# no front matter\n', 'good/SKILL.md': simpleSkill('good') });
    const registry = await discoverSkills({ extra: [root] });
    expect(registry.names()).toEqual(['good']);
    const item = registry.diagnostics.find((d) => d.details?.reason === 'invalid_manifest')!;
    expect(item).toMatchObject({ level: 'error', subject: path.join(root, 'bad') });
    expect(item.message).toContain('SKILL.md must start with YAML frontmatter (---)');
  });

  it('bounds depth and count', async () => {
    const root = await tree({ 'a/b/c/deep/SKILL.md': simpleSkill('deep'), 's1/SKILL.md': simpleSkill('s1'), 's2/SKILL.md': simpleSkill('s2'), 's3/SKILL.md': simpleSkill('s3') });
    const registry = await discoverSkills({ extra: [root] }, { maxDepth: 2, maxSkills: 2 });
    expect(registry.names()).toEqual(['s1', 's2']);
    expect(skipped(registry.diagnostics, 'too_deep')).toEqual([path.join(root, 'a', 'b', 'c')]);
    expect(skipped(registry.diagnostics, 'over_skill_limit')).toEqual([path.join(root, 's3')]);
  });

  it('does not call a folder empty when it holds a broken skill, or a folder past the depth limit', async () => {
    const root = await tree({ 'group/broken/SKILL.md': '# no front matter\n', 'deep/a/b/c/SKILL.md': simpleSkill('c'), 'empty/readme.txt': '' });
    const registry = await discoverSkills({ extra: [root] }, { maxDepth: 3 });
    expect(skipped(registry.diagnostics, 'invalid_manifest')).toEqual([path.join(root, 'group', 'broken')]);
    expect(skipped(registry.diagnostics, 'too_deep')).toEqual([path.join(root, 'deep', 'a', 'b', 'c')]);
    expect(skipped(registry.diagnostics, 'no_skill_md')).toEqual([path.join(root, 'empty')]);
  });

  it('names a folder it cannot list as an error, instead of passing it over in silence', async () => {
    const root = await tree({ 'ok/SKILL.md': simpleSkill('ok'), 'sealed/inner/SKILL.md': simpleSkill('inner') });
    await chmod(root, 0o755);
    // Searchable but not listable: its SKILL.md can be looked for, its folders cannot be listed.
    await chmod(path.join(root, 'sealed'), 0o311);
    try {
      const diagnostics = scanAsUnprivileged(root);
      expect(diagnostics.filter((d) => d.code === 'skill_skipped')).toEqual([
        {
          level: 'error',
          code: 'skill_skipped',
          message: `${path.join(root, 'sealed')} skipped: cannot be read: EACCES: permission denied, scandir '${path.join(root, 'sealed')}'`,
          subject: path.join(root, 'sealed'),
          details: { reason: 'unreadable', error: `EACCES: permission denied, scandir '${path.join(root, 'sealed')}'` },
        },
      ]);
    } finally {
      await chmod(path.join(root, 'sealed'), 0o755);
    }
  });

  it('follows links safely: a cycle ends and a skill reached twice loads once', async () => {
    const root = await tree({ 'real/SKILL.md': simpleSkill('real'), 'group/placeholder.txt': '' });
    await symlink(path.join(root, 'real'), path.join(root, 'group', 'again'));
    await symlink(root, path.join(root, 'group', 'loop'));
    const registry = await discoverSkills({ extra: [root] }, { maxDepth: 6 });
    expect(registry.names()).toEqual(['real']);
    const seen = registry.diagnostics.filter((d) => d.details?.reason === 'already_seen').map((d) => d.subject);
    expect(seen.sort()).toEqual([path.join(root, 'group', 'again'), path.join(root, 'group', 'loop')]);
  });

  it('loads a skill reached from two sources once', async () => {
    const shared = await tree({ 'one/SKILL.md': simpleSkill('one') });
    const user = await tree();
    await symlink(path.join(shared, 'one'), path.join(user, 'one'));
    const registry = await discoverSkills({ project: shared, user });
    expect(registry.entry('one')!.source).toBe('project');
    expect(registry.shadowed).toEqual([]);
    expect(skipped(registry.diagnostics, 'already_seen')).toEqual([path.join(user, 'one')]);
  });

  it('notes missing sources: a usual place as information, a path someone named as a warning', async () => {
    const registry = await discoverSkills({ project: '/nonexistent/skillstate/.agent/skills', extra: ['/nonexistent/skillstate/mine'] });
    expect(registry.diagnostics).toEqual([
      expect.objectContaining({ level: 'info', code: 'source_missing', subject: '/nonexistent/skillstate/.agent/skills' }),
      expect.objectContaining({ level: 'warning', code: 'source_missing', message: 'extra skills source /nonexistent/skillstate/mine does not exist' }),
    ]);
  });

  it('refresh() picks up added and removed skills', async () => {
    const root = await tree({ 'one/SKILL.md': simpleSkill('one') });
    const registry = await discoverSkills({ extra: [root] });
    await registry.load('one');
    expect(registry.get('one')?.name).toBe('one');
    await writeTree(root, { 'two/SKILL.md': simpleSkill('two') });
    await writeFile(path.join(root, 'one', 'SKILL.md'), simpleSkill('one', 'version: 2.0.0'));
    await registry.refresh();
    expect(registry.names()).toEqual(['one', 'two']);
    expect(registry.get('one')).toBeUndefined(); // changed: reloaded on next use
    expect((await registry.load('one'))[0]!.vsn).toBe('2.0.0');
  });

  it('discovers the bundled skills and skips the code-skill files beside them silently', async () => {
    const registry = await discoverSkills({ bundled: EXAMPLE_SKILLS_DIR });
    expect(registry.names()).toEqual(expect.arrayContaining(['csv-tools', 'hello-extended']));
    expect(registry.diagnostics.filter((d) => d.level !== 'info')).toEqual([]);
  });

  it('keeps two registries apart', async () => {
    const a = await discoverSkills({ extra: [await tree({ 'x/SKILL.md': simpleSkill('x') })] });
    const b = await discoverSkills({ extra: [await tree({ 'y/SKILL.md': simpleSkill('y') })] });
    await a.load('x');
    expect(b.get('x')).toBeUndefined();
    expect(b.has('x')).toBe(false);
  });
});

describe('validateSkillDir', () => {
  it('passes a valid folder and the bundled skills', async () => {
    const root = await tree({ 'my-skill/SKILL.md': skillMd('name: my-skill\ndescription: Does things.\nlicense: MIT\nmetadata:\n  author: me') });
    expect(await validateSkillDir(path.join(root, 'my-skill'))).toMatchObject({ valid: true, errors: [] });
    expect((await validateSkillDir(path.join(EXAMPLE_SKILLS_DIR, 'hello-extended'))).valid).toBe(true);
    expect((await validateSkillDir(path.join(EXAMPLE_SKILLS_DIR, 'csv-tools'))).valid).toBe(true);
  });

  it('reports missing paths, files and folders in the reference wording', async () => {
    const root = await tree({ 'empty/x.txt': '', 'file.txt': '' });
    expect((await validateSkillDir(path.join(root, 'nope'))).errors).toEqual([`Path does not exist: ${path.join(root, 'nope')}`]);
    expect((await validateSkillDir(path.join(root, 'file.txt'))).errors).toEqual([`Not a directory: ${path.join(root, 'file.txt')}`]);
    expect((await validateSkillDir(path.join(root, 'empty'))).errors).toEqual(['Missing required file: SKILL.md']);
  });

  it('is strict where loading is lenient', async () => {
    const root = await tree({ 'folder/SKILL.md': skillMd('name: other\ndescription: Use it when: asked') });
    await mkdir(path.join(root, 'x'));
    const result = await validateSkillDir(path.join(root, 'folder'));
    expect(result.valid).toBe(false);
    expect(result.errors[0]).toMatch(/^Invalid YAML in frontmatter/);
  });
});
