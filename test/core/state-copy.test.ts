/**
 * Every state update builds a new state from the one before. Whatever shape the agent has (own
 * fields required, optional or open to any key; skills mounted, unmounted and remounted; a state
 * restored from JSON whose keys come in another order), the new state is the old one with the
 * change, nothing lost and nothing added, frozen, the old state untouched.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Decision, defineAction, defineAgent, defineSkill, mountSkill, result, unmountSkill, type Agent, type AnySkill } from '../../src/index.js';
import { execute } from '../../src/core/cmd.js';
import { stepAgent } from '../../src/engine/index.js';
import { createSignal } from '../../src/core/signal.js';

type State = Record<string, unknown>;

/** A skill whose `bump` action adds one to `n` (field names chosen to be awkward). */
function counterSkill(name: string, fields: 'plain' | 'optional' | 'inherited'): AnySkill {
  const shape: Record<string, z.ZodType> =
    fields === 'plain'
      ? { n: z.number().int().default(0), tag: z.string().default(name) }
      : fields === 'optional'
        ? { n: z.number().int().default(0), note: z.string().optional() }
        : { n: z.number().int().default(0), toString: z.string().default('t'), '0': z.boolean().default(false) };
  const schema = z.object(shape);
  const bump = defineAction({
    name: `bump_${name}`,
    description: `Adds one to ${name}`,
    input: z.object({}),
    state: schema,
    run: (_params, { skillState }) => {
      const n = (skillState as { n: number }).n + 1;
      return result(n, { state: { n } });
    },
  });
  return defineSkill({
    name,
    schema,
    // (zod reads an inherited `toString` for a missing field: the initial state gives its own.)
    ...(fields === 'inherited' ? { initialState: () => ({ toString: 't' }) } : {}),
    actions: [bump],
    signalPatterns: [`${name}.**`],
    // A hook's state update takes the same path as an action's.
    handleSignal: (signal, ctx) => (signal.type === `${name}.hook` ? Decision.handle({ state: { n: (ctx.state as { n: number }).n + 10 } }) : Decision.continue()),
  });
}

const ownSchemas = {
  required: z.object({ title: z.string().default('t'), count: z.number().default(0) }),
  optional: z.object({ title: z.string().default('t'), extra: z.number().optional() }),
  loose: z.looseObject({ title: z.string().default('t') }),
  none: z.object({}),
};

const operation = fc.oneof(
  fc.record({ kind: fc.constant('bump' as const), skill: fc.nat(3) }),
  fc.record({ kind: fc.constant('hook' as const), skill: fc.nat(3) }),
  fc.record({ kind: fc.constant('mount' as const), skill: fc.nat(3) }),
  fc.record({ kind: fc.constant('unmount' as const), skill: fc.nat(3) }),
  fc.record({ kind: fc.constant('restore' as const), seed: fc.nat() }),
);

/** `keys` in an order drawn from `seed`. */
function shuffled(keys: string[], seed: number): string[] {
  const out = [...keys];
  for (let i = out.length - 1, s = seed; i > 0; i--, s = Math.floor(s / 7) + 13 * i) {
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe('state updates on agents of every shape', () => {
  it('leave the state as the model says: the change made, no key lost or added, frozen, the old state untouched', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...(Object.keys(ownSchemas) as (keyof typeof ownSchemas)[])),
        fc.array(fc.constantFrom('plain' as const, 'optional' as const, 'inherited' as const), { minLength: 4, maxLength: 4 }),
        fc.integer({ min: 0, max: 4 }),
        fc.array(operation, { maxLength: 12 }),
        (own, kinds, attached, operations) => {
          const skills = kinds.map((kind, i) => counterSkill(`s${i}`, kind));
          const Definition = defineAgent({ name: 'shaped', schema: ownSchemas[own], skills: skills.slice(0, attached) });
          const initial: State = own === 'loose' ? { title: 'x', stray: { kept: true } } : own === 'optional' ? { extra: 3 } : {};
          let agent = Definition.new({ id: 'a', state: initial as never }) as Agent<State>;
          let model: State = JSON.parse(JSON.stringify(agent.state)) as State;
          for (const op of operations) {
            const skill = skills[op.kind === 'restore' ? 0 : op.skill]!;
            const before = agent;
            const beforeJson = JSON.stringify(before.state);
            const mounted = agent.mounted.some((record) => record.name === skill.name);
            if (op.kind === 'bump' || op.kind === 'hook') {
              if (!mounted) continue;
              const next =
                op.kind === 'bump'
                  ? (execute(agent, { action: `bump_${skill.name}` }) as { agent: Agent<State> }).agent
                  : (stepAgent(agent, { kind: 'signal', signal: createSignal(`${skill.name}.hook`), call: false }) as { agent: Agent<State> }).agent;
              const slice = model[skill.name] as { n: number };
              model = { ...model, [skill.name]: { ...slice, n: slice.n + (op.kind === 'bump' ? 1 : 10) } };
              agent = next;
            } else if (op.kind === 'mount') {
              if (mounted) continue;
              const done = mountSkill(agent, skill);
              expect(done.ok).toBe(true);
              agent = (done as { agent: Agent<State> }).agent;
              model = { ...model, [skill.name]: JSON.parse(JSON.stringify(agent.state[skill.name])) };
            } else if (op.kind === 'unmount') {
              if (!mounted) continue;
              const done = unmountSkill(agent, skill.name);
              expect(done.ok).toBe(true);
              agent = (done as { agent: Agent<State> }).agent;
              const { [skill.name]: _gone, ...rest } = model;
              model = rest;
            } else {
              // Through JSON, keys reordered: a snapshot written by another process.
              const data = JSON.parse(JSON.stringify(agent)) as { state: State };
              data.state = Object.fromEntries(shuffled(Object.keys(data.state), op.seed).map((key) => [key, data.state[key]]));
              const restored = Definition.restore(data, { skills: { get: (name) => skills.find((s) => s.name === name) } });
              expect(restored.ok).toBe(true);
              agent = (restored as { value: Agent<State> }).value;
            }
            expect(agent.state).toEqual(model);
            expect(Object.keys(agent.state).sort()).toEqual(Object.keys(model).sort());
            for (const key of Object.keys(model)) {
              const value = agent.state[key];
              if (typeof value === 'object' && value !== null) expect(Object.keys(value).sort()).toEqual(Object.keys(model[key] as object).sort());
            }
            expect(Object.isFrozen(agent.state)).toBe(true);
            expect(JSON.stringify(before.state)).toBe(beforeJson);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
