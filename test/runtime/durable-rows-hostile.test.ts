/**
 * A durable system writes for every agent exactly `JSON.stringify(ref.persist())`, however its
 * row is put together (in pieces, its body sent once and referred to by number): agents restored
 * from a snapshot (an unmounted skill's lifecycle with it), children in their hundreds, agents still
 * starting, scheduled signals, thousands of distinct skill configs, odd characters everywhere,
 * skills mounted and unmounted between steps, and a write that failed followed by more steps.
 */
import Database from 'libsql';
import { describe, expect, it } from 'vitest';
import { createSqliteStore, type AgentRef, type AgentSystem, type TraceLine } from '../../src/index.js';
import type { PiecedRow } from '../../src/runtime/persistence.js';
import { headText, ROW_PIECES } from '../../src/runtime/row-pieces.js';
import { Effects, createSignal, defineAction, defineAgent, defineSkill, result, rowTexts, systemPerTest, tempFolders, z } from './fixtures.js';

const systems = systemPerTest();
const databaseFile = tempFolders('durable-rows-hostile').database;

/** What each running agent's row must be: `JSON.stringify(ref.persist())`, taken once everything is written. */
async function expectedRows(system: AgentSystem): Promise<Map<string, string>> {
  await system.flush();
  return new Map(system.list().map((ref) => [ref.id, JSON.stringify(ref.persist())]));
}

/** Shuts the system down (which rewrites nothing unchanged) and compares the file with `expected`, row by row. */
async function expectFileToHold(system: AgentSystem, path: string, expected: Map<string, string>): Promise<void> {
  await system.shutdown();
  const stored = rowTexts(path);
  expect([...stored.keys()].sort()).toEqual([...expected.keys()].sort());
  for (const [id, text] of expected) expect({ id, text: stored.get(id) }).toEqual({ id, text });
}

const slot = z.object({ value: z.any().optional(), label: z.string().optional() });
const keep = defineAction({
  name: 'keep',
  description: 'Keep a value and a label',
  input: z.object({ value: z.any().optional(), label: z.string().optional() }),
  run: ({ value, label }) => result(null, { state: { value, label } }),
});
const same = defineAction({ name: 'same', description: 'Change nothing', input: z.object({}), run: () => result(null) });
const later = defineAction({
  name: 'later',
  description: 'Schedule a signal',
  input: z.object({ inMs: z.number().int(), type: z.string() }),
  run: ({ inMs, type }) => result(null, { effects: [Effects.schedule(inMs, createSignal(type, { note: 'é "\u2028' }))] }),
});
const spawnKids = defineAction({
  name: 'spawn_kids',
  description: 'Spawn children',
  input: z.object({ prefix: z.string(), count: z.number().int() }),
  run: ({ prefix, count }) => result(null, { effects: Array.from({ length: count }, (_, i) => Effects.spawn('keeper', { id: `${prefix}${i}` })) }),
});
const slotSkill = defineSkill({
  name: 'slot',
  schema: slot,
  configSchema: z.object({ tag: z.string().default('none "é"\u2028'), n: z.number().default(0) }),
  actions: [keep, same, later, spawnKids],
  routes: [
    { path: 'slot.keep', target: { action: 'keep' } },
    { path: 'slot.same', target: { action: 'same' } },
    { path: 'slot.later', target: { action: 'later' } },
    { path: 'slot.spawn', target: { action: 'spawn_kids' } },
  ],
});
const extra = defineSkill({ name: 'extra', configSchema: z.object({ n: z.number(), text: z.string().default('"é"\u2028\\') }), actions: [] });
const Keeper = defineAgent({ name: 'keeper', skills: [slotSkill] });

