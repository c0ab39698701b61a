/**
 * Passivation on a real SQLite file: an idle agent is written out and dropped from memory, and its
 * next use wakes it under the same ref, with its state, its order and its pending timers; agents
 * with work under way (skill children, a model turn, child agents) stay. Waits are for trace
 * records, never for a wall-clock budget.
 */
import { fromCallback } from 'xstate';
import { describe, expect, it } from 'vitest';
import { chatMessage, createAgentSystem, createSqliteStore, DefinitionError, RuntimeError, type AgentSystemOptions, type DurableStore, type ErrorInfo, type TraceRecord } from '../../src/index.js';
import { carryOut } from '../../src/runtime/steering.js';
import { scriptedModel } from '../../src/testing/index.js';
import { assistant, next } from '../model/fixtures.js';
import { Effects, NotesAgent, Reminder, createSignal, defineAction, defineAgent, defineSkill, firedOf, itemsOf, result, systemPerTest, thrown, z, tempFolders } from './fixtures.js';

const systems = systemPerTest();
const databaseFile = tempFolders('passivation').database;

/** A real SQLite store, and a face of it whose reads find no row for the ids in `gone`. */
async function losingRows() {
  const store = createSqliteStore({ path: await databaseFile() });
  const gone = new Set<string>();
  const faulty: DurableStore = { ...store, read: (id) => (gone.has(id) ? undefined : store.read(id)), close: () => store.close() };
  return { store, gone, faulty };
}

/** The trace as records, and a wait for the next record of a kind for an agent. */
function traced() {
  const records: TraceRecord[] = [];
  const waiting: Array<{ kind: string; agent: string; resolve(): void }> = [];
  return {
    records,
    trace(record: TraceRecord) {
      records.push(record);
      for (const waiter of [...waiting]) {
        if (record.kind !== waiter.kind || !('agent' in record) || record.agent !== waiter.agent) continue;
        waiting.splice(waiting.indexOf(waiter), 1);
        waiter.resolve();
      }
    },
    /** Resolves at the next `kind` record of `agent` from now. */
    next(kind: 'passivate' | 'wake' | 'step', agent: string): Promise<void> {
      return new Promise((resolve) => waiting.push({ kind, agent, resolve }));
    },
    kinds(agent: string): string[] {
      return records.filter((record) => 'agent' in record && record.agent === agent && (record.kind === 'passivate' || record.kind === 'wake' || record.kind === 'spawn' || record.kind === 'stop')).map((record) => record.kind);
    },
  };
}


/** Starts of the children below, by skill. */
const starts = { kept: 0, stoppable: 0 };
const child = (which: keyof typeof starts) =>
  fromCallback(() => {
    starts[which]++;
    return () => {};
  });
const Watcher = defineAgent({ name: 'watcher', skills: [defineSkill({ name: 'watch', children: () => [{ id: 'poller', logic: child('kept') }] })] });
const Restartable = defineAgent({ name: 'restartable', skills: [defineSkill({ name: 'tick', children: () => [{ id: 'ticker', logic: child('stoppable'), stoppable: true }] })] });

const IDLE_MS = 40;

async function open(trace: (record: TraceRecord) => void, options: AgentSystemOptions = {}) {
  const store = createSqliteStore({ path: await databaseFile() });
  return { store, system: systems.start({ definitions: [NotesAgent, Reminder], store, trace, passivate: { idleMs: IDLE_MS }, ...options }) };
}

describe('passivate option', () => {
  it('needs a store that reads one agent back, and a positive idleMs', async () => {
    const refused = (options: AgentSystemOptions) => thrown(() => createAgentSystem(options)) as DefinitionError;
    expect(refused({ passivate: { idleMs: 10 } })).toMatchObject({ code: 'invalid_options', subject: 'passivate', message: expect.stringContaining('needs a store') });
    const store = createSqliteStore({ path: await databaseFile() });
    try {
      const { read: _read, ...unreadable } = store;
      expect(refused({ store: unreadable as DurableStore, passivate: { idleMs: 10 } }).message).toContain('read(id)');
      expect(refused({ store, passivate: { idleMs: 0 } }).message).toContain('passivate.idleMs must be a number of milliseconds above 0, got 0');
      expect(refused({ store, passivate: { idleMS: 10 } as never })).toMatchObject({ code: 'invalid_options', details: { option: 'idleMS', suggestion: 'idleMs' } });
    } finally {
      store.close();
    }
  });
});

