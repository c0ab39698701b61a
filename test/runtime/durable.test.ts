/** Durable systems on an SQLite file: steps written before they are answered, agents back when the system opens again. */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'libsql';
import { describe, expect, it } from 'vitest';
import { createSqliteStore, RuntimeError, type AgentSystem, type TraceRecord, type AgentSystemOptions, type DurableStore, type ErrorInfo, type StoreBatch } from '../../src/index.js';
import { Effects, NotesAgent, Reminder, createSignal, defineAction, defineAgent, defineSkill, itemsOf, notebook, quietSystem, result, systemPerTest, thrown, z, tempFolders } from './fixtures.js';

const systems = systemPerTest();
const databaseFile = tempFolders('durable').database;

/** A system on `store` whose unhandled errors are collected in `errors`. */
function open(store: DurableStore, options: AgentSystemOptions = {}, errors: Array<{ agent: string | undefined; error: ErrorInfo }> = []): AgentSystem {
  return systems.start({ definitions: [NotesAgent, Parent, Reminder], store, onUnhandledError: (error, agent) => errors.push({ agent, error }), ...options });
}

/** Shuts a system down (which writes what is left and closes its store). */
async function close(system: AgentSystem): Promise<void> {
  await system.shutdown();
}

/** A real SQLite store whose commits are counted, and whose next commits can be made to fail. */
function counted(store: DurableStore): DurableStore & { batches: StoreBatch[]; failNext: number } {
  /** Settles once the injected failure is reported: batches given before then are refused, as the store refuses them. */
  let refusing: Promise<void> | undefined;
  const wrapper = {
    ...store,
    batches: [] as StoreBatch[],
    failNext: 0,
    commit(batch: StoreBatch) {
      if (refusing) return refusing.then(() => Promise.reject(new RuntimeError({ code: 'store_failed', message: 'not written: a batch before it failed', details: { reason: 'write_failed', path: 'test' } })));
      if (wrapper.failNext > 0) {
        wrapper.failNext--;
        // As the SQLite store fails: later, while the agents go on.
        const failing = new Promise<void>((_resolve, reject) =>
          setTimeout(() => {
            refusing = undefined;
            reject(new RuntimeError({ code: 'store_failed', message: 'disk full', details: { reason: 'write_failed', path: 'test' } }));
          }, 20),
        );
        refusing = failing.catch(() => {});
        return failing;
      }
      wrapper.batches.push(batch);
      return store.commit(batch);
    },
  };
  return wrapper;
}

const Parent = defineAgent({ name: 'parent_agent', skills: [notebook] });

const bag = z.object({ value: z.any().optional(), count: z.number().default(0) });
/** Counts (`bag.count`), and puts a Map in its state (`bag.put`), which JSON cannot hold. */
const Counting = defineAgent({
  name: 'counting_bag',
  skills: [
    defineSkill({
      name: 'bag',
      schema: bag,
      actions: [
        defineAction({ name: 'put', description: 'Put a Map', input: z.object({}), run: () => result(null, { state: { value: new Map() } }) }),
        defineAction({ name: 'count', description: 'Count one', input: z.object({}), state: bag, run: (_params, { skillState }) => result(skillState.count + 1, { state: { count: skillState.count + 1 } }) }),
      ],
      routes: [
        { path: 'bag.put', target: { action: 'put' } },
        { path: 'bag.count', target: { action: 'count' } },
      ],
    }),
  ],
});

