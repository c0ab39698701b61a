/**
 * Restored agents share catalogs: agents restored with the same skills and configs run on one
 * catalog (the one `new()` gives, for the definition's own skills), and an agent whose skills or
 * configs differ in any way runs on its own, with its own config and its own skill code.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSkillRegistry, defineAction, defineAgent, defineSkill, mountSkill, result, type Agent } from '../../src/index.js';
import { catalogOf } from '../../src/core/agent-value.js';
import { SHELF_SIZE } from '../../src/core/catalog-shelf.js';
import { viaJson } from './support.js';

const greeting = z.object({ said: z.string().default('') });
/** A skill whose action answers with its config's word, so which config an agent runs on shows. */
const greeter = (word: string) =>
  defineSkill({
    name: 'greeter',
    schema: greeting,
    configSchema: z.object({ name: z.string().default('world') }),
    actions: [
      defineAction({
        name: 'greet',
        description: 'Greet by the configured name',
        input: z.object({}),
        state: greeting,
        run: (_params, { config }) => result(`${word} ${(config as { name: string }).name}`),
      }),
    ],
  });
const hello = greeter('hello');
const Greeting = defineAgent({ name: 'greeting', skills: [[hello, { name: 'ada' }]] });
const Bare = defineAgent({ name: 'bare' });

const restored = (definition: typeof Bare, data: unknown, skills = createSkillRegistry([hello])): Agent<object> => {
  const outcome = definition.restore(data, { skills });
  if (!outcome.ok) throw new Error(outcome.error.message);
  return outcome.value;
};
const greet = async (definition: typeof Bare, agent: Agent<object>) => {
  const ran = await definition.cmd(agent, ['greet']);
  return ran.results[0]!.ok ? ran.results[0]!.output : ran.results[0];
};
/** Bare agent `id` with `skill` mounted at run time with `config`, as JSON. */
const mountedData = (id: string, skill = hello, config: Record<string, unknown> = {}) => {
  const mounted = mountSkill(Bare.new({ id }), skill, config);
  if (!mounted.ok) throw new Error(mounted.error.message);
  return viaJson(mounted.agent);
};

describe('restore shares catalogs', () => {
  it("agents restored with the definition's own skills run on the catalog new() gives", () => {
    const spawned = Greeting.new({ id: 'g0' });
    const first = restored(Greeting as never, viaJson(Greeting.new({ id: 'g1' })));
    const second = restored(Greeting as never, viaJson(Greeting.new({ id: 'g2' })));
    expect(catalogOf(first)).toBe(catalogOf(spawned));
    expect(catalogOf(second)).toBe(catalogOf(spawned));
    expect(second.mounted).toBe(spawned.mounted);
  });

  it('agents restored with the same skills mounted at run time and equal configs share one', () => {
    const a = restored(Bare, mountedData('a', hello, { name: 'bo' }));
    const b = restored(Bare, mountedData('b', hello, { name: 'bo' }));
    expect(catalogOf(a)).toBe(catalogOf(b));
  });

  it('an agent restored with another config runs on its own catalog, with its own config', async () => {
    const bo = restored(Bare, mountedData('a', hello, { name: 'bo' }));
    const cy = restored(Bare, mountedData('b', hello, { name: 'cy' }));
    expect(catalogOf(cy)).not.toBe(catalogOf(bo));
    expect(await greet(Bare, bo)).toBe('hello bo');
    expect(await greet(Bare, cy)).toBe('hello cy');
    expect(cy.mounted).toEqual([{ name: 'greeter', stateKey: 'greeter', config: { name: 'cy' } }]);
  });

  it('a skill of the same name from another registry is not taken for the one shared', async () => {
    const howdy = greeter('howdy');
    const first = restored(Bare, mountedData('a'), createSkillRegistry([hello]));
    const second = restored(Bare, mountedData('b'), createSkillRegistry([howdy]));
    expect(await greet(Bare, first)).toBe('hello world');
    expect(await greet(Bare, second)).toBe('howdy world');
  });

  it('past the shelf, agents with yet more configs still restore, each with its own config', async () => {
    const names = Array.from({ length: SHELF_SIZE + 3 }, (_, i) => `n${i}`);
    const agents = names.map((name, i) => restored(Bare, mountedData(`x${i}`, hello, { name })));
    expect(await greet(Bare, agents.at(-1)!)).toBe(`hello ${names.at(-1)}`);
    expect(await greet(Bare, agents[0]!)).toBe('hello n0');
    // An agent restored again with a config seen first still finds the catalog kept for it.
    expect(catalogOf(restored(Bare, mountedData('again', hello, { name: 'n0' })))).toBe(catalogOf(agents[0]!));
  });
});
