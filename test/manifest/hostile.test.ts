/**
 * Document skills against hostile folders and scripts: a skill folder that holds what a user can
 * put there — folders nobody may list, files nobody may stat, link cycles, thousands of folders —
 * still loads, and every file it does not offer is named in a diagnostic; a script that exits
 * without reading its input does not bring the host process down.
 */
import { spawnSync } from 'node:child_process';
import { chmod, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../src/core/diagnostics.js';
import { discoverSkills } from '../../src/index.js';
import { parseAllowedTools } from '../../src/manifest/allowed-tools.js';
import { inspectSkillManifest } from '../../src/manifest/parse.js';
import { listResources, MAX_LISTED_RESOURCES, MAX_SKIPPED_NAMED } from '../../src/manifest/resources.js';
import { runUnprivileged, unprivilegedCheckout } from '../unprivileged.js';
import { simpleSkill, tree } from './tree.js';

const checkout = fileURLToPath(new URL('../..', import.meta.url));

/** Lists a skill's resources in a subprocess without privileges (as `nobody` when the tests run as root). */
function listAsUnprivileged(root: string): { resources: string[]; diagnostics: Diagnostic[] } {
  const unprivileged = unprivilegedCheckout().root;
  const resources = pathToFileURL(path.join(unprivileged, 'src', 'manifest', 'resources.ts')).href;
  const program = `const { listResources } = await import(${JSON.stringify(resources)}); const listed = await listResources(${JSON.stringify(root)}); console.log(JSON.stringify({ resources: [...listed.resources.keys()], diagnostics: listed.diagnostics }));`;
  const child = runUnprivileged('the listing', ['--import', 'tsx', '--input-type=module', '-e', program], { cwd: unprivileged });
  if (child.status !== 0) throw new Error(`the listing failed: ${child.stderr}`);
  return JSON.parse(child.stdout) as { resources: string[]; diagnostics: Diagnostic[] };
}

describe('front matter the specification forbids and the reference validator lets through', () => {
  // The specification: `compatibility` "Must be 1-500 characters if provided".
  it.each(['compatibility: ""', 'compatibility:'])('%s: a warning when loading, an error in strict validation, nothing in the reference validator\'s mode', (line) => {
    const text = `---\nname: my-skill\ndescription: A skill.\n${line}\n---\nBody\n`;
    const message = "Field 'compatibility' must be 1-500 characters if provided; it is empty";
    const lenient = inspectSkillManifest(text, { file: 'my-skill/SKILL.md', dirName: 'my-skill' });
    expect(lenient.errors).toEqual([]);
    expect(lenient.diagnostics.map((d) => [d.level, d.code, d.message])).toEqual([['warning', 'manifest_compatibility_empty', `my-skill/SKILL.md: ${message}`]]);
    expect(inspectSkillManifest(text, { dirName: 'my-skill', strict: true }).errors).toEqual([message]);
    expect(inspectSkillManifest(text, { dirName: 'my-skill', strict: true, spec: 'agentskills' }).errors).toEqual([]);
  });
});

describe('allowed-tools written with commas and no spaces', () => {
  it('reads `Read,Grep,Bash(git add,commit:*)` as three entries, a comma inside parentheses staying in the specifier', () => {
    const items = inspectSkillManifest('---\nname: s\ndescription: d\nallowed-tools: Read,Grep,Bash(git add,commit:*)\n---\n').parsed!.manifest.allowedTools;
    expect(parseAllowedTools('s', items)).toEqual({
      entries: [
        { entry: 'Read', tool: 'Read' },
        { entry: 'Grep', tool: 'Grep' },
        { entry: 'Bash(git add,commit:*)', tool: 'Bash', specifier: 'git add,commit:*' },
      ],
      diagnostics: [],
    });
  });
});

describe('declared scripts and toolsets that lead out of the skill', () => {
  const text = [
    '---',
    'name: my-skill',
    'description: A skill.',
    'toolsets:',
    '  - "../../lib/tools:Tools"',
    '  - "toolsets/index:Tools"',
    'scripts:',
    '  - ../../etc/passwd',
    '  - name: shell',
    '    path: /bin/sh',
    '  - scripts/run.sh',
    '---',
    'Body',
    '',
  ].join('\n');
  const messages = [
    "Toolset '../../lib/tools:Tools' must name a module by a path relative to the skill's folder, inside it",
    "Script path '../../etc/passwd' must be relative to the skill's folder and stay inside it",
    "Script path '/bin/sh' must be relative to the skill's folder and stay inside it",
  ];

  it('are errors in strict validation', () => {
    expect(inspectSkillManifest(text, { dirName: 'my-skill', strict: true }).errors).toEqual(messages);
  });

  it('are left out, each with a warning, when loading', () => {
    const report = inspectSkillManifest(text, { dirName: 'my-skill' });
    expect(report.diagnostics.map((d) => d.message)).toEqual([`${messages[0]}; the toolset is ignored`, `${messages[1]}; the script is ignored`, `${messages[2]}; the script is ignored`]);
    expect(report.parsed?.manifest.toolsets.map((ref) => ref.ref)).toEqual(['toolsets/index:Tools']);
    expect(report.parsed?.manifest.scripts.map((ref) => ref.path)).toEqual(['scripts/run.sh']);
  });
});

describe('resources of a hostile skill folder', () => {
  it('lists what it can and names each folder it cannot list and each file it cannot stat, instead of failing the load or passing them over', async () => {
    const root = await tree({
      'skill/SKILL.md': simpleSkill('skill'),
      'skill/docs/ok.md': 'fine',
      'skill/locked/secret.md': 'hidden',
      'skill/unsearchable/file.md': 'listed but not reachable',
    });
    const skill = path.join(root, 'skill');
    await chmod(root, 0o755);
    await chmod(path.join(skill, 'locked'), 0o000);
    // Listable but not searchable: its names can be read, its files cannot be looked at.
    await chmod(path.join(skill, 'unsearchable'), 0o444);
    try {
      const listed = listAsUnprivileged(skill);
      expect(listed.resources).toEqual(['docs/ok.md']);
      expect(listed.diagnostics.map((d) => [d.level, d.code, d.message])).toEqual([
        ['warning', 'resource_skipped', `'locked' cannot be listed (EACCES: permission denied, scandir '${path.join(skill, 'locked')}'); its files are not offered`],
        ['warning', 'resource_skipped', `'unsearchable/file.md' cannot be read (EACCES: permission denied, stat '${path.join(skill, 'unsearchable', 'file.md')}'); it is not offered`],
      ]);
    } finally {
      await chmod(path.join(skill, 'locked'), 0o755);
      await chmod(path.join(skill, 'unsearchable'), 0o755);
    }
  });

  it('a file this process may not read is refused as unreadable, not reported missing', async () => {
    const root = await tree({ 'skill/SKILL.md': simpleSkill('skill'), 'skill/docs/private.md': 'no' });
    const skill = path.join(root, 'skill');
    await chmod(root, 0o755);
    await chmod(path.join(skill, 'docs', 'private.md'), 0o000);
    const unprivileged = unprivilegedCheckout().root;
    const modules = (name: string) => JSON.stringify(pathToFileURL(path.join(unprivileged, 'src', 'manifest', name)).href);
    const program = [
      `const { loadSkillFolder } = await import(${modules('folder.ts')});`,
      `const { readSkillResource } = await import(${modules('resources.ts')});`,
      `const folder = await loadSkillFolder(${JSON.stringify(skill)});`,
      `const error = await readSkillResource('skill', await folder.skill.load(), 'docs/private.md').catch((e) => e);`,
      'console.log(JSON.stringify({ code: error.code, message: error.message, details: error.details }));',
    ].join('\n');
    const child = runUnprivileged('the read', ['--import', 'tsx', '--input-type=module', '-e', program], { cwd: unprivileged });
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout)).toEqual({
      code: 'resource_refused',
      message: `skill 'skill': 'docs/private.md' may not be read: EACCES: permission denied, open '${path.join(skill, 'docs', 'private.md')}'`,
      details: { reason: 'unreadable' },
    });
  });

  it('calls a cycle of links a cycle, and a link to nothing a broken link', async () => {
    const skill = await tree({ 'SKILL.md': simpleSkill('skill'), 'docs/ok.md': 'fine' });
    await symlink('loop-b', path.join(skill, 'docs', 'loop-a'));
    await symlink('loop-a', path.join(skill, 'docs', 'loop-b'));
    await symlink('missing.md', path.join(skill, 'docs', 'dangling'));
    const listed = await listResources(skill);
    expect([...listed.resources.keys()]).toEqual(['docs/ok.md']);
    expect(listed.diagnostics.map((d) => d.message)).toEqual([
      "'docs/dangling' is a broken link; it is not offered",
      "'docs/loop-a' is a link in a cycle of links; it is not offered",
      "'docs/loop-b' is a link in a cycle of links; it is not offered",
    ]);
  });

  it('names the first hundred entries it does not offer and counts the rest, so a folder of links out of the skill is not a flood of warnings', async () => {
    const root = await tree({ 'skill/SKILL.md': simpleSkill('skill'), 'skill/docs/ok.md': 'fine', 'outside.txt': 'secret' });
    const skill = path.join(root, 'skill');
    await mkdir(path.join(skill, 'links'));
    const links = 150;
    for (let i = 0; i < links; i++) await symlink(path.join(root, 'outside.txt'), path.join(skill, 'links', `l${String(i).padStart(3, '0')}`));
    const listed = await listResources(skill);
    expect([...listed.resources.keys()]).toEqual(['docs/ok.md']);
    expect(listed.diagnostics).toHaveLength(MAX_SKIPPED_NAMED + 1);
    expect(listed.diagnostics[0]!.message).toBe(`'links/l000' links outside the skill's root (to '${path.join(root, 'outside.txt')}'); it is not offered`);
    expect(listed.diagnostics.at(-1)).toMatchObject({
      code: 'resource_skipped',
      message: `${links - MAX_SKIPPED_NAMED} more entries are not offered either (only the first ${MAX_SKIPPED_NAMED} are named)`,
      details: { unnamed: links - MAX_SKIPPED_NAMED },
    });
  });

  it('stops at the file limit with one diagnostic, however many folders are left', async () => {
    const skill = await tree({ 'SKILL.md': simpleSkill('skill') });
    // One file in each of 1,200 folders: 200 files past the limit, in 200 folders.
    const folders = 1200;
    for (let i = 0; i < folders; i++) {
      const dir = path.join(skill, `d${String(i).padStart(4, '0')}`);
      await mkdir(dir);
      await writeFile(path.join(dir, 'f.md'), '');
    }
    const listed = await listResources(skill);
    expect(listed.resources.size).toBe(MAX_LISTED_RESOURCES);
    expect(listed.diagnostics.map((d) => d.message)).toEqual([`more than ${MAX_LISTED_RESOURCES} files; 'd1000/f.md' and later ones are not listed`]);
  });
});

