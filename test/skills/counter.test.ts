/**
 * The counter skill, a skill with internal state: a count and a step under
 * `counter`, initialised from the config; increment, decrement, reset and get_count.
 */
import { describe, expect, it } from 'vitest';
import { createRouter, defineAgent, DefinitionError } from '../../src/index.js';
import { counter } from '../../skills/index.js';

const Counting = defineAgent({ name: 'counting', skills: [counter] });
const Stepped = defineAgent({ name: 'stepped', skills: [[counter, { initial: 10, step: 5 }]] });

async function outputs(definition: typeof Counting, instructions: Parameters<typeof Counting.cmd>[1], state?: { count?: number; step?: number }) {
  const run = await definition.cmd(definition.new(state ? { state: { counter: state } } : {}), instructions);
  return { outputs: run.results.map((r) => (r.ok ? r.output : r.error.code)), state: run.agent.state.counter };
}

describe('initial state', () => {
  it('comes from the config: count = initial, step = step (defaults 0 and 1)', () => {
    expect(Counting.new().state).toEqual({ counter: { count: 0, step: 1 } });
    expect(Stepped.new().state).toEqual({ counter: { count: 10, step: 5 } });
    expect(Counting.skillConfig(counter)).toEqual({ initial: 0, step: 1 });
  });

  it('an invalid config is refused when the agent is defined', () => {
    expect(() => defineAgent({ name: 'bad', skills: [[counter, { step: 0.5 }]] })).toThrow(DefinitionError);
    expect(() => defineAgent({ name: 'bad', skills: [[counter, { initial: 'ten' } as never]] })).toThrow(DefinitionError);
  });
});

describe('actions', () => {
  it('increment adds the step, or the amount given', async () => {
    expect(await outputs(Stepped, ['increment', { action: 'increment', params: { by: -3 } }])).toEqual({
      outputs: [{ count: 15 }, { count: 12 }],
      state: { count: 12, step: 5 },
    });
  });

  it('decrement subtracts the step', async () => {
    expect(await outputs(Stepped, ['decrement', 'decrement'])).toEqual({ outputs: [{ count: 5 }, { count: 0 }], state: { count: 0, step: 5 } });
  });

  it('reset sets the count to `to`, 0 by default', async () => {
    expect(await outputs(Stepped, [{ action: 'reset', params: { to: 7 } }, 'reset'])).toEqual({ outputs: [{ count: 7 }, { count: 0 }], state: { count: 0, step: 5 } });
  });

  it('get_count reads the count without changing it', async () => {
    expect(await outputs(Counting, ['get_count', 'increment', 'get_count'], { count: 41 })).toEqual({
      outputs: [{ count: 41 }, { count: 42 }, { count: 42 }],
      state: { count: 42, step: 1 },
    });
  });

  it('refuses a fractional amount with invalid_params, leaving the count alone', async () => {
    expect(await outputs(Counting, [{ action: 'increment', params: { by: 1.5 } }])).toEqual({ outputs: ['invalid_params'], state: { count: 0, step: 1 } });
  });
});

describe('routes', () => {
  it('send counter.increment, .decrement, .reset and .get to the actions', () => {
    const router = createRouter(counter.routes({ initial: 0, step: 1 }));
    const target = (type: string) => {
      const routed = router.route(type);
      return routed.ok ? routed.matches.map((m) => m.target) : [];
    };
    expect(target('counter.increment')).toEqual([{ action: 'increment' }]);
    expect(target('counter.decrement')).toEqual([{ action: 'decrement' }]);
    expect(target('counter.reset')).toEqual([{ action: 'reset' }]);
    expect(target('counter.get')).toEqual([{ action: 'get_count' }]);
    expect(counter.signalPatterns).toEqual(['counter.*']);
  });
});
