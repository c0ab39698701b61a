/**
 * Re-entrancy: subscribers, error listeners and user code that act on agents while a step's
 * effects are being carried out — reading the emitter, sending to it or to others, stopping it,
 * shutting the system down, spawning. Work for an actor that arises inside a step runs after
 * the step, never inside it; what listeners see is the state the step committed; nothing is
 * lost or reordered, and nothing escapes to Node.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentRef, AgentSystem, Signal } from '../../src/index.js';
import {
  Effects,
  NotesAgent,
  collectEscapes,
  createSignal,
  defineAction,
  defineAgent,
  defineSkill,
  itemsOf,
  notebook,
  notes,
  quietSystem,
  result,
  settleDown,
  z,
} from './fixtures.js';

let system: AgentSystem | undefined;
const escaped = collectEscapes({ beforeAll, afterAll });
afterEach(async () => {
  await system?.shutdown();
  system = undefined;
  await settleDown();
  expect(escaped).toEqual([]);
});

/** `note` appends an item and emits `noted` (after `delay` ms when given), plus any effects it is given. */
const note = defineAction({
  name: 'note',
  description: 'append an item, then emit noted',
  input: z.object({ item: z.string(), delay: z.number().int().optional(), effects: z.array(z.any()).default([]) }),
  state: notes,
  run: async ({ item, delay, effects }, { skillState }) => {
    if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
    const items = [...skillState.items, item];
    return result(`noted ${item}`, { state: { items }, effects: [Effects.emit(createSignal('noted', { item })), ...effects] });
  },
});
const noteNow = defineAction({
  name: 'note_now',
  description: 'append an item, then emit noted, synchronously',
  input: z.object({ item: z.string(), effects: z.array(z.any()).default([]) }),
  state: notes,
  run: ({ item, effects }, { skillState }) => {
    const items = [...skillState.items, item];
    return result(`noted ${item}`, { state: { items }, effects: [Effects.emit(createSignal('noted', { item })), ...effects] });
  },
});
/** The notebook, with the two noting actions: its state is under `notebook`, like NotesAgent's. */
const noting = defineSkill({
  name: 'noting',
  stateKey: 'notebook',
  schema: notes,
  actions: [...notebook.actions, note, noteNow],
  routes: [
    ...notebook.routes({}),
    { path: 'note', target: { action: 'note' } },
    { path: 'note.now', target: { action: 'note_now' } },
  ],
});
const Noter = defineAgent({ name: 'noter', skills: [noting] });

describe('what a listener sees', () => {
  it("a subscriber to an agent's emitted signal sees the state the step produced, in getSnapshot and persist", async () => {
    system = quietSystem();
    const agent = system.spawn(Noter, { id: 'n' });
    const seen: unknown[] = [];
    system.subscribe('noted', () => seen.push(itemsOf(agent), agent.persist().agent.state));
    agent.send(createSignal('note.now', { item: 'a' }));
    await agent.call(createSignal('note', { item: 'b', delay: 1 }));
    expect(seen).toEqual([['a'], { notebook: { items: ['a'] } }, ['a', 'b'], { notebook: { items: ['a', 'b'] } }]);
  });
});

