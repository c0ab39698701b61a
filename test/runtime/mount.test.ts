/** Mounting and unmounting skills on running agents. */
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeError, type AgentSystem } from '../../src/index.js';
import { arithmetic, calculator } from '../../skills/index.js';
import { Effects, NotesAgent, createSignal, crashableChild, defineAction, defineAgent, defineSkill, notebook, quietSystem, result, z } from './fixtures.js';

let system: AgentSystem;
afterEach(async () => {
  await system?.shutdown();
});

const lifecycle = (agent: { actor: { getSnapshot(): { children: Record<string, unknown> } } }, skill: string) =>
  (agent.actor.getSnapshot().children[`skill:${skill}`] as { getSnapshot(): { value: string; children: Record<string, unknown> } } | undefined)?.getSnapshot();

describe('mounting at run time', () => {
  it('mounts through the pure mountSkill: slice, routes, registered actions and an active lifecycle child', async () => {
    system = quietSystem();
    const agent = system.spawn(defineAgent({ name: 'math', skills: [calculator] }));
    await expect(agent.call(createSignal('arithmetic.multiply', { a: 6, b: 7 }))).rejects.toMatchObject({ code: 'no_route' });
    const report = await agent.mount(arithmetic);
    expect(report).toMatchObject({ skill: 'arithmetic', changed: true });
    expect(report.effects.map((effect) => effect.type)).toEqual(['register_action', 'register_action', 'register_action', 'register_action']);
    expect(report.diagnostics.map((d) => d.code)).toEqual(['action_name_clash', 'action_name_clash', 'action_name_clash']);
    expect(agent.getSnapshot()).toMatchObject({ lifecycles: { calculator: 'active', arithmetic: 'active' }, state: { arithmetic: {} } });
    expect(agent.getSnapshot().registeredActions).toEqual(expect.arrayContaining(['arithmetic/add', 'arithmetic/divide']));
    expect(lifecycle(agent, 'arithmetic')?.value).toBe('active');
    await expect(agent.call(createSignal('arithmetic.multiply', { a: 6, b: 7 }))).resolves.toEqual({ result: 42 });
  });

  it('is idempotent: mounting a mounted skill changes nothing and returns no effects', async () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    const before = agent.getSnapshot().agent;
    await expect(agent.mount(notebook)).resolves.toMatchObject({ changed: false, effects: [] });
    expect(agent.getSnapshot().agent).toBe(before);
  });

  it('refuses with the pure layer codes, keeping the agent as it was', async () => {
    const needsAuth = defineSkill({ name: 'search', requires: ['auth'] });
    const Configured = defineSkill({ name: 'configured', configSchema: z.object({ level: z.number().int() }) });
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    await expect(agent.mount(needsAuth)).rejects.toMatchObject({ code: 'missing_dependency', details: { missing: ['auth'] } });
    await expect(agent.mount(Configured, { level: 'high' } as never)).rejects.toMatchObject({ code: 'invalid_config', skill: 'configured' });
    await expect(agent.mount('never-registered')).rejects.toMatchObject({ code: 'unknown_skill' });
    await expect(agent.mount(defineSkill({ name: 'other', stateKey: 'notebook' }))).rejects.toMatchObject({ code: 'state_key_conflict' });
    expect(agent.getSnapshot().mounted.map((m) => m.name)).toEqual(['notebook']);
  });

  it('mounts a skill registered in the system by name', async () => {
    system = quietSystem({ skills: [arithmetic] });
    const agent = system.spawn(NotesAgent);
    await agent.mount('arithmetic');
    await expect(agent.call(createSignal('arithmetic.add', { a: 1, b: 1 }))).resolves.toEqual({ result: 2 });
  });

  it('runs the mount hook: its slice update and effects apply; a failing hook rolls the mount back', async () => {
    const greeted: string[] = [];
    const greeter = defineSkill({
      name: 'greeter',
      schema: z.object({ greeting: z.string().default('') }),
      mount: async (ctx) => ({ state: { greeting: `hello ${ctx.agentId}` }, effects: [Effects.emit(createSignal('greeter.ready'))] }),
    });
    const broken = defineSkill({ name: 'broken', mount: () => { throw new Error('cannot start'); } });
    system = quietSystem();
    system.subscribe('greeter.ready', (signal) => greeted.push(signal.type));
    const agent = system.spawn(NotesAgent, { id: 'g' });
    await agent.mount(greeter);
    expect(agent.getSnapshot().state).toMatchObject({ greeter: { greeting: 'hello g' } });
    expect(greeted).toEqual(['greeter.ready']);
    const error = await agent.mount(broken).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({ code: 'hook_failed', skill: 'broken', message: "mount hook of skill 'broken' failed: cannot start" });
    expect(agent.getSnapshot().mounted.map((m) => m.name)).toEqual(['notebook', 'greeter']);
    expect(lifecycle(agent, 'broken')).toBeUndefined();
  });

  it("starts the skill's children under its lifecycle, and stops them on unmount", async () => {
    const starts = { count: 0 };
    const worker = defineSkill({ name: 'worker', children: () => [{ id: 'loop', logic: crashableChild(starts) }] });
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'w' });
    await agent.mount(worker);
    const child = lifecycle(agent, 'worker')!.children.loop as { getSnapshot(): { status: string } };
    expect(child.getSnapshot().status).toBe('active');
    expect(agent.actor.system.get('w/skills/worker/loop')).toBe(child);
    await agent.unmount('worker');
    expect(child.getSnapshot().status).toBe('stopped');
    expect(lifecycle(agent, 'worker')?.value).toBe('inactive');
    expect(agent.getSnapshot().lifecycles.worker).toBe('inactive');
    await agent.mount(worker);
    expect(lifecycle(agent, 'worker')?.value).toBe('active');
    expect(starts.count).toBe(2);
  });
});

