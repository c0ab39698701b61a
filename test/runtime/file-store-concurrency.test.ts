/**
 * The file store under concurrent use: saves and deletes of one agent made at once are carried
 * out in the order they were made (the last save wins), each through a temporary file of its own,
 * so the stored file is always one whole snapshot and no temporary file is left behind.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFileStore, RuntimeError, type AgentSnapshot } from '../../src/index.js';
import { createSignal, itemsOf, NotesAgent, systemPerTest, tempFolders } from './fixtures.js';

const systems = systemPerTest();
const freshDir = tempFolders('store').folder;

/** Snapshots of one agent holding 1, 2, ... `count` items, the first ones large (they take longest to write). */
async function snapshotsOfOneAgent(count: number): Promise<AgentSnapshot[]> {
  const agent = systems.start().spawn(NotesAgent, { id: 'a' });
  const snapshots: AgentSnapshot[] = [];
  for (let i = 0; i < count; i++) {
    await agent.call(createSignal('notes.add_now', { item: i < count / 2 ? `${i}:${'x'.repeat(100_000)}` : String(i) }));
    snapshots.push(agent.persist());
  }
  expect(itemsOf(agent)).toHaveLength(count);
  return snapshots;
}

describe('the file store, saving one agent several times at once', () => {
  it('carries out every save, the last one made wins, and the file is one whole snapshot', async () => {
    const snapshots = await snapshotsOfOneAgent(8);
    for (let round = 0; round < 5; round++) {
      const dir = await freshDir();
      const store = createFileStore(dir);
      const saves = await Promise.allSettled(snapshots.map((snapshot) => store.save(snapshot)));
      expect(saves.filter((save) => save.status === 'rejected')).toEqual([]);
      expect(await store.load('a')).toEqual(JSON.parse(JSON.stringify(snapshots.at(-1))));
      expect(await readdir(dir)).toEqual(['a.agent.json']);
    }
  });

  it('a save and a delete made at once happen in that order; so do a delete and a save', async () => {
    const [first, second] = await snapshotsOfOneAgent(2);
    const store = createFileStore(await freshDir());
    const [, deleted] = await Promise.all([store.save(first!), store.delete('a')]);
    expect(deleted).toBe(true);
    expect(await store.load('a')).toBeUndefined();
    await Promise.all([store.delete('a'), store.save(second!)]);
    expect(await store.load('a')).toEqual(JSON.parse(JSON.stringify(second)));
  });

  it('a save that fails keeps neither the saves after it from happening nor a temporary file', async () => {
    const [first, second] = await snapshotsOfOneAgent(2);
    const dir = await freshDir();
    const store = createFileStore(dir);
    const unsavable = { ...first!, agent: { ...first!.agent, state: { notebook: { items: [], size: 10n } } } } as unknown as AgentSnapshot;
    const [bad, good] = await Promise.allSettled([store.save(unsavable), store.save(second!)]);
    expect(bad).toMatchObject({ status: 'rejected', reason: expect.any(RuntimeError) });
    expect((bad as PromiseRejectedResult).reason).toMatchObject({ code: 'invalid_state', agentId: 'a', subject: 'agent.state.notebook.size' });
    expect(good.status).toBe('fulfilled');
    expect(JSON.parse(await readFile(join(dir, 'a.agent.json'), 'utf8'))).toEqual(JSON.parse(JSON.stringify(second)));
    expect(await readdir(dir)).toEqual(['a.agent.json']);
  });

  it('a snapshot changed after save was called is saved as it was when save was called', async () => {
    const [first] = await snapshotsOfOneAgent(1);
    const store = createFileStore(await freshDir());
    const copy = JSON.parse(JSON.stringify(first)) as AgentSnapshot;
    const saving = store.save(copy);
    copy.agent.state = { notebook: { items: ['changed'] } };
    await saving;
    expect(await store.load('a')).toEqual(JSON.parse(JSON.stringify(first)));
  });
});

describe('the file store and long agent ids', () => {
  it('keeps the snapshot of an agent whose id is too long for a file name, and lists and loads it by that id', async () => {
    const dir = await freshDir();
    const store = createFileStore(dir);
    const system = systems.start();
    const ids = ['短'.repeat(30), 'x'.repeat(300), 'plain'];
    for (const id of ids) {
      const agent = system.spawn(NotesAgent, { id });
      await agent.call(createSignal('notes.add_now', { item: `for ${id.slice(0, 3)}` }));
      await store.save(agent.persist());
    }
    expect((await store.list()).sort()).toEqual([...ids].sort());
    for (const id of ids) expect((await store.load(id))?.id).toBe(id);
    for (const name of await readdir(dir)) expect(Buffer.byteLength(name)).toBeLessThanOrEqual(255);
    expect(await store.delete(ids[1]!)).toBe(true);
    expect((await store.list()).sort()).toEqual([ids[0], ids[2]].sort());
  });

  it('lists while long-id snapshots are deleted at the same time, without failing', async () => {
    const dir = await freshDir();
    const store = createFileStore(dir);
    const agent = systems.start().spawn(NotesAgent, { id: 'y'.repeat(300) });
    const snapshot = agent.persist();
    const ids = Array.from({ length: 30 }, (_, i) => `${i}-${'z'.repeat(300)}`);
    for (const id of ids) await store.save({ ...snapshot, id, agent: { ...snapshot.agent, id } });
    const [listed] = await Promise.all([store.list(), ...ids.map((id) => store.delete(id))]);
    for (const id of listed) expect(ids).toContain(id);
    expect(await store.list()).toEqual([]);
  });
});

