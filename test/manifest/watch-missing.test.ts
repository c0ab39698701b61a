/**
 * Hot reload of a skills source that does not exist yet when the watch starts: real folders, the
 * real watcher. It waits on the nearest folder that exists, and as the source's path appears
 * (at once, or a folder at a time) it scans the source and emits the usual change, with no
 * `refresh()`; the source's folders are watched from then on.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { simpleSkill, tree, writeTree } from './tree.js';
import { watchedRegistries } from './watched.js';

const watched = watchedRegistries();

describe('registry.watch() of a skills source missing when it starts', () => {
  it.each([
    ['its parent exists', ['skills']],
    ['two of its folders are missing', ['project', 'skills']],
  ])('%s: made with a skill in it, the skill is added, and later edits are seen', async (_case, parts) => {
    const top = await tree();
    const root = path.join(top, ...parts);
    const { registry, changes, diagnostics, until } = await watched(root);
    expect(diagnostics).toContainEqual(expect.objectContaining({ code: 'source_missing', subject: root }));
    expect(registry.has('notes')).toBe(false);

    await writeTree(root, { 'notes/SKILL.md': simpleSkill('notes', 'version: 1.0.0') });
    await until(() => registry.has('notes'));
    expect(changes.find((change) => change.added.includes('notes'))).toMatchObject({ added: ['notes'], removed: [] });
    await writeFile(path.join(root, 'notes', 'SKILL.md'), simpleSkill('notes', 'version: 2.0.0'));
    await until(() => registry.entry('notes')?.version === '2.0.0');
    expect(diagnostics.filter((item) => item.code === 'skill_watch_lost')).toEqual([]);
  });

  it('made a folder at a time, the skill last: each step is seen, and the skill is added', async () => {
    const top = await tree();
    const root = path.join(top, 'project', 'skills');
    const { registry, changes, until } = await watched(root);

    await mkdir(path.join(top, 'project'));
    await until(() => changes.length === 1);
    expect(changes[0]).toMatchObject({ added: [], changed: [], removed: [] });
    await mkdir(root);
    await until(() => changes.length === 2);
    await writeTree(root, { 'notes/SKILL.md': simpleSkill('notes') });
    await until(() => registry.has('notes'));
    expect(changes.at(-1)).toMatchObject({ added: ['notes'] });
  });
});
