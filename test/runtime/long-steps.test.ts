/**
 * A step waiting on user code that does not settle keeps its agent from taking anything else, and
 * nothing can end it from outside: once it outlasts a call's wait, a warning says which it is.
 */
import { afterEach, expect, it } from 'vitest';
import { createSignal, defineAction, defineAgent, defineSkill, quietSystem, z } from './fixtures.js';
import type { AgentSystem, Diagnostic } from '../../src/index.js';

let system: AgentSystem | undefined;
afterEach(async () => {
  await system?.shutdown();
  system = undefined;
});

const never = defineAction({ name: 'wait_forever', description: 'Never answers', input: z.object({}), run: () => new Promise<never>(() => {}) });
const soon = defineAction({ name: 'answer_soon', description: 'Answers after a tick', input: z.object({}), run: () => new Promise<string>((resolve) => setTimeout(() => resolve('done'), 1)) });
const Waiter = defineAgent({
  name: 'waiter',
  skills: [defineSkill({ name: 'waits', actions: [never, soon], routes: [{ path: 'wait.forever', target: { action: 'wait_forever' } }, { path: 'wait.soon', target: { action: 'answer_soon' } }] })],
});

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 10));
}

it('a step that never ends is named in a step_running_long warning once it outlasts a call', async () => {
  const notes: Diagnostic[] = [];
  system = quietSystem({ callTimeout: 50 });
  system.onDiagnostic((note) => notes.push(note));
  const agent = system.spawn(Waiter, { id: 'w' });
  await expect(agent.call(createSignal('wait.soon'))).resolves.toBe('done');
  await expect(agent.call(createSignal('wait.forever'))).rejects.toMatchObject({ code: 'timeout' });
  await until(() => notes.length > 0);
  expect(notes).toEqual([
    expect.objectContaining({
      level: 'warning',
      code: 'step_running_long',
      subject: 'w',
      message: expect.stringMatching(/^agent 'w': its step for signal 'wait\.forever' has been running for \d+ ms, longer than a call waits; the agent takes nothing else until it ends$/),
    }),
  ]);
  expect(agent.getSnapshot().status).toBe('working');
});