describe('passivation', () => {
  it('keeps an agent for an idleMs longer than one interval of Node timers takes, as long as the others', async () => {
    const t = traced();
    // 60 days: half of it is past the longest interval Node's timers take (about 24.8 days).
    const { system } = await open(t.trace, { passivate: { idleMs: 60 * 24 * 3_600_000 } });
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    await agent.call(createSignal('notes.add_now', { item: 'milk' }));
    // A clock: a system passivating after IDLE_MS, whose agent leaves memory long before 60 days.
    const { system: clock } = await open(t.trace);
    clock.spawn(NotesAgent, { id: 'marker' });
    await t.next('passivate', 'marker');
    expect(agent.status).toBe('idle');
    expect(t.kinds('n1')).toEqual(['spawn']);
  });


  it('drops an idle agent from memory and wakes it on use, with its state, under the same ref', async () => {
    const t = traced();
    const { system, store } = await open(t.trace);
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    await agent.call(createSignal('notes.add_now', { item: 'milk' }));
    await t.next('passivate', 'n1');
    expect(agent.status).toBe('passivated');
    // Looked up and listed without waking; its snapshot is what the store holds.
    expect(system.get('n1')).toBe(agent);
    expect(system.list()).toEqual([agent]);
    expect(agent.status).toBe('passivated');
    expect(store.read('n1')?.agent.state).toEqual({ notebook: { items: ['milk'] } });
    expect(system.persistAll().map((snapshot) => snapshot.agent.state)).toEqual([{ notebook: { items: ['milk'] } }]);

    expect(await agent.call(createSignal('notes.add_now', { item: 'eggs' }))).toEqual({ count: 2 });
    expect(agent.status).toBe('idle');
    expect(itemsOf(agent)).toEqual(['milk', 'eggs']);
    expect(t.kinds('n1')).toEqual(['spawn', 'passivate', 'wake']);
    // And again: each wake starts the idle clock anew.
    await t.next('passivate', 'n1');
    expect(itemsOf(agent)).toEqual(['milk', 'eggs']);
    expect(t.kinds('n1')).toEqual(['spawn', 'passivate', 'wake', 'passivate', 'wake']);
  });

  it('describes a passivated agent to the studio as passivated, without waking it', async () => {
    const t = traced();
    const { system } = await open(t.trace);
    system.spawn(NotesAgent, { id: 'n1' });
    await t.next('passivate', 'n1');
    const answer = await carryOut(system, { op: 'describe' });
    expect(answer).toMatchObject({ ok: true, value: [{ id: 'n1', definition: 'notes_agent', status: 'passivated' }] });
    expect(t.kinds('n1')).toEqual(['spawn', 'passivate']);
  });

  it('answers concurrent calls to a passivated agent in the order they were made', async () => {
    const t = traced();
    const { system } = await open(t.trace);
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    await t.next('passivate', 'n1');
    const items = Array.from({ length: 20 }, (_, i) => `item-${i}`);
    // Async steps: the calls queue behind one another in the woken agent's mailbox.
    const answers = await Promise.all(items.map((item, i) => agent.call(createSignal('notes.add', { item, delay: i % 3 }))));
    expect(answers).toEqual(items.map((_, i) => ({ count: i + 1 })));
    expect(itemsOf(agent)).toEqual(items);
    expect(t.kinds('n1')).toEqual(['spawn', 'passivate', 'wake']);
  });

  it('keeps a pending timer: the passivated agent wakes when it falls due, and the signal fires once', async () => {
    const t = traced();
    const { system } = await open(t.trace);
    const agent = system.spawn(Reminder, { id: 'r1' });
    // Due well after idleMs: the agent may leave memory meanwhile.
    await agent.call(createSignal('later.set', { text: 'tea', inMs: 20 * IDLE_MS }));
    await t.next('passivate', 'r1');
    const fired = t.next('step', 'r1');
    await fired;
    expect(t.kinds('r1')).toEqual(['spawn', 'passivate', 'wake']);
    expect(firedOf(agent)).toEqual(['tea']);
    // Nothing is left to fire: it rests again, and a later wake fires nothing more.
    await t.next('passivate', 'r1');
    expect(firedOf(agent)).toEqual(['tea']);
  });

  it('keeps a pending timer across a wake by a call: it fires once, at its time', async () => {
    const t = traced();
    const { system } = await open(t.trace);
    const agent = system.spawn(Reminder, { id: 'r1' });
    await agent.call(createSignal('later.set', { text: 'tea', inMs: 10 * IDLE_MS }));
    await t.next('passivate', 'r1');
    expect(firedOf(agent)).toEqual([]);
    expect(agent.getSnapshot().status).toBe('idle');
    const due = t.records.filter((record) => record.kind === 'step' && record.subject === 'later.due');
    expect(due).toEqual([]);
    // Woken by the view above and passivated again, its timer still pending.
    await t.next('passivate', 'r1');
    while (firedOf(agent).length === 0) await t.next('step', 'r1');
    expect(firedOf(agent)).toEqual(['tea']);
    await t.next('passivate', 'r1');
    expect(firedOf(agent)).toEqual(['tea']);
    expect(t.records.filter((record) => record.kind === 'step' && record.subject === 'later.due')).toHaveLength(1);
  });

  it('does not passivate an agent whose timer falls due within idleMs', async () => {
    const t = traced();
    const { system } = await open(t.trace);
    const agent = system.spawn(Reminder, { id: 'r1' });
    await agent.call(createSignal('later.set', { text: 'soon', inMs: 2 * IDLE_MS }));
    // The timer's step, however late the call's answer came (a loaded machine can answer after it).
    const fired = () => t.records.some((record) => record.kind === 'step' && record.agent === 'r1' && record.subject === 'later.due');
    while (!fired()) await t.next('step', 'r1');
    expect(firedOf(agent)).toEqual(['soon']);
    expect(t.kinds('r1')).toEqual(['spawn']);
  });

  it('wakes a passivated agent for a published signal it listens to', async () => {
    const t = traced();
    const { system } = await open(t.trace);
    const agent = system.spawn(Reminder, { id: 'r1' });
    await t.next('passivate', 'r1');
    const stepped = t.next('step', 'r1');
    expect(system.publish(createSignal('news.today', { text: 'rain' }))).toBe(1);
    await stepped;
    expect(t.kinds('r1')).toEqual(['spawn', 'passivate', 'wake']);
    expect(agent.status).not.toBe('passivated');
  });

  it('wakes a passivated agent for a signal another agent emits in its step', async () => {
    const t = traced();
    const shout = defineAction({ name: 'shout', description: 'Emit news', input: z.object({}), run: () => result(null, { effects: [Effects.emit(createSignal('news.flash'))] }) });
    const Crier = defineAgent({ name: 'crier', skills: [defineSkill({ name: 'crier', actions: [shout], routes: [{ path: 'crier.shout', target: { action: 'shout' } }] })] });
    const { system } = await open(t.trace, { definitions: [Reminder, Crier] });
    const listener = system.spawn(Reminder, { id: 'r1' });
    await t.next('passivate', 'r1');
    const crier = system.spawn(Crier, { id: 'crier' });
    const heard = t.next('step', 'r1');
    await crier.call('crier.shout');
    await heard;
    expect(t.kinds('r1')).toEqual(['spawn', 'passivate', 'wake']);
    expect(t.records.filter((record) => record.kind === 'signal' && record.agent === 'r1').map((record) => (record as { type: string }).type)).toEqual(['news.flash']);
    expect(listener.status).toBe('idle');
  });

  it('keeps an agent whose skill runs a child in memory, unless the child is stoppable', async () => {
    const t = traced();
    const { system } = await open(t.trace, { definitions: [NotesAgent, Watcher, Restartable] });
    starts.kept = starts.stoppable = 0;
    const watcher = system.spawn(Watcher, { id: 'w' });
    const restartable = system.spawn(Restartable, { id: 'r' });
    const marker = system.spawn(NotesAgent, { id: 'marker' });
    await Promise.all([t.next('passivate', 'r'), t.next('passivate', 'marker')]);
    expect(watcher.status).toBe('idle');
    expect(starts).toEqual({ kept: 1, stoppable: 1 });
    // The stoppable child starts again with its agent.
    expect(restartable.getSnapshot().lifecycles).toEqual({ tick: 'active' });
    expect(starts).toEqual({ kept: 1, stoppable: 2 });
    expect(t.kinds('w')).toEqual(['spawn']);
    void marker;
  });

  it('keeps an agent with a model turn in flight (waiting for approval) in memory, and passivates it once the turn is over', async () => {
    const t = traced();
    const model = scriptedModel([{ toolCalls: [{ tool: 'pay', args: { to: 'Bob', amount: 5 }, id: 'pay-1' }] }, { text: 'Paid Bob 5.' }]);
    const Assistant = assistant();
    const { system } = await open(t.trace, { definitions: [NotesAgent, Assistant], models: { default: model } });
    const agent = system.spawn(Assistant, { id: 'ada' });
    const asked = next(system, 'chat.turn.approval');
    // Sent, not called: no caller waits, only the turn holds the agent.
    agent.send(chatMessage('Pay Bob 5'));
    await asked;
    const marker = system.spawn(NotesAgent, { id: 'marker' });
    await t.next('passivate', 'marker');
    expect(agent.status).toBe('idle');
    const answered = next(system, 'chat.turn.answered');
    agent.send(createSignal('chat.approve', { toolCallId: 'pay-1' }));
    expect((await answered).data).toMatchObject({ agent: 'ada', text: 'Paid Bob 5.' });
    await t.next('passivate', 'ada');
    expect(t.kinds('ada')).toEqual(['spawn', 'passivate']);
    void marker;
  });

  it('keeps a parent with child agents in memory; a passivated child is woken to stop with its parent', async () => {
    const t = traced();
    const { system } = await open(t.trace);
    const parent = system.spawn(NotesAgent, { id: 'p' });
    const kid = system.spawn(NotesAgent, { id: 'k', parent });
    await t.next('passivate', 'k');
    expect(parent.status).toBe('idle');
    await parent.stop();
    expect(t.kinds('k')).toEqual(['spawn', 'passivate', 'wake', 'stop']);
    expect(system.list()).toEqual([]);
    expect(thrown(() => kid.send('notes.list'))).toMatchObject({ code: 'agent_stopped' });
  });

  it('keeps stale refs stale: a passivated agent stopped is stopped for its ref, even once its id is spawned again', async () => {
    const t = traced();
    const { system, store } = await open(t.trace);
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    await agent.call(createSignal('notes.add_now', { item: 'old' }));
    await t.next('passivate', 'n1');
    await system.stop('n1');
    expect(t.kinds('n1')).toEqual(['spawn', 'passivate', 'wake', 'stop']);
    await system.flush();
    expect(store.read('n1')).toBeUndefined();
    const again = system.spawn(NotesAgent, { id: 'n1' });
    expect(thrown(() => agent.send('notes.list'))).toMatchObject({ code: 'agent_stopped' });
    await expect(agent.call('notes.list')).rejects.toMatchObject({ code: 'agent_stopped' });
    expect(itemsOf(again)).toEqual([]);

    // A ref's own stop wakes its passivated agent to stop it.
    await t.next('passivate', 'n1');
    await again.stop();
    await expect(again.stop()).rejects.toMatchObject({ code: 'agent_stopped' });
  });

  it('fails a wake whose snapshot is gone with unknown_agent naming the agent, and leaves the agent passivated', async () => {
    const t = traced();
    const { gone, faulty } = await losingRows();
    const errors: Array<{ agent: string | undefined; error: ErrorInfo }> = [];
    const system = systems.start({ definitions: [NotesAgent], store: faulty, trace: t.trace, passivate: { idleMs: IDLE_MS }, onUnhandledError: (error, agent) => errors.push({ agent, error }) });
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    await t.next('passivate', 'n1');
    gone.add('n1');
    await expect(agent.call('notes.list')).rejects.toSatisfy((error: unknown) => error instanceof RuntimeError && error.code === 'unknown_agent' && error.agentId === 'n1' && error.message.includes("agent 'n1' is passivated"));
    expect(thrown(() => agent.getSnapshot())).toMatchObject({ code: 'unknown_agent' });
    expect(system.publish(createSignal('notes.list'))).toBe(1);
    expect(errors.map(({ agent, error }) => [agent, error.code])).toEqual([['n1', 'unknown_agent']]);
    expect(agent.status).toBe('passivated');
    gone.delete('n1');
    expect(itemsOf(agent)).toEqual([]);
  });

  it('fires a scheduled signal whose wake failed once the store reads again, and says so meanwhile', async () => {
    const t = traced();
    const store = createSqliteStore({ path: await databaseFile() });
    let unreadable = false;
    const faulty: DurableStore = {
      ...store,
      read: (id) => {
        if (unreadable) throw new RuntimeError({ code: 'store_failed', message: 'disk I/O error', details: { reason: 'open_failed', path: store.path } }, id);
        return store.read(id);
      },
      close: () => store.close(),
    };
    let reported: (error: ErrorInfo) => void = () => {};
    const system = systems.start({ definitions: [Reminder], store: faulty, trace: t.trace, passivate: { idleMs: IDLE_MS }, onUnhandledError: (error) => reported(error) });
    const agent = system.spawn(Reminder, { id: 'r1' });
    await agent.call(createSignal('later.set', { text: 'tea', inMs: 4 * IDLE_MS }));
    await t.next('passivate', 'r1');
    unreadable = true;
    const error = await new Promise<ErrorInfo>((resolve) => (reported = resolve));
    expect(error).toMatchObject({ code: 'store_failed', message: expect.stringContaining("agent 'r1' is passivated and could not be woken") });
    expect(error.message).toContain('tried again');
    unreadable = false;
    while (agent.status === 'passivated' || firedOf(agent).length === 0) await t.next('step', 'r1');
    expect(firedOf(agent)).toEqual(['tea']);
    expect(t.records.filter((record) => record.kind === 'step' && record.subject === 'later.due')).toHaveLength(1);
  });

  it('fails a wake whose snapshot mounts a skill no longer known with unknown_skill naming it, and leaves the agent passivated', async () => {
    const t = traced();
    const store = createSqliteStore({ path: await databaseFile() });
    let vanished = false;
    const faulty: DurableStore = {
      ...store,
      read: (id) => {
        const snapshot = store.read(id)!;
        return vanished ? { ...snapshot, agent: { ...snapshot.agent, mounted: [...snapshot.agent.mounted, { name: 'vanished', stateKey: 'vanished', config: {} }] } } : snapshot;
      },
      close: () => store.close(),
    };
    const system = systems.start({ definitions: [NotesAgent], store: faulty, trace: t.trace, passivate: { idleMs: IDLE_MS } });
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    await agent.call(createSignal('notes.add_now', { item: 'kept' }));
    await t.next('passivate', 'n1');
    vanished = true;
    await expect(agent.call('notes.list')).rejects.toMatchObject({ code: 'unknown_skill', agentId: 'n1', message: expect.stringContaining("skill 'vanished' is mounted on it") });
    expect(agent.status).toBe('passivated');
    vanished = false;
    expect(itemsOf(agent)).toEqual(['kept']);
  });

  it('keeps the scheduled signals of an agent whose wake by a call failed: they fire once it wakes', async () => {
    const t = traced();
    const store = createSqliteStore({ path: await databaseFile() });
    let damaged = false;
    // A row that reads as JSON but not as a snapshot this system can restore.
    const faulty: DurableStore = { ...store, read: (id) => (damaged ? { ...store.read(id)!, definition: 'gone' } : store.read(id)), close: () => store.close() };
    const system = systems.start({ definitions: [Reminder], store: faulty, trace: t.trace, passivate: { idleMs: IDLE_MS } });
    const agent = system.spawn(Reminder, { id: 'r1' });
    await agent.call(createSignal('later.set', { text: 'tea', inMs: 6 * IDLE_MS }));
    await t.next('passivate', 'r1');
    damaged = true;
    await expect(agent.call('later.set')).rejects.toMatchObject({ code: 'invalid_snapshot', agentId: 'r1' });
    expect(agent.status).toBe('passivated');
    damaged = false;
    // Nothing uses it (a look would wake it): its own timer does.
    await t.next('step', 'r1');
    expect(t.kinds('r1')).toEqual(['spawn', 'passivate', 'wake']);
    expect(firedOf(agent)).toEqual(['tea']);
  });

  it('stops a passivated agent that cannot be woken when asked to, saying why, so it does not linger', async () => {
    const t = traced();
    const { store, gone, faulty } = await losingRows();
    const errors: Array<{ agent: string | undefined; error: ErrorInfo }> = [];
    const system = systems.start({ definitions: [NotesAgent], store: faulty, trace: t.trace, passivate: { idleMs: IDLE_MS }, onUnhandledError: (error, agent) => errors.push({ agent, error }) });
    const parent = system.spawn(NotesAgent, { id: 'p' });
    system.spawn(NotesAgent, { id: 'k', parent });
    await t.next('passivate', 'k');
    gone.add('k');
    await system.stop('k');
    expect(errors.map(({ agent, error }) => [agent, error.code])).toEqual([['k', 'unknown_agent']]);
    expect(t.records.filter((record) => record.kind === 'stop' && record.agent === 'k')).toEqual([expect.objectContaining({ reason: expect.stringContaining('could not be woken') })]);
    expect(system.list().map((ref) => ref.id)).toEqual(['p']);
    // Its parent lets go of it, and may rest in turn.
    expect(parent.children()).toEqual([]);
    await t.next('passivate', 'p');
    expect(store.read('p')?.children ?? []).toEqual([]);
    await expect(system.stop('k')).rejects.toMatchObject({ code: 'unknown_agent' });
  });

  it("stops a passivated agent that cannot be woken by its ref's stop too, and its ref says stopped", async () => {
    const t = traced();
    const { gone, faulty } = await losingRows();
    const errors: ErrorInfo[] = [];
    const system = systems.start({ definitions: [NotesAgent], store: faulty, trace: t.trace, passivate: { idleMs: IDLE_MS }, onUnhandledError: (error) => errors.push(error) });
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    await t.next('passivate', 'n1');
    gone.add('n1');
    await agent.stop();
    expect(errors.map((error) => error.code)).toEqual(['unknown_agent']);
    expect(agent.status).toBe('stopped');
    expect(system.list()).toEqual([]);
    await expect(agent.stop()).rejects.toMatchObject({ code: 'agent_stopped' });
    // A new agent of the same id is not reached by the old ref.
    gone.delete('n1');
    const again = system.spawn(NotesAgent, { id: 'n1' });
    await t.next('passivate', 'n1');
    expect(agent.status).toBe('stopped');
    await expect(agent.stop()).rejects.toMatchObject({ code: 'agent_stopped' });
    expect(again.status).toBe('passivated');
  });

  it('refuses persistAll, naming the agent, when a passivated agent cannot be read back from the store', async () => {
    const t = traced();
    const { gone, faulty } = await losingRows();
    const system = systems.start({ definitions: [NotesAgent], store: faulty, trace: t.trace, passivate: { idleMs: IDLE_MS } });
    system.spawn(NotesAgent, { id: 'n1' });
    system.spawn(NotesAgent, { id: 'n2' });
    await Promise.all([t.next('passivate', 'n1'), t.next('passivate', 'n2')]);
    expect(system.persistAll().map((snapshot) => snapshot.id).sort()).toEqual(['n1', 'n2']);
    gone.add('n1');
    // Not a set silently missing n1: all or nothing, as for agents in memory.
    const error = thrown(() => system.persistAll()) as RuntimeError;
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error.toInfo()).toMatchObject({ code: 'invalid_state', details: { agents: ['n1'], errors: [{ code: 'unknown_agent', subject: 'n1' }] } });
    expect(error.message).toContain('1 agent of 2');
  });

  it('leaves passivated agents in the store at shutdown: the next system restores them', async () => {
    const t = traced();
    const path = await databaseFile();
    const first = systems.start({ definitions: [NotesAgent], store: createSqliteStore({ path }), trace: t.trace, passivate: { idleMs: IDLE_MS } });
    const agent = first.spawn(NotesAgent, { id: 'n1' });
    await agent.call(createSignal('notes.add_now', { item: 'kept' }));
    await t.next('passivate', 'n1');
    await first.shutdown();
    expect(agent.status).toBe('stopped');
    expect(thrown(() => agent.send('notes.list'))).toMatchObject({ code: 'agent_stopped' });
    const second = systems.start({ definitions: [NotesAgent], store: createSqliteStore({ path }) });
    expect(itemsOf(second.get('n1')!)).toEqual(['kept']);
  });

  it('opens a store with the resting agents left in it, passivated, and the others in memory', async () => {
    const path = await databaseFile();
    const first = systems.start({ definitions: [NotesAgent, Reminder], store: createSqliteStore({ path }) });
    await first.spawn(NotesAgent, { id: 'resting' }).call(createSignal('notes.add_now', { item: 'kept' }));
    const parent = first.spawn(NotesAgent, { id: 'parent' });
    first.spawn(NotesAgent, { id: 'kid', parent });
    // Due within the second system's idleMs, and long after it.
    await first.spawn(Reminder, { id: 'soon' }).call(createSignal('later.set', { text: 'soon', inMs: 60_000 }));
    await first.spawn(Reminder, { id: 'later' }).call(createSignal('later.set', { text: 'later', inMs: 600_000 }));
    await first.shutdown();

    const t = traced();
    const second = systems.start({ definitions: [NotesAgent, Reminder], store: createSqliteStore({ path }), trace: t.trace, passivate: { idleMs: 120_000 } });
    const status = Object.fromEntries(second.list().map((ref) => [ref.id, ref.status]));
    expect(status).toEqual({ parent: 'idle', soon: 'idle', resting: 'passivated', kid: 'passivated', later: 'passivated' });
    expect(second.get('parent')!.children()).toEqual(['kid']);
    expect(itemsOf(second.get('resting')!)).toEqual(['kept']);
    expect(t.kinds('later')).toEqual(['spawn', 'passivate']);
    // Its snapshot, read from the store, still holds its timer; a published signal wakes it.
    expect(second.persistAll().find((snapshot) => snapshot.id === 'later')?.scheduled?.map((entry) => entry.signal.data)).toEqual([{ text: 'later' }]);
    const heard = t.next('step', 'later');
    expect(second.publish(createSignal('news.today'))).toBe(2);
    await heard;
    expect(t.kinds('later')).toEqual(['spawn', 'passivate', 'wake']);
    // Stopping the parent wakes its passivated child to stop it.
    await second.stop('parent');
    expect(second.get('kid')).toBeUndefined();
  });
});