describe('listeners that send', () => {
  it('a subscriber that sends to the emitter and to another agent: both run after the step, in arrival order, nothing lost', async () => {
    system = quietSystem();
    const agent = system.spawn(Noter, { id: 'n' });
    const other = system.spawn(NotesAgent, { id: 'other' });
    const during: unknown[] = [];
    system.subscribe('noted', (signal: Signal) => {
      const { item } = signal.data as { item: string };
      if (item !== 'first') return;
      agent.send(createSignal('notes.add_now', { item: 'from subscriber' }));
      other.send(createSignal('notes.add_now', { item: 'from subscriber' }));
      // Not run inside the step: the emitter's and the other agent's items are still waiting.
      during.push(itemsOf(agent), agent.getSnapshot().mailbox, itemsOf(other), other.getSnapshot().mailbox);
    });
    agent.send(createSignal('note.now', { item: 'first' }));
    agent.send(createSignal('notes.add_now', { item: 'after' }));
    await settleDown();
    expect(during).toEqual([['first'], 1, [], 1]);
    expect(itemsOf(agent)).toEqual(['first', 'from subscriber', 'after']);
    expect(itemsOf(other)).toEqual(['from subscriber']);
  });

  it('an onError listener that sends to the failing agent: the item runs after the failed step, before later ones', async () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'n' });
    system.onError((error, agentId) => {
      if (error.code === 'action_failed' && agentId === 'n') agent.send(createSignal('notes.add_now', { item: 'recovered' }));
    });
    const refused = agent.call(createSignal('notes.refuse'));
    agent.send(createSignal('notes.add_now', { item: 'later' }));
    await expect(refused).rejects.toMatchObject({ code: 'action_failed' });
    await settleDown();
    expect(itemsOf(agent)).toEqual(['recovered', 'later']);
  });

  it('two agents that answer each other through emits take turns, one step at a time, to a fixed point', async () => {
    const Pinger = defineAgent({
      name: 'pinger',
      actions: [
        defineAction({
          name: 'bounce',
          description: 'emit the other side until n reaches 0',
          input: z.object({ n: z.number().int(), to: z.string() }),
          run: ({ n, to }) => result(n, { effects: n > 0 ? [Effects.emit(createSignal(to, { n: n - 1, to: to === 'ping' ? 'pong' : 'ping' }))] : [] }),
        }),
      ],
      routes: [{ path: 'ping', target: { action: 'bounce' } }],
    });
    const Ponger = defineAgent({ name: 'ponger', actions: Pinger.actions(), routes: [{ path: 'pong', target: { action: 'bounce' } }] });
    system = quietSystem();
    system.spawn(Pinger, { id: 'ping' });
    system.spawn(Ponger, { id: 'pong' });
    const heard: string[] = [];
    for (const type of ['ping', 'pong']) system.subscribe(type, (signal: Signal) => heard.push(`${signal.type}:${(signal.data as { n: number }).n}`));
    system.publish(createSignal('ping', { n: 6, to: 'pong' }));
    await settleDown();
    expect(heard).toEqual(['ping:6', 'pong:5', 'ping:4', 'pong:3', 'ping:2', 'pong:1', 'ping:0']);
  });
});

