/**
 * No user code can stop an agent actor or escape to Node: hooks that return traps (getters and
 * proxies that throw when read), skills whose routes or children are broken, resolvers that
 * throw, and observers — trace, inspector, unhandled-report handlers, subscribers — that throw.
 * Each failure is a typed error naming the culprit, the agent keeps its state and its actor, and
 * the next item is answered.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAgentSystem, RuntimeError, type AgentRef, type AgentSystem, type Signal } from '../../src/index.js';
import {
  Effects,
  NotesAgent,
  collectEscapes,
  createSignal,
  crashableChild,
  defineAction,
  defineAgent,
  defineSkill,
  itemsOf,
  notebook,
  quietSystem,
  result,
  settleDown,
  thrown,
  z,
} from './fixtures.js';

let system: AgentSystem | undefined;
const escaped = collectEscapes({ beforeAll, afterAll });
afterEach(async () => {
  vi.restoreAllMocks();
  await system?.shutdown();
  system = undefined;
  await settleDown();
  expect(escaped).toEqual([]);
});

/** An object whose property `key` throws `message` when read. */
function trap(key: string, message: string, base: Record<string, unknown> = {}): never {
  return Object.defineProperty({ ...base }, key, { enumerable: true, get: () => { throw new Error(message); } }) as never;
}

/** Asserts the agent is whole: its actor runs, it is idle, and it still answers. */
async function expectAlive(agent: AgentRef<object>): Promise<void> {
  expect(agent.actor.getSnapshot().status).toBe('active');
  expect(agent.getSnapshot().status).toBe('idle');
  await expect(agent.call(createSignal('notes.list'))).resolves.toEqual({ items: itemsOf(agent) });
}

