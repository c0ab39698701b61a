/**
 * Model-based tests of the skill lifecycle machine with xstate/graph: every shortest and every
 * simple path through activate / deactivate / crash events, replayed against a real agent whose
 * skill runs a child that can be told to crash.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createTestModel } from 'xstate/graph';
import { lifecycleMachines, type LifecycleContext } from '../../machines/skill-lifecycle.js';
import type { AgentRef, AgentSystem } from '../../src/index.js';
import { checkAgentInvariants } from '../../src/testing/index.js';
import { NotesAgent, crashableChild, defineSkill, quietSystem } from '../runtime/fixtures.js';

let system: AgentSystem | undefined;
afterEach(async () => {
  await system?.shutdown();
  system = undefined;
});

const MAX_RESTARTS = 2;
const events = [{ type: 'activate' }, { type: 'deactivate' }, { type: 'xstate.error.actor.loop', error: new Error('crash') }] as const;

/**
 * The model: the lifecycle machine itself — its states, transitions, guards and restart
 * bookkeeping — with the actions that touch other actors (children, the parent agent) stubbed,
 * since traversal computes transitions without running anything.
 */
const noop = () => {};
const model = createTestModel(
  lifecycleMachines.supervising.inactive.provide({
    actions: { startChildren: noop, stopChildren: noop, respawnChild: noop, forgetChild: noop, reportFailed: noop, reportRestart: noop },
  }),
  { events: [...events] as never },
);
const input: { agentId: string; skill: string; children: LifecycleContext['children']; start: 'inactive' } = {
  agentId: 'model',
  skill: 'worker',
  children: [{ id: 'loop', actor: 'worker.loop', input: undefined, restart: 'permanent', maxRestarts: MAX_RESTARTS, withinMs: 60_000 }],
  start: 'inactive',
};

async function replay(path: { steps: { event: { type: string }; state: { value: unknown } }[] }) {
  const starts = { count: 0 };
  const worker = defineSkill({ name: 'worker', children: () => [{ id: 'loop', logic: crashableChild(starts), maxRestarts: MAX_RESTARTS, withinMs: 60_000 }] });
  system = quietSystem();
  const agent: AgentRef<object> = system.spawn(NotesAgent, { id: 'model' });
  const lifecycle = () => (agent.actor.getSnapshot().children['skill:worker'] as { getSnapshot(): { value: string } } | undefined)?.getSnapshot().value ?? 'inactive';
  for (const step of path.steps) {
    if (step.event.type === 'activate') await agent.mount(worker);
    else if (step.event.type === 'deactivate') await agent.unmount('worker');
    else if (step.event.type.startsWith('xstate.error')) agent.actor.system.get('model/skills/worker/loop')?.send({ type: 'crash' });
    expect(lifecycle()).toBe(step.state.value);
    expect(checkAgentInvariants(agent, ['worker'])).toEqual([]);
  }
}

describe('the skill lifecycle machine, model-based', () => {
  // What the agent can actually do to a lifecycle: activate it when it mounts the skill (so only
  // from inactive), deactivate it when it unmounts it, and a child can crash while it runs.
  const allowed: Record<string, string[]> = { inactive: ['activate'], active: ['deactivate', 'xstate.error.actor.loop'], failed: ['deactivate'] };
  const traversal = {
    input,
    events: [...events],
    filterEvents: (snapshot: { value: unknown }, event: { type: string }) => allowed[String(snapshot.value)]!.includes(event.type),
    // A state is its value and how many restarts it has used, not the restart timestamps.
    serializeState: (snapshot: { value: unknown; context: LifecycleContext }) => `${String(snapshot.value)}/${snapshot.context.restarts.loop?.length ?? 0}`,
    allowDuplicatePaths: true,
  } as never;
  const shortest = model.getShortestPaths(traversal);
  const simple = model.getSimplePaths(traversal);
  const describePath = (path: { steps: { event: { type: string } }[]; state: { value: unknown } }) =>
    `${path.steps.map((step) => step.event.type.replace('xstate.error.actor.loop', 'crash')).join(' → ')} ⇒ ${String(path.state.value)}`;

  it('reaches every state: inactive, active and failed', () => {
    const reached = new Set(shortest.map((path) => String(path.state.value)));
    expect([...reached].sort()).toEqual(['active', 'failed', 'inactive']);
  });

  it('walks crashes within the restart budget and past it', () => {
    expect(simple.map(describePath)).toContain(
      `xstate.init → activate → ${Array(MAX_RESTARTS + 1).fill('crash').join(' → ')} ⇒ failed`,
    );
  });

  it.each(shortest.map((path) => [describePath(path), path] as const))('shortest path %s holds on a real agent', async (_description, path) => {
    await replay(path as never);
  });

  it.each(simple.map((path) => [describePath(path), path] as const))('simple path %s holds on a real agent', async (_description, path) => {
    await replay(path as never);
  });
});
