/** Supervision of skill children (restart policies, a bounded restart rate, a visible failure) and of agents whose actor fails. */
import { afterEach, describe, expect, it } from 'vitest';
import { createMachine, fromCallback, fromPromise } from 'xstate';
import { fail, type AgentRef, type AgentSystem, type RestartPolicy } from '../../src/index.js';
import { checkAgentInvariants } from '../../src/testing/index.js';
import { Effects, NotesAgent, createSignal, crashableChild, defineAction, defineAgent, defineSkill, notebook, quietSystem, result, z } from './fixtures.js';

let system: AgentSystem;
afterEach(async () => {
  await system?.shutdown();
});

function workerSkill(starts: { count: number }, restart: RestartPolicy, maxRestarts = 2) {
  return defineSkill({ name: 'worker', children: () => [{ id: 'loop', logic: crashableChild(starts), restart, maxRestarts, withinMs: 60_000 }] });
}

function crash(agent: AgentRef<object>) {
  agent.actor.system.get(`${agent.id}/skills/worker/loop`)!.send({ type: 'crash' });
}

const lifecycleState = (agent: AgentRef<object>) =>
  (agent.actor.getSnapshot().children['skill:worker'] as { getSnapshot(): { value: string } }).getSnapshot().value;

describe('supervision of skill children', () => {
  it('permanent: restarts a crashed child, within the budget, and says so', async () => {
    const starts = { count: 0 };
    const diagnostics: string[] = [];
    system = quietSystem();
    system.onDiagnostic((d) => diagnostics.push(d.code));
    const agent = system.spawn(NotesAgent, { id: 'w' });
    await agent.mount(workerSkill(starts, 'permanent'));
    crash(agent);
    crash(agent);
    expect(starts.count).toBe(3);
    expect(lifecycleState(agent)).toBe('active');
    expect(diagnostics).toEqual(['child_restarted', 'child_restarted']);
  });

  it('past the bound the skill goes to failed, stops its children and reports it, instead of looping', async () => {
    const starts = { count: 0 };
    const errors: string[] = [];
    system = quietSystem();
    system.onError((error, agentId) => errors.push(`${agentId}: ${error.code}: ${error.message}`));
    const agent = system.spawn(NotesAgent, { id: 'w' });
    await agent.mount(workerSkill(starts, 'permanent', 2));
    crash(agent);
    crash(agent);
    crash(agent);
    expect(starts.count).toBe(3);
    expect(lifecycleState(agent)).toBe('failed');
    expect(agent.getSnapshot().lifecycles.worker).toBe('failed');
    expect(agent.actor.system.get('w/skills/worker/loop')).toBeUndefined();
    expect(errors).toEqual([
      "w: skill_failed: skill 'worker' failed: child 'loop' crashed: child crashed on purpose (more than 2 restarts within 60000 ms)",
    ]);
    await expect(agent.call(createSignal('notes.add_now', { item: 'still here' }))).resolves.toEqual({ count: 1 });
  });

  it('temporary: a crashed child is not restarted, and the skill stays active', async () => {
    const starts = { count: 0 };
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    await agent.mount(workerSkill(starts, 'temporary'));
    crash(agent);
    expect(starts.count).toBe(1);
    expect(lifecycleState(agent)).toBe('active');
  });

  it('remounting a failed skill starts it afresh', async () => {
    const starts = { count: 0 };
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    const skill = workerSkill(starts, 'transient', 0);
    await agent.mount(skill);
    crash(agent);
    expect(lifecycleState(agent)).toBe('failed');
    await agent.unmount('worker');
    expect(agent.getSnapshot().lifecycles.worker).toBe('inactive');
    await agent.mount(skill);
    expect(lifecycleState(agent)).toBe('active');
    expect(agent.getSnapshot().lifecycles.worker).toBe('active');
    expect(starts.count).toBe(2);
  });

  it('mounting a failed skill again changes nothing, and says how to restart it', async () => {
    const starts = { count: 0 };
    const notes: string[] = [];
    system = quietSystem();
    system.onDiagnostic((note) => notes.push(note.code));
    const agent = system.spawn(NotesAgent);
    const skill = workerSkill(starts, 'transient', 0);
    await agent.mount(skill);
    crash(agent);
    const report = await agent.mount(skill);
    expect(report).toMatchObject({ skill: 'worker', changed: false, effects: [] });
    expect(report.diagnostics.map((note) => note.message)).toEqual([
      `agent '${agent.id}': skill 'worker' is already mounted and has failed; unmount it and mount it again to restart its children`,
    ]);
    expect(notes).toEqual(['skill_still_failed']);
    expect(agent.getSnapshot().lifecycles.worker).toBe('failed');
    expect(starts.count).toBe(1);
  });

  it('no crash of a child ever stops the agent actor or reaches Node as an uncaught exception', async () => {
    const starts = { count: 0 };
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    await agent.mount(workerSkill(starts, 'permanent', 1));
    for (let i = 0; i < 5; i++) agent.actor.system.get(`${agent.id}/skills/worker/loop`)?.send({ type: 'crash' });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(agent.actor.getSnapshot().status).toBe('active');
    await expect(agent.call(createSignal('notes.list'))).resolves.toEqual({ items: [] });
  });
});

