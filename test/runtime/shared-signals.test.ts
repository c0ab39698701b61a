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

it('a signal whose data cannot be read through (a getter that throws, nesting too deep) fails its call; the agent keeps answering', async () => {
  system = quietSystem();
  const echo = defineSkill({ name: 'echo', actions: [defineAction({ name: 'echo', description: 'Says ok', input: z.object({}), run: () => 'ok' })], routes: [{ path: 'echo.*', target: { action: 'echo' } }] });
  const agent = system.spawn(defineAgent({ name: 'echoer', skills: [echo] }), { id: 'e' });
  const trap = {
    get nested(): unknown {
      throw new Error('not loaded yet');
    },
  };
  let deep: Record<string, unknown> = {};
  for (let i = 0; i < 50_000; i++) deep = { deep };
  for (const data of [trap, deep]) {
    const refused: unknown = await agent.call(createSignal('echo.odd', data)).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'invalid_signal', message: expect.stringMatching(/^signal 'echo\.odd' cannot be read: /) });
  }
  expect(await agent.call(createSignal('echo.plain', { fine: true }))).toBe('ok');
  expect(agent.getSnapshot().status).not.toBe('stopped');
});

it('a signal a hook rewrites is frozen too, for the hooks, routes and actions after it', async () => {
  system = quietSystem();
  const seen: boolean[] = [];
  const rewriter = defineSkill({
    name: 'rewriter',
    signalPatterns: ['news.*'],
    handleSignal: (signal) => (signal.type === 'news.raw' ? Decision.rewrite(createSignal('news.item', { n: (signal.data as { n: number }).n })) : Decision.continue()),
  });
  const check = defineAction({
    name: 'take',
    description: 'Keep news',
    input: z.object({ n: z.number() }),
    state: heard,
    run: ({ n }, { skillState, signal }) => {
      seen.push(Object.isFrozen(signal) && Object.isFrozen(signal?.data));
      return result(null, { state: { got: [...skillState.got, n] } });
    },
  });
  const keeper = defineSkill({ name: 'sub', schema: heard, actions: [check], routes: [{ path: 'news.item', target: { action: 'take' } }] });
  const q = system.spawn(defineAgent({ name: 'q', skills: [rewriter, keeper] }), { id: 'q' });
  await q.call(createSignal('news.raw', { n: 3 }));
  expect(seen).toEqual([true]);
  expect(q.getSnapshot().state).toMatchObject({ sub: { got: [3] } });
});
