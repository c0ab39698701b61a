/**
 * A snapshot is plain JSON. State that JSON cannot hold faithfully — a BigInt, a function, a
 * symbol, a cycle, a `Map`, `NaN`, nesting thousands of levels deep — makes `persist()` throw a
 * `RuntimeError` (`invalid_state`, `details.reason: 'unpersistable'`) naming the agent and the
 * path of the first such value, instead of an untyped error later, or a snapshot that restores
 * as something else. `persistAll()` is all or nothing and names every agent that failed.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryStore, createSignal, defineAction, defineAgent, defineSkill, result, RuntimeError, type AgentSnapshot } from '../../src/index.js';
import { systemPerTest } from './fixtures.js';

const systems = systemPerTest();

function nested(depth: number): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  let inner = root;
  for (let i = 0; i < depth; i++) inner = (inner.next = {}) as Record<string, unknown>;
  return root;
}

/** Values an action puts into state, by name, with the path (below `meta`) of the value JSON cannot hold and what is said of it. */
const VALUES: Record<string, { make: () => unknown; at: string; says: string }> = {
  bigint: { make: () => ({ v: 12n }), at: '.v', says: 'holds a BigInt' },
  function: { make: () => ({ v: () => 1 }), at: '.v', says: 'holds a function' },
  symbol: { make: () => ({ v: Symbol('s') }), at: '.v', says: 'holds a symbol' },
  cycle: {
    make: () => {
      const loop: Record<string, unknown> = {};
      loop.self = loop;
      return { v: loop };
    },
    at: '.v.self',
    says: 'holds a cycle',
  },
  map: { make: () => ({ v: [1, new Map([['k', 1]])] }), at: '.v[1]', says: 'holds a Map' },
  nan: { make: () => ({ v: { n: Number.NaN } }), at: '.v.n', says: 'holds NaN' },
  hole: { make: () => ({ v: [1, undefined] }), at: '.v[1]', says: 'holds undefined' },
  // state.tags.meta.v is 3 levels below the state: the 997th `next` is the 1000th.
  deep: { make: () => ({ v: nested(1_200) }), at: `.v${'.next'.repeat(997)}`, says: 'holds values nested deeper than 1000 levels' },
};

/** Values JSON holds as something else, kept as JSON keeps them. */
const KEPT: Record<string, { make: () => unknown; persisted: unknown }> = {
  date: { make: () => ({ at: new Date('2024-01-02T03:04:05.000Z') }), persisted: { at: '2024-01-02T03:04:05.000Z' } },
  'undefined field': { make: () => ({ a: 1, b: undefined }), persisted: { a: 1 } },
  'minus zero': { make: () => ({ z: -0 }), persisted: { z: 0 } },
};

const meta = z.object({ meta: z.record(z.string(), z.unknown()).default({}) });
const tagger = defineSkill({
  name: 'tags',
  schema: meta,
  actions: [
    defineAction({
      name: 'tag',
      description: 'Puts a value into state',
      input: z.object({ kind: z.string() }),
      state: meta,
      run: ({ kind }) => result('ok', { state: { meta: ((VALUES[kind] ?? KEPT[kind])?.make() ?? { kind }) as Record<string, unknown> } }),
    }),
  ],
  routes: [{ path: 'tags.tag', target: { action: 'tag' } }],
});
const Tagged = defineAgent({ name: 'tagged', skills: [tagger] });

describe('persist refuses state JSON cannot hold, naming the agent and the path', () => {
  it.each(Object.keys(VALUES))('%s', async (kind) => {
    const agent = systems.start().spawn(Tagged, { id: 'bad' });
    await agent.call(createSignal('tags.tag', { kind }));
    let error: unknown;
    try {
      agent.persist();
    } catch (caught) {
      error = caught;
    }
    const path = `state.tags.meta${VALUES[kind]!.at}`;
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({
      code: 'invalid_state',
      agentId: 'bad',
      subject: path,
      message: expect.stringContaining(`agent 'bad' cannot be persisted: ${path} ${VALUES[kind]!.says}`),
      details: { reason: 'unpersistable', agent: 'bad' },
    });
  });

  it.each(Object.keys(KEPT))('%s is persisted as JSON keeps it', async (kind) => {
    const agent = systems.start().spawn(Tagged);
    await agent.call(createSignal('tags.tag', { kind }));
    const persisted = agent.persist().agent.state;
    expect(persisted).toEqual({ tags: { meta: KEPT[kind]!.persisted } });
    expect(JSON.parse(JSON.stringify(persisted))).toEqual(persisted);
  });

  it('the agent still runs, and persists once its state is plain again', async () => {
    const agent = systems.start().spawn(Tagged, { id: 'bad' });
    await agent.call(createSignal('tags.tag', { kind: 'bigint' }));
    expect(() => agent.persist()).toThrow(RuntimeError);
    await agent.call(createSignal('tags.tag', { kind: 'plain' }));
    expect(agent.persist().agent.state).toEqual({ tags: { meta: { kind: 'plain' } } });
  });
});

describe('persistAll is all or nothing, naming every agent that cannot be persisted', () => {
  it('one bad agent among healthy ones', async () => {
    const system = systems.start();
    system.spawn(Tagged, { id: 'healthy' });
    await system.spawn(Tagged, { id: 'bad' }).call(createSignal('tags.tag', { kind: 'function' }));
    let error: unknown;
    try {
      system.persistAll();
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({
      code: 'invalid_state',
      agentId: 'bad',
      message: expect.stringContaining("persistAll: 1 agent of 2 cannot be persisted, so none was: agent 'bad' cannot be persisted: state.tags.meta.v holds a function"),
      details: { reason: 'unpersistable', agents: ['bad'], errors: [expect.objectContaining({ code: 'invalid_state', subject: 'state.tags.meta.v' })] },
    });
    expect(system.get('healthy')!.persist().id).toBe('healthy');
  });

  it('several bad agents: each is named', async () => {
    const system = systems.start();
    await system.spawn(Tagged, { id: 'one' }).call(createSignal('tags.tag', { kind: 'bigint' }));
    system.spawn(Tagged, { id: 'fine' });
    await system.spawn(Tagged, { id: 'two' }).call(createSignal('tags.tag', { kind: 'cycle' }));
    expect(() => system.persistAll()).toThrow(expect.objectContaining({ agentId: undefined, details: expect.objectContaining({ agents: ['one', 'two'] }) }));
  });
});

describe('stores refuse a snapshot JSON cannot hold', () => {
  it('the memory store names the agent and the path', async () => {
    const system = systems.start();
    const snapshot = system.spawn(Tagged, { id: 'hand-made' }).persist();
    const edited = { ...snapshot, agent: { ...snapshot.agent, state: { tags: { meta: { v: 1n } } } } } as unknown as AgentSnapshot;
    await expect(createMemoryStore().save(edited)).rejects.toMatchObject({ code: 'invalid_state', agentId: 'hand-made', subject: 'agent.state.tags.meta.v' });
  });
});
