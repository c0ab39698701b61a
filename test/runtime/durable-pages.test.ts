/**
 * Opening a store larger than a page: a system reads the SQLite store `pageSize` rows at a time,
 * opens each agent without a parent as its page is read, and the agents with a parent once every
 * page is read, parents first, wherever in the file their rows are.
 */
import Database from 'libsql';
import { describe, expect, it } from 'vitest';
import { createSqliteStore, type AgentSnapshot, type StoredAgent, type TraceRecord } from '../../src/index.js';
import { NotesAgent, createSignal, itemsOf, systemPerTest, thrown, tempFolders } from './fixtures.js';

const systems = systemPerTest();
const databaseFile = tempFolders('durable-pages').database;

/** A row as a durable system writes it. */
function row(snapshot: AgentSnapshot): StoredAgent {
  return { id: snapshot.id, parent: snapshot.parent, definition: snapshot.definition, snapshot: JSON.stringify(snapshot) };
}

/** Each agent (id → its parent, or undefined) run with one note (its own id), as `persistAll()` gives them. */
async function snapshotsOf(tree: ReadonlyArray<[string, string | undefined]>): Promise<Map<string, AgentSnapshot>> {
  const system = systems.start({ definitions: [NotesAgent] });
  for (const [id, parent] of tree) {
    const agent = system.spawn(NotesAgent, parent === undefined ? { id } : { id, parent });
    await agent.call(createSignal('notes.add_now', { item: id }));
  }
  const snapshots = new Map(system.persistAll().map((snapshot) => [snapshot.id, snapshot]));
  await system.shutdown();
  return snapshots;
}

describe('opening a store page by page', () => {
  it('opens a store of more rows than a page whole, parents before children across pages, and reports a damaged row on a later page by its id', async () => {
    const tree: Array<[string, string | undefined]> = [
      ['p1', undefined],
      ['c1', 'p1'],
      ['g1', 'c1'],
      ['p2', undefined],
      ['c2', 'p2'],
      ['r1', undefined],
      ['r2', undefined],
      ['r3', undefined],
      ['r4', undefined],
    ];
    const snapshots = await snapshotsOf(tree);
    // Written so that children come before their parents, pages of 3 rows:
    // [g1 c1 r1] [r2 p1 r3] [bad c2 p2] [r4]: the damaged row on the third page, beside two good ones.
    const order = ['g1', 'c1', 'r1', 'r2', 'p1', 'r3', 'bad', 'c2', 'p2', 'r4'];
    const path = await databaseFile();
    const writer = createSqliteStore({ path });
    // Text that is not one JSON value, and that, read beside its neighbours, would shift them.
    const damaged: StoredAgent = { id: 'bad', parent: undefined, definition: NotesAgent.name, snapshot: '1,2' };
    await writer.commit({ save: order.map((id) => (id === 'bad' ? damaged : row(snapshots.get(id)!))), delete: [] });
    writer.close();

    const spawned: Array<{ agent: string; parent?: string }> = [];
    const errors: Array<{ agent: string | undefined; code: string }> = [];
    const system = systems.start({
      definitions: [NotesAgent],
      store: createSqliteStore({ path, pageSize: 3 }),
      trace: (record: TraceRecord) => {
        if (record.kind === 'spawn') spawned.push(record.parent === undefined ? { agent: record.agent } : { agent: record.agent, parent: record.parent });
      },
      onUnhandledError: (error, agent) => errors.push({ agent, code: error.code }),
    });

    expect(errors).toEqual([{ agent: 'bad', code: 'invalid_snapshot' }]);
    expect(system.list().map((ref) => ref.id).sort()).toEqual(tree.map(([id]) => id).sort());
    for (const [id, parent] of tree) {
      const ref = system.get(id)!;
      expect(itemsOf(ref)).toEqual([id]);
      // Restored under its parent: not an orphan, which it would be had it been opened before it.
      expect(ref.persist().parent).toBe(parent);
    }
    const at = (id: string) => spawned.findIndex((record) => record.agent === id);
    expect(spawned).toHaveLength(tree.length);
    expect(spawned[at('g1')]).toEqual({ agent: 'g1', parent: 'c1' });
    expect(at('p1')).toBeLessThan(at('c1'));
    expect(at('c1')).toBeLessThan(at('g1'));
    expect(at('p2')).toBeLessThan(at('c2'));

    await system.shutdown();
    const left = new Database(path, { readonly: true });
    expect(left.prepare('SELECT snapshot FROM agents WHERE id = ?').get('bad')).toMatchObject({ snapshot: '1,2' });
    left.close();
  });

  it('reads every row back through loadAll, in the order of the file, whatever the page size', async () => {
    const snapshots = await snapshotsOf([
      ['a', undefined],
      ['b', undefined],
      ['c', undefined],
      ['d', undefined],
    ]);
    const path = await databaseFile();
    const writer = createSqliteStore({ path });
    await writer.commit({ save: ['d', 'b', 'a', 'c'].map((id) => row(snapshots.get(id)!)), delete: [] });
    writer.close();
    for (const pageSize of [1, 2, 3, 4, 5]) {
      const store = createSqliteStore({ path, pageSize });
      expect(store.loadAll().map((entry) => entry.id)).toEqual(['d', 'b', 'a', 'c']);
      expect([...store.loadPages()].map((page) => page.length)).toEqual(pageSize >= 4 ? [4] : pageSize === 3 ? [3, 1] : pageSize === 2 ? [2, 2] : [1, 1, 1, 1]);
      store.close();
    }
  });

  it('writes and opens agents of 10 MB each, a batch and a page of them longer than a string can be', async () => {
    const base = (await snapshotsOf([['n0', undefined]])).get('n0')!;
    // One note of 10 million characters an agent: 60 agents hold more than one text of 2^29 characters can.
    const note = 'x'.repeat(10_000_000);
    const path = await databaseFile();
    const writer = createSqliteStore({ path });
    const rows = Array.from({ length: 60 }, (_, at) => {
      const id = `n${at}`;
      return row({ ...base, id, agent: { ...base.agent, id, state: { notebook: { items: [note] } } } });
    });
    await writer.commit({ save: rows, delete: [] });
    writer.close();

    // Left in the file, at rest (so the test holds one page of them at a time): the one woken has its note whole.
    const system = systems.start({ definitions: [NotesAgent], store: createSqliteStore({ path }), passivate: { idleMs: 60_000 } });
    expect(system.list().map((ref) => ref.id)).toEqual(Array.from({ length: 60 }, (_, at) => `n${at}`));
    expect(itemsOf(system.get('n59')!)).toEqual([note]);
  }, 120_000);

  it('refuses a page size that is not a positive integer, naming it', async () => {
    const path = await databaseFile();
    for (const pageSize of [0, -1, 2.5, Number.NaN]) {
      const error = thrown(() => createSqliteStore({ path, pageSize }));
      expect(error).toMatchObject({ code: 'invalid_options', subject: 'pageSize' });
    }
  });
});