describe('rows under hostile use', () => {
  it('odd characters, a restored agent, 500 children, skills mounted and unmounted between steps', async () => {
    const path = await databaseFile();
    const system = systems.start({ definitions: [Keeper], skills: [extra], store: createSqliteStore({ path }), durability: 'step' });
    const odd = system.spawn(Keeper, { id: 'odd "id" \u2028 é 😀 \\' });
    await odd.call(createSignal('slot.keep', { value: { '"quoted"': '\u2028\u2029', nested: ['\\', '😀', 1e21, -0] }, label: '</script>' }));
    const model = odd.persist();
    const restored = system.restore({ ...model, id: 'restored', agent: { ...model.agent, id: 'restored' }, lifecycles: { slot: 'active', gone: 'inactive' } });
    await restored.call(createSignal('slot.keep', { label: 'after restore' }));
    const parent = system.spawn(Keeper, { id: 'parent' });
    await parent.call(createSignal('slot.spawn', { prefix: 'kid-with-a-long-name-', count: 500 }));
    const kid = system.list().find((ref) => ref.id === 'kid-with-a-long-name-7')!;
    await kid.call(createSignal('slot.keep', { label: 'kid', value: JSON.parse('{"__proto__":{"x":1},"2":"two","1":"one","b":[{"__proto__":null}]}') }));
    expect(JSON.stringify(kid.persist())).toContain('{"1":"one","2":"two","__proto__":{"x":1},"b":[{"__proto__":null}]}');
    // A child's end names its parent, and with a scheduled signal it is not the standard one.
    await kid.call(createSignal('slot.later', { inMs: 3_600_000, type: 'slot.same' }));
    await odd.call(createSignal('slot.spawn', { prefix: 'odd kid "\u2028" ', count: 2 }));
    for (let round = 0; round < 3; round++) {
      await odd.mount(extra, { n: round });
      await odd.call(createSignal('slot.keep', { label: `mounted ${round}` }));
      await odd.unmount(extra);
      await odd.call(createSignal('slot.keep', { label: `unmounted ${round}` }));
    }
    await system.stop('kid-with-a-long-name-3');
    await parent.call(createSignal('slot.keep', { label: 'one child fewer' }));
    expect(JSON.stringify(parent.persist()).length).toBeGreaterThan(4_096);
    await expectFileToHold(system, path, await expectedRows(system));
  });

  it('more than 1,024 distinct skill configs, each agent written at several steps', async () => {
    const path = await databaseFile();
    const system = systems.start({ definitions: [Keeper], skills: [extra], store: createSqliteStore({ path }), durability: 'step' });
    const agents: AgentRef<object>[] = [];
    for (let i = 0; i < 1_300; i++) agents.push(system.spawn(Keeper, { id: `a${i}` }) as AgentRef<object>);
    await Promise.all(agents.map((ref, i) => ref.mount(extra, { n: i })));
    for (let round = 0; round < 2; round++) await Promise.all(agents.map((ref, i) => ref.call(createSignal('slot.keep', { value: i, label: `r${round}` }))));
    // The first ones once more, their bodies long forgotten by the database's thread.
    await Promise.all(agents.slice(0, 50).map((ref) => ref.unmount(extra)));
    await Promise.all(agents.slice(0, 50).map((ref) => ref.call(createSignal('slot.keep', { label: 'last' }))));
    await expectFileToHold(system, path, await expectedRows(system));
  });

  it('an agent still starting (its mount hook pending), then started by a hook that changes nothing', async () => {
    const path = await databaseFile();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const Slow = defineAgent({ name: 'slow_start', skills: [defineSkill({ name: 'hooked', actions: [same], routes: [{ path: 'hooked.same', target: { action: 'same' } }], mount: async () => held.then(() => undefined) })] });
    const system = systems.start({ definitions: [Slow], store: createSqliteStore({ path }), durability: 'step' });
    const agent = system.spawn(Slow, { id: 'slow' });
    await system.flush();
    expect(agent.persist()).toMatchObject({ starting: true });
    release();
    await agent.call(createSignal('hooked.same'));
    expect(agent.persist()).not.toHaveProperty('starting');
    await expectFileToHold(system, path, await expectedRows(system));
  });

  it('a child still starting when the system shuts down: its row says so, and names its parent', async () => {
    const path = await databaseFile();
    const Slow = defineAgent({ name: 'slow_start', skills: [defineSkill({ name: 'hooked', actions: [same], mount: () => new Promise<undefined>(() => {}) })] });
    const system = systems.start({ definitions: [Keeper, Slow], store: createSqliteStore({ path }), durability: 'step' });
    const parent = system.spawn(Keeper, { id: 'parent "\u2028"' });
    await parent.call(createSignal('slot.keep', { label: 'before' }));
    const child = system.spawn(Slow, { id: 'child', parent: parent.id });
    const expected = await expectedRows(system);
    expect(child.persist()).toMatchObject({ starting: true, parent: parent.id });
    await expectFileToHold(system, path, expected);
  });

  it('a scheduled signal written, then fired into a step that changes nothing', async () => {
    const path = await databaseFile();
    let fired!: () => void;
    const firing = new Promise<void>((resolve) => (fired = resolve));
    const trace = (record: TraceLine) => {
      if (record.kind === 'step' && record.subject === 'slot.same') fired();
    };
    const system = systems.start({ definitions: [Keeper], store: createSqliteStore({ path }), durability: 'step', trace });
    const agent = system.spawn(Keeper, { id: 'scheduler' });
    await agent.call(createSignal('slot.later', { inMs: 3_600_000, type: 'slot.keep' }));
    // Its row, written before this call is answered, holds both signals; the second fires at once.
    await agent.call(createSignal('slot.later', { inMs: 1, type: 'slot.same' }));
    await firing;
    expect((agent.persist() as { scheduled?: unknown[] }).scheduled).toHaveLength(1);
    await expectFileToHold(system, path, await expectedRows(system));
  });

  it('a scheduled signal that falls due while its agent is busy stays in its row until its step is over', async () => {
    const path = await databaseFile();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const hold = defineAction({ name: 'hold', description: 'Wait until released', input: z.object({}), run: async () => held.then(() => result(null, { state: { label: 'held' } })) });
    const Busy = defineAgent({
      name: 'busy',
      skills: [
        defineSkill({
          name: 'slot',
          schema: slot,
          actions: [same, later, hold],
          routes: [
            { path: 'slot.same', target: { action: 'same' } },
            { path: 'slot.later', target: { action: 'later' } },
            { path: 'slot.hold', target: { action: 'hold' } },
          ],
        }),
      ],
    });
    let fired!: () => void;
    const firing = new Promise<void>((resolve) => (fired = resolve));
    const trace = (record: TraceLine) => {
      if (record.kind === 'signal' && record.type === 'slot.same') fired();
    };
    const system = systems.start({ definitions: [Busy], store: createSqliteStore({ path }), durability: 'step', trace });
    const agent = system.spawn(Busy, { id: 'busy' });
    await agent.call(createSignal('slot.later', { inMs: 20, type: 'slot.same' }));
    const holding = agent.call(createSignal('slot.hold'));
    await firing;
    // Fired and waiting in the mailbox behind the held step: the snapshot written now (a row is
    // `persist()`, as the tests above check) keeps it, so a crash now fires it again once restored.
    await system.flush();
    expect(agent.persist().scheduled?.map((entry) => entry.signal.type)).toEqual(['slot.same']);
    release();
    await holding;
    await agent.call(createSignal('slot.same'));
    expect(agent.persist()).not.toHaveProperty('scheduled');
    await expectFileToHold(system, path, await expectedRows(system));
  });

  it('a write that failed for one agent, followed by more steps of every agent', async () => {
    const path = await databaseFile();
    const db = new Database(path);
    db.exec(`CREATE TABLE agents (id TEXT PRIMARY KEY, parent TEXT, definition TEXT NOT NULL, snapshot TEXT NOT NULL, saved_at INTEGER NOT NULL) STRICT;
      CREATE TRIGGER refuse BEFORE UPDATE ON agents WHEN NEW.id = 'bad' AND NEW.snapshot LIKE '%"refused"%' BEGIN SELECT RAISE(ABORT, 'bad is refused'); END;
      PRAGMA user_version = 1;`);
    db.close();
    const system = systems.start({ definitions: [Keeper], skills: [extra], store: createSqliteStore({ path }), durability: 'step' });
    const agents = ['bad', 'b', 'c'].map((id) => system.spawn(Keeper, { id }));
    await Promise.all(agents.map((ref) => ref.call(createSignal('slot.keep', { label: 'first' }))));
    const failed = await Promise.allSettled([agents[0]!.call(createSignal('slot.keep', { label: 'refused' })), agents[1]!.mount(extra, { n: 1 }), agents[2]!.call(createSignal('slot.keep', { label: 'beside' }))]);
    // The write holding 'bad' fails, and the steps written with it are refused: each agent is back to its row.
    expect(failed.map((settled) => settled.status === 'rejected' && (settled.reason as { code: string }).code)).toEqual(['store_failed', 'store_failed', 'store_failed']);
    for (const ref of agents) await ref.call(createSignal('slot.keep', { label: `after ${ref.id}` }));
    await expect(agents[1]!.mount(extra, { n: 2 })).resolves.toMatchObject({ changed: true });
    await expectFileToHold(system, path, await expectedRows(system));
  });
});

describe('a store given rows in pieces beside one it cannot send as text', () => {
  it('keeps referring to the bodies it numbered in the batch that went as it was', async () => {
    const path = await databaseFile();
    const store = createSqliteStore({ path });
    const body = `,"mounted":[]},"lifecycles":{},"children":[]`;
    const pieced = (id: string, state: string): PiecedRow => ({
      id,
      parent: undefined,
      definition: 'd',
      snapshot: headText(id, 'd', id, 'd') + state + body + '}',
      [ROW_PIECES]: { head: undefined, state, body, end: undefined },
    });
    // A definition that is not a string: the batch goes row by row, as it was given.
    const odd = { id: 'odd', parent: undefined, definition: 7 as unknown as string, snapshot: '{}' };
    await store.commit({ save: [pieced('a', '{"v":1}'), odd], delete: [] });
    await store.commit({ save: [pieced('b', '{"v":2}')], delete: [] });
    store.close();
    const stored = rowTexts(path);
    expect(stored.get('a')).toBe(pieced('a', '{"v":1}').snapshot);
    expect(stored.get('b')).toBe(pieced('b', '{"v":2}').snapshot);
  });
});
