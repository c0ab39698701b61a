/**
 * A route that can never come first (another with the same path and priority was there before)
 * is reported wherever it appears: when a definition is first used by a system, and when a skill
 * mounted at run time brings it.
 */
import { afterEach, expect, it } from 'vitest';
import { createSignal, defineAction, defineAgent, defineSkill, quietSystem, z } from './fixtures.js';
import { mountSkill, type AgentSystem, type Diagnostic } from '../../src/index.js';

let system: AgentSystem | undefined;
afterEach(async () => {
  await system?.shutdown();
  system = undefined;
});

const greeter = (name: string, words: string) =>
  defineSkill({
    name,
    actions: [defineAction({ name: `hello_${name}`, description: 'Greets', input: z.object({}), run: () => words })],
    routes: [{ path: 'greet.hello', target: { action: `hello_${name}` } }],
  });
const first = greeter('first', 'hi from first');
const second = greeter('second', 'hi from second');

it('a skill mounted at run time whose route is shadowed: the mount report, onDiagnostic and the pure mount say so', async () => {
  const notes: Diagnostic[] = [];
  system = quietSystem();
  system.onDiagnostic((note) => notes.push(note));
  const agent = system.spawn(defineAgent({ name: 'greeting', skills: [first] }), { id: 'g' });
  const report = await agent.mount(second);
  const shadowed = expect.objectContaining({ code: 'shadowed_route', subject: 'greet.hello' });
  expect(report.diagnostics).toEqual([shadowed]);
  expect(notes).toEqual([shadowed]);
  expect(await agent.call(createSignal('greet.hello'))).toBe('hi from first');
  const pure = mountSkill(defineAgent({ name: 'pure', skills: [first] }).new(), second);
  expect(pure.ok && pure.diagnostics).toEqual([shadowed]);
});

it("what defining an agent found is said when a system first spawns it, once", async () => {
  const notes: Diagnostic[] = [];
  system = quietSystem();
  system.onDiagnostic((note) => notes.push(note));
  const Both = defineAgent({ name: 'both', skills: [first, second] });
  expect(Both.diagnostics).toEqual([expect.objectContaining({ code: 'shadowed_route' })]);
  system.spawn(Both, { id: 'a' });
  system.spawn(Both, { id: 'b' });
  expect(notes).toEqual(Both.diagnostics);
});
