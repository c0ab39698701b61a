/**
 * The SQLite store writes a batch's rows up to 64 by one statement. What a caller of `commit`
 * relies on is what one statement a row gave: every row of any size of batch written whole and
 * in its place, the last of two rows of one id kept, a failing row failing its whole batch with
 * an error that names the failure, and the rows a durable system writes holding exactly the text
 * `JSON.stringify` gives of `persist()`.
 */
import Database from 'libsql';
import { describe, expect, it } from 'vitest';
import { createSqliteStore } from '../../src/index.js';
import type { StoreBatch } from '../../src/runtime/persistence.js';
import { Reminder, createSignal, defineAgent, defineSkill, refusingDatabase, systemPerTest, tempFolders } from './fixtures.js';

const systems = systemPerTest();
const databaseFile = tempFolders('sqlite-statements').database;

type Row = StoreBatch['save'][number];

/** Every row of the file, in the order the agents were first stored: its columns, the snapshot as text. */
function stored(path: string): Array<{ id: string; parent: string | null; definition: string; snapshot: string }> {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT id, parent, definition, snapshot FROM agents ORDER BY rowid').all() as Array<{ id: string; parent: string | null; definition: string; snapshot: string }>;
  } finally {
    db.close();
  }
}

/** A row as a custom caller of `commit` gives it: its snapshot names its id, as a store's rows must. */
function row(id: string, version: number, parent?: string): Row {
  return { id, parent, definition: `def-${version % 3}`, snapshot: JSON.stringify({ id, version }) };
}

/** The rows `batches` leave, committed one after another: the last row of each id, in the place of its first. */
function expectedAfter(batches: Row[][]): Array<{ id: string; parent: string | null; definition: string; snapshot: string }> {
  const rows = new Map<string, { id: string; parent: string | null; definition: string; snapshot: string }>();
  for (const batch of batches) for (const r of batch) rows.set(r.id, { id: r.id, parent: r.parent ?? null, definition: r.definition, snapshot: r.snapshot });
  return [...rows.values()];
}