describe('listeners and user code that stop agents', () => {
  it("a subscriber that stops the emitter: the step's caller gets its answer, queued callers get agent_stopped", async () => {
    system = quietSystem();
    const agent = system.spawn(Noter, { id: 'n' });
    system.subscribe('noted', () => void system!.stop('n'));
    const stepping = agent.call(createSignal('note', { item: 'last', delay: 2 }));
    const queued = agent.call(createSignal('notes.add_now', { item: 'never' }));
    await expect(stepping).resolves.toBe('noted last');
    await expect(queued).rejects.toMatchObject({ code: 'agent_stopped', message: "agent 'n' stopped (stopped by request) before answering" });
    expect(itemsOf(agent)).toEqual(['last']);
    expect(system.get('n')).toBeUndefined();
    await settleDown();
    expect(agent.actor.getSnapshot().status).toBe('stopped');
  });

  it('a subscriber that shuts the system down mid-step: other agents stop, effects after it are reported, new work is refused', async () => {
    system = quietSystem({ definitions: [NotesAgent] });
    const errors: string[] = [];
    const agent = system.spawn(Noter, { id: 'n' });
    const other = system.spawn(NotesAgent, { id: 'other' });
    const otherBusy = other.call(createSignal('notes.add', { item: 'slow', delay: 20 }));
    system.subscribe('noted', () => void system!.shutdown());
    system.onError((error) => errors.push(error.code));
    await expect(agent.call(createSignal('note.now', { item: 'x', effects: [Effects.spawn('notes_agent', { id: 'late' })] }))).resolves.toBe('noted x');
    await expect(otherBusy).rejects.toMatchObject({ code: 'agent_stopped' });
    await settleDown();
    expect(system.list()).toEqual([]);
    expect(system.get('late')).toBeUndefined();
    expect(() => system!.spawn(NotesAgent)).toThrow(expect.objectContaining({ code: 'agent_stopped' }));
    expect(() => system!.publish('anything')).toThrow(expect.objectContaining({ code: 'agent_stopped', message: 'the agent system has been shut down' }));
    expect([agent, other].map((ref) => ref.actor.getSnapshot().status)).toEqual(['stopped', 'stopped']);
  });

  it('an action that stops its own agent while it runs: the caller gets agent_stopped and the step commits nothing', async () => {
    system = quietSystem();
    const heard: string[] = [];
    system.subscribe('**', (signal: Signal) => heard.push(signal.type));
    const kamikaze = defineAction({
      name: 'kamikaze',
      description: 'stops its own agent, then returns effects and a state change',
      input: z.object({}),
      state: notes,
      run: (_params, ctx) => {
        void system!.stop(ctx.agentId);
        return result('done', { state: { items: ['changed'] }, effects: [Effects.emit(createSignal('after.death'))] });
      },
    });
    const skill = defineSkill({ name: 'kamikaze', stateKey: 'notebook', schema: notes, actions: [kamikaze], routes: [{ path: 'go', target: { action: 'kamikaze' } }] });
    const agent = system.spawn(defineAgent({ name: 'kamikaze', skills: [skill] }), { id: 'k', state: { notebook: { items: ['before'] } } });
    await expect(agent.call(createSignal('go'))).rejects.toMatchObject({ code: 'agent_stopped', message: "agent 'k' stopped (stopped by request) before answering" });
    await settleDown();
    expect(heard).toEqual([]);
    expect(agent.persist().agent.state).toEqual({ notebook: { items: ['before'] } });
    expect(agent.actor.getSnapshot().status).toBe('stopped');
  });

  it('a stop effect for itself: the caller gets its answer; queued calls, sync or async, get agent_stopped and never run', async () => {
    system = quietSystem();
    const agent = system.spawn(Noter, { id: 'q' });
    const quitting = agent.call(createSignal('note', { item: 'bye', delay: 2, effects: [Effects.stop()] }));
    const queuedSync = agent.call(createSignal('notes.add_now', { item: 'sync after stop' }));
    const queuedAsync = agent.call(createSignal('notes.add', { item: 'async after stop', delay: 1 }));
    await expect(quitting).resolves.toBe('noted bye');
    const stopped = { code: 'agent_stopped', message: "agent 'q' stopped (stopped by agent 'q') before answering" };
    await expect(queuedSync).rejects.toMatchObject(stopped);
    await expect(queuedAsync).rejects.toMatchObject(stopped);
    expect(itemsOf(agent)).toEqual(['bye']);
    expect(() => agent.send(createSignal('notes.list'))).toThrow(expect.objectContaining({ code: 'agent_stopped' }));
  });

  it('effects run in their order: a child spawned before a stop effect for itself starts, linked, and stops with its parent', async () => {
    const lines: string[] = [];
    system = quietSystem({ definitions: [NotesAgent], trace: (line) => void (line.kind === 'spawn' || line.kind === 'stop' ? lines.push(JSON.stringify({ ...line, time: undefined })) : 0) });
    const errors: unknown[] = [];
    system.onError((error) => errors.push(error));
    const agent = system.spawn(Noter, { id: 'parent' });
    await agent.call(createSignal('note.now', { item: 'x', effects: [Effects.spawn('notes_agent', { id: 'kid' }), Effects.stop()] }));
    await settleDown();
    expect(errors).toEqual([]);
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([
      { kind: 'spawn', agent: 'parent', definition: 'noter' },
      { kind: 'spawn', agent: 'kid', definition: 'notes_agent', parent: 'parent' },
      { kind: 'stop', agent: 'kid', reason: "its parent 'parent' stopped" },
      { kind: 'stop', agent: 'parent', reason: "stopped by agent 'parent'" },
    ]);
    expect(system.list()).toEqual([]);
  });

  it('an emit to another agent then a stop of it, in one step: it handles the signal, then stops', async () => {
    system = quietSystem();
    const victim = system.spawn(NotesAgent, { id: 'victim' });
    const agent = system.spawn(Noter, { id: 'n' });
    await agent.call(createSignal('note.now', { item: 'x', effects: [Effects.emit(createSignal('notes.add_now', { item: 'last words' })), Effects.stop({ agent: 'victim' })] }));
    await settleDown();
    expect(itemsOf(victim)).toEqual(['last words']);
    expect(victim.getSnapshot().status).toBe('stopped');
  });
});

describe('listeners that spawn', () => {
  it('a subscriber that spawns an agent mid-step: it starts after nothing is half-done and answers', async () => {
    system = quietSystem();
    let born: AgentRef<object> | undefined;
    system.subscribe('noted', () => {
      born = system!.spawn(NotesAgent, { id: 'born', parent: 'n' });
      born.send(createSignal('notes.add_now', { item: 'first words' }));
    });
    const agent = system.spawn(Noter, { id: 'n' });
    await agent.call(createSignal('note.now', { item: 'x' }));
    await settleDown();
    expect(agent.children()).toEqual(['born']);
    expect(itemsOf(born!)).toEqual(['first words']);
    await expect(born!.call(createSignal('notes.list'))).resolves.toEqual({ items: ['first words'] });
  });
});
