/** Mount and unmount steps, and skill lifecycle transitions, as spans and span events. */
import { afterEach, expect, it } from 'vitest';
import type { AgentRef, AgentSystem } from '../../src/index.js';
import { NotesAgent, crashableChild, defineSkill, quietSystem } from '../runtime/fixtures.js';
import { recordSpans } from './fixtures.js';

let system: AgentSystem;
afterEach(async () => {
  await system?.shutdown();
});

const worker = (starts: { count: number }) => defineSkill({ name: 'worker', children: () => [{ id: 'loop', logic: crashableChild(starts), restart: 'permanent', maxRestarts: 2, withinMs: 60_000 }] });

function crash(agent: AgentRef<object>) {
  agent.actor.system.get(`${agent.id}/skills/worker/loop`)!.send({ type: 'crash' });
}

it('mount and unmount are step spans naming the skill', async () => {
  const recorded = recordSpans();
  system = quietSystem();
  const agent = system.spawn(NotesAgent, { id: 'w' });
  await agent.mount(worker({ count: 0 }));
  await agent.unmount('worker');
  const mount = recorded.one('step mount worker');
  expect(mount.attributes).toMatchObject({ 'skillstate.step.item': 'mount', 'skillstate.skill.name': 'worker', 'skillstate.step.outcome': 'ok' });
  const unmount = recorded.one('step unmount worker');
  expect(unmount.attributes).toMatchObject({ 'skillstate.step.item': 'unmount', 'skillstate.skill.name': 'worker' });
});

it('a supervised restart outside any step is a lifecycle span naming the child and the reason', async () => {
  const recorded = recordSpans();
  system = quietSystem();
  const agent = system.spawn(NotesAgent, { id: 'w' });
  await agent.mount(worker({ count: 0 }));
  crash(agent);
  const restart = recorded.named('lifecycle worker').flatMap((span) => span.events).find((event) => event.attributes?.['skillstate.lifecycle.restarted_child'] !== undefined);
  expect(restart?.attributes).toMatchObject({ 'skillstate.skill.name': 'worker', 'skillstate.lifecycle.restarted_child': 'loop' });
  crash(agent);
  crash(agent);
  const failed = recorded.named('lifecycle worker').find((span) => span.events[0]?.attributes?.['skillstate.lifecycle.state'] === 'failed');
  expect(failed?.status.code).toBe(2);
  expect(failed?.attributes).toMatchObject({ 'skillstate.agent.id': 'w', 'skillstate.agent.definition': 'notes_agent' });
});