describe('supervision at the edges', () => {
  const bornDead = (starts: { count: number }) =>
    fromCallback(() => {
      starts.count++;
      throw new Error('born dead');
    });

  it('a child that crashes while it starts is restarted within the budget, then the skill fails, reported once', async () => {
    const starts = { count: 0 };
    const errors: string[] = [];
    const diagnostics: string[] = [];
    system = quietSystem();
    system.onError((error, agentId) => errors.push(`${agentId}: ${error.code}: ${error.message}`));
    system.onDiagnostic((d) => diagnostics.push(d.code));
    const agent = system.spawn(NotesAgent, { id: 'w' });
    await expect(agent.mount(defineSkill({ name: 'worker', children: () => [{ id: 'loop', logic: bornDead(starts), maxRestarts: 2, withinMs: 60_000 }] }))).resolves.toMatchObject({ changed: true });
    expect(starts.count).toBe(3);
    expect(diagnostics).toEqual(['child_restarted', 'child_restarted']);
    expect(errors).toEqual(["w: skill_failed: skill 'worker' failed: child 'loop' crashed: born dead (more than 2 restarts within 60000 ms)"]);
    expect(agent.getSnapshot().lifecycles.worker).toBe('failed');
    expect(checkAgentInvariants(agent, ['worker'])).toEqual([]);
    await expect(agent.call(createSignal('notes.list'))).resolves.toEqual({ items: [] });
  });

  it('a static skill whose child dies at birth: spawn still gives a running agent, the skill failed and reported once', async () => {
    const starts = { count: 0 };
    const errors: string[] = [];
    system = quietSystem();
    system.onError((error) => errors.push(error.code));
    const Doomed = defineAgent({ name: 'doomed', skills: [notebook, defineSkill({ name: 'worker', children: () => [{ id: 'loop', logic: bornDead(starts), maxRestarts: 1 }] })] });
    const agent = system.spawn(Doomed, { id: 'd' });
    await new Promise((resolve) => setTimeout(resolve, 1));
    expect(starts.count).toBe(2);
    expect(errors).toEqual(['skill_failed']);
    expect(agent.getSnapshot().lifecycles).toEqual({ notebook: 'active', worker: 'failed' });
    await expect(agent.call(createSignal('notes.add_now', { item: 'alive' }))).resolves.toEqual({ count: 1 });
  });

  it('two children crashing past their budget at once: the skill fails once, and every child is stopped', async () => {
    const errors: string[] = [];
    system = quietSystem();
    system.onError((error) => errors.push(error.code));
    const agent = system.spawn(NotesAgent, { id: 'w' });
    await agent.mount(
      defineSkill({
        name: 'worker',
        children: () => [
          { id: 'a', logic: crashableChild({ count: 0 }), maxRestarts: 0 },
          { id: 'b', logic: crashableChild({ count: 0 }), maxRestarts: 0 },
        ],
      }),
    );
    const [a, b] = ['a', 'b'].map((id) => agent.actor.system.get(`w/skills/worker/${id}`)!);
    a!.send({ type: 'crash' });
    b!.send({ type: 'crash' });
    expect(errors).toEqual(['skill_failed']);
    expect([a!.getSnapshot().status, b!.getSnapshot().status]).toEqual(['error', 'stopped']);
    expect(checkAgentInvariants(agent, ['worker'])).toEqual([]);
  });

  it('a child that finishes: transient is not restarted; permanent is restarted within its budget, then the skill fails', async () => {
    const done = (runs: { count: number }) => fromPromise(async () => void runs.count++);
    const transientRuns = { count: 0 };
    const permanentRuns = { count: 0 };
    system = quietSystem();
    const diagnostics: string[] = [];
    system.onDiagnostic((d) => diagnostics.push(d.message));
    const agent = system.spawn(NotesAgent, { id: 'w' });
    await agent.mount(
      defineSkill({
        name: 'worker',
        children: () => [
          { id: 'once', logic: done(transientRuns), restart: 'transient' },
          { id: 'again', logic: done(permanentRuns), restart: 'permanent', maxRestarts: 2, withinMs: 60_000 },
        ],
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(transientRuns.count).toBe(1);
    expect(permanentRuns.count).toBe(3);
    expect(diagnostics).toEqual([
      "agent 'w': child 'again' of skill 'worker' stopped; restarted",
      "agent 'w': child 'again' of skill 'worker' stopped; restarted",
    ]);
    expect(agent.getSnapshot().lifecycles.worker).toBe('failed');
  });
});

describe('supervision of agents', () => {
  it('an agent whose actor fails is reported and stopped, its skill children stop with it, and its id can be spawned again', async () => {
    const starts = { count: 0 };
    const errors: string[] = [];
    system = quietSystem();
    system.onError((error, agentId) => errors.push(`${agentId}: ${error.code}: ${error.message}`));
    const Crew = defineAgent({ name: 'crew', skills: [notebook, workerSkill(starts, 'permanent')] });
    const agent = system.spawn(Crew, { id: 'w' });
    const loop = agent.actor.system.get('w/skills/worker/loop')!;
    expect(loop.getSnapshot().status).toBe('active');
    // A step never throws, so an actor cannot fail on its own: this fault is injected where the
    // machine tells its process a step is over.
    agent.actor.getSnapshot().context.host.finished = () => {
      throw new Error('fault injected');
    };
    agent.send(createSignal('notes.add_now', { item: 'x' }));
    expect(errors).toEqual(["w: signal_failed: agent 'w': its actor failed: fault injected"]);
    expect(system.get('w')).toBeUndefined();
    // It failed inside its step: what it ran stops once that step has unwound.
    await new Promise((resolve) => setImmediate(resolve));
    expect(loop.getSnapshot().status).toBe('stopped');
    const again = system.spawn(Crew, { id: 'w' });
    await expect(again.call(createSignal('notes.add_now', { item: 'y' }))).resolves.toEqual({ count: 1 });
    expect(starts.count).toBe(2);
  });

  it('a listener told that an agent failed can spawn its id again at once', async () => {
    system = quietSystem();
    const Crew = defineAgent({ name: 'crew', skills: [notebook, workerSkill({ count: 0 }, 'permanent')] });
    const agent = system.spawn(Crew, { id: 'w' });
    let again: AgentRef<object> | undefined;
    system.onError((error, agentId) => {
      if (agentId === 'w' && error.code === 'signal_failed' && again === undefined) again = system.spawn(Crew, { id: 'w' });
    });
    // The same fault as above, injected where the machine tells its process a step is over.
    agent.actor.getSnapshot().context.host.finished = () => {
      throw new Error('fault injected');
    };
    agent.send(createSignal('notes.add_now', { item: 'x' }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(system.get('w')).toBe(again);
    expect(again!.actor.getSnapshot().status).toBe('active');
    await expect(again!.call(createSignal('notes.add_now', { item: 'y' }))).resolves.toEqual({ count: 1 });
  });

  it('an agent that stops itself can be spawned again under its id at once, even by code its stop runs', async () => {
    const Phoenix = defineAgent({
      name: 'phoenix',
      skills: [
        defineSkill({
          name: 'fire',
          schema: z.object({ burnt: z.number().default(0) }),
          actions: [defineAction({ name: 'burn', description: 'Stop', input: z.object({}), run: () => result('burnt', { effects: [Effects.stop()] }) })],
          routes: [{ path: 'phoenix.burn', target: { action: 'burn' } }],
        }),
      ],
    });
    const spawned: AgentRef<object>[] = [];
    // The trace hears of the stop while the step's effects are carried out.
    system = quietSystem({ trace: (record) => record.kind === 'stop' && spawned.length === 0 && spawned.push(system.spawn(Phoenix, { id: 'bird' })) });
    const bird = system.spawn(Phoenix, { id: 'bird' });
    await expect(bird.call(createSignal('phoenix.burn'))).resolves.toBe('burnt');
    expect(bird.actor.getSnapshot().status).toBe('stopped');
    expect(spawned).toHaveLength(1);
    expect(system.get('bird')).toBe(spawned[0]);
    expect(spawned[0]!.actor.getSnapshot().status).toBe('active');
    expect(spawned[0]!.actor.system.get('bird/skills/fire')!.getSnapshot().status).toBe('active');
  });

  it('each agent runs its skills in an XState system of its own: skill children with the same system id do not clash across agents', async () => {
    const errors: string[] = [];
    system = quietSystem();
    system.onError((error, agentId) => errors.push(`${agentId}: ${error.code}`));
    const child = createMachine({ id: 'child', invoke: { src: fromCallback(() => () => {}), systemId: 'cache' } });
    const Cached = defineAgent({ name: 'cached', skills: [defineSkill({ name: 'cache', children: () => [{ id: 'svc', logic: child, maxRestarts: 1 }] })] });
    const first = system.spawn(Cached, { id: 'c1' });
    const second = system.spawn(Cached, { id: 'c2' });
    await new Promise((resolve) => setImmediate(resolve));
    expect([first.getSnapshot().lifecycles, second.getSnapshot().lifecycles]).toEqual([{ cache: 'active' }, { cache: 'active' }]);
    expect(first.actor.system.get('cache')).not.toBe(second.actor.system.get('cache'));
    expect(errors).toEqual([]);
  });

  it('an error listener that stops the agent and spawns its id again gets a running agent', async () => {
    system = quietSystem();
    const Failing = defineAgent({
      name: 'failing',
      skills: [defineSkill({ name: 's', actions: [defineAction({ name: 'boom', description: 'Fails', input: z.object({}), run: () => fail('nope', 'always fails') })], routes: [{ path: 'x.boom', target: { action: 'boom' } }] })],
    });
    let again: AgentRef<object> | undefined;
    system.onError((_error, agentId) => {
      if (agentId !== 'w' || again !== undefined) return;
      void system.stop('w');
      again = system.spawn(Failing, { id: 'w' });
    });
    system.spawn(Failing, { id: 'w' }).send(createSignal('x.boom'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(again!.actor.getSnapshot().status).toBe('active');
    expect(system.get('w')).toBe(again);
    expect(again!.actor.system.get('w/skills/s')!.getSnapshot().status).toBe('active');
  });
});
