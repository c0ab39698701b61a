/**
 * Committed state is untouchable: whatever user code receives — an action's `ctx.state` /
 * `ctx.skillState` / `ctx.config`, a hook's `ctx.state`, a subscriber's snapshot, `getSnapshot()`,
 * `persist()` — can be read but never changes the agent behind the slice schema and the commit.
 * A write into it fails the step (the state is exactly as before); a write into what
 * `persist()` returned changes nothing.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AgentSystem } from '../../src/index.js';
import { createSignal, Decision, defineAction, defineAgent, defineSkill, systemPerTest, result, settleDown, z } from './fixtures.js';

const systems = systemPerTest();
let system: AgentSystem | undefined;

const shelfSchema = z.object({
  books: z.array(z.object({ title: z.string(), tags: z.array(z.string()) })).default([{ title: 'Dune', tags: ['sf'] }]),
  meta: z.object({ count: z.number(), owner: z.object({ name: z.string() }) }).default({ count: 1, owner: { name: 'ada' } }),
});
type Shelf = z.output<typeof shelfSchema>;
const INITIAL: Shelf = { books: [{ title: 'Dune', tags: ['sf'] }], meta: { count: 1, owner: { name: 'ada' } } };

/** Ways user code may try to change what it was given, each on the shelf slice. */
const MUTATIONS: [string, (slice: Shelf) => void][] = [
  ['assigns a top-level field', (slice) => ((slice as { meta: unknown }).meta = { count: 99, owner: { name: 'eve' } })],
  ['assigns a nested field', (slice) => (slice.meta.owner.name = 'eve')],
  ['increments a number', (slice) => slice.meta.count++],
  ['pushes onto an array', (slice) => slice.books.push({ title: 'Emma', tags: [] })],
  ['pushes onto a nested array', (slice) => slice.books[0]!.tags.push('classic')],
  ['sets an array element', (slice) => (slice.books[0] = { title: 'Emma', tags: [] })],
  ['splices an array', (slice) => slice.books.splice(0, 1)],
  ['fills an array in place', (slice) => slice.books.fill({ title: 'Emma', tags: [] })],
  ['deletes a field', (slice) => delete (slice.meta as { count?: number }).count],
  ['adds a field', (slice) => ((slice as Record<string, unknown>).extra = 1)],
  ['defines a property', (slice) => Object.defineProperty(slice.meta, 'count', { value: 5 })],
  ['sets the prototype', (slice) => Object.setPrototypeOf(slice.meta, { hacked: true })],
];

function shelfAgent(extra: Partial<Parameters<typeof defineSkill>[0]> = {}, run?: (slice: Shelf) => unknown) {
  const touch = defineAction({
    name: 'touch',
    description: 'does something to the shelf it is given',
    input: z.object({}),
    state: shelfSchema,
    run: (_params, { skillState }) => run?.(skillState),
  });
  const shelf = defineSkill({ name: 'shelf', schema: shelfSchema, actions: [touch], routes: [{ path: 'shelf.touch', target: { action: 'touch' } }], ...extra });
  return defineAgent({ name: 'librarian', skills: [shelf] });
}

const shelfOf = (agent: { getSnapshot(): { state: unknown } }) => (agent.getSnapshot().state as { shelf: Shelf }).shelf;

describe('an action that changes what it receives fails, and committed state is unchanged', () => {
  it.each(MUTATIONS)('an action that %s and returns: action_failed, state as before', async (_name, mutate) => {
    system = systems.start();
    const agent = system.spawn(shelfAgent({}, (slice) => { mutate(slice); return 'done'; }));
    await expect(agent.call(createSignal('shelf.touch'))).rejects.toMatchObject({ code: 'action_failed', action: 'touch', skill: 'shelf' });
    expect(shelfOf(agent)).toEqual(INITIAL);
  });

  it.each(MUTATIONS)('an action that %s and then throws: action_failed, state as before', async (_name, mutate) => {
    system = systems.start();
    const agent = system.spawn(shelfAgent({}, (slice) => {
      try {
        mutate(slice);
      } catch {
        // the write was refused; the action fails anyway
      }
      throw new Error('gave up');
    }));
    await expect(agent.call(createSignal('shelf.touch'))).rejects.toMatchObject({ code: 'action_failed', message: "action 'touch' failed: gave up" });
    expect(shelfOf(agent)).toEqual(INITIAL);
  });

  it.each(MUTATIONS)('an async action that %s after an await: action_failed, state as before', async (_name, mutate) => {
    system = systems.start();
    const agent = system.spawn(shelfAgent({}, async (slice) => {
      await settleDown(1);
      mutate(slice);
    }));
    await expect(agent.call(createSignal('shelf.touch'))).rejects.toMatchObject({ code: 'action_failed' });
    expect(shelfOf(agent)).toEqual(INITIAL);
  });

  it("the agent's whole state (ctx.state) and the skill's config (ctx.config) are frozen too", async () => {
    const poke = defineAction({
      name: 'poke',
      description: 'writes into the whole state, then the config',
      input: z.object({ what: z.enum(['state', 'config']) }),
      run: ({ what }, ctx) => {
        if (what === 'state') (ctx.state as Record<string, unknown>).shelf = {};
        else (ctx.config as Record<string, unknown>).limit = 0;
      },
    });
    const shelf = defineSkill({ name: 'shelf', schema: shelfSchema, configSchema: z.object({ limit: z.number().default(3) }), actions: [poke] });
    system = systems.start();
    const agent = system.spawn(defineAgent({ name: 'librarian', skills: [shelf] }));
    await expect(agent.run({ action: 'poke', params: { what: 'state' } })).rejects.toMatchObject({ code: 'action_failed' });
    await expect(agent.run({ action: 'poke', params: { what: 'config' } })).rejects.toMatchObject({ code: 'action_failed' });
    expect(shelfOf(agent)).toEqual(INITIAL);
    expect(agent.getSnapshot().mounted[0]!.config).toEqual({ limit: 3 });
  });

  it('an action that builds new values from what it receives, and returns them, changes state', async () => {
    system = systems.start();
    const agent = system.spawn(shelfAgent({}, (slice) => result('ok', { state: { books: [...slice.books, { title: 'Emma', tags: [] }] } })));
    await agent.call(createSignal('shelf.touch'));
    expect(shelfOf(agent).books.map((book) => book.title)).toEqual(['Dune', 'Emma']);
  });
});

