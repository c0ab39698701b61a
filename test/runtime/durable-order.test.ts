/**
 * Batches given to the SQLite store before the last one is written: it writes them in order, and
 * once one fails it refuses those given before the failure was reported, so no step that followed
 * a failed one is written while its caller is told it failed.
 */
import Database from 'libsql';
import { describe, expect, it } from 'vitest';
import { createSqliteStore, type AgentSnapshot, type DurableStore, type StoreBatch } from '../../src/index.js';
import { SQLITE_SCHEMA_VERSION } from '../../src/runtime/sqlite-store.js';
import { NotesAgent, createSignal, defineAgent, itemsOf, notebook, systemPerTest, tempFolders } from './fixtures.js';

const Parent = defineAgent({ name: 'parent_agent', skills: [notebook] });

const systems = systemPerTest();
const databaseFile = tempFolders('durable-order').database;

/**
 * A database of the store's schema whose writes of a snapshot holding `poison` fail inside
 * SQLite's transaction, as a full disk would fail them.
 */
function poisonedDatabase(path: string): void {
  const db = new Database(path);
  db.exec('CREATE TABLE agents (id TEXT PRIMARY KEY, parent TEXT, definition TEXT NOT NULL, snapshot TEXT NOT NULL, saved_at INTEGER NOT NULL) STRICT');
  for (const when of ['INSERT', 'UPDATE']) {
    db.exec(`CREATE TRIGGER poison_${when.toLowerCase()} BEFORE ${when} ON agents WHEN NEW.snapshot LIKE '%poison%' BEGIN SELECT RAISE(ABORT, 'disk full'); END`);
  }
  db.exec(`PRAGMA user_version = ${SQLITE_SCHEMA_VERSION}`);
  db.close();
}

/** A row of agent `id` whose snapshot text holds `text`. */
function row(id: string, text: string): StoreBatch['save'][number] {
  return { id, parent: undefined, definition: 'notes_agent', snapshot: JSON.stringify({ id, text }) };
}

/** `store`, counting the batches it holds at once (given, not yet written). */
function watched(store: DurableStore, inOrder: boolean | undefined): DurableStore & { mostAtOnce: number } {
  let holding = 0;
  const wrapper = {
    ...store,
    inOrder,
    mostAtOnce: 0,
    async commit(batch: StoreBatch) {
      holding++;
      wrapper.mostAtOnce = Math.max(wrapper.mostAtOnce, holding);
      try {
        await store.commit(batch);
      } finally {
        holding--;
      }
    },
  };
  return wrapper;
}

describe('the SQLite store writes batches in order', () => {
  it('refuses the batches given before a failure was reported, and writes those given after', async () => {
    const path = await databaseFile();
    poisonedDatabase(path);
    const store = createSqliteStore({ path });
    try {
      expect(store.inOrder).toBe(true);
      await store.commit({ save: [row('a', 'first')], delete: [] });
      const failing = store.commit({ save: [row('a', 'poison')], delete: [] });
      // Given while the failing one is under way: written after it, so refused with it.
      const following = store.commit({ save: [row('b', 'after the failure')], delete: [] });
      await expect(failing).rejects.toMatchObject({ code: 'store_failed', details: { reason: 'write_failed' } });
      await expect(following).rejects.toMatchObject({ code: 'store_failed', message: expect.stringContaining('the batch given before it failed') });
      expect(store.read('b')).toBeUndefined();
      // Given once the failure was reported: written.
      await store.commit({ save: [row('b', 'later')], delete: [] });
      expect(store.read('a')).toEqual({ id: 'a', text: 'first' });
      expect(store.read('b')).toEqual({ id: 'b', text: 'later' });
    } finally {
      store.close();
    }
  });
  it('refuses a batch given before a second failure was reported, after refusing one for the first', async () => {
    const path = await databaseFile();
    poisonedDatabase(path);
    const store = createSqliteStore({ path });
    try {
      // The store's own promises (commit returns one), so what follows each runs as it settles.
      const first = Promise.resolve(store.commit({ save: [row('a', 'poison')], delete: [] }));
      // Given before the first failure was reported: refused with it.
      const refused = Promise.resolve(store.commit({ save: [row('b', 'refused')], delete: [] }));
      // Given once the first failure was reported, and failing in its turn.
      const second = first.catch(() => store.commit({ save: [row('a', 'poison again')], delete: [] }));
      // Given once the refusal was reported, but before the second failure was: refused with it.
      const following = refused.catch(() => store.commit({ save: [row('c', 'after the second failure')], delete: [] }));
      await expect(first).rejects.toMatchObject({ code: 'store_failed', message: expect.stringContaining('disk full') });
      await expect(refused).rejects.toMatchObject({ code: 'store_failed', message: expect.stringContaining('the batch given before it failed') });
      await expect(second).rejects.toMatchObject({ code: 'store_failed', message: expect.stringContaining('disk full') });
      await expect(following).rejects.toMatchObject({ code: 'store_failed', message: expect.stringContaining('the batch given before it failed') });
      expect(store.read('c')).toBeUndefined();
      // Given once both failures were reported: written.
      await store.commit({ save: [row('c', 'later')], delete: [] });
      expect(store.read('c')).toEqual({ id: 'c', text: 'later' });
    } finally {
      store.close();
    }
  });
});

