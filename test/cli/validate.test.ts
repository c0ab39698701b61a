/**
 * `skillstate validate <parent>` names every folder it passes over and fails when one may hold a
 * skill it could not check. The command runs as a real subprocess; when the tests run as root it
 * runs as the unprivileged user `nobody`, since root reads a folder whatever its permissions.
 */
import { chmod } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { simpleSkill, skillMd, tree } from '../manifest/tree.js';
import { runUnprivileged, unprivilegedCheckout } from '../unprivileged.js';

/** Folders made unreadable by a test, given back their permissions so that they can be removed. */
const locked: string[] = [];
afterEach(async () => {
  while (locked.length) await chmod(locked.pop()!, 0o755);
});

/** Runs `skillstate validate` without privileges: as `nobody` when the tests run as root. */
function validate(args: string[], cwd: string) {
  const bin = path.join(unprivilegedCheckout().root, 'bin', 'skillstate.js');
  const result = runUnprivileged('skillstate validate', [bin, 'validate', ...args], { cwd, env: { ...process.env, HOME: cwd } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A tree the unprivileged user can read, with one folder it cannot. */
async function treeWithLockedFolder(files: Record<string, string>, lockedName: string): Promise<string> {
  const root = await tree(files);
  await chmod(root, 0o755);
  locked.push(path.join(root, lockedName));
  await chmod(path.join(root, lockedName), 0o000);
  return root;
}

describe('skillstate validate <parent>', { timeout: 90_000 }, () => {
  it('names the folders it could not read, passed over for depth or as hidden, and fails', async () => {
    const root = await treeWithLockedFolder(
      {
        'ok/SKILL.md': simpleSkill('ok'),
        'locked/SKILL.md': skillMd('name: Locked_Bad\ndescription: d'),
        'a/b/c/d/e/deep/SKILL.md': skillMd('name: Deep_Bad\ndescription: d'),
        '.hidden/SKILL.md': skillMd('name: bad_name\ndescription: d'),
      },
      'locked',
    );
    const run = validate([root], root);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe(`Valid skill: ${path.join(root, 'ok')}\n`);
    const lines = run.stderr.split('\n');
    expect(lines).toContain(`note: ${path.join(root, '.hidden')} skipped: hidden folder`);
    expect(lines).toContain(`error: ${path.join(root, 'a', 'b', 'c', 'd', 'e')} skipped: deeper than 4 levels below ${root}`);
    expect(lines.find((line) => line.startsWith(`error: ${path.join(root, 'locked')} skipped: cannot be read: `))).toContain('EACCES');
    expect(lines).toContain('1 skill checked: 1 valid, 0 invalid');
    expect(lines).toContain('3 folders skipped (2 may hold skills that were not checked)');
  });

  it('a folder it cannot read fails the run even with --json, and is named on stderr', async () => {
    const root = await treeWithLockedFolder({ 'ok/SKILL.md': simpleSkill('ok'), 'locked/SKILL.md': simpleSkill('locked') }, 'locked');
    const run = validate(['--json', root], root);
    expect(run.code).toBe(1);
    expect((JSON.parse(run.stdout) as { dir: string; valid: boolean }[]).map((result) => [result.dir, result.valid])).toEqual([[path.join(root, 'ok'), true]]);
    expect(run.stderr).toContain(`error: ${path.join(root, 'locked')} skipped: cannot be read: `);
  });

  it('hidden, ignored and empty folders are notes: the run passes', async () => {
    const root = await tree({ 'ok/SKILL.md': simpleSkill('ok'), '.drafts/x/SKILL.md': 'not a skill yet', 'node_modules/pkg/SKILL.md': simpleSkill('pkg'), 'notes/readme.txt': '' });
    await chmod(root, 0o755);
    const run = validate([root], root);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`Valid skill: ${path.join(root, 'ok')}\n1 skill checked: 1 valid, 0 invalid\n3 folders skipped\n`);
    expect(run.stderr).toBe(
      [
        `note: ${path.join(root, '.drafts')} skipped: hidden folder`,
        `note: ${path.join(root, 'node_modules')} skipped: 'node_modules' folders are never searched`,
        `note: ${path.join(root, 'notes')} skipped: no SKILL.md in it or in its folders`,
        '',
      ].join('\n'),
    );
  });

  it('a folder past the depth limit fails the run, and validates when named', async () => {
    const root = await tree({ 'ok/SKILL.md': simpleSkill('ok'), 'a/b/c/d/e/deep/SKILL.md': simpleSkill('deep') });
    await chmod(root, 0o755);
    expect(validate([root], root)).toMatchObject({ code: 1, stderr: expect.stringContaining(`error: ${path.join(root, 'a', 'b', 'c', 'd', 'e')} skipped: deeper than 4 levels below ${root}\n`) });
    expect(validate([path.join(root, 'a', 'b', 'c', 'd', 'e')], root)).toMatchObject({ code: 0, stdout: expect.stringContaining(`Valid skill: ${path.join(root, 'a', 'b', 'c', 'd', 'e', 'deep')}\n`) });
  });

  it('warns when a skill folder holds both SKILL.md and skill.md', async () => {
    const root = await tree({ 'both/SKILL.md': skillMd('name: both\ndescription: upper'), 'both/skill.md': skillMd('name: both\ndescription: lower') });
    await chmod(root, 0o755);
    const run = validate([path.join(root, 'both')], root);
    expect(run).toMatchObject({ code: 0, stdout: `Valid skill: ${path.join(root, 'both')}\n` });
    expect(run.stderr).toBe(`  warning: ${path.join(root, 'both')} holds both SKILL.md and skill.md: SKILL.md is used and skill.md is ignored; remove or rename one\n`);
  });
});
