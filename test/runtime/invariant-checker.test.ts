/**
 * The checker the model-based tests rely on (`skillstate/testing`) must be able to fail: each
 * invariant is broken on purpose — behind the runtime's back, through the XState actors, or in
 * the view the checker is handed — and the violation is reported in words naming the skill.
 * And the test model refuses a setup that could only produce false alarms.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentRef, AgentSystem, AgentView } from '../../src/index.js';
import { checkAgentInvariants, createAgentTestModel } from '../../src/testing/index.js';
import { NotesAgent, crashableChild, defineSkill, notebook, quietSystem, thrown, z } from './fixtures.js';

let system: AgentSystem;
afterEach(async () => {
  await system?.shutdown();
});

/** The same agent, seen through a view changed by `change`: what a runtime bug would show. */
function withView(agent: AgentRef<object>, change: (view: AgentView<object>) => AgentView<object>): AgentRef<object> {
  return Object.assign(Object.create(agent) as AgentRef<object>, { getSnapshot: () => change(agent.getSnapshot()) });
}

describe('checkAgentInvariants finds what is wrong', () => {
  it('a lifecycle deactivated behind the agent: mounted but inactive, and the record disagrees', () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'a' });
    expect(checkAgentInvariants(agent)).toEqual([]);
    agent.actor.system.get('a/skills/notebook')!.send({ type: 'deactivate' });
    expect(checkAgentInvariants(agent)).toEqual([
      "skill 'notebook' is mounted but its lifecycle is inactive",
      "skill 'notebook': the agent records its lifecycle as active, the lifecycle machine is inactive",
    ]);
  });

  it('a lifecycle the agent records without its machine, and a machine it does not record', async () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'a' });
    const ghost = withView(agent, (view) => ({ ...view, lifecycles: { ...view.lifecycles, ghost: 'inactive' } }));
    expect(checkAgentInvariants(ghost)).toEqual(["skill 'ghost': the agent records its lifecycle as inactive, but it has no lifecycle machine"]);

    await agent.mount(defineSkill({ name: 'extra' }));
    await agent.unmount('extra');
    expect(checkAgentInvariants(agent, ['extra'])).toEqual([]);
    const forgotten = withView(agent, (view) => ({ ...view, lifecycles: { notebook: view.lifecycles.notebook! } }));
    expect(checkAgentInvariants(forgotten)).toEqual(["skill 'extra' has a lifecycle machine (inactive) the agent does not record"]);
  });

  it('an active skill whose child is not running', async () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'a' });
    await agent.mount(defineSkill({ name: 'worker', children: () => [{ id: 'loop', logic: crashableChild({ count: 0 }), restart: 'transient', maxRestarts: 0 }] }));
    // A forged `done` event: the lifecycle forgets the child as if it had finished, but it stays active.
    agent.actor.system.get('a/skills/worker')!.send({ type: 'xstate.done.actor.loop', output: undefined });
    expect(checkAgentInvariants(agent, ['worker'])).toEqual(["skill 'worker' is active but its child 'loop' is not running"]);
  });

  it('registered actions that differ from the active skills', () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    const broken = withView(agent, (view) => ({ ...view, registeredActions: [...view.registeredActions, 'ghost'] }));
    expect(checkAgentInvariants(broken)).toEqual([
      "registered actions [ghost, notebook/append, notebook/append_now, notebook/list_items, notebook/refuse] differ from the active skills' actions [notebook/append, notebook/append_now, notebook/list_items, notebook/refuse]",
    ]);
  });

  it("a slice left behind by an unmounted skill, under a state key that is not the skill's name", () => {
    const pad = defineSkill({ name: 'scratch', stateKey: 'pad', schema: z.object({ lines: z.number().default(0) }) });
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    const broken = withView(agent, (view) => ({ ...view, state: { ...view.state, pad: { lines: 0 } } }));
    expect(checkAgentInvariants(broken, [pad])).toEqual(["skill 'scratch' is not mounted but its state 'pad' remains"]);
  });

  it('a slice that does not match its skill schema', () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    const broken = withView(agent, (view) => ({ ...view, state: { ...view.state, notebook: { items: 'garbage' } } }));
    expect(checkAgentInvariants(broken)).toEqual(["skill 'notebook': its state under 'notebook' does not match its schema: items: Invalid input: expected array, received string"]);
  });

  it('a mounted skill without its slice', () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    const broken = withView(agent, (view) => ({ ...view, state: {} }));
    expect(checkAgentInvariants(broken)).toEqual(["skill 'notebook' is mounted but has no state under 'notebook'"]);
  });
});

describe('createAgentTestModel', () => {
  it("refuses an optional skill that is one of the definition's own: every path would fail for nothing", () => {
    expect(thrown(() => createAgentTestModel(NotesAgent, { skills: [notebook] }))).toMatchObject({
      code: 'invalid_skill',
      skill: 'notebook',
      message: "skill 'notebook' is one of the skills of agent 'notes_agent', which the model keeps mounted; list only optional skills in skills",
    });
  });
});
