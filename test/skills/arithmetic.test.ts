/**
 * The arithmetic skill: four stateless operations, division by
 * zero as a clean `division_by_zero` failure, routes per operation, and `handleSignal` turning an
 * `arithmetic.calculate` signal into a `run` effect.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRouter, createSignal, defineAgent, getSpec, mountSkill, type Effect } from '../../src/index.js';
import { isActionFailure } from '../../src/core/action.js';
import { matchesAny } from '../../src/core/pattern.js';
import { add, arithmetic, divide, multiply, subtract } from '../../skills/index.js';

const CalculatorAgent = defineAgent({ name: 'calculator', schema: z.object({ runner: z.object({ mode: z.string().default('idle') }).prefault({}) }) });
const withArithmetic = () => {
  const outcome = mountSkill(CalculatorAgent.new({ id: 'test-1' }), arithmetic, {});
  if (!outcome.ok) throw new Error(outcome.error.message);
  return outcome.agent;
};
const hookContext = { agentId: 'test-1', skill: 'arithmetic', state: {}, config: {} };

describe('the arithmetic actions', () => {
  it.each([
    ['add', 2, 3, 5],
    ['add', -1.5, 0.5, -1],
    ['subtract', 2, 3, -1],
    ['subtract', 10, 0.25, 9.75],
    ['multiply', 2, 3, 6],
    ['multiply', -4, 0.5, -2],
    ['divide', 6, 3, 2],
    ['divide', 1, 4, 0.25],
    ['divide', 0, 5, 0],
  ])('%s(%d, %d) = %d, through cmd', async (action, a, b, expected) => {
    const run = await CalculatorAgent.cmd(withArithmetic() as never, { action, params: { a, b } });
    expect(run.results).toEqual([{ ok: true, action, skill: 'arithmetic', output: { result: expected } }]);
    expect(run.effects).toEqual([]);
  });

  it('Add.run(%{a: 2, b: 3}) == %{result: 5}', () => {
    expect(add.run({ a: 2, b: 3 }, {} as never)).toEqual({ result: 5 });
    expect(subtract.run({ a: 2, b: 3 }, {} as never)).toEqual({ result: -1 });
    expect(multiply.run({ a: 2, b: 3 }, {} as never)).toEqual({ result: 6 });
  });

  it('divide by zero fails with reason division_by_zero and leaves the state as it was', async () => {
    const agent = withArithmetic();
    const run = await CalculatorAgent.cmd(agent as never, { action: 'divide', params: { a: 10, b: 0 } });
    expect(run.results[0]).toEqual({
      ok: false,
      action: 'divide',
      skill: 'arithmetic',
      error: { code: 'action_failed', message: "action 'divide' failed: cannot divide by zero", action: 'divide', skill: 'arithmetic', details: { reason: 'division_by_zero' } },
    });
    expect(run.agent.state).toBe(agent.state);
    const direct = divide.run({ a: 10, b: 0 }, {} as never);
    expect(isActionFailure(direct) && direct.reason).toBe('division_by_zero');
  });

  it('refuses operands that are not numbers with invalid_params', async () => {
    const run = await CalculatorAgent.cmd(withArithmetic() as never, { action: 'add', params: { a: 'one', b: 2 } });
    expect(run.results[0]).toMatchObject({ ok: false, error: { code: 'invalid_params', action: 'add', issues: [{ path: ['a'] }] } });
  });

  it('keeps no state: its slice is empty', () => {
    expect(withArithmetic().state).toEqual({ runner: { mode: 'idle' }, arithmetic: {} });
  });
});

describe('handleSignal', () => {
  it('turns arithmetic.calculate { op, a, b } into one run effect, changing no state', async () => {
    const decision = await arithmetic.handleSignal!(createSignal('arithmetic.calculate', { op: 'add', a: 1, b: 2 }), hookContext);
    const run: Effect = { type: 'run', action: 'add', params: { a: 1, b: 2 }, meta: { skill: 'arithmetic' } };
    expect(decision).toEqual({ decision: 'handle', effects: [run] });
  });

  it('the run effect it asks for runs through cmd', async () => {
    const decision = await arithmetic.handleSignal!(createSignal('arithmetic.calculate', { op: 'multiply', a: 6, b: 7 }), hookContext);
    const effect = decision && decision.decision === 'handle' ? decision.effects?.[0] : undefined;
    expect(effect?.type).toBe('run');
    if (effect?.type !== 'run') return;
    const outcome = await CalculatorAgent.cmd(withArithmetic() as never, { action: effect.action, params: effect.params, skill: effect.meta.skill });
    expect(outcome.results[0]).toMatchObject({ ok: true, output: { result: 42 } });
  });

  it.each([[{ op: 'modulo', a: 5, b: 3 }], [{ a: 5, b: 3 }], [{ op: 7 }], [null], ['add']])('refuses an unknown operation (%j) with a fail decision naming it', async (data) => {
    const decision = await arithmetic.handleSignal!(createSignal('arithmetic.calculate', data), hookContext);
    expect(decision).toMatchObject({ decision: 'fail', error: { code: 'signal_failed' } });
    const op = data !== null && typeof data === 'object' && 'op' in data ? String(data.op) : 'undefined';
    expect(decision && decision.decision === 'fail' && decision.error.message).toBe(`unknown operation '${op}'; expected one of add, subtract, multiply, divide`);
  });

  it('lets every other signal continue', async () => {
    expect(await arithmetic.handleSignal!(createSignal('arithmetic.add', { a: 1, b: 2 }), hookContext)).toEqual({ decision: 'continue' });
  });
});

describe('the skill', () => {
  it('carries its metadata: name, category, version and tags', () => {
    expect(getSpec(arithmetic)).toMatchObject({
      name: 'arithmetic',
      description: 'Basic arithmetic operations: add, subtract, multiply, divide.',
      vsn: '1.0.0',
      category: 'math',
      tags: ['math', 'arithmetic', 'numeric'],
      actions: ['add', 'subtract', 'multiply', 'divide'],
      requires: [],
    });
    for (const op of ['add(a, b)', 'subtract(a, b)', 'multiply(a, b)', 'divide(a, b)']) expect(arithmetic.instructions).toContain(op);
  });

  it('routes arithmetic.<op> to the action of that name', () => {
    const router = createRouter(arithmetic.routes({}));
    for (const op of ['add', 'subtract', 'multiply', 'divide']) {
      const routed = router.route(`arithmetic.${op}`);
      expect(routed.ok && routed.matches.map((m) => m.target)).toEqual([{ action: op }]);
    }
    expect(router.route('arithmetic.modulo').ok).toBe(false);
  });

  it('wants to see arithmetic.calculate signals, and only those', () => {
    expect(matchesAny('arithmetic.calculate', arithmetic.signalPatterns)).toBe(true);
    expect(matchesAny('arithmetic.add', arithmetic.signalPatterns)).toBe(false);
  });
});