describe('a batch written by statements of many rows', () => {
  it('writes batches of 1, 63, 64, 65, 127, 128 and 1,000 rows whole, each row in its place, over rows stored before', async () => {
    const path = await databaseFile();
    const store = createSqliteStore({ path });
    const batches: Row[][] = [];
    let version = 0;
    for (const size of [1, 63, 64, 65, 127, 128, 1000]) {
      // Half of each batch writes over agents stored before, half adds new ones; one in three has a parent.
      const batch = Array.from({ length: size }, (_, i) => row(`agent-${i % 2 === 0 ? i / 2 : size * 1000 + i}`, ++version, i % 3 === 0 ? `agent-${i}` : undefined));
      await store.commit({ save: batch, delete: [] });
      batches.push(batch);
    }
    store.close();
    expect(stored(path)).toEqual(expectedAfter(batches));
  });

  it('keeps the last of two rows of one id in a batch, in the place of the first, within one statement and across two', async () => {
    const path = await databaseFile();
    const store = createSqliteStore({ path });
    const before = [row('x', 0), row('y', 0)];
    await store.commit({ save: before, delete: [] });
    // Two of one id in a statement of two, of 64 (at 3 and 40), and across the 64th row (at 0 and 64, and at 10 and 66).
    const pairs = [[row('a', 1), row('a', 2)], [...Array.from({ length: 64 }, (_, i) => (i === 3 ? row('b', 1) : i === 40 ? row('b', 2) : row(`b${i}`, 1)))], [...Array.from({ length: 67 }, (_, i) => (i === 0 ? row('x', 1) : i === 64 ? row('x', 2) : i === 10 ? row('c', 1) : i === 66 ? row('c', 2) : row(`c${i}`, 1)))]];
    for (const batch of pairs) await store.commit({ save: batch, delete: [] });
    store.close();
    const rows = stored(path);
    expect(rows).toEqual(expectedAfter([before, ...pairs]));
    expect(rows.filter((r) => ['a', 'b', 'c', 'x'].includes(r.id)).map((r) => [r.id, JSON.parse(r.snapshot).version])).toEqual([
      ['x', 2],
      ['a', 2],
      ['b', 2],
      ['c', 2],
    ]);
    expect(rows[0]!.id).toBe('x');
  });

  it('fails a whole batch on a bad row from a custom caller, naming the failure; the statements that ran before it are undone, and the next batch is written', async () => {
    const path = await databaseFile();
    const store = createSqliteStore({ path });
    const first = Array.from({ length: 10 }, (_, i) => row(`kept-${i}`, 1));
    await store.commit({ save: first, delete: [] });
    // A bad row in each place a statement can hold it: the last of the first 64, the middle of the second, the lone last.
    for (const bad of [63, 100, 129]) {
      const batch = Array.from({ length: 130 }, (_, i) => (i === bad ? ({ ...row(`bad-${i}`, 2), definition: null } as unknown as Row) : row(i < 10 ? `kept-${i}` : `new-${i}`, 2)));
      await expect(store.commit({ save: batch, delete: ['kept-9'] })).rejects.toMatchObject({
        code: 'store_failed',
        details: { reason: 'write_failed', path },
        message: `writing 131 agent(s) to ${path} failed: NOT NULL constraint failed: agents.definition`,
      });
    }
    const good = Array.from({ length: 130 }, (_, i) => row(`new-${i}`, 3));
    await store.commit({ save: good, delete: [] });
    store.close();
    expect(stored(path)).toEqual(expectedAfter([first, good]));
  });

  it("fails a whole batch on a row a trigger refuses, with the trigger's words, for rows sent as text and rows given as they are", async () => {
    const path = await databaseFile();
    refusingDatabase(path, 'refused');
    const store = createSqliteStore({ path });
    const text = Array.from({ length: 100 }, (_, i) => row(i === 70 ? 'refused' : `t-${i}`, 1));
    await expect(store.commit({ save: text, delete: [] })).rejects.toMatchObject({ code: 'store_failed', message: `writing 100 agent(s) to ${path} failed: agent refused is refused here` });
    // A row whose definition is a number is not sent as text: the batch goes as it is.
    const asGiven = Array.from({ length: 100 }, (_, i) => (i === 99 ? { ...row('refused', 1), definition: 7 as unknown as string } : row(`g-${i}`, 1)));
    await expect(store.commit({ save: asGiven, delete: [] })).rejects.toMatchObject({ code: 'store_failed', message: `writing 100 agent(s) to ${path} failed: agent refused is refused here` });
    const good = text.filter((r) => r.id !== 'refused');
    await store.commit({ save: good, delete: [] });
    store.close();
    expect(stored(path)).toEqual(expectedAfter([good]));
  });

  it('writes rows whose snapshots are megabytes long, several in one statement, exactly', async () => {
    const path = await databaseFile();
    const store = createSqliteStore({ path });
    const huge = (id: string, size: number, fill: string): Row => ({ id, parent: undefined, definition: 'big', snapshot: JSON.stringify({ id, data: fill.repeat(size) }) });
    const batch = [huge('one', 3 * 1024 * 1024, 'a'), row('small', 1), huge('two', 5 * 1024 * 1024, 'é'), huge('three', 2 * 1024 * 1024, '"\\')];
    await store.commit({ save: batch, delete: [] });
    expect(store.read('two')).toEqual(JSON.parse(batch[2]!.snapshot));
    store.close();
    const rows = stored(path);
    expect(rows.map((r) => r.snapshot.length)).toEqual(batch.map((r) => r.snapshot.length));
    expect(rows.every((r, i) => r.snapshot === batch[i]!.snapshot)).toBe(true);
  });
});

