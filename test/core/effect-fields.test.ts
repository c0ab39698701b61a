/**
 * An effect with a field its kind does not take is refused (`invalid_effect`), naming the field
 * and the one it probably meant, whether it was built by hand or given to an `Effects`
 * constructor as a misspelled option: `Effects.stop({ agnet: 'child' })` dropped the option and
 * stopped the agent itself. The agent keeps its state and goes on answering. Real systems.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgentSystem, defineAction, defineAgent, defineSkill, Effects, result, type AgentSystem, type Effect } from '../../src/index.js';
import { isEffect } from '../../src/core/effects.js';

const systems: AgentSystem[] = [];
afterEach(async () => {
  for (const system of systems.splice(0)) await system.shutdown();
});

const counter = z.object({ count: z.number().int().default(0) });

/** An agent whose `go` action counts, then returns the effects `effects()` makes. */
function agentReturning(effects: () => unknown[], name = 'returner') {
  return defineAgent({
    name,
    skills: [
      defineSkill({
        name: 'effects',
        schema: counter,
        actions: [
          defineAction({
            name: 'go',
            description: 'Counts, and returns effects',
            input: z.object({}),
            state: counter,
            run: (_params, { skillState }) => result('went', { state: { count: skillState.count + 1 }, effects: effects() as Effect[] }),
          }),
          defineAction({ name: 'count', description: 'The count', input: z.object({}), state: counter, run: (_params, { skillState }) => skillState.count }),
        ],
      }),
    ],
  });
}

describe('an effect with a field its kind does not take', () => {
  const cases: Array<{ name: string; make: () => unknown; message: string }> = [
    {
      name: 'Effects.stop with a misspelled agent',
      make: () => Effects.stop({ agnet: 'child' } as never),
      message: "effect 'stop': agnet is not a field of a 'stop' effect; did you mean 'agent'? (fields: type, agent, reason, meta)",
    },
    {
      name: 'Effects.stop given the id instead of its options',
      make: () => Effects.stop('child' as never),
      message: "effect 'stop' was made with options that are not a plain object (a string, 'child'): Effects.stop takes { agent, reason }",
    },
    {
      name: 'Effects.spawn with a misspelled id',
      make: () => Effects.spawn('worker', { idd: 'w1' } as never),
      message: "effect 'spawn': idd is not a field of a 'spawn' effect; did you mean 'id'? (fields: type, definition, id, state, meta)",
    },
    {
      name: 'Effects.reply with a misspelled to',
      make: () => Effects.reply('done', undefined, { too: 'sig-1' } as never),
      message: "effect 'reply': too is not a field of a 'reply' effect; did you mean 'to'? (fields: type, data, to, error, meta)",
    },
    {
      name: 'a run effect written by hand with its params misspelled',
      make: () => ({ type: 'run', action: 'count', parms: {}, meta: {} }),
      message: "effect 'run': parms is not a field of a 'run' effect; did you mean 'params'? (fields: type, action, params, meta)",
    },
  ];

  for (const { name, make, message } of cases) {
    it(`${name}: refused, the agent keeps its state and answers`, async () => {
      const system = createAgentSystem({ onUnhandledError: () => {}, onUnhandledDiagnostic: () => {} });
      systems.push(system);
      const agent = system.spawn(agentReturning(() => [make()]), { id: 'a' });
      await expect(agent.run({ action: 'go' })).rejects.toMatchObject({ code: 'invalid_effect', message: expect.stringContaining(message) });
      expect(system.get('a')).toBe(agent);
      await expect(agent.run({ action: 'count' })).resolves.toBe(0);
      expect(isEffect(make())).toBe(false);
    });
  }

  it('the constructors still make the effects they made, options left out or undefined', () => {
    expect(Effects.stop()).toEqual({ type: 'stop', meta: {} });
    expect(Effects.stop({ agent: 'child', reason: undefined })).toEqual({ type: 'stop', meta: {}, agent: 'child' });
    expect(Effects.spawn('worker', { id: 'w1', state: { a: 1 } }, { tags: ['t'] })).toEqual({ type: 'spawn', definition: 'worker', id: 'w1', state: { a: 1 }, meta: { tags: ['t'] } });
    expect(Effects.reply('done', undefined, { to: 'sig-1' })).toEqual({ type: 'reply', data: 'done', to: 'sig-1', meta: {} });
    for (const effect of [Effects.stop(), Effects.stop({ agent: 'child' }), Effects.spawn('worker', { id: 'w1' }), Effects.reply('done', undefined, { to: 'sig-1' })]) expect(isEffect(effect)).toBe(true);
  });

  it('a stop of another agent, spelled right, stops that agent and not the one asking', async () => {
    const system = createAgentSystem({ onUnhandledError: () => {}, onUnhandledDiagnostic: () => {} });
    systems.push(system);
    const parent = system.spawn(agentReturning(() => [Effects.stop({ agent: 'child' })]), { id: 'parent' });
    system.spawn(agentReturning(() => [], 'child_agent'), { id: 'child' });
    await parent.run({ action: 'go' });
    await system.flush();
    await expect.poll(() => system.get('child')).toBeUndefined();
    expect(system.get('parent')).toBe(parent);
  });
});
