/**
 * Mounting under pressure: skills of one name given by value, concurrent mounts of one skill,
 * slow mount hooks and loaders while signals queue, remounting a different skill or config,
 * mount hooks and `run` effects that mount, and effects that try to register actions on their
 * own. After each, the agent invariants hold (`checkAgentInvariants`, listed in docs/architecture.md).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fromCallback } from 'xstate';
import { RuntimeError, type AgentRef, type AgentSystem, type SkillResolver } from '../../src/index.js';
import { checkAgentInvariants } from '../../src/testing/index.js';
import {
  Decision,
  Effects,
  NotesAgent,
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
  z,
} from './fixtures.js';

let system: AgentSystem;
afterEach(async () => {
  await system?.shutdown();
});

const lifecycleActor = (agent: AgentRef<object>, skill: string) => agent.actor.getSnapshot().children[`skill:${skill}`];

describe('skills given by value', () => {
  it('a different skill with the name of a mounted one is refused with skill_conflict, not taken for it', async () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'a' });
    const impostor = defineSkill({ name: 'notebook', stateKey: 'pad' });
    const error = await agent.mount(impostor).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({
      code: 'skill_conflict',
      skill: 'notebook',
      message: "a different skill named 'notebook' is already mounted on agent 'a'; unmount it before mounting this one",
    });
    expect(agent.getSnapshot().state).toEqual({ notebook: { items: [] } });
  });

  it('two skills of one name queued behind a busy step: the first mounts, the second is skill_conflict', async () => {
    const first = defineSkill({ name: 'dup', schema: z.object({ v: z.string().default('first') }) });
    const second = defineSkill({ name: 'dup', schema: z.object({ v: z.string().default('second') }) });
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'a' });
    const busy = agent.call(createSignal('notes.add', { item: 'busy', delay: 5 }));
    const mountedFirst = agent.mount(first);
    const mountedSecond = agent.mount(second);
    await busy;
    await expect(mountedFirst).resolves.toMatchObject({ skill: 'dup', changed: true });
    await expect(mountedSecond).rejects.toMatchObject({ code: 'skill_conflict', skill: 'dup' });
    expect(agent.getSnapshot().state).toEqual({ notebook: { items: ['busy'] }, dup: { v: 'first' } });
  });

  it('the same skill mounted twice at once: its async mount hook runs once, the second mount changes nothing', async () => {
    let hooks = 0;
    const slow = defineSkill({
      name: 'slow',
      schema: z.object({ ready: z.boolean().default(false) }),
      mount: async () => {
        hooks++;
        await settleDown(5);
        return { state: { ready: true } };
      },
    });
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    const reports = await Promise.all([agent.mount(slow), agent.mount(slow)]);
    expect(reports.map((report) => report.changed)).toEqual([true, false]);
    expect(hooks).toBe(1);
    expect(agent.getSnapshot().state).toMatchObject({ slow: { ready: true } });
    expect(checkAgentInvariants(agent, ['slow'])).toEqual([]);
  });
});

describe('slow mounts and signals waiting behind them', () => {
  it('signals sent during a slow async mount hook wait, then run in arrival order, seeing the mounted skill', async () => {
    const gate = defineSkill({
      name: 'gate',
      schema: z.object({ open: z.boolean().default(false) }),
      signalPatterns: ['notes.add_now'],
      mount: async () => {
        await settleDown(10);
        return { state: { open: true } };
      },
      handleSignal: (signal, ctx) => (ctx.state as { open: boolean }).open ? Decision.continue() : Decision.fail('the gate is closed'),
    });
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    const mounted = agent.mount(gate);
    const answers = ['a', 'b', 'c'].map((item) => agent.call(createSignal('notes.add_now', { item })));
    expect(agent.getSnapshot()).toMatchObject({ status: 'working', mailbox: 3 });
    await mounted;
    await expect(Promise.all(answers)).resolves.toEqual([{ count: 1 }, { count: 2 }, { count: 3 }]);
    expect(itemsOf(agent)).toEqual(['a', 'b', 'c']);
  });

  it('a loader that fails: unknown_skill with the cause, and the items behind it are processed', async () => {
    const loader: SkillResolver & { has(name: string): boolean; load(names: string[]): Promise<void> } = {
      get: () => undefined,
      has: (name) => name === 'remote',
      load: async () => {
        await settleDown(2);
        throw new Error('network down');
      },
    };
    system = quietSystem({ resolvers: [loader] });
    const agent = system.spawn(NotesAgent, { id: 'a' });
    const mounting = agent.mount('remote');
    const after = agent.call(createSignal('notes.add_now', { item: 'after' }));
    await expect(mounting).rejects.toMatchObject({
      code: 'unknown_skill',
      skill: 'remote',
      message: "cannot mount skill 'remote' on agent 'a': loading it failed: network down",
    });
    await expect(after).resolves.toEqual({ count: 1 });
    expect(checkAgentInvariants(agent, ['remote'])).toEqual([]);
  });
});

describe('remounting', () => {
  it('remounting a plain skill reactivates its lifecycle actor', async () => {
    const plain = defineSkill({ name: 'plain' });
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    await agent.mount(plain);
    const lifecycle = lifecycleActor(agent, 'plain');
    await agent.unmount('plain');
    await agent.mount(plain);
    expect(lifecycleActor(agent, 'plain')).toBe(lifecycle);
    expect(checkAgentInvariants(agent, ['plain'])).toEqual([]);
  });

  it('a different skill of the same name, with children, mounted after the first was unmounted: its children run', async () => {
    const starts = { count: 0 };
    const before = defineSkill({ name: 'w' });
    const after = defineSkill({ name: 'w', children: () => [{ id: 'loop', logic: crashableChild(starts) }] });
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'a' });
    await agent.mount(before);
    await agent.unmount('w');
    await agent.mount(after);
    expect(starts.count).toBe(1);
    expect(agent.actor.system.get('a/skills/w/loop')?.getSnapshot().status).toBe('active');
    expect(checkAgentInvariants(agent, ['w'])).toEqual([]);
  });

  it('remounted with another config, a skill runs the children of the new config', async () => {
    const inputs: unknown[] = [];
    const worker = defineSkill({
      name: 'w',
      configSchema: z.object({ n: z.number().default(1) }),
      children: (config) => [{ id: 'loop', input: config.n, logic: fromCallback(({ input }) => void inputs.push(input)) }],
    });
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    await agent.mount(worker, { n: 1 });
    await agent.unmount('w');
    await agent.mount(worker, { n: 2 });
    expect(inputs).toEqual([1, 2]);
    expect(checkAgentInvariants(agent, ['w'])).toEqual([]);
  });
});

describe('mounts inside a step', () => {
  it("a skill mounted by a signal's action whose mount hook runs an action: the hook and the action each run once", async () => {
    let hooks = 0;
    const init = defineAction({ name: 'init', description: 'initialise', input: z.object({}), run: () => 'initialised' });
    const extra = defineSkill({
      name: 'extra',
      schema: z.object({ ready: z.boolean().default(false) }),
      actions: [init],
      mount: () => {
        hooks++;
        return { state: { ready: true }, effects: [Effects.run('init')] };
      },
    });
    const load = defineAction({ name: 'load', description: 'mount extra', input: z.object({}), run: () => result('loaded', { mount: [extra] }) });
    system = quietSystem();
    const agent = system.spawn(defineAgent({ name: 'loader', actions: [load], routes: [{ path: 'load', target: { action: 'load' } }] }));
    await expect(agent.call(createSignal('load'))).resolves.toBe('initialised');
    expect(hooks).toBe(1);
    expect(agent.getSnapshot()).toMatchObject({ state: { extra: { ready: true } }, lifecycles: { extra: 'active' } });
    expect(checkAgentInvariants(agent, ['extra'])).toEqual([]);
  });

  it('a run effect whose action mounts a skill: the skill is active, its hook applied, its actions registered', async () => {
    const extra = defineSkill({ name: 'extra', schema: z.object({ on: z.boolean().default(false) }), mount: () => ({ state: { on: true } }) });
    const loader = defineAction({ name: 'loader', description: 'mount extra', input: z.object({}), run: () => result('loaded', { mount: [extra] }) });
    const trigger = defineAction({ name: 'trigger', description: 'run loader', input: z.object({}), run: () => result('triggered', { effects: [Effects.run('loader')] }) });
    system = quietSystem();
    const agent = system.spawn(defineAgent({ name: 'runs', actions: [loader, trigger], routes: [{ path: 'go', target: { action: 'trigger' } }] }));
    await expect(agent.call(createSignal('go'))).resolves.toBe('loaded');
    expect(agent.getSnapshot()).toMatchObject({ state: { extra: { on: true } }, lifecycles: { extra: 'active' } });
    expect(checkAgentInvariants(agent, ['extra'])).toEqual([]);
  });
});

describe('registered actions follow mounts, and only mounts', () => {
  it('an action that returns a register_action effect of its own is refused with invalid_effect; nothing is registered', async () => {
    const forge = defineAction({ name: 'forge', description: 'forge', input: z.object({}), run: () => result('forged', { effects: [Effects.registerAction('ghost')] }) });
    system = quietSystem();
    const agent = system.spawn(defineAgent({ name: 'forger', skills: [notebook], actions: [forge], routes: [{ path: 'forge', target: { action: 'forge' } }] }));
    const before = agent.getSnapshot().registeredActions;
    await expect(agent.call(createSignal('forge'))).rejects.toMatchObject({
      code: 'invalid_effect',
      message: "action 'forge' returned a 'register_action' effect for 'ghost': actions are registered by mounting and unmounting skills, not by effects",
    });
    expect(agent.getSnapshot().registeredActions).toEqual(before);
    expect(checkAgentInvariants(agent)).toEqual([]);
  });

  it('a handleSignal that handles a signal with a deregister_action effect is refused the same way', async () => {
    const hider = defineSkill({
      name: 'hider',
      signalPatterns: ['hide'],
      handleSignal: () => Decision.handle({ effects: [Effects.deregisterAction('append_now', { skill: 'notebook' })] }),
    });
    system = quietSystem();
    const agent = system.spawn(defineAgent({ name: 'hiding', skills: [notebook, hider] }));
    await expect(agent.call(createSignal('hide'))).rejects.toMatchObject({
      code: 'invalid_effect',
      skill: 'hider',
      message: "handleSignal of skill 'hider' returned a 'deregister_action' effect for 'append_now': actions are registered by mounting and unmounting skills, not by effects",
    });
    expect(agent.getSnapshot().registeredActions).toContain('notebook/append_now');
    expect(checkAgentInvariants(agent)).toEqual([]);
  });

  it('an action that unmounts and remounts a skill in one result keeps its registration whole', async () => {
    const extra = defineSkill({ name: 'extra', actions: [defineAction({ name: 'ping', description: 'ping', input: z.object({}), run: () => 'pong' })] });
    const cycle = defineAction({ name: 'cycle', description: 'remount extra', input: z.object({}), run: () => result('cycled', { unmount: ['extra'], mount: [extra] }) });
    system = quietSystem();
    const agent = system.spawn(defineAgent({ name: 'cycler', skills: [extra], actions: [cycle], routes: [{ path: 'cycle', target: { action: 'cycle' } }] }));
    await expect(agent.call(createSignal('cycle'))).resolves.toBe('cycled');
    expect(agent.getSnapshot().registeredActions).toEqual(['cycle', 'extra/ping']);
    expect(checkAgentInvariants(agent, ['extra'])).toEqual([]);
  });
});

describe('unmounting a skill whose children are crashing', () => {
  it('stops them: no restart, no failure after the unmount, and the agent answers', async () => {
    const storm = fromCallback<{ type: 'crash' }>(({ self, receive }) => {
      const timer = setInterval(() => self.send({ type: 'crash' }), 1);
      receive(() => {
        clearInterval(timer); // this instance is done; its restart starts a storm of its own
        throw new Error('storm');
      });
      return () => clearInterval(timer);
    });
    const stormy = defineSkill({ name: 'stormy', children: () => [{ id: 'a', logic: storm, maxRestarts: 10_000, withinMs: 60_000 }, { id: 'b', logic: storm, maxRestarts: 10_000, withinMs: 60_000 }] });
    system = quietSystem();
    const reports: string[] = [];
    system.onDiagnostic((d) => reports.push(d.code));
    system.onError((e) => reports.push(e.code));
    const agent = system.spawn(NotesAgent, { id: 's' });
    await agent.mount(stormy);
    await settleDown(15);
    expect(reports.length).toBeGreaterThan(0);
    expect(new Set(reports)).toEqual(new Set(['child_restarted']));
    await agent.unmount('stormy');
    reports.length = 0;
    await settleDown(15);
    expect(reports).toEqual([]);
    expect(agent.getSnapshot().lifecycles.stormy).toBe('inactive');
    expect(checkAgentInvariants(agent, ['stormy'])).toEqual([]);
    await expect(agent.call(createSignal('notes.list'))).resolves.toEqual({ items: [] });
  });
});