describe('the rows a durable system writes, many in one statement', () => {
  /** Mount hooks that wait for `release`: agents of `Slow` stay `starting` until then. */
  let release: () => void = () => {};
  const started = new Promise<void>((resolve) => (release = resolve));
  const Slow = defineAgent({ name: 'slow', skills: [defineSkill({ name: 'slow', mount: () => started })] });

  it('hold the text JSON.stringify gives of persist() for 150 agents: with parents, scheduled signals, restored, starting', async () => {
    const path = await databaseFile();
    const system = systems.start({ definitions: [Reminder, Slow], store: createSqliteStore({ path }) });
    const agents = Array.from({ length: 150 }, (_, i) => system.spawn(Reminder, { id: `k${i}`, ...(i % 4 === 1 ? { parent: `k${i - 1}` } : {}) }));
    // One in five schedules a signal an hour away; the others note one that fell due.
    await Promise.all(agents.map((agent, i) => agent.call(i % 5 === 0 ? createSignal('later.set', { text: `in an hour ${i}`, inMs: 3_600_000 }) : createSignal('later.due', { text: `due ${i} "quoted" é` }))));
    const model = agents[2]!.persist();
    const restored = system.restore({ ...model, id: 'restored', agent: { ...model.agent, id: 'restored' } });
    await restored.call(createSignal('later.due', { text: 'restored' }));
    const slow = system.spawn(Slow, { id: 'slow' });
    await system.flush();
    const everyone = [...agents, restored, slow];
    const persisted = new Map(everyone.map((ref) => [ref.id, JSON.stringify(ref.persist())]));
    expect(JSON.parse(persisted.get('slow')!)).toMatchObject({ starting: true });
    expect(JSON.parse(persisted.get('k0')!).scheduled).toHaveLength(1);
    expect(JSON.parse(persisted.get('k1')!)).toMatchObject({ parent: 'k0' });
    // Shut down while `slow` is still starting, which rewrites nothing unchanged, to read the file beside it.
    await system.shutdown();
    release();
    const rows = stored(path);
    expect(rows.map((r) => r.id)).toEqual(everyone.map((ref) => ref.id));
    for (const r of rows) expect(r.snapshot, r.id).toBe(persisted.get(r.id));
  });

  it('hold it for an id that comes back with another definition, and for more agents than the database thread keeps heads of', async () => {
    const Other = defineAgent({ name: 'other_agent', skills: [defineSkill({ name: 'note' })] });
    const path = await databaseFile();
    const system = systems.start({ definitions: [Reminder, Other], store: createSqliteStore({ path }) });
    const first = system.spawn(Reminder, { id: 'again "é"' });
    await first.call(createSignal('later.due', { text: 'first' }));
    await system.flush();
    await system.stop(first.id);
    const again = system.spawn(Other, { id: first.id });
    // 16,384 heads are kept; the first agents' heads are made again past them.
    const many = Array.from({ length: 16_400 }, (_, i) => system.spawn(Reminder, { id: `m${i}` }));
    await system.flush();
    const sample = [...many.slice(0, 3), ...many.slice(-3)];
    await Promise.all(sample.map((agent) => agent.call(createSignal('later.due', { text: `after ${agent.id}` }))));
    await system.flush();
    const persisted = new Map([again, ...many].map((ref) => [ref.id, JSON.stringify(ref.persist())]));
    await system.shutdown();
    const rows = stored(path);
    expect(rows).toHaveLength(1 + many.length);
    expect(JSON.parse(rows[0]!.snapshot)).toMatchObject({ id: first.id, definition: 'other_agent', agent: { definition: 'other_agent' } });
    for (const r of rows) if (r.snapshot !== persisted.get(r.id)) expect(r.snapshot, r.id).toBe(persisted.get(r.id));
  });

  it('hold it for states from 32,000 characters to megabytes long, and for long ids and parents', async () => {
    const path = await databaseFile();
    const system = systems.start({ definitions: [Reminder], store: createSqliteStore({ path }) });
    const parent = system.spawn(Reminder, { id: `parent-${'p'.repeat(40_000)}` });
    const lengths = [...Array.from({ length: 40 }, (_, i) => 32_730 + i), 65_535, 65_536, 1_048_576, 3_000_000];
    const agents = lengths.map((length, i) => system.spawn(Reminder, { id: `long-${i}`, ...(i % 3 === 0 ? { parent: parent.id } : {}) }));
    await Promise.all(agents.map((agent, i) => agent.call(createSignal('later.due', { text: (i % 2 === 0 ? 'x' : 'é').repeat(lengths[i]!) }))));
    await system.flush();
    const persisted = new Map([parent, ...agents].map((ref) => [ref.id, JSON.stringify(ref.persist())]));
    await system.shutdown();
    const rows = stored(path);
    expect(rows.map((r) => r.id)).toEqual([parent.id, ...agents.map((ref) => ref.id)]);
    for (const r of rows) expect(r.snapshot === persisted.get(r.id), `${r.id.slice(0, 20)}: ${r.snapshot.length} characters written, ${persisted.get(r.id)?.length} persisted`).toBe(true);
  });
});