describe("'step' durability", () => {
  it('answers a call only once its step is in the database', async () => {
    const store = createSqliteStore({ path: await databaseFile() });
    const system = open(store);
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    const stored = await agent.call(createSignal('notes.add_now', { item: 'milk' })).then(() => store.load('n1'));
    expect(stored?.agent.state).toEqual({ notebook: { items: ['milk'] } });
  });

  it('writes the steps of many agents in one transaction', async () => {
    const store = counted(createSqliteStore({ path: await databaseFile() }));
    const system = open(store);
    const agents = Array.from({ length: 50 }, (_, i) => system.spawn(NotesAgent, { id: `n${i}` }));
    await Promise.all(agents.map((agent) => agent.call(createSignal('notes.add_now', { item: 'a' }))));
    // The spawns and the 50 steps: far fewer transactions than steps (the first written while the
    // others step, the next waiting in the store meanwhile), and every step written.
    expect(store.batches.length).toBeLessThanOrEqual(3);
    for (const agent of agents) expect((await store.load(agent.id))?.agent.state).toEqual({ notebook: { items: ['a'] } });
  });

  it('with many agents stepping at once, answers each call only once its own step is in the database', async () => {
    const store = counted(createSqliteStore({ path: await databaseFile() }));
    const system = open(store);
    const agents = Array.from({ length: 100 }, (_, i) => system.spawn(NotesAgent, { id: `m${i}` }));
    const behind: string[] = [];
    await Promise.all(
      agents.map(async (agent) => {
        for (let call = 1; call <= 5; call++) {
          await agent.call(createSignal('notes.add_now', { item: String(call) }));
          const stored = (await store.load(agent.id))?.agent.state as { notebook: { items: string[] } } | undefined;
          if (stored?.notebook.items.length !== call) behind.push(`${agent.id} call ${call}: ${JSON.stringify(stored?.notebook.items)}`);
        }
      }),
    );
    expect(behind).toEqual([]);
    // Group commit still: 500 steps (and the spawns) in a few dozen transactions at most.
    expect(store.batches.length).toBeLessThan(50);
  });

  it('answers a call made while shutdown writes the last batch, once its step is written too', async () => {
    const path = await databaseFile();
    const system = open(createSqliteStore({ path }));
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    await agent.call(createSignal('notes.add_now', { item: 'a' }));
    const before = agent.call(createSignal('notes.add_now', { item: 'b' }));
    const closing = system.shutdown();
    // Taken while shutdown writes the batch holding 'b'.
    const during = agent.call(createSignal('notes.add_now', { item: 'c' }));
    expect(await Promise.all([before, during, closing])).toEqual([{ count: 2 }, { count: 3 }, undefined]);
    const again = open(createSqliteStore({ path }));
    expect(itemsOf(again.get('n1')!)).toEqual(['a', 'b', 'c']);
  });

  it('fails the steps an agent took while a failing write was under way, as they went back with it', async () => {
    const store = counted(createSqliteStore({ path: await databaseFile() }));
    const system = open(store);
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    await agent.call(createSignal('notes.add_now', { item: 'kept' }));
    store.failNext = 1;
    const first = agent.call(createSignal('notes.add_now', { item: 'lost' })).catch((error: unknown) => error);
    // Taken by the agent while the first write is under way (its answer waits for the next one).
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = agent.call(createSignal('notes.add_now', { item: 'lost too' })).catch((error: unknown) => error);
    expect(await first).toMatchObject({ code: 'store_failed' });
    expect(await second).toMatchObject({ code: 'store_failed' });
    await system.flush();
    expect(itemsOf(system.get('n1')!)).toEqual(['kept']);
    expect((await store.load('n1'))?.agent.state).toEqual({ notebook: { items: ['kept'] } });
  });

  it("fails a call in the words of a store of the user's own whose commit throws, naming the store's file only when it has one, and keeps answering", async () => {
    for (const named of [false, true]) {
      const sqlite = createSqliteStore({ path: await databaseFile() });
      const { path: file, ...unnamed } = sqlite;
      let failNext = false;
      const commit = (batch: StoreBatch) => {
        if (!failNext) return sqlite.commit(batch);
        failNext = false;
        throw new Error('disk quota exceeded');
      };
      const store: DurableStore = named ? { ...sqlite, commit } : { ...unnamed, commit };
      const system = open(store);
      const agent = system.spawn(NotesAgent, { id: 'n1' });
      await agent.call(createSignal('notes.add_now', { item: 'kept' }));
      failNext = true;
      const failed = (await agent.call(createSignal('notes.add_now', { item: 'lost' })).catch((error: unknown) => error)) as RuntimeError;
      expect(failed).toMatchObject({ code: 'store_failed', message: expect.stringContaining(`writing 1 agent(s)${named ? ` to ${file}` : ''} failed: disk quota exceeded`) });
      expect(failed.details).toEqual(named ? { reason: 'write_failed', path: file } : { reason: 'write_failed' });
      expect(itemsOf(system.get('n1')!)).toEqual(['kept']);
      await agent.call(createSignal('notes.add_now', { item: 'again' }));
      expect(itemsOf(system.get('n1')!)).toEqual(['kept', 'again']);
      await close(system);
    }
  });

  it('fails the calls of an agent whose state cannot be stored, and writes the others', async () => {
    const bad = defineAgent({
      name: 'bad_agent',
      skills: [
        defineSkill({
          name: 'bag',
          schema: z.object({ value: z.any().optional() }),
          actions: [defineAction({ name: 'put', description: 'Put a BigInt', input: z.object({}), run: () => result(null, { state: { value: 1n } }) })],
          routes: [{ path: 'bag.put', target: { action: 'put' } }],
        }),
      ],
    });
    const store = createSqliteStore({ path: await databaseFile() });
    const unhandled: Array<{ agent: string | undefined; error: ErrorInfo }> = [];
    const system = open(store, { definitions: [bad, NotesAgent] }, unhandled);
    const failing = system.spawn(bad, { id: 'b1' });
    const fine = system.spawn(NotesAgent, { id: 'n1' });
    const [a, b] = await Promise.allSettled([failing.call('bag.put'), fine.call(createSignal('notes.add_now', { item: 'x' }))]);
    expect(a.status === 'rejected' && (a.reason as RuntimeError).code).toBe('invalid_state');
    expect(b.status).toBe('fulfilled');
    expect((await store.load('n1'))?.agent.state).toEqual({ notebook: { items: ['x'] } });
    // The caller received the error: it is not also unhandled. Sent without a caller, it is.
    expect(unhandled).toEqual([]);
    const sent = system.spawn(bad, { id: 'b2' });
    await system.flush();
    sent.send('bag.put');
    await system.flush();
    expect(unhandled.map(({ agent, error }) => `${agent}: ${error.code}`)).toEqual(['b2: invalid_state']);
  });

  it('is served by the ref its user holds: the failed call rejects with store_failed, the same ref answers the next from what is stored', async () => {
    const records: TraceRecord[] = [];
    const errors: Array<{ agent: string | undefined; error: ErrorInfo }> = [];
    const store = counted(createSqliteStore({ path: await databaseFile() }));
    const system = open(store, { trace: (line) => void records.push(line) }, errors);
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    await agent.call(createSignal('notes.add_now', { item: 'kept' }));
    store.failNext = 1;
    const failure = await agent.call(createSignal('notes.add_now', { item: 'lost' })).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RuntimeError);
    expect((failure as RuntimeError).toInfo()).toMatchObject({ code: 'store_failed', details: { reason: 'write_failed' } });
    expect(errors.map((entry) => entry.error.code)).toContain('store_failed');
    expect(agent.status).toBe('idle');
    expect(system.get('n1')).toBe(agent);
    expect(itemsOf(agent)).toEqual(['kept']);
    expect(await agent.call(createSignal('notes.add_now', { item: 'after' }))).toEqual({ count: 2 });
    agent.send(createSignal('notes.add_now', { item: 'sent' }));
    expect(await agent.call('notes.list')).toEqual({ items: ['kept', 'after', 'sent'] });
    expect((await store.load('n1'))?.agent.state).toEqual({ notebook: { items: ['kept', 'after', 'sent'] } });
    // One agent throughout: reverted, never stopped and spawned again.
    expect(records.filter((record) => 'agent' in record && record.agent === 'n1' && ['spawn', 'stop', 'revert'].includes(record.kind)).map((record) => record.kind)).toEqual(['spawn', 'revert']);
    expect(system.list()).toHaveLength(1);
    expect(system.list()[0]).toBe(agent);
  });

  it('keeps the refs of its child agents, which go back with it and stay its children', async () => {
    const store = counted(createSqliteStore({ path: await databaseFile() }));
    const system = open(store);
    const parent = system.spawn(Parent, { id: 'p' });
    const kid = system.spawn(NotesAgent, { id: 'k', parent });
    await kid.call(createSignal('notes.add_now', { item: 'kid kept' }));
    await parent.call(createSignal('notes.add_now', { item: 'kept' }));
    store.failNext = 1;
    await expect(parent.call(createSignal('notes.add_now', { item: 'lost' }))).rejects.toMatchObject({ code: 'store_failed' });
    const [listedParent, listedKid, ...more] = system.list();
    expect([listedParent === parent, listedKid === kid, more]).toEqual([true, true, []]);
    expect(parent.children()).toEqual(['k']);
    expect(itemsOf(parent)).toEqual(['kept']);
    expect(await kid.call(createSignal('notes.add_now', { item: 'after' }))).toEqual({ count: 2 });
    // Still linked: stopping the parent through its ref stops the child.
    await parent.stop();
    expect(kid.status).toBe('stopped');
    await system.flush();
    expect(await store.list()).toEqual([]);
  });

  it('answers the callers still waiting on it (a step under way, an item queued) with the write\'s error, not agent_stopped, and applies none of it', async () => {
    const store = counted(createSqliteStore({ path: await databaseFile() }));
    const system = open(store);
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    await agent.call(createSignal('notes.add_now', { item: 'kept' }));
    store.failNext = 1;
    const failed = agent.call(createSignal('notes.add_now', { item: 'lost' })).catch((error: unknown) => error);
    // Under way and queued when the write fails (it fails 20 ms on; the slow step takes 200).
    const slow = agent.call(createSignal('notes.add', { item: 'slow', delay: 200 })).catch((error: unknown) => error);
    const queued = agent.call(createSignal('notes.add_now', { item: 'queued' })).catch((error: unknown) => error);
    for (const outcome of await Promise.all([failed, slow, queued])) expect(outcome).toMatchObject({ code: 'store_failed' });
    expect(((await slow) as Error).message).toContain("agent 'n1' went back to its last durable state before answering");
    expect(await agent.call('notes.list')).toEqual({ items: ['kept'] });
    // The slow step of the process it replaced ends later: nothing of it lands.
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(await agent.call('notes.list')).toEqual({ items: ['kept'] });
  });

  it('loses a skill mounted by the step whose write failed: not mounted, and its lifecycle traced inactive after the revert', async () => {
    const records: TraceRecord[] = [];
    const store = counted(createSqliteStore({ path: await databaseFile() }));
    const system = open(store, { trace: (line) => void records.push(line) });
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    await agent.call(createSignal('notes.add_now', { item: 'kept' }));
    store.failNext = 1;
    await expect(agent.mount(defineSkill({ name: 'stamp', schema: z.object({ n: z.number().default(0) }) }))).rejects.toMatchObject({ code: 'store_failed' });
    expect(agent.getSnapshot().mounted.map((record) => record.name)).toEqual(['notebook']);
    expect(agent.getSnapshot().lifecycles).toEqual({ notebook: 'active' });
    const stamp = records.flatMap((record) => (record.kind === 'lifecycle' && record.skill === 'stamp' ? [record.state] : record.kind === 'revert' ? ['revert'] : []));
    expect(stamp).toEqual(['active', 'inactive', 'revert']);
  });

  it('is stopped, its ref with it, when it was never written', async () => {
    const store = counted(createSqliteStore({ path: await databaseFile() }));
    const system = open(store);
    // Its spawn and its first step are written together: that write fails.
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    store.failNext = 1;
    await expect(agent.call(createSignal('notes.add_now', { item: 'lost' }))).rejects.toMatchObject({ code: 'store_failed' });
    expect(agent.status).toBe('stopped');
    expect(system.get('n1')).toBeUndefined();
    await expect(agent.call('notes.list')).rejects.toMatchObject({ code: 'agent_stopped' });
  });

  it('is stopped, saying its last written state could not be read back, when the store fails to read it; its row and its id stay', async () => {
    const path = await databaseFile();
    const store = counted(createSqliteStore({ path }));
    let failReads = false;
    const read = store.read!.bind(store);
    store.read = (id) => {
      if (failReads) throw new RuntimeError({ code: 'store_failed', message: 'disk read error', details: { reason: 'open_failed', path } });
      return read(id);
    };
    const errors: Array<{ agent: string | undefined; error: ErrorInfo }> = [];
    const stops: string[] = [];
    const system = open(store, { trace: (record: TraceRecord) => record.kind === 'stop' && stops.push(record.reason) }, errors);
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    await agent.call(createSignal('notes.add_now', { item: 'kept' }));
    store.failNext = 1;
    failReads = true;
    await expect(agent.call(createSignal('notes.add_now', { item: 'lost' }))).rejects.toMatchObject({ code: 'store_failed' });
    expect(agent.status).toBe('stopped');
    expect(stops).toEqual(['its last write failed; its last written state could not be read back']);
    expect(errors.map(({ agent, error }) => [agent, error.code, error.message])).toEqual([
      [undefined, 'store_failed', 'disk full'],
      ['n1', 'store_failed', "stored agent 'n1' was not restored and is left in the store: disk read error"],
    ]);
    // A new agent of its id would write over the row it keeps.
    expect(() => system.spawn(NotesAgent, { id: 'n1' })).toThrow(expect.objectContaining({ code: 'duplicate_agent', subject: 'n1' }));
    await close(system);
    const next = open(createSqliteStore({ path }));
    expect(itemsOf(next.get('n1')!)).toEqual(['kept']);
  });

  it("ends the subscriptions to its old actor (complete) and shows the new one as ref.actor", async () => {
    const store = counted(createSqliteStore({ path: await databaseFile() }));
    const system = open(store);
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    await agent.call(createSignal('notes.add_now', { item: 'kept' }));
    const before = agent.actor;
    let completed = 0;
    before.subscribe({ complete: () => completed++ });
    store.failNext = 1;
    await expect(agent.call(createSignal('notes.add_now', { item: 'lost' }))).rejects.toMatchObject({ code: 'store_failed' });
    expect(completed).toBe(1);
    expect(agent.actor).not.toBe(before);
    expect(agent.actor.getSnapshot().status).toBe('active');
  });

  it('with state JSON cannot hold, is served by the same ref from its last written state, its child agents running on', async () => {
    const store = createSqliteStore({ path: await databaseFile() });
    const system = open(store, { definitions: [Counting, NotesAgent] });
    const agent = system.spawn(Counting, { id: 'b1' });
    const kid = system.spawn(NotesAgent, { id: 'k', parent: agent });
    expect(await agent.call('bag.count')).toBe(1);
    await kid.call(createSignal('notes.add_now', { item: 'kid' }));
    await expect(agent.call('bag.put')).rejects.toMatchObject({ code: 'invalid_state' });
    expect(system.get('b1')).toBe(agent);
    expect(agent.getSnapshot().state).toEqual({ bag: { count: 1 } });
    expect(await agent.call('bag.count')).toBe(2);
    expect((await store.load('b1'))?.agent.state).toEqual({ bag: { count: 2 } });
    // Its child was written and is left as it runs, still its child.
    expect(kid.status).toBe('idle');
    expect(agent.children()).toEqual(['k']);
    expect(await kid.call(createSignal('notes.add_now', { item: 'more' }))).toEqual({ count: 2 });
  });
});

