/**
 * Fault injection. After each fault: no process crash, no lost or reordered signal, the state
 * unchanged by the failed step, and the agent still answers.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentSystem } from '../../src/index.js';
import { Decision, NotesAgent, createSignal, defineAction, defineAgent, defineSkill, notebook, quietSystem, result, z } from './fixtures.js';

let system: AgentSystem;
const escaped: unknown[] = [];
const onEscape = (error: unknown) => escaped.push(error);
beforeAll(() => {
  process.on('uncaughtException', onEscape);
  process.on('unhandledRejection', onEscape);
});
afterAll(() => {
  process.off('uncaughtException', onEscape);
  process.off('unhandledRejection', onEscape);
});
afterEach(async () => {
  await system?.shutdown();
  await new Promise((resolve) => setTimeout(resolve, 5));
  expect(escaped).toEqual([]);
});

const items = (agent: { getSnapshot(): { state: unknown } }) => (agent.getSnapshot().state as { notebook: { items: string[] } }).notebook.items;

describe('faults', () => {
  it('actions that throw or reject, mixed into a stream of good signals: nothing lost, nothing reordered', async () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    const expected: string[] = [];
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < 300; i++) {
      const item = `i${i}`;
      if (i % 7 === 0) calls.push(agent.call(createSignal('notes.add', { item, explode: true, delay: i % 2 })).catch((e: { code: string }) => e.code));
      else {
        expected.push(item);
        calls.push(agent.call(createSignal(i % 3 ? 'notes.add_now' : 'notes.add', { item })));
      }
    }
    const outcomes = await Promise.all(calls);
    expect(outcomes.filter((o) => o === 'action_failed')).toHaveLength(43);
    expect(items(agent)).toEqual(expected);
  });

  it('a transformResult that throws fails the call, keeps the state, and the next call works', async () => {
    let explode = true;
    const fragile = defineSkill({
      name: 'fragile',
      signalPatterns: ['notes.*'],
      transformResult: (_signal, value) => {
        if (explode) throw new Error('transform broke');
        return value;
      },
    });
    system = quietSystem();
    const agent = system.spawn(defineAgent({ name: 'fragile_agent', skills: [notebook, fragile] }));
    await expect(agent.call(createSignal('notes.add_now', { item: 'a' }))).rejects.toMatchObject({ code: 'hook_failed', skill: 'fragile' });
    expect(items(agent)).toEqual([]);
    explode = false;
    await expect(agent.call(createSignal('notes.add_now', { item: 'b' }))).resolves.toEqual({ count: 1 });
  });

  it('an async handleSignal that rejects is a typed error and the agent goes on', async () => {
    const moody = defineSkill({
      name: 'moody',
      signalPatterns: ['notes.add_now'],
      handleSignal: async (signal) => {
        if ((signal.data as { item: string }).item === 'bad') throw new Error('bad mood');
        return Decision.continue();
      },
    });
    system = quietSystem();
    const agent = system.spawn(defineAgent({ name: 'moody_agent', skills: [notebook, moody] }));
    const results = await Promise.allSettled(['a', 'bad', 'b'].map((item) => agent.call(createSignal('notes.add_now', { item }))));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(items(agent)).toEqual(['a', 'b']);
  });

  it('signals with invalid data are refused one by one and never poison the mailbox', async () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    const bad = [{ item: 42 }, null, 'text', [1, 2], { item: 'x'.repeat(10), delay: -1 }, { item: 'ok', extra: { deep: { __proto__: { polluted: true } } } }];
    const outcomes = await Promise.allSettled(bad.map((data) => agent.call(createSignal('notes.add', data))));
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected', 'rejected', 'rejected', 'fulfilled']);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
    expect(items(agent)).toEqual(['ok']);
  });

  it('stop during an async action: the pending call and the queued ones get agent_stopped; nothing escapes', async () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    const pending = agent.call(createSignal('notes.add', { item: 'slow', delay: 30 }));
    const queued = agent.call(createSignal('notes.add_now', { item: 'queued' }));
    await new Promise((resolve) => setTimeout(resolve, 5));
    await agent.stop();
    await expect(pending).rejects.toMatchObject({ code: 'agent_stopped' });
    await expect(queued).rejects.toMatchObject({ code: 'agent_stopped' });
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(agent.actor.getSnapshot().status).toBe('stopped');
  });

  it('an action that returns a value whose getters throw fails cleanly', async () => {
    const sneaky = defineAction({
      name: 'sneaky',
      description: 'returns a trap',
      input: z.object({}),
      run: () => result('x', { effects: [Object.defineProperty({}, 'type', { get: () => { throw new Error('trap'); }, enumerable: true }) as never] }),
    });
    system = quietSystem();
    const agent = system.spawn(defineAgent({ name: 'sneaky_agent', skills: [notebook], actions: [sneaky], routes: [{ path: 'sneak', target: { action: 'sneaky' } }] }));
    await expect(agent.call(createSignal('sneak'))).rejects.toMatchObject({ code: 'action_failed' });
    await expect(agent.call(createSignal('notes.add_now', { item: 'fine' }))).resolves.toEqual({ count: 1 });
  });

  it('a listener that throws does not stop delivery to the others or the emitting agent', async () => {
    system = quietSystem();
    const heard: string[] = [];
    system.subscribe('**', () => {
      throw new Error('bad listener');
    });
    system.subscribe('notes.**', (signal) => heard.push(signal.type));
    const agent = system.spawn(NotesAgent);
    expect(system.publish(createSignal('notes.event'))).toBe(2);
    expect(heard).toEqual(['notes.event']);
    await expect(agent.call(createSignal('notes.list'))).resolves.toEqual({ items: [] });
  });
});