describe('names the same after normalisation', () => {
  it('two skills named café, composed and decomposed, are one name: the first is kept and the second shadowed, with a warning', async () => {
    const composed = 'caf\u00e9';
    const decomposed = 'cafe\u0301';
    const root = await tree({ [`${composed}/SKILL.md`]: simpleSkill(composed), [`${decomposed}/SKILL.md`]: simpleSkill(decomposed) });
    const registry = await discoverSkills({ extra: [root] });
    // Folders are visited in code-point order: `e` (U+0065) before `é` (U+00E9).
    expect(registry.names()).toEqual([decomposed]);
    expect(registry.entry(composed)?.rootPath).toBe(path.join(root, decomposed));
    expect(registry.diagnostics.filter((d) => d.code === 'skill_shadowed').map((d) => d.message)).toEqual([
      `skill '${composed}' in extra (${path.join(root, composed)}) is shadowed by extra (${path.join(root, decomposed)}), whose name '${decomposed}' is the same once normalised (NFKC)`,
    ]);
  });
});

describe('a SKILL.md that is a link', () => {
  const secret = '---\nname: x\ndescription: A file of the user that starts with front matter.\n---\napi_key: SECRET\n';

  it('leading out of its folder: the skill is skipped with an error naming the link and where it leads, and nothing of the file is shown', async () => {
    const root = await tree({ 'private/notes.md': secret, 'skills/x/docs/a.md': 'A', 'skills/inner/docs/main.md': simpleSkill('inner'), 'elsewhere/linked/SKILL.md': simpleSkill('linked') });
    const file = path.join(root, 'skills', 'x', 'SKILL.md');
    await symlink(path.join(root, 'private', 'notes.md'), file);
    // A link inside the folder, and a skill folder that is itself a link, are fine.
    await symlink('docs/main.md', path.join(root, 'skills', 'inner', 'SKILL.md'));
    await symlink(path.join(root, 'elsewhere', 'linked'), path.join(root, 'skills', 'linked'));
    const registry = await discoverSkills({ extra: [path.join(root, 'skills')] });
    expect(registry.names()).toEqual(['inner', 'linked']);
    const skipped = registry.diagnostics.filter((d) => d.code === 'skill_skipped' && d.level === 'error');
    expect(skipped.map((d) => d.message)).toEqual([
      `${path.join(root, 'skills', 'x')} skipped: ${file}: is a symbolic link to ${path.join(root, 'private', 'notes.md')}, outside the skill's folder ${path.join(root, 'skills', 'x')}; the skill is not loaded (a skill's files are read only inside its folder)`,
    ]);
    expect(JSON.stringify(registry.diagnostics)).not.toContain('SECRET');
  });

  it('made after discovery: loading the skill fails with invalid_manifest and the link\'s target', async () => {
    const root = await tree({ 'private/notes.md': secret, 'skills/x/SKILL.md': simpleSkill('x') });
    const registry = await discoverSkills({ extra: [path.join(root, 'skills')] });
    const file = path.join(root, 'skills', 'x', 'SKILL.md');
    await rm(file);
    await symlink(path.join(root, 'private', 'notes.md'), file);
    await expect(registry.content('x')).rejects.toMatchObject({ code: 'invalid_manifest', subject: file, details: { reason: 'escapes', target: path.join(root, 'private', 'notes.md') } });
  });
});