describe('opening a system on a database', () => {
  it('does not bring back a child stopped right after it was spawned (the spawn and the stop asked for by two calls at once)', async () => {
    const team = z.object({ hired: z.array(z.string()).default([]) });
    const Boss = defineAgent({
      name: 'boss_agent',
      skills: [
        defineSkill({
          name: 'team',
          schema: team,
          actions: [
            defineAction({ name: 'hire', description: 'Spawn a worker', input: z.object({ id: z.string() }), state: team, run: ({ id }, { skillState }) => result(id, { state: { hired: [...skillState.hired, id] }, effects: [Effects.spawn('notes_agent', { id })] }) }),
            defineAction({ name: 'fire', description: 'Stop a worker', input: z.object({ id: z.string() }), state: team, run: ({ id }, { skillState }) => result(id, { state: { hired: skillState.hired.filter((hired) => hired !== id) }, effects: [Effects.stop({ agent: id })] }) }),
          ],
          routes: [
            { path: 'team.hire', target: { action: 'hire' } },
            { path: 'team.fire', target: { action: 'fire' } },
          ],
        }),
      ],
    });
    const path = await databaseFile();
    const errors: Array<{ agent: string | undefined; error: ErrorInfo }> = [];
    const first = open(createSqliteStore({ path }), { definitions: [Boss, NotesAgent] }, errors);
    const boss = first.spawn(Boss, { id: 'boss' });
    await Promise.all([boss.call(createSignal('team.hire', { id: 'w1' })), boss.call(createSignal('team.fire', { id: 'w1' }))]);
    await close(first);
    expect(errors).toEqual([]);
    const second = open(createSqliteStore({ path }), { definitions: [Boss, NotesAgent] });
    expect(second.list().map((ref) => ref.id)).toEqual(['boss']);
    expect(second.get('boss')?.getSnapshot().state).toEqual({ team: { hired: [] } });
    expect(second.get('boss')?.children()).toEqual([]);
  });

  it('restores every stored agent, parents before children, with its state', async () => {
    const path = await databaseFile();
    const first = open(createSqliteStore({ path }));
    const parent = first.spawn(Parent, { id: 'p' });
    const child = first.spawn(NotesAgent, { id: 'c', parent: 'p' });
    await parent.call(createSignal('notes.add_now', { item: 'parent item' }));
    await child.call(createSignal('notes.add_now', { item: 'child item' }));
    await first.stop('c');
    first.spawn(NotesAgent, { id: 'c2', parent: 'p' });
    await close(first);

    const second = open(createSqliteStore({ path }));
    expect(second.list().map((ref) => ref.id)).toEqual(['p', 'c2']);
    expect(itemsOf(second.get('p')!)).toEqual(['parent item']);
    expect(second.get('c2')!.persist().parent).toBe('p');
    await second.stop('p');
    await close(second);
    const third = open(createSqliteStore({ path }));
    expect(third.list()).toEqual([]);
  });

  it('fires a signal that fell due while the system was down once, and re-arms one still to come', async () => {
    const path = await databaseFile();
    const first = open(createSqliteStore({ path }));
    const agent = first.spawn(Reminder, { id: 'r' });
    await agent.call(createSignal('later.set', { text: 'soon', inMs: 20 }));
    await agent.call(createSignal('later.set', { text: 'much later', inMs: 3_600_000 }));
    await close(first);
    await new Promise((resolve) => setTimeout(resolve, 40));

    const second = open(createSqliteStore({ path }));
    const back = second.get('r')!;
    await new Promise<void>((resolve) => {
      const check = () => ((back.getSnapshot().state as { later: { fired: string[] } }).later.fired.length > 0 ? resolve() : setTimeout(check, 1));
      check();
    });
    await second.flush();
    await close(second);
    const third = open(createSqliteStore({ path }));
    const again = third.get('r')!;
    expect(again.getSnapshot().state).toEqual({ later: { fired: ['soon'] } });
    expect(again.persist().scheduled?.map((entry) => entry.signal.data)).toEqual([{ text: 'much later' }]);
  });

  it('reports a stored agent whose definition is no longer known with its id, and leaves it in the database', async () => {
    const path = await databaseFile();
    const first = open(createSqliteStore({ path }));
    first.spawn(Reminder, { id: 'gone' });
    first.spawn(NotesAgent, { id: 'kept' });
    await close(first);

    const errors: Array<{ agent: string | undefined; error: ErrorInfo }> = [];
    const store = createSqliteStore({ path });
    const second = open(store, { definitions: [NotesAgent] }, errors);
    expect(second.list().map((ref) => ref.id)).toEqual(['kept']);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ agent: 'gone', error: { code: 'invalid_snapshot' } });
    expect(errors[0]!.error.message).toContain("'gone'");
    second.get('kept')!.send(createSignal('notes.add_now', { item: 'x' }));
    await close(second);
    const third = createSqliteStore({ path });
    expect((await third.list()).sort()).toEqual(['gone', 'kept']);
    third.close();
  });
});

