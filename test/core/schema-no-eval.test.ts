/**
 * State updates where code cannot be generated (a policy that refuses `new Function`, as some
 * hosts have): the same results, made without it.
 */
import { afterAll, expect, it } from 'vitest';

const realFunction = globalThis.Function;
let refused = 0;
// Installed before skillstate and zod load (the imports below are dynamic).
globalThis.Function = new Proxy(realFunction, {
  construct() {
    refused++;
    throw new EvalError('code generation from strings disallowed for this context');
  },
});
afterAll(() => {
  globalThis.Function = realFunction;
});

it('applies updates to a slice without generating code, and says nothing is wrong', async () => {
  const { z } = await import('zod');
  const { applyPatch } = await import('../../src/core/schema.js');
  const { defineAgent, defineSkill, defineAction, result, cmd } = await import('../../src/index.js');
  const schema = z.object({ count: z.number().int().default(0), label: z.string().default('x') });
  const current = Object.freeze({ count: 1, label: 'one' });
  expect(applyPatch(schema, current, { count: 2 })).toEqual({ ok: true, value: { count: 2, label: 'one' } });
  expect(applyPatch(schema, current, { count: 1.5 }).ok).toBe(false);

  const bump = defineAction({ name: 'bump', description: 'Add one', input: z.object({}), state: schema, run: (_params, { skillState }) => result(skillState.count + 1, { state: { count: skillState.count + 1 } }) });
  const Agent = defineAgent({ name: 'no_eval', skills: [defineSkill({ name: 'tally', schema, actions: [bump] })] });
  const ran = await cmd(Agent.new({ id: 'n' }), [{ action: 'bump' }, { action: 'bump' }]);
  expect(ran.results.map((r) => r.ok && r.output)).toEqual([1, 2]);
  expect(ran.agent.state).toEqual({ tally: { count: 2, label: 'x' } });
  expect(Object.keys(ran.agent.state.tally as object)).toEqual(['count', 'label']);
  // The code generation was asked for, refused, and not asked again.
  expect(refused).toBeGreaterThan(0);
  const after = refused;
  applyPatch(z.object({ a: z.number() }), Object.freeze({ a: 1 }), { a: 2 });
  expect(refused).toBe(after);
});