describe('hooks that change what they receive fail, and committed state is unchanged', () => {
  const hooks: [string, (mutate: (slice: Shelf) => void) => Partial<Parameters<typeof defineSkill>[0]>][] = [
    ['handleSignal', (mutate) => ({ signalPatterns: ['shelf.*'], handleSignal: (_signal, ctx) => { mutate(ctx.state as Shelf); return Decision.continue(); } })],
    ['transformResult', (mutate) => ({ signalPatterns: ['shelf.*'], transformResult: (_signal, output, ctx) => { mutate(ctx.state as Shelf); return output; } })],
  ];
  for (const [hook, make] of hooks) {
    it.each(MUTATIONS)(`${hook} that %s: hook_failed, state as before`, async (_name, mutate) => {
      system = systems.start();
      const agent = system.spawn(shelfAgent(make(mutate), () => result('ok', { state: { meta: { count: 2, owner: { name: 'bob' } } } })));
      await expect(agent.call(createSignal('shelf.touch'))).rejects.toMatchObject({ code: 'hook_failed', skill: 'shelf' });
      expect(shelfOf(agent)).toEqual(INITIAL);
    });
  }

  it.each(MUTATIONS)('a mount hook that %s: hook_failed, the skill is not mounted', async (_name, mutate) => {
    const shelf = defineSkill({ name: 'shelf', schema: shelfSchema, mount: (ctx) => mutate(ctx.state as Shelf) });
    system = systems.start();
    const agent = system.spawn(defineAgent({ name: 'librarian' }));
    await expect(agent.mount(shelf)).rejects.toMatchObject({ code: 'hook_failed', skill: 'shelf' });
    expect(agent.getSnapshot().state).toEqual({});
  });
});

