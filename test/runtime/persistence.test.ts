/** Persistence: snapshots are plain JSON and restore to agents that behave the same. */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createFileStore, createMemoryStore, RuntimeError, type AgentSnapshot, type AgentSystem, type SnapshotStore } from '../../src/index.js';
import { arithmetic, calculator, counter } from '../../skills/index.js';
import { checkAgentInvariants } from '../../src/testing/index.js';
import { Effects, NotesAgent, createSignal, crashableChild, defineAction, defineAgent, defineSkill, itemsOf, notebook, quietSystem, result, thrown, z } from './fixtures.js';

let systems: AgentSystem[] = [];
let dirs: string[] = [];
afterEach(async () => {
  for (const system of systems) await system.shutdown();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  systems = [];
  dirs = [];
});
const make = (...args: Parameters<typeof quietSystem>) => {
  const system = quietSystem(...args);
  systems.push(system);
  return system;
};

const MathAgent = defineAgent({ name: 'math_agent', skills: [calculator, [counter, { initial: 3 }]] });

describe('persist and restore', () => {
  it('round-trips through JSON: the restored agent answers the same signals with the same results', async () => {
    const first = make({ skills: [arithmetic] });
    const original = first.spawn(MathAgent, { id: 'm1' });
    await original.call(createSignal('calculator.add', { a: 1, b: 2 }));
    original.send(createSignal('counter.increment'));
    await original.mount('arithmetic');
    const snapshot = JSON.parse(JSON.stringify(original.persist()));
    expect(snapshot).toMatchObject({
      format: 'skillstate/agent@1',
      id: 'm1',
      definition: 'math_agent',
      agent: { state: { calculator: { last_result: 3 }, counter: { count: 4 }, arithmetic: {} } },
      lifecycles: { calculator: 'active', counter: 'active', arithmetic: 'active' },
    });

    const second = make({ definitions: [MathAgent], skills: [arithmetic] });
    const restored = second.restore(snapshot);
    expect(restored.getSnapshot().state).toEqual(original.getSnapshot().state);
    expect(restored.getSnapshot().registeredActions).toEqual(original.getSnapshot().registeredActions);
    for (const signal of [createSignal('counter.increment'), createSignal('arithmetic.multiply', { a: 3, b: 4 }), createSignal('counter.get')]) {
      await expect(restored.call(signal)).resolves.toEqual(await original.call(signal));
    }
    expect(restored.getSnapshot().state).toEqual(original.getSnapshot().state);
  });

  it('restores lifecycles where they were, a failed skill staying failed', async () => {
    const starts = { count: 0 };
    const worker = defineSkill({ name: 'worker', children: () => [{ id: 'loop', logic: crashableChild(starts), maxRestarts: 0 }] });
    const first = make({ skills: [worker] });
    const agent = first.spawn(NotesAgent, { id: 'w' });
    await agent.mount('worker');
    agent.actor.system.get('w/skills/worker/loop')!.send({ type: 'crash' });
    const snapshot = JSON.parse(JSON.stringify(agent.persist()));
    expect(snapshot.lifecycles).toEqual({ notebook: 'active', worker: 'failed' });
    const records: { kind: string; skill?: string; state?: string }[] = [];
    const second = make({ definitions: [NotesAgent], skills: [worker], trace: (record) => void records.push(record) });
    const restored = second.restore(snapshot);
    expect(restored.getSnapshot().lifecycles).toEqual({ notebook: 'active', worker: 'failed' });
    expect((restored.actor.getSnapshot().children['skill:worker'] as { getSnapshot(): { value: string } }).getSnapshot().value).toBe('failed');
    expect(starts.count).toBe(1);
    // The trace says each lifecycle's state once: the failed one is not reported failed again.
    expect(records.filter((record) => record.kind === 'lifecycle').map(({ skill, state }) => `${skill}=${state}`)).toEqual(['notebook=active', 'worker=failed']);
  });

  it('restores parents before children, whatever the order of the snapshots', () => {
    const first = make();
    const parent = first.spawn(NotesAgent, { id: 'parent' });
    first.spawn(NotesAgent, { id: 'child', parent });
    const snapshots = JSON.parse(JSON.stringify(first.persistAll().reverse()));
    const second = make({ definitions: [NotesAgent] });
    const restored = second.restoreAll(snapshots);
    expect(restored.map((ref) => ref.id)).toEqual(['parent', 'child']);
    expect(second.get('parent')!.children()).toEqual(['child']);
  });

  it.each([
    ['not a snapshot', { hello: 'world' }, 'invalid_snapshot', "not an agent snapshot (format 'skillstate/agent@1')"],
    ['an unknown definition', { format: 'skillstate/agent@1', id: 'x', definition: 'ghost', agent: {} }, 'invalid_snapshot', "definition 'ghost', which this system does not know"],
    [
      'an unknown skill',
      { format: 'skillstate/agent@1', id: 'x', definition: 'notes_agent', agent: { id: 'x', definition: 'notes_agent', state: {}, mounted: [{ name: 'mystery', stateKey: 'mystery', config: {} }] } },
      'unknown_skill',
      "skill 'mystery' is mounted on it",
    ],
    [
      'an invalid state',
      { format: 'skillstate/agent@1', id: 'x', definition: 'notes_agent', agent: { id: 'x', definition: 'notes_agent', state: { notebook: { items: 'no' } }, mounted: [{ name: 'notebook', stateKey: 'notebook', config: {} }] } },
      'invalid_state',
      'notebook.items',
    ],
  ])('refuses %s with a typed error', (_name, snapshot, code, message) => {
    const system = make({ definitions: [NotesAgent] });
    const error = thrown(() => system.restore(snapshot));
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({ code });
    expect((error as Error).message).toContain(message);
    expect(system.list()).toEqual([]);
  });
});