describe('a skill changed on disk after it was discovered (no watch)', () => {
  it('loads the body as it is now and warns that the front matter read at discovery is kept', async () => {
    const root = await tree({ 'swap/SKILL.md': simpleSkill('swap', '', 'old body\n'), 'same/SKILL.md': simpleSkill('same', '', 'old body\n') });
    const registry = await discoverSkills({ extra: [root] }, { trust: 'all' });
    const file = path.join(root, 'swap', 'SKILL.md');
    await writeFile(file, '---\nname: other\ndescription: Another skill altogether.\nallowed-tools: Bash\n---\nnew body\n');
    await writeFile(path.join(root, 'same', 'SKILL.md'), simpleSkill('same', '', 'new body\n'));
    expect((await registry.content('swap')).instructions).toBe('new body\n');
    expect((await registry.content('same')).instructions).toBe('new body\n');
    expect(registry.entry('swap')?.manifest?.allowedTools).toEqual([]);
    expect(registry.diagnostics.filter((d) => d.code === 'skill_changed_on_disk').map((d) => [d.level, d.skill, d.subject])).toEqual([['warning', 'swap', file]]);
  });
});

describe('scripts of a hostile skill', () => {
  it('runs a script that exits without reading the input it was given, and the host process lives on', async () => {
    const skill = await tree({ 'SKILL.md': simpleSkill('skill'), 'scripts/quick.sh': 'exit 3\n' });
    // Far more input than a pipe holds, so the write is still going when the script has gone; the
    // run is in a process of its own, so that a broken pipe would end that process, not the tests.
    const scripts = pathToFileURL(path.join(checkout, 'src', 'manifest', 'scripts.ts')).href;
    const program = `const { runSkillScript } = await import(${JSON.stringify(scripts)}); const result = await runSkillScript(${JSON.stringify(skill)}, 'scripts/quick.sh', [], { input: 'x'.repeat(8 * 1024 * 1024) }); console.log(JSON.stringify(result));`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], { cwd: checkout, encoding: 'utf8', timeout: 60_000 });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    expect(JSON.parse(child.stdout)).toMatchObject({ exitCode: 3, signal: null, timedOut: false, truncated: false });
  });
});
