/**
 * The calculator skill: arithmetic rounded to the precision kept in its
 * state, a configured maximum, the last result remembered; `calculator.*` signals rewritten to
 * name their operation and results answered as `calculator.result` signals.
 */
import { describe, expect, it } from 'vitest';
import { createRouter, createSignal, defineAgent, DefinitionError } from '../../src/index.js';
import { matchesAny } from '../../src/core/pattern.js';
import { signalProblem } from '../../src/core/signal.js';
import { calculator } from '../../skills/index.js';

const Calc = defineAgent({ name: 'calc', skills: [calculator] });
const Capped = defineAgent({ name: 'capped', skills: [[calculator, { max_value: 100 }]] });
const hookContext = { agentId: 'a', skill: 'calculator', state: { precision: 2, last_result: 0 }, config: { max_value: 1_000_000 } };

describe('state and config', () => {
  it('new() gives { precision: 2, last_result: 0 } and the default max_value', () => {
    expect(Calc.new().state).toEqual({ calculator: { precision: 2, last_result: 0 } });
    expect(Calc.skillConfig(calculator)).toEqual({ max_value: 1_000_000 });
  });

  it.each([[{ max_value: 0 }], [{ max_value: -5 }], [{ max_value: 1.5 }], [{ max_value: '10' }]])('refuses the config %j when the agent is defined', (config) => {
    expect(() => defineAgent({ name: 'bad', skills: [[calculator, config as never]] })).toThrow(DefinitionError);
  });
});

describe('operations', () => {
  it('add(1.5, 2.5) = 4 and remembers it', async () => {
    const run = await Calc.cmd(Calc.new(), { action: 'add', params: { a: 1.5, b: 2.5 } });
    expect(run.results[0]).toEqual({ ok: true, action: 'add', skill: 'calculator', output: { result: 4 } });
    expect(Calc.skillState(run.agent, calculator)).toEqual({ precision: 2, last_result: 4 });
  });

  it.each([
    ['add', 0.1, 0.2, 2, 0.3],
    ['add', 1.234, 1, 2, 2.23],
    ['subtract', 5, 0.004, 2, 5],
    ['multiply', 1.23456, 1, 3, 1.235],
    ['multiply', 2.5, 1.16, 0, 3],
    ['add', 1, 1e-7, 12, 1.0000001],
  ])('%s(%d, %d) at precision %d = %d', async (action, a, b, precision, expected) => {
    const run = await Calc.cmd(Calc.new({ state: { calculator: { precision } } }), { action, params: { a, b } });
    expect(run.results[0]).toMatchObject({ ok: true, output: { result: expected } });
    expect(run.agent.state.calculator).toEqual({ precision, last_result: expected });
  });

  it('a result above max_value fails with result_too_large, leaving last_result alone', async () => {
    const agent = (await Capped.cmd(Capped.new(), { action: 'add', params: { a: 1, b: 1 } })).agent;
    for (const params of [{ a: 20, b: 10 }, { a: -20, b: 10 }]) {
      const run = await Capped.cmd(agent, { action: 'multiply', params });
      const value = params.a * params.b;
      expect(run.results[0]).toEqual({
        ok: false,
        action: 'multiply',
        skill: 'calculator',
        error: {
          code: 'action_failed',
          message: `action 'multiply' failed: result ${value} exceeds max_value 100`,
          action: 'multiply',
          skill: 'calculator',
          details: { reason: 'result_too_large', details: { value, max_value: 100 } },
        },
      });
      expect(run.agent.state).toBe(agent.state);
    }
  });

  it('a result exactly at max_value is allowed', async () => {
    const run = await Capped.cmd(Capped.new(), { action: 'multiply', params: { a: 10, b: 10 } });
    expect(run.results[0]).toMatchObject({ ok: true, output: { result: 100 } });
  });
});

describe('signals', () => {
  it('routes calculator.add, .subtract and .multiply to the actions', () => {
    const router = createRouter(calculator.routes({ max_value: 1 }));
    for (const op of ['add', 'subtract', 'multiply']) {
      const routed = router.route(`calculator.${op}`);
      expect(routed.ok && routed.matches.map((m) => m.target)).toEqual([{ action: op }]);
    }
    expect(router.route('calculator.divide').ok).toBe(false);
  });

  it('wants calculator.* signals (one segment after calculator)', () => {
    expect(matchesAny('calculator.add', calculator.signalPatterns)).toBe(true);
    expect(matchesAny('calculator.add.now', calculator.signalPatterns)).toBe(false);
    expect(matchesAny('calculator', calculator.signalPatterns)).toBe(false);
  });

  it('handleSignal rewrites the signal to add the operation named by its type, keeping the rest', async () => {
    const signal = createSignal('calculator.add', { a: 1, b: 2 });
    const decision = await calculator.handleSignal!(signal, hookContext);
    expect(decision).toEqual({ decision: 'rewrite', signal: { ...signal, data: { a: 1, b: 2, operation: 'add' } } });
    expect(signal.data).toEqual({ a: 1, b: 2 });
  });

  it('handleSignal adds the operation to a signal without data', async () => {
    const signal = createSignal('calculator.multiply');
    expect(await calculator.handleSignal!(signal, hookContext)).toEqual({ decision: 'rewrite', signal: { ...signal, data: { operation: 'multiply' } } });
  });

  it('handleSignal lets its own calculator.result signals continue', async () => {
    expect(await calculator.handleSignal!(createSignal('calculator.result', { result: 1 }), hookContext)).toEqual({ decision: 'continue' });
  });

  it('transformResult answers with a calculator.result signal from the same source', () => {
    const incoming = createSignal('calculator.add', { a: 1, b: 2 }, { source: 'urn:client' });
    const answer = calculator.transformResult!(incoming, { result: 3 }, hookContext) as ReturnType<typeof createSignal>;
    expect(signalProblem(answer)).toBeUndefined();
    expect(answer).toMatchObject({ specversion: '1.0', type: 'calculator.result', source: 'urn:client', data: { result: 3 } });
    expect(answer.id).not.toBe(incoming.id);
  });
});