describe('snapshot stores', () => {
  async function exercise(store: SnapshotStore) {
    const system = make();
    const agent = system.spawn(NotesAgent, { id: 'a:b c?%' });
    agent.send(createSignal('notes.add_now', { item: 'kept' }));
    await store.save(agent.persist());
    expect(await store.list()).toEqual(['a:b c?%']);
    const loaded = await store.load('a:b c?%');
    await agent.stop();
    const restored = make({ definitions: [NotesAgent] }).restore(loaded);
    expect(restored.getSnapshot().state).toEqual({ notebook: { items: ['kept'] } });
    expect(await store.load('missing')).toBeUndefined();
    expect(await store.delete('a:b c?%')).toBe(true);
    expect(await store.delete('a:b c?%')).toBe(false);
    expect(await store.list()).toEqual([]);
  }

  it('the memory store keeps snapshots as JSON copies', () => exercise(createMemoryStore()));

  it('the file store keeps one JSON file per agent, written atomically', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'skillstate-store-'));
    dirs.push(dir);
    await exercise(createFileStore(dir));
    expect(await readdir(dir)).toEqual([]);
  });

  it('the file store reports a corrupt file as invalid_snapshot, naming it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'skillstate-store-'));
    dirs.push(dir);
    await writeFile(join(dir, 'broken.agent.json'), '{ not json');
    await expect(createFileStore(dir).load('broken')).rejects.toMatchObject({ code: 'invalid_snapshot', message: expect.stringContaining('broken.agent.json') });
  });
});