describe("the mount hooks of an agent's own skills", () => {
  const calls: string[] = [];
  const opening = z.object({ opened: z.string().default(''), order: z.array(z.string()).default([]) });
  const ledger = defineSkill({
    name: 'ledger',
    schema: opening,
    actions: [defineAction({ name: 'read_ledger', description: 'Read it', input: z.object({}), state: opening, run: (_p, ctx) => ctx.skillState })],
    routes: [{ path: 'ledger.read', target: { action: 'read_ledger' } }],
    mount: async (ctx) => {
      calls.push(`ledger:${ctx.agentId}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
      return { state: { opened: `opened for ${ctx.agentId}`, order: [...ctx.state.order, 'ledger'] }, effects: [Effects.emit(createSignal('ledger.opened', { by: ctx.agentId }))] };
    },
  });
  const audit = defineSkill({ name: 'audit', mount: (ctx) => void calls.push(`audit:${ctx.agentId}`) });
  const Books = defineAgent({ name: 'books', skills: [ledger, audit] });

  afterEach(() => {
    calls.length = 0;
  });

  it('run when the agent is spawned, in mount order, before its first signal, their effects carried out', async () => {
    const opened: unknown[] = [];
    system = quietSystem();
    system.subscribe('ledger.opened', (signal) => opened.push(signal.data));
    const agent = system.spawn(Books, { id: 'b1' });
    // The async hook is still running: the call waits behind it in the mailbox.
    await expect(agent.call(createSignal('ledger.read'))).resolves.toEqual({ opened: 'opened for b1', order: ['ledger'] });
    expect(calls).toEqual(['ledger:b1', 'audit:b1']);
    expect(opened).toEqual([{ by: 'b1' }]);
  });

  it('a failing hook at spawn is reported, naming the skill; the agent keeps its new state and answers', async () => {
    const errors: string[] = [];
    const jammed = defineSkill({ name: 'jammed', mount: () => { throw new Error('drawer stuck'); } });
    system = quietSystem();
    system.onError((error) => errors.push(`${error.code}: ${error.message}`));
    const agent = system.spawn(defineAgent({ name: 'jammed_books', skills: [ledger, jammed] }), { id: 'b2' });
    await expect(agent.call(createSignal('ledger.read'))).resolves.toEqual({ opened: '', order: [] });
    expect(errors).toEqual(["hook_failed: mount hook of skill 'jammed' failed: drawer stuck"]);
    expect(agent.getSnapshot().lifecycles).toEqual({ ledger: 'active', jammed: 'active' });
  });

  it('are not run again when the agent is restored from a snapshot', async () => {
    system = quietSystem();
    const agent = system.spawn(Books, { id: 'b3' });
    await agent.call(createSignal('ledger.read'));
    const snapshot = JSON.parse(JSON.stringify(agent.persist()));
    await agent.stop();
    calls.length = 0;
    const restored = system.restore(snapshot);
    await expect(restored.call(createSignal('ledger.read'))).resolves.toEqual({ opened: 'opened for b3', order: ['ledger'] });
    expect(calls).toEqual([]);
  });

  it("cannot be run again by sending the agent's actor a start event", async () => {
    const errors: string[] = [];
    system = quietSystem();
    system.onError((error) => errors.push(error.message));
    const agent = system.spawn(Books, { id: 'b4' });
    await agent.call(createSignal('ledger.read'));
    agent.actor.send({ type: 'start' });
    await expect(agent.call(createSignal('ledger.read'))).resolves.toEqual({ opened: 'opened for b4', order: ['ledger'] });
    expect(calls).toEqual(['ledger:b4', 'audit:b4']);
    expect(errors).toEqual(["agent 'b4': an event sent to its actor directly was refused: 'start' is the runtime's own first item of a spawned agent; it cannot be sent"]);
  });
});

describe('unmounting at run time', () => {
  it('removes the slice, deregisters the actions, takes the routes away', async () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    const report = await agent.unmount('notebook');
    expect(report.effects.map((e) => `${e.type}:${'action' in e ? e.action : ''}`)).toEqual([
      'deregister_action:append',
      'deregister_action:append_now',
      'deregister_action:list_items',
      'deregister_action:refuse',
    ]);
    expect(agent.getSnapshot()).toMatchObject({ state: {}, mounted: [], registeredActions: [], lifecycles: { notebook: 'inactive' } });
    await expect(agent.call(createSignal('notes.list'))).rejects.toMatchObject({ code: 'no_route' });
  });

  it('refuses to unmount a skill another requires (required_by)', async () => {
    const base = defineSkill({ name: 'base' });
    const top = defineSkill({ name: 'top', requires: ['base'] });
    system = quietSystem();
    const agent = system.spawn(defineAgent({ name: 'stack', skills: [base, top] }));
    await expect(agent.unmount('base')).rejects.toMatchObject({ code: 'required_by', details: { requiredBy: ['top'] } });
  });

  it('waits for a pending call to finish before unmounting (mailbox order)', async () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    const pending = agent.call(createSignal('notes.add', { item: 'slow', delay: 20 }));
    const unmounted = agent.unmount('notebook');
    await expect(pending).resolves.toEqual({ count: 1 });
    await expect(unmounted).resolves.toMatchObject({ changed: true });
  });
});

describe('skills mounted by actions (document skills are loaded this way)', () => {
  it('mounts a skill an action returns in result({ mount }), starting its lifecycle and registering its actions', async () => {
    const load = defineAction({ name: 'load', description: 'load a skill', input: z.object({}), run: () => result('loaded', { mount: [arithmetic] }) });
    system = quietSystem();
    const agent = system.spawn(defineAgent({ name: 'loader', actions: [load], routes: [{ path: 'load', target: { action: 'load' } }] }));
    await expect(agent.call(createSignal('load'))).resolves.toBe('loaded');
    expect(agent.getSnapshot().lifecycles).toEqual({ arithmetic: 'active' });
    expect(agent.getSnapshot().registeredActions).toEqual(['load', 'arithmetic/add', 'arithmetic/subtract', 'arithmetic/multiply', 'arithmetic/divide']);
    await expect(agent.call(createSignal('arithmetic.add', { a: 2, b: 2 }))).resolves.toEqual({ result: 4 });
  });
});
