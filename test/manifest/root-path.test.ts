/**
 * The disclosure's path rule matches the tools: `read_skill_resource` accepts the absolute path
 * the rule tells the model to build (inside the skill's root only, links included), and whether
 * the model sees the machine's absolute paths at all is the `rootPath` option's choice.
 */
import { symlink } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cmd, createSkillTools, defineAgent, discoverSkills } from '../../src/index.js';
import { disclose, runSkillScript } from '../../src/manifest/index.js';
import { type RootPathMode } from '../../src/manifest/render.js';
import { PATH_RULES } from '../../src/manifest/render.js';
import { simpleSkill, tree } from './tree.js';

async function setup(files: Record<string, string> = {}) {
  const root = await tree({
    'pdf/SKILL.md': simpleSkill('pdf', 'triggers:\n  keywords: [pdf]', '# PDF\n\nRun `scripts/run.sh`.\n'),
    'pdf/scripts/run.sh': 'echo ran\n',
    'pdf/reference.md': '# Reference',
    'secret.txt': 'secret',
    ...files,
  });
  const registry = await discoverSkills({ bundled: false, extra: [root] });
  return { root, skillRoot: path.join(root, 'pdf'), registry };
}

async function readResource(registry: Awaited<ReturnType<typeof discoverSkills>>, file: string) {
  const agent = defineAgent({ name: 'reader', skills: [createSkillTools(registry)] }).new();
  return (await cmd(agent, { action: 'read_skill_resource', params: { skill: 'pdf', path: file } })).results[0]!;
}

describe('read_skill_resource accepts an absolute path inside the skill root', () => {
  it('reads Root Path + relative path, as the rule tells the model to build it', async () => {
    const { registry, skillRoot } = await setup();
    const result = await readResource(registry, path.join(skillRoot, 'reference.md'));
    expect(result).toMatchObject({ ok: true, output: { path: 'reference.md', content: '# Reference' } });
  });

  it('reads an absolute path built from the root with its links resolved', async () => {
    const { root } = await setup();
    const alias = path.join(await tree(), 'alias');
    await symlink(root, alias);
    const viaAlias = await discoverSkills({ bundled: false, extra: [alias] });
    expect(viaAlias.entry('pdf')?.rootPath).toBe(path.join(alias, 'pdf'));
    const result = await readResource(viaAlias, path.join(root, 'pdf', 'scripts', 'run.sh'));
    expect(result).toMatchObject({ ok: true, output: { path: 'scripts/run.sh' } });
  });

  it.each([
    ['a file beside the root', (root: string) => path.join(root, 'secret.txt')],
    ['.. climbing out of the root', (root: string) => path.join(root, 'pdf') + '/../secret.txt'],
    ['the root itself', (root: string) => path.join(root, 'pdf')],
    ['a sibling whose name starts like the root', (root: string) => path.join(root, 'pdf-other', 'x.md')],
  ])('refuses %s', async (_label, build) => {
    const { root, registry } = await setup({ 'pdf-other/x.md': 'other' });
    const result = await readResource(registry, build(root));
    expect(result).toMatchObject({ ok: false, error: { details: { reason: 'resource_refused' } } });
    expect(!result.ok && result.error.message).not.toContain('secret\n');
  });

  it('refuses an absolute path inside the root that a link leads outside', async () => {
    const { root, registry, skillRoot } = await setup();
    await symlink(path.join(root, 'secret.txt'), path.join(skillRoot, 'leak.txt'));
    const result = await readResource(registry, path.join(skillRoot, 'leak.txt'));
    expect(result).toMatchObject({ ok: false, error: { details: { reason: 'resource_refused' } } });
    expect(!result.ok && result.error.message).toContain("'leak.txt' leads outside the skill's root");
  });

  it('runSkillScript takes the absolute path of a script inside the root, and refuses one outside', async () => {
    const { root, skillRoot } = await setup({ 'outside.sh': 'echo outside\n' });
    const ran = await runSkillScript(skillRoot, path.join(skillRoot, 'scripts', 'run.sh'));
    expect(ran).toMatchObject({ exitCode: 0, stdout: 'ran\n' });
    const error = await runSkillScript(skillRoot, path.join(root, 'outside.sh')).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'script_refused', details: { reason: 'absolute' } });
  });
});

describe('the rootPath option decides whether the model sees absolute paths, and the rule says what is offered', () => {
  const rendered = async (rootPath: RootPathMode | undefined, workspace?: string) => {
    const { root, registry, skillRoot } = await setup();
    const result = await disclose(registry, 'a pdf please', { rootPath, workspace: workspace ?? root });
    return { text: result.text, root, skillRoot };
  };

  it("'absolute' (the default) shows the folder and allows absolute paths with read_skill_resource", async () => {
    const { text, skillRoot } = await rendered(undefined);
    expect(text).toContain(`**Root Path:** \`${skillRoot}\``);
    expect(text).toContain(PATH_RULES.absolute);
    expect(PATH_RULES.absolute).toContain('call `read_skill_resource`');
    expect(PATH_RULES.absolute).toContain("An absolute path inside the skill's Root Path works too.");
  });

  it("'relative' shows the folder relative to the workspace, and the rule joins to a workspace path", async () => {
    const { text, root } = await rendered('relative');
    expect(text).toContain('**Root Path:** `pdf`');
    expect(text).not.toContain(root);
    expect(text).toContain(PATH_RULES.relative);
    expect(PATH_RULES.relative).not.toContain('ABSOLUTE');
  });

  it("'hidden' shows no folder, and the rule offers read_skill_resource only", async () => {
    const { text, root } = await rendered('hidden');
    expect(text).not.toContain('**Root Path:**');
    expect(text).not.toContain(root);
    expect(text).toContain(PATH_RULES.hidden);
    expect(PATH_RULES.hidden).not.toMatch(/absolute/i);
    expect(text).toContain('<skill_content name="pdf">');
  });

  it.each<[RootPathMode, string | undefined]>([
    ['absolute', 'abs'],
    ['relative', 'pdf'],
    ['hidden', undefined],
  ])("load_skill reports rootPath under '%s'", async (mode, expected) => {
    const { root, registry, skillRoot } = await setup();
    const agent = defineAgent({ name: 'loader', skills: [createSkillTools(registry, { rootPath: mode, workspace: root })] }).new();
    const result = (await cmd(agent, { action: 'load_skill', params: { name: 'pdf' } })).results[0]!;
    expect(result.ok).toBe(true);
    expect((result as { output: { rootPath: string | undefined } }).output.rootPath).toBe(expected === 'abs' ? skillRoot : expected);
  });
});