describe('the database', () => {
  it('lets a program that never shuts its system down end once it has nothing left to do, in every durability', async () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const program = join(dirname(await databaseFile()), 'forgets-shutdown.mjs');
    await writeFile(
      program,
      `const { createAgentSystem, createSqliteStore, defineAgent, defineSkill } = await import(${JSON.stringify(pathToFileURL(join(root, 'src', 'index.ts')).href)});
const [path, durability] = process.argv.slice(2);
const system = createAgentSystem({ store: createSqliteStore({ path }), durability });
system.spawn(defineAgent({ name: 'quiet', skills: [defineSkill({ name: 'note' })] }), { id: 'a' });
console.log('spawned');\n`,
    );
    for (const durability of ['step', 'interval', 'manual']) {
      const ended = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }>((resolve) => {
        execFile(process.execPath, ['--import', 'tsx', program, join(dirname(program), `${durability}.db`), durability], { cwd: root, timeout: 30_000, killSignal: 'SIGKILL' }, (error, stdout) => {
          resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, signal: error ? ((error as { signal?: NodeJS.Signals }).signal ?? null) : null, stdout });
        });
      });
      expect(ended, durability).toEqual({ code: 0, signal: null, stdout: 'spawned\n' });
    }
  });

  it('refuses a second system opening it for writing', async () => {
    const path = await databaseFile();
    open(createSqliteStore({ path }));
    const error = thrown(() => createSqliteStore({ path }));
    expect(error).toBeInstanceOf(RuntimeError);
    expect((error as RuntimeError).toInfo()).toMatchObject({ code: 'store_failed', details: { reason: 'locked', path } });
  });

  it('refuses a schema from a newer version, saying which', async () => {
    const path = await databaseFile();
    createSqliteStore({ path }).close();
    const raw = new Database(path);
    raw.exec('PRAGMA user_version = 99');
    raw.close();
    const error = thrown(() => createSqliteStore({ path })) as RuntimeError;
    expect(error.toInfo()).toMatchObject({ code: 'store_failed', details: { reason: 'newer_schema' } });
    expect(error.message).toContain('version 99');
  });

  it('refuses a folder as the database, naming a file to give instead', async () => {
    const folder = dirname(await databaseFile());
    const error = thrown(() => createSqliteStore({ path: folder })) as RuntimeError;
    expect(error.toInfo()).toMatchObject({ code: 'store_failed', details: { reason: 'open_failed', path: folder } });
    expect(error.message).toContain(`${folder}: it is a folder`);
    expect(error.message).toContain(join(folder, 'agents.db'));
  });

  it('refuses to be used once its system shut down, saying it is closed', async () => {
    const path = await databaseFile();
    const store = createSqliteStore({ path });
    const system = open(store);
    system.spawn(NotesAgent, { id: 'n1' });
    await close(system);
    for (const use of [() => store.read('n1'), () => store.loadAll(), () => store.commit({ save: [], delete: ['n1'] })]) {
      const error = thrown(use) as RuntimeError;
      expect(error.toInfo()).toMatchObject({ code: 'store_failed', details: { reason: 'closed', path } });
      expect(error.message).toContain('open it again with createSqliteStore({ path })');
    }
    // Open again, it reads what the system wrote.
    const again = createSqliteStore({ path });
    expect(again.read('n1')?.id).toBe('n1');
    again.close();
  });

  it("refuses ':memory:', which would be a file of that name, saying to give a file", () => {
    const error = thrown(() => createSqliteStore({ path: ':memory:' })) as RuntimeError;
    expect(error.toInfo()).toMatchObject({ code: 'invalid_options', subject: 'path' });
    expect(error.message).toContain("got ':memory:'");
  });

  it("refuses another program's SQLite database, naming what it holds, and leaves it as it was", async () => {
    const path = await databaseFile();
    const raw = new Database(path);
    raw.exec('CREATE TABLE invoices (number INTEGER PRIMARY KEY, total REAL)');
    raw.exec('INSERT INTO invoices VALUES (1, 9.5)');
    raw.close();
    const error = thrown(() => createSqliteStore({ path })) as RuntimeError;
    expect(error.toInfo()).toMatchObject({ code: 'store_failed', details: { reason: 'open_failed', path } });
    expect(error.message).toContain('it is not a skillstate store (it holds tables (invoices) and no skillstate schema version)');
    const after = new Database(path);
    expect(after.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all()).toEqual([{ name: 'invoices' }]);
    expect(after.prepare('PRAGMA user_version').get()).toMatchObject({ user_version: 0 });
    expect(after.prepare('PRAGMA journal_mode').get()).toMatchObject({ journal_mode: 'delete' });
    after.close();
  });

  it("opens an empty database whose only tables are SQLite's own", async () => {
    const path = await databaseFile();
    const raw = new Database(path);
    raw.exec('CREATE TABLE scratch (n INTEGER PRIMARY KEY AUTOINCREMENT)');
    raw.exec('INSERT INTO scratch DEFAULT VALUES');
    raw.exec('ANALYZE');
    raw.exec('DROP TABLE scratch');
    expect(raw.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").all()).toEqual([{ name: 'sqlite_sequence' }, { name: 'sqlite_stat1' }]);
    raw.close();
    const system = open(createSqliteStore({ path }));
    await system.spawn(NotesAgent, { id: 'n1' }).call(createSignal('notes.add_now', { item: 'a' }));
    await close(system);
    expect(open(createSqliteStore({ path })).list().map((ref) => ref.id)).toEqual(['n1']);
  });

  it('refuses a database whose schema version is ours but whose agents table is not, naming its columns', async () => {
    const path = await databaseFile();
    const raw = new Database(path);
    raw.exec('CREATE TABLE agents (name TEXT, age INTEGER)');
    raw.exec('PRAGMA user_version = 1');
    raw.close();
    const error = thrown(() => createSqliteStore({ path })) as RuntimeError;
    expect(error.toInfo()).toMatchObject({ code: 'store_failed', details: { reason: 'open_failed', path } });
    expect(error.message).toContain('its agents table has the columns (name, age)');
  });

  it('refuses a file that is not an SQLite database, saying so, and leaves it as it was', async () => {
    const path = await databaseFile();
    await writeFile(path, 'notes, not a database\n'.repeat(100));
    const error = thrown(() => createSqliteStore({ path })) as RuntimeError;
    expect(error.toInfo()).toMatchObject({ code: 'store_failed', details: { reason: 'open_failed', path } });
    expect(error.message).toContain('is not an SQLite database');
    expect(error.message).toContain('move the file aside');
    expect(await readFile(path, 'utf8')).toBe('notes, not a database\n'.repeat(100));
  });

  it("in 'manual' durability writes nothing until flush", async () => {
    const path = await databaseFile();
    const store = createSqliteStore({ path });
    const system = open(store, { durability: 'manual' });
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    await agent.call(createSignal('notes.add_now', { item: 'a' }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(await store.load('n1')).toBeUndefined();
    await system.flush();
    expect((await store.load('n1'))?.agent.state).toEqual({ notebook: { items: ['a'] } });
  });

  it("in 'interval' durability answers at once and writes within intervalMs", async () => {
    const store = createSqliteStore({ path: await databaseFile() });
    const system = open(store, { durability: 'interval', intervalMs: 10 });
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    const atAnswer = await agent.call(createSignal('notes.add_now', { item: 'a' })).then(() => store.load('n1'));
    expect(atAnswer).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect((await store.load('n1'))?.agent.state).toEqual({ notebook: { items: ['a'] } });
  });

  it('refuses to close its store under it, saying to shut the system down, and goes on writing; the store closes with the system', async () => {
    const path = await databaseFile();
    const store = createSqliteStore({ path });
    const system = open(store);
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    await agent.call(createSignal('notes.add_now', { item: 'a' }));
    const error = thrown(() => store.close());
    expect(error).toMatchObject({ code: 'store_failed', details: { reason: 'in_use', path } });
    expect((error as Error).message).toContain('system.shutdown()');
    await agent.call(createSignal('notes.add_now', { item: 'b' }));
    expect(store.read('n1')).toMatchObject({ agent: { state: { notebook: { items: ['a', 'b'] } } } });
    await close(system);
    // Closed by the shutdown: closing it again does nothing.
    expect(thrown(() => store.close())).toBeUndefined();
    const again = open(createSqliteStore({ path }));
    expect(itemsOf(again.get('n1')!)).toEqual(['a', 'b']);
  });

  it('refuses a store object a running system already writes to, and takes it again once that system has shut down', async () => {
    const path = await databaseFile();
    const store = createSqliteStore({ path });
    const first = open(store);
    await first.spawn(NotesAgent, { id: 'n1' }).call(createSignal('notes.add_now', { item: 'a' }));
    const error = thrown(() => quietSystem({ definitions: [NotesAgent], store }));
    expect(error).toMatchObject({ code: 'invalid_options', subject: 'store' });
    expect((error as Error).message).toContain('another system that has not shut down');
    // The first system still serves and writes.
    expect(await first.get('n1')!.call(createSignal('notes.add_now', { item: 'b' }))).toBeDefined();
    await close(first);
    // Shutting down closed it: reusing the object says how to open the file again.
    const reused = thrown(() => quietSystem({ definitions: [NotesAgent], store }));
    expect(reused).toMatchObject({ code: 'store_failed', details: { reason: 'closed', path } });
    expect((reused as Error).message).toContain('open it again with createSqliteStore');
    // The system that could not start holds nothing: the same mistake gets the same answer.
    expect(thrown(() => quietSystem({ definitions: [NotesAgent], store }))).toMatchObject({ code: 'store_failed' });
    const again = open(createSqliteStore({ path }));
    expect((again.get('n1')!.getSnapshot().state as { notebook: { items: string[] } }).notebook.items).toEqual(['a', 'b']);
  });

  it('refuses durability options that cannot work, showing the value', async () => {
    const store = createSqliteStore({ path: await databaseFile() });
    expect(thrown(() => quietSystem({ store, durability: 'sometimes' as never }))).toMatchObject({ code: 'invalid_options', subject: 'durability', message: expect.stringContaining("got 'sometimes'") });
    expect(thrown(() => quietSystem({ store, durability: 'interval', intervalMs: -5 }))).toMatchObject({ code: 'invalid_options', subject: 'intervalMs', message: expect.stringContaining('got -5') });
    expect(thrown(() => quietSystem({ store: {} as never }))).toMatchObject({ code: 'invalid_options', subject: 'store' });
    store.close();
  });
});
