/**
 * What a durable system writes of each agent: the row holds exactly `persist()`'s snapshot, as
 * the text `JSON.stringify` writes of it, whatever the state holds (plain data, values with `toJSON`, nesting deeper than the quick
 * check looks, scheduled signals), and agents whose ids hold any character are written and read
 * back under those ids.
 */
import Database from 'libsql';
import { describe, expect, it } from 'vitest';
import { createSqliteStore } from '../../src/index.js';
import type { PiecedRow } from '../../src/runtime/persistence.js';
import { headText, ROW_PIECES, type RowPieces } from '../../src/runtime/row-pieces.js';
import { Effects, createSignal, defineAction, defineAgent, defineSkill, refusingDatabase, result, systemPerTest, z, tempFolders } from './fixtures.js';

const systems = systemPerTest();
const databaseFile = tempFolders('durable-rows').database;

/** Every row of the file: its id, parent and definition columns, and its snapshot parsed. */
function rows(path: string): Array<{ id: string; parent: string | null; definition: string; snapshot: unknown; text: string }> {
  const db = new Database(path, { readonly: true });
  try {
    const found = db.prepare('SELECT id, parent, definition, snapshot FROM agents ORDER BY rowid').all() as Array<{ id: string; parent: string | null; definition: string; snapshot: string }>;
    return found.map((row) => ({ ...row, snapshot: JSON.parse(row.snapshot) as unknown, text: row.snapshot }));
  } finally {
    db.close();
  }
}

/** Nested `{ next: { next: ... { leaf } } }`, `levels` deep. */
function nested(levels: number, leaf: unknown): unknown {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = { next: value };
  return value;
}

const bag = z.object({ value: z.any().optional(), when: z.date().optional(), label: z.string().optional() });
const Keeper = defineAgent({
  name: 'keeper',
  skills: [
    defineSkill({
      name: 'bag',
      schema: bag,
      actions: [
        defineAction({
          name: 'put',
          description: 'Keep a value, a date and a label',
          input: z.object({ depth: z.number().int(), at: z.string().optional(), label: z.string().optional(), hole: z.boolean().optional() }),
          run: ({ depth, at, label, hole }) =>
            result(null, { state: { value: nested(depth, hole ? [undefined] : [1, -0, 'x', null, true, { gone: undefined, kept: 2.5 }]), when: at === undefined ? undefined : new Date(at), label } }),
        }),
        defineAction({
          name: 'later',
          description: 'Schedule a signal an hour away',
          input: z.object({}),
          run: () => result(null, { effects: [Effects.schedule(3_600_000, createSignal('bag.put', { depth: 0 }))] }),
        }),
      ],
      routes: [
        { path: 'bag.put', target: { action: 'put' } },
        { path: 'bag.later', target: { action: 'later' } },
      ],
    }),
  ],
});

