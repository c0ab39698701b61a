/**
 * One signal reaches many readers: the hooks, routes and actions of the step that processes it;
 * an emitted signal's subscribers, the agents it is delivered to and the trace. None of them can
 * change what the others read: signals and effects are frozen, data included.
 */
import { afterEach, expect, it } from 'vitest';
import { Decision, Effects, createSignal, defineAction, defineAgent, defineSkill, quietSystem, result, settleDown, z } from './fixtures.js';
import type { AgentSystem, TraceLine } from '../../src/index.js';

let system: AgentSystem | undefined;
afterEach(async () => {
  await system?.shutdown();
  system = undefined;
});

const shout = defineAction({ name: 'shout', description: 'Emit news', input: z.object({ n: z.number() }), run: ({ n }) => result(n, { effects: [Effects.emit(createSignal('news.item', { n }))] }) });
const publisher = defineSkill({ name: 'pub', actions: [shout], routes: [{ path: 'pub.shout', target: { action: 'shout' } }] });
const heard = z.object({ got: z.array(z.number()).default([]) });
const take = defineAction({ name: 'take', description: 'Keep news', input: z.object({ n: z.number() }), state: heard, run: ({ n }, { skillState }) => result(null, { state: { got: [...skillState.got, n] } }) });
const subscriber = defineSkill({ name: 'sub', schema: heard, actions: [take], routes: [{ path: 'news.item', target: { action: 'take' } }] });

it('a subscriber cannot change the emitted signal the receiving agents get', async () => {
  system = quietSystem();
  const tried: unknown[] = [];
  system.subscribe('news.*', (signal) => {
    try {
      (signal.data as { n: number }).n = 4242;
    } catch (error) {
      tried.push(error);
    }
  });
  const p = system.spawn(defineAgent({ name: 'p', skills: [publisher] }), { id: 'p' });
  const q = system.spawn(defineAgent({ name: 'q', skills: [subscriber] }), { id: 'q' });
  await p.call(createSignal('pub.shout', { n: 7 }));
  await settleDown();
  expect(tried).toHaveLength(1);
  expect(tried[0]).toBeInstanceOf(TypeError);
  expect(q.getSnapshot().state).toEqual({ sub: { got: [7] } });
});

it('a trace function cannot change an effect before it is carried out', async () => {
  const received: string[] = [];
  system = quietSystem({
    trace: (line: TraceLine) => {
      if (line.kind === 'effect' && line.effect.type === 'emit') {
        try {
          (line.effect.signal as { type: string }).type = 'elsewhere.x';
        } catch {
          // frozen
        }
      }
    },
  });
  system.subscribe('**', (signal) => received.push(signal.type));
  const p = system.spawn(defineAgent({ name: 'p', skills: [publisher] }), { id: 'p' });
  const q = system.spawn(defineAgent({ name: 'q', skills: [subscriber] }), { id: 'q' });
  await p.call(createSignal('pub.shout', { n: 7 }));
  await settleDown();
  expect(received).toContain('news.item');
  expect(received).not.toContain('elsewhere.x');
  expect(q.getSnapshot().state).toEqual({ sub: { got: [7] } });
});

it("a hook that writes into the signal fails its step; the caller's signal and the agent's state stay as they were", async () => {
  system = quietSystem();
  const meddler = defineSkill({
    name: 'meddler',
    signalPatterns: ['news.*'],
    handleSignal: (signal) => {
      (signal.data as { n: number }).n = 0;
      return Decision.continue();
    },
  });
  const q = system.spawn(defineAgent({ name: 'q', skills: [meddler, subscriber] }), { id: 'q' });
  const signal = createSignal('news.item', { n: 5 });
  await expect(q.call(signal)).rejects.toMatchObject({ code: 'hook_failed' });
  expect(signal.data).toEqual({ n: 5 });
  expect(q.getSnapshot().state).toEqual({ meddler: {}, sub: { got: [] } });
  // The agent keeps answering.
  await expect(q.call(createSignal('news.item', { n: 6 }))).rejects.toMatchObject({ code: 'hook_failed' });
});