describe('bad and odd snapshots', () => {
  const snapshotOf = (id: string, extra: Record<string, unknown> = {}, agentId = id) => ({
    format: 'skillstate/agent@1',
    id,
    definition: 'notes_agent',
    agent: { id: agentId, definition: 'notes_agent', state: { notebook: { items: [] } }, mounted: [{ name: 'notebook', stateKey: 'notebook', config: {} }] },
    lifecycles: { notebook: 'active' },
    children: [],
    ...extra,
  });

  it('a snapshot whose id is not its agent id is refused: it cannot take the place of a running agent', () => {
    const system = make({ definitions: [NotesAgent] });
    const running = system.spawn(NotesAgent, { id: 'existing', state: { notebook: { items: ['precious'] } } });
    const error = thrown(() => system.restore(snapshotOf('fresh', {}, 'existing')));
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({ code: 'invalid_snapshot', message: "cannot restore: the snapshot of 'fresh' holds agent 'existing'; the two ids must be the same" });
    expect(system.list()).toEqual([running]);
    expect(running.getSnapshot().state).toEqual({ notebook: { items: ['precious'] } });
  });

  it('a lifecycle state that does not exist is refused, naming the skill', () => {
    const system = make({ definitions: [NotesAgent] });
    const error = thrown(() => system.restore(snapshotOf('x', { lifecycles: { notebook: 'exploded' } })));
    expect(error).toMatchObject({ code: 'invalid_snapshot', message: "cannot restore: agent 'x' has lifecycle 'exploded' for skill 'notebook'; expected active, inactive or failed" });
    expect(system.list()).toEqual([]);
  });

  it('a lifecycle other than inactive for a skill that is not mounted is refused, naming it', () => {
    const system = make({ definitions: [NotesAgent] });
    const error = thrown(() => system.restore(snapshotOf('x', { lifecycles: { notebook: 'active', billing: 'failed' } })));
    expect(error).toMatchObject({ code: 'invalid_snapshot', message: "cannot restore: agent 'x' has lifecycle 'failed' for skill 'billing', which is not mounted on it; expected inactive" });
    expect(system.list()).toEqual([]);
    // A skill unmounted before the snapshot was taken is recorded inactive: that one is kept.
    expect(system.restore(snapshotOf('y', { lifecycles: { notebook: 'active', billing: 'inactive' } })).getSnapshot().lifecycles).toEqual({ notebook: 'active', billing: 'inactive' });
  });

  it("XState's persisted snapshot of an agent's actor is plain data: the agent, its lifecycles, no host", async () => {
    const system = make();
    const agent = system.spawn(NotesAgent, { id: 'x' });
    agent.send(createSignal('notes.add_now', { item: 'kept' }));
    const persisted = JSON.parse(JSON.stringify(agent.actor.getPersistedSnapshot())) as {
      value: unknown;
      context: Record<string, unknown>;
      children: Record<string, { snapshot: { value: unknown }; systemId: string }>;
    };
    expect(persisted.value).toBe('idle');
    expect(Object.keys(persisted.context).sort()).toEqual(['agent', 'busy']);
    expect(persisted.context.agent).toMatchObject({ id: 'x', state: { notebook: { items: ['kept'] } } });
    expect(persisted.children['skill:notebook']).toMatchObject({ snapshot: { value: 'active' }, systemId: 'x/skills/notebook' });
    // The running agent keeps its host: it still answers.
    expect(await agent.call(createSignal('notes.list'))).toEqual({ items: ['kept'] });
  });

  it('a lifecycle under a key no skill can have is refused, naming it: it would name another actor', () => {
    const system = make({ definitions: [NotesAgent] });
    for (const key of ['notebook/loop', '../x', '', ' notebook']) {
      const error = thrown(() => system.restore(snapshotOf('x', { lifecycles: { notebook: 'active', [key]: 'inactive' } })));
      expect(error).toMatchObject({ code: 'invalid_snapshot', message: `cannot restore: agent 'x' has a lifecycle for '${key}', which is not a skill name (1 to 64 letters, digits, "_" or "-")` });
    }
    expect(system.list()).toEqual([]);
  });

  it('a mounted skill recorded as inactive resumes active, its children running', () => {
    const starts = { count: 0 };
    const worker = defineSkill({ name: 'worker', children: () => [{ id: 'loop', logic: crashableChild(starts) }] });
    const WorkerAgent = defineAgent({ name: 'worker_agent', skills: [worker] });
    const system = make({ definitions: [WorkerAgent] });
    const restored = system.restore({
      format: 'skillstate/agent@1',
      id: 'w',
      definition: 'worker_agent',
      agent: { id: 'w', definition: 'worker_agent', state: { worker: {} }, mounted: [{ name: 'worker', stateKey: 'worker', config: {} }] },
      lifecycles: { worker: 'inactive' },
      children: [],
    });
    expect(restored.getSnapshot().lifecycles).toEqual({ worker: 'active' });
    expect(starts.count).toBe(1);
    expect(checkAgentInvariants(restored, ['worker'])).toEqual([]);
  });

  it('persist → restore → persist is a fixed point, skills unmounted before the snapshot included', async () => {
    const extra = defineSkill({ name: 'extra' });
    const first = make({ skills: [extra] });
    const agent = first.spawn(NotesAgent, { id: 'r' });
    agent.send(createSignal('notes.add_now', { item: 'kept' }));
    await agent.mount('extra');
    await agent.unmount('extra');
    const snapshot = JSON.parse(JSON.stringify(agent.persist()));
    expect(snapshot.lifecycles).toEqual({ notebook: 'active', extra: 'inactive' });
    const restored = make({ skills: [extra], definitions: [NotesAgent] }).restore(snapshot);
    expect(JSON.parse(JSON.stringify(restored.persist()))).toEqual(snapshot);
  });

  it('a restored agent has the inactive lifecycle of each skill it had unmounted, and a remount activates it', async () => {
    const extra = defineSkill({ name: 'extra' });
    const records: { kind: string; skill?: string; state?: string }[] = [];
    const first = make({ skills: [extra] });
    const agent = first.spawn(NotesAgent, { id: 'r' });
    await agent.mount('extra');
    await agent.unmount('extra');
    const before = agent.actor.system.get('r/skills/extra');
    expect(before?.getSnapshot().value).toBe('inactive');
    const snapshot = JSON.parse(JSON.stringify(agent.persist()));

    const second = make({ skills: [extra], definitions: [NotesAgent], trace: (record) => void records.push(record) });
    const restored = second.restore(snapshot);
    const lifecycle = restored.actor.system.get('r/skills/extra');
    expect(lifecycle?.getSnapshot().value).toBe('inactive');
    expect(restored.getSnapshot().lifecycles).toEqual({ notebook: 'active', extra: 'inactive' });
    expect(checkAgentInvariants(restored, ['extra'])).toEqual([]);
    expect(records.filter((record) => record.kind === 'lifecycle')).toEqual([
      expect.objectContaining({ skill: 'notebook', state: 'active' }),
      expect.objectContaining({ skill: 'extra', state: 'inactive' }),
    ]);

    await restored.mount('extra');
    expect(restored.actor.system.get('r/skills/extra')).toBe(lifecycle);
    expect(lifecycle?.getSnapshot().value).toBe('active');
    expect(checkAgentInvariants(restored, ['extra'])).toEqual([]);
  });

  it('a skill with children remounted on a restored agent gets a lifecycle that runs them', async () => {
    const starts = { count: 0 };
    const worker = defineSkill({ name: 'worker', children: () => [{ id: 'loop', logic: crashableChild(starts) }] });
    const first = make({ skills: [worker] });
    const agent = first.spawn(NotesAgent, { id: 'w' });
    await agent.mount('worker');
    await agent.unmount('worker');
    expect(starts.count).toBe(1);
    const restored = make({ skills: [worker], definitions: [NotesAgent] }).restore(JSON.parse(JSON.stringify(agent.persist())));
    expect(restored.actor.system.get('w/skills/worker')?.getSnapshot().value).toBe('inactive');
    expect(starts.count).toBe(1);

    await restored.mount('worker');
    expect(restored.actor.system.get('w/skills/worker')?.getSnapshot().value).toBe('active');
    expect(restored.actor.system.get('w/skills/worker/loop')?.getSnapshot().status).toBe('active');
    expect(starts.count).toBe(2);
    expect(checkAgentInvariants(restored, [worker])).toEqual([]);
  });

  it('a snapshot taken while an async step runs holds the last committed state; the step is not half in it', async () => {
    const system = make({ definitions: [NotesAgent] });
    const agent = system.spawn(NotesAgent, { id: 'busy' });
    agent.send(createSignal('notes.add_now', { item: 'committed' }));
    const inFlight = agent.call(createSignal('notes.add', { item: 'in flight', delay: 5 }));
    expect(agent.getSnapshot().status).toBe('working');
    const snapshot = JSON.parse(JSON.stringify(agent.persist()));
    await inFlight;
    await agent.stop();
    const restored = system.restore(snapshot);
    expect(restored.getSnapshot().state).toEqual({ notebook: { items: ['committed'] } });
    expect(checkAgentInvariants(restored)).toEqual([]);
  });

  it('restoring a child whose parent is not running: restored as an orphan, with a diagnostic naming both', () => {
    const system = make({ definitions: [NotesAgent] });
    const diagnostics: string[] = [];
    system.onDiagnostic((d) => diagnostics.push(`${d.code}: ${d.message}`));
    const restored = system.restore(snapshotOf('child', { parent: 'gone' }));
    expect(restored.parent).toBeUndefined();
    expect(diagnostics).toEqual(["orphan_restored: agent 'child' was restored without its parent 'gone', which is not running"]);
  });

  it('restoreAll refuses parent links that form a cycle, naming it, and starts nothing', () => {
    const system = make({ definitions: [NotesAgent] });
    const error = thrown(() => system.restoreAll([snapshotOf('a', { parent: 'b' }), snapshotOf('b', { parent: 'a' })]));
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({ code: 'invalid_snapshot', message: "cannot restore: the parent links of the snapshots form a cycle: 'a' → 'b' → 'a'" });
    expect(thrown(() => system.restoreAll([snapshotOf('self', { parent: 'self' })]))).toMatchObject({
      message: "cannot restore: the parent links of the snapshots form a cycle: 'self' → 'self'",
    });
    expect(system.list()).toEqual([]);
  });

  it('restoreAll is all or nothing: when one snapshot is bad, the ones restored before it are stopped again', () => {
    const system = make({ definitions: [NotesAgent] });
    const error = thrown(() => system.restoreAll([snapshotOf('parent'), snapshotOf('child', { parent: 'parent' }), { format: 'skillstate/agent@1', id: 'broken' }]));
    expect(error).toMatchObject({ code: 'invalid_snapshot', message: 'cannot restore: the snapshot has no id or no agent' });
    expect(system.list()).toEqual([]);
    expect(system.restoreAll([snapshotOf('parent'), snapshotOf('child', { parent: 'parent' })]).map((ref) => ref.id)).toEqual(['parent', 'child']);
  });
});

