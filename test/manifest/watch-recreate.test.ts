/**
 * Hot reload when a watched skills folder is removed and made again, as `git checkout` of another
 * branch or `rm -rf skills && cp -r ... skills` do: real folders, the real watcher, and the change
 * events it emits. The watch follows the folder's new incarnation without a `refresh()`, its
 * parent's too: when the parent went as well, it looks out from the nearest folder left.
 */
import { cp, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { simpleSkill, tree, writeTree } from './tree.js';
import { watchedRegistries } from './watched.js';

const watched = watchedRegistries();

describe('registry.watch() when the skills folder is removed and made again', () => {
  it('removed, then made again with a changed SKILL.md: the skill goes, comes back in its new version, and later edits are seen', async () => {
    const parent = await tree();
    const root = path.join(parent, 'skills');
    await writeTree(root, { 'notes/SKILL.md': simpleSkill('notes', 'version: 1.0.0') });
    const { registry, changes, until } = await watched(root);
    expect(registry.entry('notes')?.version).toBe('1.0.0');

    await rm(root, { recursive: true });
    await until(() => changes.some((change) => change.removed.includes('notes')));
    expect(registry.has('notes')).toBe(false);

    await writeTree(root, { 'notes/SKILL.md': simpleSkill('notes', 'version: 2.0.0') });
    // The registry holds the new version before its change is given to listeners: waited for both.
    await until(() => registry.entry('notes')?.version === '2.0.0' && changes.some((change) => change.added.includes('notes')));

    // The folder made again is watched itself: an edit in it is a change, with no refresh().
    await writeFile(path.join(root, 'notes', 'SKILL.md'), simpleSkill('notes', 'version: 3.0.0'));
    await until(() => registry.entry('notes')?.version === '3.0.0');
    await writeTree(root, { 'todo/SKILL.md': simpleSkill('todo') });
    await until(() => registry.has('todo'));
  });

  it('swapped in one go (rm -rf skills && cp -r other skills): the new version is taken, and the new folders are watched', async () => {
    const parent = await tree();
    const root = path.join(parent, 'skills');
    const other = path.join(parent, 'other');
    await writeTree(root, { 'notes/SKILL.md': simpleSkill('notes', 'version: 1.0.0'), 'notes/docs/guide.md': 'guide 1' });
    await writeTree(other, { 'notes/SKILL.md': simpleSkill('notes', 'version: 2.0.0'), 'notes/docs/guide.md': 'guide 2' });
    const { registry, changes, until } = await watched(root);

    await rm(root, { recursive: true });
    await cp(other, root, { recursive: true });
    await until(() => registry.entry('notes')?.version === '2.0.0');

    // The folders of the new tree are watched, down to the skill's docs folder.
    const seen = changes.length;
    await writeFile(path.join(root, 'notes', 'docs', 'guide.md'), 'guide 3');
    await until(() => changes.slice(seen).some((change) => change.changed.includes('notes')));
    const guide = await (await registry.content('notes')).resources.get('docs/guide.md')!.read();
    expect(Buffer.from(guide).toString()).toBe('guide 3');
  });

  it('renamed away, and another folder renamed into its place: the watch follows the path, not the folder that moved', async () => {
    const parent = await tree();
    const root = path.join(parent, 'skills');
    await writeTree(root, { 'notes/SKILL.md': simpleSkill('notes', 'version: 1.0.0') });
    await writeTree(path.join(parent, 'incoming'), { 'notes/SKILL.md': simpleSkill('notes', 'version: 2.0.0') });
    const { registry, changes, until } = await watched(root);

    await rename(root, path.join(parent, 'skills.old'));
    await rename(path.join(parent, 'incoming'), root);
    await until(() => registry.entry('notes')?.version === '2.0.0');
    // The folder now at the path is watched: an edit in it is a change.
    await writeFile(path.join(root, 'notes', 'SKILL.md'), simpleSkill('notes', 'version: 3.0.0'));
    await until(() => registry.entry('notes')?.version === '3.0.0');
    expect(changes.some((change) => change.removed.includes('notes'))).toBe(false);
  });

  it('removed with its parent, then made again: the skills go, and come back without a refresh()', async () => {
    const top = await tree();
    const root = path.join(top, 'project', 'skills');
    await writeTree(root, { 'notes/SKILL.md': simpleSkill('notes', 'version: 1.0.0') });
    const { registry, changes, diagnostics, until } = await watched(root);

    await rm(path.join(top, 'project'), { recursive: true });
    await until(() => changes.some((change) => change.removed.includes('notes')));
    expect(registry.has('notes')).toBe(false);
    await writeTree(root, { 'notes/SKILL.md': simpleSkill('notes', 'version: 2.0.0') });
    // The registry holds the new version before its change is given to listeners: waited for both.
    await until(() => registry.entry('notes')?.version === '2.0.0' && changes.some((change) => change.added.includes('notes')));
    expect(diagnostics.filter((item) => item.code === 'skill_watch_lost')).toEqual([]);
  });

  it('removed, then its parent removed later, then both made again: the skills come back without a refresh()', async () => {
    const top = await tree();
    const root = path.join(top, 'project', 'skills');
    await writeTree(root, { 'notes/SKILL.md': simpleSkill('notes', 'version: 1.0.0') });
    const { registry, changes, diagnostics, until } = await watched(root);
    await rm(root, { recursive: true });
    await until(() => changes.some((change) => change.removed.includes('notes')));

    // The lookout on the parent sees the parent go, and looks out from further up: a batch says so.
    const seen = changes.length;
    await rm(path.join(top, 'project'), { recursive: true });
    await until(() => changes.length > seen);
    await writeTree(root, { 'notes/SKILL.md': simpleSkill('notes', 'version: 2.0.0') });
    await until(() => registry.entry('notes')?.version === '2.0.0');
    expect(diagnostics.filter((item) => item.code === 'skill_watch_lost')).toEqual([]);
  });
});