describe('hooks whose return value throws when it is read', () => {
  const hooks: [string, Partial<Parameters<typeof defineSkill>[0]>, string][] = [
    ['handleSignal returns a value whose then throws', { handleSignal: () => trap('then', 'then trap') }, "handleSignal of skill 'trap' failed: then trap"],
    [
      'handleSignal returns a decision whose decision throws',
      { handleSignal: () => trap('decision', 'decision trap') },
      "handleSignal of skill 'trap' returned a decision that cannot be read: decision trap",
    ],
    [
      'async handleSignal resolves to a decision whose decision throws',
      { handleSignal: async () => trap('decision', 'decision trap') },
      "handleSignal of skill 'trap' returned a decision that cannot be read: decision trap",
    ],
    [
      'handleSignal handles with a state that throws',
      { handleSignal: () => trap('state', 'state trap', { decision: 'handle' }) },
      "handleSignal of skill 'trap' returned a decision that cannot be read: state trap",
    ],
    ['transformResult returns a value whose then throws', { transformResult: () => trap('then', 'then trap') }, "transformResult of skill 'trap' failed: then trap"],
  ];

  it.each(hooks)('%s: hook_failed to the caller, the state as it was, the actor running', async (_name, hook, message) => {
    const skill = defineSkill({ name: 'trap', signalPatterns: ['notes.**'], ...hook } as Parameters<typeof defineSkill>[0]);
    system = quietSystem();
    const agent = system.spawn(defineAgent({ name: 'trapped', skills: [notebook, skill] }), { state: { notebook: { items: ['kept'] } } });
    const before = agent.getSnapshot().agent;
    const error = await agent.call(createSignal('notes.add_now', { item: 'x' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({ code: 'hook_failed', skill: 'trap', message });
    expect(agent.getSnapshot().agent).toBe(before);
    expect(agent.actor.getSnapshot().status).toBe('active');
  });

  it('a mount hook whose outcome throws when read: the mount is refused and rolled back', async () => {
    const skill = defineSkill({ name: 'trap', schema: z.object({ n: z.number().default(0) }), mount: () => trap('state', 'state trap') });
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    await expect(agent.mount(skill)).rejects.toMatchObject({
      code: 'hook_failed',
      skill: 'trap',
      message: "mount hook of skill 'trap' returned something that cannot be read: state trap",
    });
    expect(agent.getSnapshot()).toMatchObject({ mounted: [{ name: 'notebook' }], lifecycles: { notebook: 'active' }, state: { notebook: { items: [] } } });
    await expectAlive(agent);
  });
});

describe("a skill's routes and children are checked when it is mounted, and a bad one is refused", () => {
  const logic = crashableChild({ count: 0 });
  const cases: [string, string, Parameters<typeof defineSkill>[0], string][] = [
    ['routes(config) throws', 'invalid_route', { name: 'bad', routes: () => { throw new Error('no routes'); } }, "routes of skill 'bad': routes(config) failed: no routes"],
    ['routes(config) returns no array', 'invalid_route', { name: 'bad', routes: () => 'notes.*' as never }, "routes of skill 'bad': routes(config) did not return an array"],
    [
      'a route has an invalid path',
      'invalid_route',
      { name: 'bad', routes: () => [{ path: 'a..b', target: { action: 'append' } }] },
      "routes of skill 'bad': invalid route path: pattern 'a..b' has an empty segment at position 2",
    ],
    [
      'a route target is neither a handler nor an action',
      'invalid_route',
      { name: 'bad', routes: () => [{ path: 'bad.go', target: 42 as never }] },
      "routes of skill 'bad': route 'bad.go' has a target that is neither { action } nor a handler function, got 42",
    ],
    ['children(config) throws', 'hook_failed', { name: 'bad', children: () => { throw new Error('no kids'); } }, "children of skill 'bad' failed: no kids"],
    ['children(config) returns no array', 'invalid_skill', { name: 'bad', children: () => ({ id: 'x', logic }) as never }, "children of skill 'bad' must return an array of child specs"],
    [
      'a child has no id',
      'invalid_skill',
      { name: 'bad', children: () => [{ logic } as never] },
      "children of skill 'bad': the child at index 0 needs a non-empty string id",
    ],
    [
      'two children share an id',
      'invalid_skill',
      { name: 'bad', children: () => [{ id: 'x', logic }, { id: 'x', logic }] },
      "children of skill 'bad': the child at index 1 has the id 'x' of an earlier child; ids must be unique",
    ],
    [
      'a child logic is not actor logic',
      'invalid_skill',
      { name: 'bad', children: () => [{ id: 'x', logic: (() => {}) as never }] },
      "children of skill 'bad': the child at index 0 ('x') has logic that is not XState actor logic (fromCallback, fromPromise, createMachine...)",
    ],
    [
      'a child restart policy is unknown',
      'invalid_skill',
      { name: 'bad', children: () => [{ id: 'x', logic, restart: 'sometimes' as never }] },
      "children of skill 'bad': the child at index 0 ('x') has restart 'sometimes'; use permanent, transient or temporary",
    ],
    [
      'a child may restart a negative number of times',
      'invalid_skill',
      { name: 'bad', children: () => [{ id: 'x', logic, maxRestarts: -1 }] },
      "children of skill 'bad': the child at index 0 ('x') has maxRestarts -1; it must be an integer >= 0",
    ],
    [
      // A window of 0 never counts a restart: a child crashing as it starts would loop forever.
      'a child restart window is 0 ms',
      'invalid_skill',
      { name: 'bad', children: () => [{ id: 'x', logic, withinMs: 0 }] },
      "children of skill 'bad': the child at index 0 ('x') has withinMs 0; it must be a finite number of milliseconds > 0",
    ],
  ];

  it.each(cases)('%s: mount rejects with %s naming the skill, and nothing of it stays', async (_name, code, definition, message) => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'a' });
    const error = await agent.mount(defineSkill(definition)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({ code, skill: 'bad', message });
    expect(agent.getSnapshot()).toMatchObject({ mounted: [{ name: 'notebook' }], lifecycles: { notebook: 'active' } });
    expect(agent.actor.getSnapshot().children['skill:bad']).toBeUndefined();
    await expectAlive(agent);
  });

  it('the same check fails a signal whose action mounts the skill, atomically', async () => {
    const bad = defineSkill({ name: 'bad', children: () => { throw new Error('no kids'); } });
    const load = defineAction({ name: 'load', description: 'mount bad', input: z.object({}), run: () => result('loaded', { mount: [bad] }) });
    system = quietSystem();
    const agent = system.spawn(defineAgent({ name: 'loader', skills: [notebook], actions: [load], routes: [{ path: 'load', target: { action: 'load' } }] }));
    await expect(agent.call(createSignal('load'))).rejects.toMatchObject({ code: 'hook_failed', message: "children of skill 'bad' failed: no kids" });
    expect(agent.getSnapshot().mounted.map((m) => m.name)).toEqual(['notebook']);
    await expectAlive(agent);
  });

  it('children(config) is called once per mount, not again when the lifecycle starts', async () => {
    let calls = 0;
    const worker = defineSkill({ name: 'worker', children: () => (calls++, [{ id: 'loop', logic: crashableChild({ count: 0 }) }]) });
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    await agent.mount(worker);
    expect(calls).toBe(1);
    expect(agent.actor.system.get(`${agent.id}/skills/worker/loop`)?.getSnapshot().status).toBe('active');
  });

  it('spawning an agent whose static skill has broken children throws a typed error and starts nothing', () => {
    const Broken = defineAgent({ name: 'broken', skills: [defineSkill({ name: 'kids', children: () => { throw new Error('no kids'); } })] });
    system = quietSystem();
    const error = thrown(() => system!.spawn(Broken, { id: 'k1' }));
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({ code: 'hook_failed', skill: 'kids', agentId: 'k1', message: "cannot start agent 'k1': children of skill 'kids' failed: no kids" });
    expect(system.list()).toEqual([]);
  });

  it('a failed check is not remembered: once the skill code works, the same definition spawns', () => {
    const flaky = { broken: true };
    const Flaky = defineAgent({ name: 'flaky', skills: [defineSkill({ name: 'kids', children: () => { if (flaky.broken) throw new Error('not yet'); return []; } })] });
    system = quietSystem();
    expect(thrown(() => system!.spawn(Flaky))).toMatchObject({ code: 'hook_failed' });
    flaky.broken = false;
    expect(system.spawn(Flaky, { id: 'ok' }).getSnapshot().lifecycles).toEqual({ kids: 'active' });
  });

  it('restoring an agent with a mounted skill whose routes are broken throws a typed error and starts nothing', () => {
    const flaky = { broken: false };
    const extra = defineSkill({ name: 'extra', routes: () => { if (flaky.broken) throw new Error('routes gone'); return []; } });
    system = quietSystem({ skills: [extra], definitions: [NotesAgent] });
    const agent = system.spawn(NotesAgent, { id: 'r' });
    return agent.mount('extra').then(async () => {
      const snapshot = JSON.parse(JSON.stringify(agent.persist()));
      await agent.stop();
      flaky.broken = true;
      const error = thrown(() => system!.restore(snapshot));
      expect(error).toMatchObject({ code: 'invalid_route', skill: 'extra', message: "cannot start agent 'r': routes of skill 'extra': routes(config) failed: routes gone" });
      expect(system!.list()).toEqual([]);
    });
  });
});

describe('skill registries and resolvers that throw', () => {
  const failing = { get: () => { throw new Error('resolver down'); } };

  it('mount by name: unknown_skill naming the resolver and the cause; the agent goes on', async () => {
    system = quietSystem({ resolvers: [failing] });
    const agent = system.spawn(NotesAgent, { id: 'a' });
    await expect(agent.mount('whatever')).rejects.toMatchObject({
      code: 'unknown_skill',
      skill: 'whatever',
      message: "cannot mount skill 'whatever' on agent 'a': resolver 0 failed to look up skill 'whatever': resolver down",
    });
    await expectAlive(agent);
  });

  it('restore: a RuntimeError, not a raw exception, and nothing starts', () => {
    system = quietSystem({ resolvers: [failing], definitions: [NotesAgent] });
    const snapshot = {
      format: 'skillstate/agent@1',
      id: 'x',
      definition: 'notes_agent',
      agent: { id: 'x', definition: 'notes_agent', state: { notebook: { items: [] } }, mounted: [{ name: 'notebook', stateKey: 'notebook', config: {} }, { name: 'extra', stateKey: 'extra', config: {} }] },
      lifecycles: {},
      children: [],
    };
    const error = thrown(() => system!.restore(snapshot));
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({ code: 'unknown_skill', message: "resolver 0 failed to look up skill 'extra': resolver down" });
    expect(system.list()).toEqual([]);
  });
});

describe('observers that throw: the trace, the inspector, unhandled-report handlers, subscribers', () => {
  const emitter = defineAction({
    name: 'shout',
    description: 'emit what the signal says',
    input: z.object({ type: z.string(), big: z.boolean().default(false) }),
    run: ({ type, big }) => result('shouted', { effects: [Effects.emit(createSignal(type, big ? { n: 10n } : { n: 1 }))] }),
  });
  const Shouter = defineAgent({ name: 'shouter', skills: [notebook], actions: [emitter], routes: [{ path: 'shout', target: { action: 'shout' } }] });
  const stderr = () => {
    const lines: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (lines.push(String(chunk)), true));
    return lines;
  };

  it('a trace function that throws is reported once on stderr; agents and the system actor keep working', async () => {
    const lines = stderr();
    system = quietSystem({ trace: () => { throw new Error('trace broke'); } });
    const agent = system.spawn(NotesAgent);
    await expect(agent.call(createSignal('notes.add_now', { item: 'a' }))).resolves.toEqual({ count: 1 });
    await expect(agent.call(createSignal('notes.add_now', { item: 'b' }))).resolves.toEqual({ count: 2 });
    expect(lines).toEqual(['[skillstate] the trace failed and later failures are not reported: trace broke\n']);
    expect(system.actor.getSnapshot().status).toBe('active');
    await expectAlive(agent);
  });

  it('a signal JSON cannot encode (a BigInt) is traced without its payload, and the effects after it are still carried out', async () => {
    const written: string[] = [];
    system = quietSystem({ trace: { write: (line: string) => written.push(line) } });
    const heard: unknown[] = [];
    system.subscribe('news.*', (signal: Signal) => heard.push(signal.data));
    const agent = system.spawn(Shouter, { id: 's' });
    await expect(agent.call(createSignal('shout', { type: 'news.big', big: true }))).resolves.toBe('shouted');
    await expect(agent.call(createSignal('shout', { type: 'news.small' }))).resolves.toBe('shouted');
    expect(heard).toEqual([{ n: 10n }, { n: 1 }]);
    const effects = written.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.kind === 'effect');
    expect(effects.map(({ time: _time, ...line }) => line)).toEqual([
      { kind: 'effect', agent: 's', unencodable: 'Do not know how to serialize a BigInt' },
      { kind: 'effect', agent: 's', effect: expect.objectContaining({ type: 'emit', signal: expect.objectContaining({ type: 'news.small' }) }) },
    ]);
    expect(system.actor.getSnapshot().status).toBe('active');
  });

  it('an onUnhandledError handler that throws: the error still reaches stderr, naming the agent and the code', async () => {
    const lines = stderr();
    system = createAgentSystem({ onUnhandledError: () => { throw new Error('handler broke'); }, onUnhandledDiagnostic: () => {} });
    const agent = system.spawn(NotesAgent, { id: 'lonely' });
    agent.send(createSignal('no.route'));
    expect(lines).toEqual([
      '[skillstate] an unhandled-report handler threw: handler broke\n',
      "[skillstate] agent 'lonely': no_route: no route matches signal 'no.route'\n",
    ]);
    expect(system.actor.getSnapshot().status).toBe('active');
    await expectAlive(agent);
  });

  it('an onUnhandledDiagnostic handler that throws: the diagnostic still reaches stderr', async () => {
    const lines = stderr();
    system = createAgentSystem({ onUnhandledError: () => {}, onUnhandledDiagnostic: () => { throw new Error('handler broke'); } });
    const agent = system.spawn(Shouter, { id: 's' });
    await expect(agent.call(createSignal('shout', { type: 'into.the.void' }))).resolves.toBe('shouted');
    expect(lines).toEqual([
      '[skillstate] an unhandled-report handler threw: handler broke\n',
      "[skillstate] warning: signal 'into.the.void' emitted by agent 's' reached no subscriber and no agent\n",
    ]);
    await expectAlive(agent);
  });

  it('an inspector that throws is reported once; the system is created and agents answer', async () => {
    const lines = stderr();
    system = quietSystem({ inspect: () => { throw new Error('inspector broke'); } });
    const agent = system.spawn(NotesAgent);
    await expect(agent.call(createSignal('notes.add_now', { item: 'a' }))).resolves.toEqual({ count: 1 });
    expect(lines).toEqual(['[skillstate] the inspector failed and later failures are not reported: inspector broke\n']);
    await expectAlive(agent);
  });

  it('a subscriber that throws null, or an error whose message throws, is a listener_failed diagnostic', async () => {
    system = quietSystem();
    const diagnostics: string[] = [];
    system.onDiagnostic((d) => diagnostics.push(`${d.code}: ${d.message}`));
    system.subscribe('news.*', () => {
      throw null; // eslint-disable-line no-throw-literal
    });
    system.subscribe('news.*', () => {
      throw trap('message', 'message trap');
    });
    const agent = system.spawn(Shouter, { id: 's' });
    await expect(agent.call(createSignal('shout', { type: 'news.today' }))).resolves.toBe('shouted');
    expect(diagnostics).toEqual(["listener_failed: a subscriber to 'news.today' threw: null", "listener_failed: a subscriber to 'news.today' threw: [object Object]"]);
    await expectAlive(agent);
  });
});