describe('scheduled signals in snapshots', () => {
  const remindLater = defineAction({
    name: 'remind_later',
    description: 'Add an item to the notebook after a delay',
    input: z.object({ item: z.string(), inMs: z.number().int().min(0) }),
    run: ({ item, inMs }) => result({ scheduled: item }, { effects: [Effects.schedule(inMs, createSignal('notes.add_now', { item }))] }),
  });
  const reminders = defineSkill({ name: 'reminders', actions: [remindLater], routes: [{ path: 'notes.later', target: { action: 'remind_later' } }] });
  const Planner = defineAgent({ name: 'planner', skills: [notebook, reminders] });
  const HOUR = 3_600_000;

  async function plannerSnapshot(): Promise<AgentSnapshot> {
    const system = make({ definitions: [Planner] });
    const agent = system.spawn(Planner, { id: 'p1' });
    await agent.call(createSignal('notes.later', { item: 'in an hour', inMs: HOUR }));
    await agent.call(createSignal('notes.later', { item: 'in a minute', inMs: 60_000 }));
    const snapshot = JSON.parse(JSON.stringify(agent.persist())) as AgentSnapshot;
    await system.shutdown();
    return snapshot;
  }

  it('travel in the snapshot, soonest first, each with its due time', async () => {
    const before = Date.now();
    const snapshot = await plannerSnapshot();
    expect(snapshot.scheduled?.map((entry) => entry.signal.data)).toEqual([{ item: 'in a minute' }, { item: 'in an hour' }]);
    const [minute, hour] = snapshot.scheduled!.map((entry) => Date.parse(entry.due));
    expect(minute).toBeGreaterThanOrEqual(before + 60_000);
    expect(hour! - minute!).toBeGreaterThanOrEqual(HOUR - 60_000 - 1_000);
    expect(hour! - minute!).toBeLessThanOrEqual(HOUR - 60_000 + 1_000);
  });

  it('are re-armed for their due time on restore, not for a fresh delay', async () => {
    const snapshot = await plannerSnapshot();
    const back = make({ definitions: [Planner] }).restore(snapshot);
    expect(back.persist().scheduled).toEqual(snapshot.scheduled);
    expect(itemsOf(back)).toEqual([]);
  });

  it('one that fell due while the agent was down is delivered as soon as it is restored; the others wait', async () => {
    const snapshot = await plannerSnapshot();
    snapshot.scheduled![0]!.due = new Date(Date.now() - 60_000).toISOString();
    const back = make({ definitions: [Planner] }).restore(snapshot);
    await vi.waitFor(() => expect(itemsOf(back)).toEqual(['in a minute']));
    expect(back.persist().scheduled?.map((entry) => entry.signal.data)).toEqual([{ item: 'in an hour' }]);
  });

  it('a signal that has fired, or an agent that stopped, leaves nothing scheduled', async () => {
    const system = make({ definitions: [Planner] });
    const agent = system.spawn(Planner, { id: 'p2' });
    await agent.call(createSignal('notes.later', { item: 'now', inMs: 0 }));
    await vi.waitFor(() => expect(itemsOf(agent)).toEqual(['now']));
    expect(agent.persist()).not.toHaveProperty('scheduled');
    await agent.call(createSignal('notes.later', { item: 'never', inMs: HOUR }));
    expect(agent.persist().scheduled).toHaveLength(1);
    await agent.stop();
    expect(agent.persist()).not.toHaveProperty('scheduled');
  });

  it.each([
    ['not an array', { scheduled: 'soon' }, "cannot restore: agent 'p3': scheduled must be an array of { due, signal }"],
    ['an entry that is not an object', { scheduled: [7] }, "cannot restore: agent 'p3': scheduled[0] is not an object with due and signal"],
    ['a due time that is not a time', { scheduled: [{ due: 'tomorrow-ish', signal: createSignal('notes.add_now', { item: 'x' }) }] }, `cannot restore: agent 'p3': scheduled[0] has due "tomorrow-ish", which is not an ISO 8601 time`],
    ['an invalid signal', { scheduled: [{ due: new Date().toISOString(), signal: { type: 'notes..add' } }] }, "cannot restore: agent 'p3': scheduled[0] holds an invalid signal: signal type 'notes..add' has an empty segment"],
  ])('a snapshot with %s is refused, naming the entry, and nothing starts', (_label, extra, message) => {
    const system = make({ definitions: [Planner] });
    const snapshot = { format: 'skillstate/agent@1', id: 'p3', definition: 'planner', agent: { id: 'p3', definition: 'planner', state: {}, mounted: [] }, lifecycles: {}, children: [], ...extra };
    const error = thrown(() => system.restore(snapshot));
    expect(error).toMatchObject({ code: 'invalid_snapshot' });
    expect((error as Error).message).toContain(message);
    expect(system.list()).toEqual([]);
  });
});

