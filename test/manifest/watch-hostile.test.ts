/**
 * Hot reload when the watched skills folder is put back the wrong ways: as a file first and a
 * folder again later, as a link, over and over in quick succession (no watch may be left open),
 * with its parent (found again by `refresh()`, and watched from then on), and with the watcher
 * closed while changes are under way (nothing reported after `close()`).
 */
import { mkdir, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { simpleSkill, tree, writeTree } from './tree.js';
import { watchedRegistries } from './watched.js';

const watched = watchedRegistries();

/** This process's open file descriptors (inotify watches among them). */
async function openFds(): Promise<number> {
  return (await readdir('/proc/self/fd')).length;
}

describe('registry.watch() when the skills folder comes back the wrong way', () => {
  it('made a file, then a folder again: the skill goes, and comes back once the folder is there', async () => {
    const parent = await tree();
    const root = path.join(parent, 'skills');
    await writeTree(root, { 'notes/SKILL.md': simpleSkill('notes', 'version: 1.0.0') });
    const { registry, changes, until } = await watched(root);

    await rm(root, { recursive: true });
    await writeFile(root, 'not a folder');
    await until(() => changes.some((change) => change.removed.includes('notes')));

    await rm(root);
    await writeTree(root, { 'notes/SKILL.md': simpleSkill('notes', 'version: 2.0.0') });
    await until(() => registry.entry('notes')?.version === '2.0.0');
  });

  it('made a link to another folder: the skills of the linked folder are taken', async () => {
    const parent = await tree();
    const root = path.join(parent, 'skills');
    const other = path.join(parent, 'other');
    await writeTree(root, { 'notes/SKILL.md': simpleSkill('notes', 'version: 1.0.0') });
    await writeTree(other, { 'notes/SKILL.md': simpleSkill('notes', 'version: 2.0.0') });
    const { registry, until } = await watched(root);

    await rm(root, { recursive: true });
    await symlink(other, root);
    await until(() => registry.entry('notes')?.version === '2.0.0');
    // The link's target is watched: an edit in it is seen.
    await writeFile(path.join(other, 'notes', 'SKILL.md'), simpleSkill('notes', 'version: 3.0.0'));
    await until(() => registry.entry('notes')?.version === '3.0.0');
  });

  it.runIf(process.platform === 'linux')('removed and made again 100 times quickly: no watch is left open', async () => {
    const parent = await tree();
    const root = path.join(parent, 'skills');
    await writeTree(root, { 'notes/SKILL.md': simpleSkill('notes', 'version: 0.0.0') });
    const { registry, until } = await watched(root);
    const before = await openFds();
    for (let cycle = 1; cycle <= 100; cycle++) {
      await rm(root, { recursive: true });
      await mkdir(path.join(root, 'notes'), { recursive: true });
      await writeFile(path.join(root, 'notes', 'SKILL.md'), simpleSkill('notes', `version: 1.0.${cycle}`));
    }
    await until(() => registry.entry('notes')?.version === '1.0.100');
    // A watch left open per cycle would be a hundred more; the test runner may hold a few of its own meanwhile.
    expect(await openFds()).toBeLessThan(before + 10);
    // The folder of skills and the skill's folder, each watched once.
    expect(registry.watcher!.folders).toBe(2);
  });

  it('gone with its parent, then back and also found by a refresh(): the folder is watched again, once', async () => {
    const top = await tree();
    const root = path.join(top, 'project', 'skills');
    await writeTree(root, { 'notes/SKILL.md': simpleSkill('notes', 'version: 1.0.0') });
    const { registry, changes, until } = await watched(root);
    await rm(path.join(top, 'project'), { recursive: true });
    await until(() => changes.some((change) => change.removed.includes('notes')));

    await writeTree(root, { 'notes/SKILL.md': simpleSkill('notes', 'version: 2.0.0') });
    await registry.refresh();
    expect(registry.entry('notes')?.version).toBe('2.0.0');
    await writeFile(path.join(root, 'notes', 'SKILL.md'), simpleSkill('notes', 'version: 3.0.0'));
    await until(() => registry.entry('notes')?.version === '3.0.0');
    // The folder of skills and the skill's folder, each watched once, whichever of the watch and the refresh found them first.
    expect(registry.watcher!.folders).toBe(2);
  });

  it('closed while a change is being applied: nothing is reported after close()', async () => {
    const parent = await tree();
    const root = path.join(parent, 'skills');
    await writeTree(root, { 'notes/SKILL.md': simpleSkill('notes') });
    const { registry, changes } = await watched(root);
    await writeTree(root, { 'todo/SKILL.md': simpleSkill('todo') });
    // Closed as soon as the change is under way (the registry scans again for it).
    const refreshing = new Promise<void>((resolve) => {
      const refresh = registry.refresh.bind(registry);
      registry.refresh = async () => {
        resolve();
        return refresh();
      };
    });
    await refreshing;
    registry.watcher!.close();
    const seen = changes.length;
    // A later scan, and folder events after close, report nothing.
    await registry.refresh();
    await writeTree(root, { 'more/SKILL.md': simpleSkill('more') });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(changes.length).toBe(seen);
  });
});