describe('what the runtime hands out: reading it never gives a way to change the agent', () => {
  it('getSnapshot(): state, slices, arrays and the mounted list are frozen; writing throws and changes nothing', () => {
    system = systems.start();
    const agent = system.spawn(shelfAgent());
    const view = agent.getSnapshot();
    expect(() => view.state.shelf = {} as never).toThrow(TypeError);
    expect(() => (view.state as { shelf: Shelf }).shelf.books.push({ title: 'x', tags: [] })).toThrow(TypeError);
    expect(() => (view.state as { shelf: Shelf }).shelf.meta.owner.name = 'eve').toThrow(TypeError);
    expect(() => view.mounted.pop()).toThrow(TypeError);
    expect(() => (view.mounted[0] as { config: unknown }).config = { limit: 1 }).toThrow(TypeError);
    expect(() => ((view.agent as { state: unknown }).state = {})).toThrow(TypeError);
    expect(shelfOf(agent)).toEqual(INITIAL);
    expect(agent.getSnapshot().mounted.map((record) => record.name)).toEqual(['shelf']);
  });

  it('persist(): an edited snapshot changes nothing in the running agent', () => {
    system = systems.start();
    const agent = system.spawn(shelfAgent());
    const snapshot = agent.persist();
    (snapshot.agent.state.shelf as Shelf).books.push({ title: 'Emma', tags: [] });
    (snapshot.agent.state.shelf as Shelf).meta.owner.name = 'eve';
    snapshot.agent.mounted.length = 0;
    snapshot.lifecycles.shelf = 'failed';
    expect(shelfOf(agent)).toEqual(INITIAL);
    expect(agent.persist().agent).toEqual({ id: agent.id, definition: 'librarian', state: { shelf: INITIAL }, mounted: [{ name: 'shelf', stateKey: 'shelf', config: {} }] });
    expect(agent.getSnapshot().lifecycles).toEqual({ shelf: 'active' });
  });

  it("a subscriber to the agent's actor gets frozen state: its writes throw and change nothing", async () => {
    system = systems.start();
    const agent = system.spawn(shelfAgent({}, () => result('ok', { state: { meta: { count: 2, owner: { name: 'bob' } } } })));
    const refused: unknown[] = [];
    agent.actor.subscribe((snapshot) => {
      const slice = (snapshot.context.agent.state as { shelf: Shelf }).shelf;
      try {
        slice.meta.owner.name = 'mallory';
      } catch (error) {
        refused.push(error);
      }
    });
    await agent.call(createSignal('shelf.touch'));
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((error) => error instanceof TypeError)).toBe(true);
    expect(shelfOf(agent).meta).toEqual({ count: 2, owner: { name: 'bob' } });
  });

  it.each([
    ['a slice schema checked field by field', shelfSchema],
    ['a slice schema with an object-level refinement (checked whole)', shelfSchema.refine((shelf) => shelf.meta.count >= 0)],
  ])('what an update brings is frozen once committed, all the way down (%s)', async (_name, schema) => {
    const add = defineAction({
      name: 'add',
      description: 'puts a new book on the shelf and renames the owner',
      input: z.object({}),
      run: (_params, { skillState }) => {
        const shelf = skillState as Shelf;
        return result('ok', { state: { books: [...shelf.books, { title: 'Emma', tags: ['classic'] }], meta: { count: 2, owner: { name: 'bob' } } } });
      },
    });
    const shelf = defineSkill({ name: 'shelf', schema: schema as unknown as typeof shelfSchema, actions: [add] });
    system = systems.start();
    const agent = system.spawn(defineAgent({ name: 'librarian', skills: [shelf] }));
    await agent.run({ action: 'add' });
    const slice = shelfOf(agent);
    expect(() => slice.books[1]!.tags.push('x')).toThrow(TypeError);
    expect(() => (slice.books[1]!.title = 'x')).toThrow(TypeError);
    expect(() => (slice.meta.owner.name = 'eve')).toThrow(TypeError);
    expect(() => ((agent.getSnapshot().state as Record<string, unknown>).shelf = {})).toThrow(TypeError);
    expect(shelfOf(agent)).toEqual({ books: [...INITIAL.books, { title: 'Emma', tags: ['classic'] }], meta: { count: 2, owner: { name: 'bob' } } });
  });

  it("a call's result that holds part of the state is that frozen part: editing it changes nothing", async () => {
    system = systems.start();
    const agent = system.spawn(shelfAgent({}, (slice) => slice.books));
    const books = (await agent.call(createSignal('shelf.touch'))) as Shelf['books'];
    expect(() => books.push({ title: 'x', tags: [] })).toThrow(TypeError);
    expect(shelfOf(agent)).toEqual(INITIAL);
  });
});

describe('property: for any action that mutates any part of what it receives, committed state is unchanged', () => {
  /** A path into the shelf slice to a container (object or array) and a key in it. */
  const target = fc.constantFrom<[string[], string | number]>(
    [[], 'books'],
    [[], 'meta'],
    [['books'], 0],
    [['books'], 5],
    [['books', '0'], 'title'],
    [['books', '0', 'tags'], 0],
    [['meta'], 'count'],
    [['meta', 'owner'], 'name'],
    [['meta', 'owner'], 'fresh'],
  );
  const kind = fc.constantFrom('set', 'delete', 'push', 'pop', 'define');
  const ending = fc.constantFrom('returns', 'returns a valid update', 'throws', 'async returns');

  it('holds for every container, key, kind of write and way of ending', async () => {
    await fc.assert(
      fc.asyncProperty(target, kind, fc.jsonValue(), ending, async ([path, key], how, value, end) => {
        const mutate = (slice: Shelf) => {
          let container: unknown = slice;
          for (const segment of path) container = (container as Record<string, unknown>)[segment];
          const holder = container as Record<string | number, unknown>;
          if (how === 'set') holder[key] = value;
          else if (how === 'delete') delete holder[key];
          else if (how === 'define') Object.defineProperty(holder, key, { value, enumerable: true });
          else if (Array.isArray(holder)) {
            if (how === 'push') (holder as unknown[]).push(value);
            else (holder as unknown[]).pop();
          } else holder[key] = value;
        };
        const local = systems.start();
        try {
          const agent = local.spawn(
            shelfAgent({}, (slice) => {
              const act = () => {
                mutate(slice);
                if (end === 'throws') throw new Error('after the write');
                return end === 'returns a valid update' ? result('ok', { state: { meta: { count: 7, owner: { name: 'zed' } } } }) : 'ok';
              };
              return end === 'async returns' ? settleDown(0).then(act) : act();
            }),
          );
          const answered = await agent.call(createSignal('shelf.touch')).then(() => true, () => false);
          // A write that is no write at all (deleting a key that is not there) lets the action
          // finish: then only its returned update, validated and committed, may show.
          const updated = answered && end === 'returns a valid update';
          expect(shelfOf(agent)).toEqual(updated ? { ...INITIAL, meta: { count: 7, owner: { name: 'zed' } } } : INITIAL);
        } finally {
          await local.shutdown();
        }
      }),
      { numRuns: 60 },
    );
  });
});
