/**
 * Values user code hands over and that end up in committed state (a state update's values, a
 * mounted skill's config) are frozen where they are, all the way down, even when their owner froze
 * them first: `Object.freeze` is shallow, and what is inside must not stay open to later changes.
 */
import { afterEach, expect, it } from 'vitest';
import { createSignal, defineAction, defineAgent, defineSkill, quietSystem, result, z } from './fixtures.js';
import type { AgentSystem } from '../../src/index.js';

let system: AgentSystem | undefined;
afterEach(async () => {
  await system?.shutdown();
  system = undefined;
});

const vault = z.object({ blob: z.any().optional() });
const put = defineAction({ name: 'put', description: 'Store an item', input: z.object({ item: z.any() }), state: vault, run: ({ item }) => result('ok', { state: { blob: item } }) });
const store = defineSkill({ name: 'store', schema: vault, actions: [put], routes: [{ path: 'store.put', target: { action: 'put' } }] });
const loose = defineSkill({ name: 'loose' }); // no config schema: its config is kept as given

it('a state update holding an object its owner froze (shallowly) is frozen inside too: later writes change nothing', async () => {
  system = quietSystem();
  const agent = system.spawn(defineAgent({ name: 'keeper', skills: [store] }), { id: 'k' });
  const inner = { balance: 100, history: [1, 2] };
  await agent.call(createSignal('store.put', { item: Object.freeze({ account: inner }) }));
  expect(() => {
    inner.balance = -1;
  }).toThrow(TypeError);
  expect(() => inner.history.push(3)).toThrow(TypeError);
  expect((agent.getSnapshot().state as { store: { blob: unknown } }).store.blob).toEqual({ account: { balance: 100, history: [1, 2] } });
});

it("a mounted skill's config its owner froze (shallowly) is frozen inside too", async () => {
  system = quietSystem();
  const agent = system.spawn(defineAgent({ name: 'keeper', skills: [] }), { id: 'k' });
  const limits = { max: 10 };
  await agent.mount(loose, Object.freeze({ limits }) as never);
  expect(() => {
    limits.max = 999;
  }).toThrow(TypeError);
  expect(agent.getSnapshot().mounted.find((record) => record.name === 'loose')!.config).toEqual({ limits: { max: 10 } });
});