describe("'step' durability on a store that writes in order", () => {
  it('gives the store the next batch while one is written, and a store that does not say it writes in order one batch at a time', async () => {
    for (const inOrder of [true, undefined]) {
      const store = watched(createSqliteStore({ path: await databaseFile() }), inOrder);
      const system = systems.start({ definitions: [NotesAgent], store, onUnhandledDiagnostic: () => {} });
      const agents = Array.from({ length: 64 }, (_, i) => system.spawn(NotesAgent, { id: `n${i}` }));
      await system.flush();
      // 64 agents stepping at once: written as two batches of 32 (see `stepsOver`), the second given at once or after the first.
      await Promise.all(agents.map((agent) => agent.call(createSignal('notes.add_now', { item: 'a' }))));
      expect(store.mostAtOnce).toBe(inOrder ? 2 : 1);
      await system.shutdown();
    }
  });

  it('fails the steps of a batch given while a failing one was written, brings their agents back, and writes none of them', async () => {
    const path = await databaseFile();
    poisonedDatabase(path);
    const store = createSqliteStore({ path });
    const system = systems.start({ definitions: [NotesAgent], store, onUnhandledError: () => {}, onUnhandledDiagnostic: () => {} });
    const stored = (id: string) => (store.read(id) as AgentSnapshot | undefined)?.agent.state;
    const agents = Array.from({ length: 64 }, (_, i) => system.spawn(NotesAgent, { id: `n${i}` }));
    await Promise.all(agents.map((agent) => agent.call(createSignal('notes.add_now', { item: 'kept' }))));
    // In one turn: the first 32 steps are given as a batch (holding the poisoned one) while the
    // other 32 still step, and those as the next, before the first fails.
    const answers = await Promise.allSettled(agents.map((agent, i) => agent.call(createSignal('notes.add_now', { item: i === 0 ? 'poison' : 'lost' }))));
    expect(answers.map((answer) => answer.status === 'rejected' && (answer.reason as { code?: string }).code)).toEqual(agents.map(() => 'store_failed'));
    for (const agent of agents) {
      expect(itemsOf(system.get(agent.id)!)).toEqual(['kept']);
      expect(stored(agent.id)).toEqual({ notebook: { items: ['kept'] } });
    }
    // The system keeps serving, from the stored states.
    expect(await system.get('n40')!.call(createSignal('notes.add_now', { item: 'after' }))).toEqual({ count: 2 });
    expect(stored('n40')).toEqual({ notebook: { items: ['kept', 'after'] } });
  });

  it('gives every caller the truth through failed writes in waves: a step answered is stored and running, a step failed is neither', async () => {
    const path = await databaseFile();
    poisonedDatabase(path);
    const store = createSqliteStore({ path });
    const system = systems.start({ definitions: [NotesAgent], store, onUnhandledError: () => {}, onUnhandledDiagnostic: () => {} });
    const agents = Array.from({ length: 100 }, (_, i) => system.spawn(NotesAgent, { id: `n${i}` }));
    await system.flush();
    const answered = new Map<string, string[]>(agents.map((agent) => [agent.id, []]));
    // About one step in fifty fails to be written, in batches of every size.
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    let poisoned = 0;
    await Promise.all(
      agents.map(async (agent) => {
        for (let round = 0; round < 12; round++) {
          const poison = next() < 0.02;
          if (poison) poisoned++;
          const item = `${poison ? 'poison ' : ''}${agent.id}-${round}`;
          const outcome = await agent.call(createSignal('notes.add_now', { item })).then(
            () => 'answered',
            (error: { code?: string }) => error.code,
          );
          if (outcome === 'answered') answered.get(agent.id)!.push(item);
          else expect(outcome).toBe('store_failed');
        }
      }),
    );
    expect(poisoned).toBeGreaterThan(1);
    await system.flush();
    for (const agent of agents) {
      const stored = (store.read(agent.id) as AgentSnapshot).agent.state;
      expect({ agent: agent.id, running: itemsOf(agent), stored }).toEqual({ agent: agent.id, running: answered.get(agent.id), stored: { notebook: { items: answered.get(agent.id) } } });
    }
  });

  it('fails the steps of child agents that went back with a parent whose write failed, and keeps every parent with its children', async () => {
    const path = await databaseFile();
    poisonedDatabase(path);
    const store = createSqliteStore({ path });
    const system = systems.start({ definitions: [NotesAgent, Parent], store, onUnhandledError: () => {}, onUnhandledDiagnostic: () => {} });
    const agents = [];
    for (let p = 0; p < 20; p++) {
      const parent = system.spawn(Parent, { id: `p${p}` });
      agents.push(parent);
      for (let c = 0; c < 4; c++) agents.push(system.spawn(NotesAgent, { id: `p${p}c${c}`, parent }));
    }
    await system.flush();
    const answered = new Map<string, string[]>(agents.map((agent) => [agent.id, []]));
    let seed = 11;
    const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    await Promise.all(
      agents.map(async (agent) => {
        for (let round = 0; round < 12; round++) {
          // Only parents' writes fail: their children go back with them.
          const item = `${agent.parent === undefined && next() < 0.03 ? 'poison ' : ''}${agent.id}-${round}`;
          const outcome = await agent.call(createSignal('notes.add_now', { item })).then(
            () => 'answered',
            (error: { code?: string }) => error.code,
          );
          if (outcome === 'answered') answered.get(agent.id)!.push(item);
          else expect(outcome).toBe('store_failed');
        }
      }),
    );
    await system.flush();
    for (const agent of agents) {
      const stored = (store.read(agent.id) as AgentSnapshot).agent.state;
      expect({ agent: agent.id, running: itemsOf(agent), stored }).toEqual({ agent: agent.id, running: answered.get(agent.id), stored: { notebook: { items: answered.get(agent.id) } } });
    }
    for (let p = 0; p < 20; p++) expect(system.get(`p${p}`)!.children()).toEqual([0, 1, 2, 3].map((c) => `p${p}c${c}`));
    expect(system.list()).toHaveLength(100);
  });

  it('answers a step whose write fails while the system shuts down with the failure, and leaves the agent as it was written', async () => {
    const path = await databaseFile();
    poisonedDatabase(path);
    const store = createSqliteStore({ path });
    const system = systems.start({ definitions: [NotesAgent], store, onUnhandledError: () => {}, onUnhandledDiagnostic: () => {} });
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    await agent.call(createSignal('notes.add_now', { item: 'kept' }));
    const failing = agent.call(createSignal('notes.add_now', { item: 'poison' })).catch((error: unknown) => error);
    const down = system.shutdown();
    expect(await failing).toMatchObject({ code: 'store_failed', details: { reason: 'write_failed' } });
    await down;
    expect(agent.status).toBe('stopped');
    const again = createSqliteStore({ path });
    try {
      expect((again.read('n1') as AgentSnapshot).agent.state).toEqual({ notebook: { items: ['kept'] } });
    } finally {
      again.close();
    }
  });
});