describe('the rows a durable system writes', () => {
  it("hold persist()'s snapshot, for plain state, values with toJSON, deep nesting and scheduled signals", async () => {
    const path = await databaseFile();
    const system = systems.start({ definitions: [Keeper], store: createSqliteStore({ path }) });
    const plain = system.spawn(Keeper, { id: 'plain' });
    const dated = system.spawn(Keeper, { id: 'dated' });
    const deep = system.spawn(Keeper, { id: 'deep', parent: 'plain' });
    await plain.call(createSignal('bag.put', { depth: 3, label: 'p' }));
    await plain.call(createSignal('bag.later'));
    await dated.call(createSignal('bag.put', { depth: 1, at: '2026-01-02T03:04:05.000Z' }));
    await deep.call(createSignal('bag.put', { depth: 200 }));
    const kid = system.spawn(Keeper, { id: 'kid', parent: 'plain' });
    await kid.call(createSignal('bag.put', { depth: 2, label: 'k' }));
    // A child spawned and stopped: gone from the file, and from its parent's list of children there.
    system.spawn(Keeper, { id: 'gone', parent: 'plain' });
    await system.flush();
    await system.stop('gone');
    const persisted = [plain, dated, deep, kid].map((ref) => ({ id: ref.id, text: JSON.stringify(ref.persist()) }));
    // Shut down, which rewrites nothing unchanged, to read the file beside it.
    await system.shutdown();

    const stored = rows(path);
    expect(stored.map((row) => [row.id, row.parent, row.definition])).toEqual([
      ['plain', null, 'keeper'],
      ['dated', null, 'keeper'],
      ['deep', 'plain', 'keeper'],
      ['kid', 'plain', 'keeper'],
    ]);
    // The very text JSON.stringify gives of persist(), whichever way the row was written.
    for (const { id, text } of persisted) expect(stored.find((row) => row.id === id)!.text).toBe(text);
    const state = (id: string) => (stored.find((row) => row.id === id)!.snapshot as { agent: { state: { bag: Record<string, unknown> } } }).agent.state.bag;
    expect(state('dated').when).toBe('2026-01-02T03:04:05.000Z');
    expect(state('plain').value).toEqual(nested(3, [1, 0, 'x', null, true, { kept: 2.5 }]));
    expect((stored[0]!.snapshot as { scheduled: unknown[] }).scheduled).toHaveLength(1);
    expect((stored[0]!.snapshot as { children: string[] }).children).toEqual(['deep', 'kid']);
  });

  it("hold each lifecycle as persist() says it, a failed one and an unmounted skill's inactive one beside the usual all-active", async () => {
    const path = await databaseFile();
    const system = systems.start({ definitions: [Keeper], store: createSqliteStore({ path }) });
    const model = system.spawn(Keeper, { id: 'model' }).persist();
    const active = system.spawn(Keeper, { id: 'active' });
    const failed = system.restore({ ...model, id: 'failed', agent: { ...model.agent, id: 'failed' }, lifecycles: { bag: 'failed' } });
    const retired = system.restore({ ...model, id: 'retired', agent: { ...model.agent, id: 'retired' }, lifecycles: { bag: 'active', notes: 'inactive' } });
    // A step of each after the first rows: written again, as steps are.
    for (const ref of [active, failed, retired]) await ref.call(createSignal('bag.put', { depth: 0, label: ref.id }));
    const persisted = [active, failed, retired].map((ref) => ({ id: ref.id, text: JSON.stringify(ref.persist()) }));
    await system.shutdown();

    const stored = rows(path);
    for (const { id, text } of persisted) expect(stored.find((row) => row.id === id)!.text).toBe(text);
    const lifecycles = (id: string) => (stored.find((row) => row.id === id)!.snapshot as { lifecycles: unknown }).lifecycles;
    expect(lifecycles('active')).toEqual({ bag: 'active' });
    expect(lifecycles('failed')).toEqual({ bag: 'failed' });
    expect(lifecycles('retired')).toEqual({ bag: 'active', notes: 'inactive' });
  });

  it('refuses, naming the path, state JSON would not keep as it is, and keeps the last row written', async () => {
    const path = await databaseFile();
    const system = systems.start({ definitions: [Keeper], store: createSqliteStore({ path }) });
    const agent = system.spawn(Keeper, { id: 'k' });
    await agent.call(createSignal('bag.put', { depth: 1, label: 'kept' }));
    await expect(agent.call(createSignal('bag.put', { depth: 2, hole: true }))).rejects.toMatchObject({
      code: 'invalid_state',
      details: { reason: 'unpersistable', path: ['state', 'bag', 'value', 'next', 'next', 0] },
    });
    await system.shutdown();
    expect((rows(path)[0]!.snapshot as { agent: { state: { bag: { label: string } } } }).agent.state.bag.label).toBe('kept');
  });

  it('writes and reads back agents whose ids hold any character', async () => {
    const path = await databaseFile();
    const ids = ['tab\there', 'soh\u0001inside', 'é 😀 "quoted"'];
    const first = systems.start({ definitions: [Keeper], store: createSqliteStore({ path }) });
    for (const id of ids) await first.spawn(Keeper, { id }).call(createSignal('bag.put', { depth: 0, label: id }));
    await first.shutdown();
    expect(rows(path).map((row) => row.id)).toEqual(ids);

    const second = systems.start({ definitions: [Keeper], store: createSqliteStore({ path }) });
    expect(second.list().map((ref) => [ref.id, (ref.getSnapshot().state as { bag: { label: string } }).bag.label])).toEqual(ids.map((id) => [id, id]));
  });

  it('keeps every field of the rows of one batch exactly, whatever characters they hold', async () => {
    const path = await databaseFile();
    const store = createSqliteStore({ path });
    const given = [
      { id: 'a\u0001b', parent: undefined, definition: 'déf 😀\n', snapshot: '{"text":"\\u0000 😀"}' },
      { id: '😀', parent: 'a\u0001b', definition: 'x', snapshot: '{}' },
      { id: 'c', parent: 'p', definition: 'tab\there', snapshot: `{"long":"${'é'.repeat(5_000)}"}` },
    ];
    await store.commit({ save: given, delete: [] });
    store.close();
    expect(rows(path).map(({ id, parent, definition, text }) => ({ id, parent, definition, text }))).toEqual(
      given.map(({ id, parent, definition, snapshot }) => ({ id, parent: parent ?? null, definition, text: snapshot })),
    );
  });

  it('writes a batch of any size whole, several statements of rows in one transaction, each row where its id is', async () => {
    const path = await databaseFile();
    const store = createSqliteStore({ path });
    const row = (i: number, version: number) => ({ id: `agent-${i}`, parent: i % 3 === 0 ? undefined : `agent-${i - 1}`, definition: `def-${i % 4}`, snapshot: `{"i":${i},"version":${version}}` });
    // 64 + 32 + 8 + 2 + 1 rows, then a batch of 7 that writes over some of them and adds one.
    const first = Array.from({ length: 107 }, (_, i) => row(i, 1));
    await store.commit({ save: first, delete: [] });
    const second = [5, 0, 106, 63, 64, 99, 107].map((i) => row(i, 2));
    await store.commit({ save: second, delete: ['agent-1'] });
    store.close();
    const expected = new Map(first.map((r) => [r.id, r]));
    for (const r of second) expected.set(r.id, r);
    expected.delete('agent-1');
    const stored = rows(path).map(({ id, parent, definition, text }) => ({ id, parent, definition, text }));
    expect(stored.sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      [...expected.values()].map(({ id, parent, definition, snapshot }) => ({ id, parent: parent ?? null, definition, text: snapshot })).sort((a, b) => a.id.localeCompare(b.id)),
    );
  });

  it('opening a file with damaged rows restores the others and reports each damaged one by its id, leaving it there', async () => {
    const path = await databaseFile();
    const first = systems.start({ definitions: [Keeper], store: createSqliteStore({ path }) });
    for (const id of ['a', 'b', 'c', 'd']) await first.spawn(Keeper, { id }).call(createSignal('bag.put', { depth: 0, label: id }));
    await first.shutdown();
    const db = new Database(path);
    // Texts that are not one JSON value each, and that, read beside their neighbours, would shift them.
    db.prepare('UPDATE agents SET snapshot = ? WHERE id = ?').run('"x","y"', 'b');
    db.prepare('UPDATE agents SET snapshot = ? WHERE id = ?').run('1,2', 'c');
    db.close();

    const errors: Array<{ agent: string | undefined; code: string }> = [];
    const second = systems.start({ definitions: [Keeper], store: createSqliteStore({ path }), onUnhandledError: (error, agent) => errors.push({ agent, code: error.code }) });
    expect(second.list().map((ref) => [ref.id, (ref.getSnapshot().state as { bag: { label: string } }).bag.label])).toEqual([
      ['a', 'a'],
      ['d', 'd'],
    ]);
    expect(errors).toEqual([
      { agent: 'b', code: 'invalid_snapshot' },
      { agent: 'c', code: 'invalid_snapshot' },
    ]);
    await second.shutdown();
    const left = new Database(path, { readonly: true });
    expect(left.prepare('SELECT id, snapshot FROM agents ORDER BY rowid').all()).toEqual(expect.arrayContaining([{ id: 'b', snapshot: '"x","y"' }, { id: 'c', snapshot: '1,2' }]));
    left.close();
  });

  describe('sent to the database in pieces (the state, and the body once for many rows)', () => {
    /** A row as a durable system makes it: its text, and the same text in pieces. */
    const pieced = (id: string, parent: string | undefined, pieces: { head?: string; state: string; body: string; end?: string }): PiecedRow => {
      const head = pieces.head ?? headText(id, 'keeper', id, 'keeper');
      const end = pieces.end ?? (parent === undefined ? '}' : `,"parent":${JSON.stringify(parent)}}`);
      const given: RowPieces = { head: pieces.head, state: pieces.state, body: pieces.body, end: pieces.end };
      return { id, parent, definition: 'keeper', snapshot: head + pieces.state + pieces.body + end, [ROW_PIECES]: given };
    };
    const body = (n: number) => `,"mounted":[{"name":"bag","stateKey":"bag","config":{"n":${n}}}]},"lifecycles":{"bag":"active"},"children":[]`;
    const texts = (path: string) => Object.fromEntries(rows(path).map((row) => [row.id, row.text]));

    it('writes each row whole: standard or given head and end, a parent, a body over the kept length, odd characters', async () => {
      const path = await databaseFile();
      const store = createSqliteStore({ path });
      const long = `,"mounted":[]},"lifecycles":{},"children":${JSON.stringify(Array.from({ length: 600 }, (_, i) => `child-${i}`))}`;
      const given = [
        pieced('plain', undefined, { state: '{"bag":{}}', body: body(1) }),
        pieced('é "😀"\u2028', 'plain', { state: '{"bag":{"label":"\u0000"}}', body: body(1) }),
        pieced('other', undefined, { head: headText('other', 'keeper', 'renamed', 'older'), state: '{}', body: body(2), end: ',"starting":true}' }),
        pieced('many', 'plain', { state: '{}', body: long, end: ',"parent":"plain","scheduled":[]}' }),
      ];
      expect(long.length).toBeGreaterThan(4_096);
      await store.commit({ save: given, delete: [] });
      // Again, the bodies now sent before.
      await store.commit({ save: given.map((row) => pieced(row.id, row.parent, { ...row[ROW_PIECES]!, head: row[ROW_PIECES]!.head, end: row[ROW_PIECES]!.end, state: '{"again":true}' })), delete: [] });
      store.close();
      const written = texts(path);
      for (const row of given) expect(written[row.id]).toBe(row.snapshot.replace(row[ROW_PIECES]!.state, '{"again":true}'));
    });

    it('keeps every row right past the number of bodies the database keeps (they are forgotten and sent again)', async () => {
      const path = await databaseFile();
      const store = createSqliteStore({ path });
      // 3,000 bodies in batches of 100: the table is full and forgotten twice; earlier bodies come back after.
      const expected = new Map<string, string>();
      for (let batch = 0; batch < 40; batch++) {
        const save = Array.from({ length: 100 }, (_, i) => {
          const n = batch < 30 ? batch * 100 + i : (batch - 30) * 100 + i;
          return pieced(`a${n}`, undefined, { state: `{"batch":${batch}}`, body: body(n) });
        });
        for (const row of save) expected.set(row.id, row.snapshot);
        await store.commit({ save, delete: [] });
      }
      store.close();
      expect(texts(path)).toEqual(Object.fromEntries(expected));
    });

    it('refers to bodies sent with a batch that failed and with one refused after it, in the batches after them', async () => {
      const path = await databaseFile();
      refusingDatabase(path, 'bad');
      const store = createSqliteStore({ path });
      // Given together: the second is refused with the first (it was given before the failure was heard of).
      const failing = store.commit({ save: [pieced('bad', undefined, { state: '{}', body: body(7) }), pieced('a', undefined, { state: '{"v":1}', body: body(8) })], delete: [] });
      const refused = store.commit({ save: [pieced('b', undefined, { state: '{"v":1}', body: body(9) })], delete: [] });
      await expect(failing).rejects.toMatchObject({ code: 'store_failed', message: expect.stringContaining('bad is refused') });
      await expect(refused).rejects.toMatchObject({ code: 'store_failed' });
      const after = [pieced('a', undefined, { state: '{"v":2}', body: body(8) }), pieced('b', undefined, { state: '{"v":2}', body: body(9) }), pieced('c', undefined, { state: '{}', body: body(7) })];
      await store.commit({ save: after, delete: [] });
      store.close();
      expect(texts(path)).toEqual(Object.fromEntries(after.map((row) => [row.id, row.snapshot])));
    });
  });
});