describe('a snapshot taken while the mount hooks of a new agent are still running', () => {
  const opened = z.object({ opened: z.number().default(0) });
  let release = () => {};
  const door = defineSkill({
    name: 'door',
    schema: opened,
    actions: [defineAction({ name: 'peek', description: 'Read the state', input: z.object({}), state: opened, run: (_p, { skillState }) => skillState })],
    routes: [{ path: 'door.peek', target: { action: 'peek' } }],
    mount: async ({ state }) => {
      await new Promise<void>((resolve) => (release = resolve));
      return { state: { opened: state.opened + 1 } };
    },
  });
  const House = defineAgent({ name: 'house', skills: [door] });

  it('says so, and the restored agent runs the hooks once, as a spawned one does', async () => {
    const system = make({ definitions: [House] });
    const agent = system.spawn(House, { id: 'h1' });
    const early = JSON.parse(JSON.stringify(agent.persist())) as AgentSnapshot;
    expect(early.starting).toBe(true);
    expect(early.agent.state).toEqual({ door: { opened: 0 } });
    release();
    await expect(agent.call(createSignal('door.peek'))).resolves.toEqual({ opened: 1 });
    expect(agent.persist()).not.toHaveProperty('starting');
    await system.shutdown();

    const back = make({ definitions: [House] }).restore(early);
    const answer = back.call(createSignal('door.peek'));
    await vi.waitFor(() => expect(back.getSnapshot().status).toBe('working'));
    release();
    await expect(answer).resolves.toEqual({ opened: 1 });
    expect(back.persist()).not.toHaveProperty('starting');
  });
});
