/**
 * Mounting and unmounting, as pure operations: the new agent and the effects, or an
 * error with a stable code. Mounting then unmounting gives back the agent you started with.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  DefinitionError,
  defineAction,
  defineAgent,
  defineSkill,
  getSpec,
  isMounted,
  mountedSkills,
  mountSkill,
  mountSkills,
  unmountSkill,
  type AnySkill,
  type SkillAttachment,
} from '../../src/index.js';
import { arithmetic, calculator, counter } from '../../skills/index.js';
import { auth, httpClient, search, stats, thrownBy, viaJson } from './support.js';

/** A calculator agent: its own runner state, skills mounted at run time. */
const CalculatorAgent = defineAgent({
  name: 'calculator',
  schema: z.object({
    runner: z.object({ mode: z.enum(['idle', 'thinking']).default('idle'), transcript: z.array(z.string()).default([]) }).prefault({}),
  }),
});

const fresh = () => CalculatorAgent.new({ id: 'test-1' });

function mounted<T>(outcome: { ok: true; agent: T } | { ok: false; error: { message: string } }): T {
  if (!outcome.ok) throw new Error(`expected ok, got ${outcome.error.message}`);
  return outcome.agent;
}

describe('mountSkill', () => {
  it('mounting arithmetic registers its 4 actions, one effect each, tagged with the skill', () => {
    const outcome = mountSkill(fresh(), arithmetic, {});
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.effects).toEqual(
      ['add', 'subtract', 'multiply', 'divide'].map((action) => ({ type: 'register_action', action, meta: { skill: 'arithmetic', tags: ['skill'] } })),
    );
    expect(outcome.agent.state).toEqual({ runner: { mode: 'idle', transcript: [] }, arithmetic: {} });
    expect(outcome.agent.mounted).toEqual([{ name: 'arithmetic', stateKey: 'arithmetic', config: {} }]);
    expect(outcome.diagnostics).toEqual([]);
    expect(isMounted(outcome.agent, arithmetic)).toBe(true);
    expect(isMounted(outcome.agent, 'arithmetic')).toBe(true);
    expect(mountedSkills(outcome.agent)).toEqual(['arithmetic']);
  });

  it('initialises the slice from the config and the schema defaults', () => {
    const agent = mounted(mountSkill(fresh(), counter, { initial: 5, step: 2 }));
    expect(agent.state.counter).toEqual({ count: 5, step: 2 });
    expect(agent.mounted).toEqual([{ name: 'counter', stateKey: 'counter', config: { initial: 5, step: 2 } }]);
  });

  it('mounting an already-mounted skill is idempotent: ok, the same agent, no effects', () => {
    const agent = mounted(mountSkill(fresh(), arithmetic));
    const again = mountSkill(agent, arithmetic, {});
    expect(again.ok).toBe(true);
    expect(again.ok && again.agent).toBe(agent);
    expect(again.ok && again.effects).toEqual([]);
  });

  it('leaves the agent it was given unchanged', () => {
    const agent = fresh();
    const before = viaJson(agent);
    mountSkill(agent, counter);
    expect(viaJson(agent)).toEqual(before);
    expect(isMounted(agent, counter)).toBe(false);
  });

  it('a missing requirement → missing_dependency naming the missing skills', () => {
    expect(mountSkill(fresh(), search)).toEqual({
      ok: false,
      error: {
        code: 'missing_dependency',
        message: "skill 'search' requires 'auth', 'http_client', which are not mounted",
        skill: 'search',
        details: { missing: ['auth', 'http_client'] },
      },
    });
    const withAuth = mounted(mountSkill(fresh(), auth));
    expect(mountSkill(withAuth, search)).toMatchObject({ ok: false, error: { code: 'missing_dependency', details: { missing: ['http_client'] } } });
  });

  it('succeeds once the requirements are mounted', () => {
    const agent = mounted(mountSkill(mounted(mountSkill(mounted(mountSkill(fresh(), auth)), httpClient)), search));
    expect(mountedSkills(agent)).toEqual(['auth', 'http_client', 'search']);
  });

  it('a state key taken by another skill → state_key_conflict naming both', () => {
    const impostor = defineSkill({ name: 'impostor', stateKey: 'arithmetic' });
    const outcome = mountSkill(mounted(mountSkill(fresh(), arithmetic)), impostor);
    expect(outcome).toEqual({
      ok: false,
      error: {
        code: 'state_key_conflict',
        message: "skill 'impostor' cannot use state key 'arithmetic': it is taken by skill 'arithmetic'",
        skill: 'impostor',
        subject: 'arithmetic',
        details: { stateKey: 'arithmetic', takenBy: "skill 'arithmetic'" },
      },
    });
  });

  it('a state key equal to an agent schema key → state_key_conflict naming the agent', () => {
    const runner = defineSkill({ name: 'runner' });
    const outcome = mountSkill(fresh(), runner);
    expect(outcome.ok).toBe(false);
    expect(!outcome.ok && outcome.error).toMatchObject({ code: 'state_key_conflict', skill: 'runner', subject: 'runner' });
    expect(!outcome.ok && outcome.error.message).toBe("skill 'runner' cannot use state key 'runner': it is taken by the agent 'calculator' schema");
  });

  it('an invalid config → invalid_config with the issues', () => {
    const outcome = mountSkill(fresh(), counter, { step: 'two' });
    expect(outcome.ok).toBe(false);
    expect(!outcome.ok && outcome.error.code).toBe('invalid_config');
    expect(!outcome.ok && outcome.error.skill).toBe('counter');
    expect(!outcome.ok && outcome.error.issues?.map((i) => i.path)).toEqual([['step']]);
    expect(mountSkill(fresh(), counter, 5 as never)).toMatchObject({ ok: false, error: { code: 'invalid_config' } });
  });

  it('a config key the config schema does not have (a typo) → invalid_config naming it and the fields there are', () => {
    const outcome = mountSkill(fresh(), counter, { inital: 10 } as never);
    expect(!outcome.ok && outcome.error).toMatchObject({
      code: 'invalid_config',
      skill: 'counter',
      message: "invalid config for skill 'counter': inital: unknown field 'inital' (the config schema has 'initial', 'step')",
      issues: [{ path: ['inital'], code: 'unrecognized_keys' }],
    });
    expect(thrownBy(() => defineAgent({ name: 'typo', skills: [[counter, { inital: 10 } as never]] }), DefinitionError, 'invalid_config').skill).toBe('counter');
  });

  it('a slice that cannot be built → invalid_state', () => {
    const fragile = defineSkill({ name: 'fragile', initialState: () => { throw new Error('cannot start'); } });
    expect(mountSkill(fresh(), fragile)).toEqual({
      ok: false,
      error: { code: 'invalid_state', message: "initialState of skill 'fragile' threw: cannot start", skill: 'fragile' },
    });
  });

  it.each([[null], [{ name: 'fake' }], ['arithmetic']])('refuses something that is not a skill (%j) with invalid_skill', (skill) => {
    expect(mountSkill(fresh(), skill as never)).toMatchObject({ ok: false, error: { code: 'invalid_skill' } });
  });

  it('reports an action name already offered by another provider', () => {
    const outcome = mountSkill(mounted(mountSkill(fresh(), calculator)), arithmetic);
    expect(outcome.ok && outcome.diagnostics.map((d) => [d.code, d.subject, d.skill])).toEqual([
      ['action_name_clash', 'add', 'arithmetic'],
      ['action_name_clash', 'subtract', 'arithmetic'],
      ['action_name_clash', 'multiply', 'arithmetic'],
    ]);
  });

  it('refuses an unlinked agent (plain data)', () => {
    expect(mountSkill(viaJson(fresh()) as never, counter)).toMatchObject({ ok: false, error: { code: 'unlinked_agent' } });
  });
});

describe('unmountSkill', () => {
  it('removes the slice and returns one deregister_action per action', () => {
    const agent = mounted(mountSkill(fresh(), arithmetic));
    const outcome = unmountSkill(agent, arithmetic);
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.effects).toEqual(
      ['add', 'subtract', 'multiply', 'divide'].map((action) => ({ type: 'deregister_action', action, meta: { skill: 'arithmetic', tags: ['skill'] } })),
    );
    expect(outcome.agent.state).not.toHaveProperty('arithmetic');
    expect(outcome.agent.mounted).toEqual([]);
    expect(isMounted(outcome.agent, 'arithmetic')).toBe(false);
  });

  it('accepts the skill by name', () => {
    const agent = mounted(mountSkill(fresh(), counter));
    expect(mounted(unmountSkill(agent, 'counter')).state).toEqual({ runner: { mode: 'idle', transcript: [] } });
  });

  it('a skill another mounted skill requires → required_by naming the dependent', () => {
    const agent = mounted(mountSkills(fresh(), [auth, httpClient, search]));
    expect(unmountSkill(agent, 'auth')).toEqual({
      ok: false,
      error: { code: 'required_by', message: "skill 'auth' cannot be unmounted: 'search' requires it", skill: 'auth', details: { requiredBy: ['search'] } },
    });
    const withoutSearch = mounted(unmountSkill(agent, search));
    expect(mountedSkills(mounted(unmountSkill(withoutSearch, auth)))).toEqual(['http_client']);
  });

  it('a skill that is not mounted: ok, the same agent, no effects', () => {
    const agent = fresh();
    for (const skill of [counter, 'counter', 'nothing-by-that-name', null as never]) {
      const outcome = unmountSkill(agent, skill);
      expect(outcome.ok).toBe(true);
      expect(outcome.ok && outcome.agent).toBe(agent);
      expect(outcome.ok && outcome.effects).toEqual([]);
    }
  });

  it('can unmount a skill attached at definition; its actions are gone from cmd', async () => {
    const Math = defineAgent({ name: 'math', skills: [calculator] });
    const agent = mounted(unmountSkill(Math.new(), calculator));
    expect(agent.state).toEqual({});
    const run = await Math.cmd(agent as never, { action: 'add', params: { a: 1, b: 2 } });
    expect(run.results[0]).toMatchObject({ ok: false, error: { code: 'unknown_action' } });
  });

  it('refuses an unlinked agent', () => {
    expect(unmountSkill(viaJson(fresh()) as never, counter)).toMatchObject({ ok: false, error: { code: 'unlinked_agent' } });
  });
});

describe('mountSkills', () => {
  it('mounts dependents after their requirements, whatever the order of the list', () => {
    const outcome = mountSkills(fresh(), [search, httpClient, auth]);
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(mountedSkills(outcome.agent)).toEqual(['auth', 'http_client', 'search']);
    expect(outcome.effects.map((e) => e.type === 'register_action' && e.action)).toEqual(['login', 'fetch_url', 'query']);
  });

  it('orders every permutation so that each skill comes after what it requires (property)', () => {
    const base = defineSkill({ name: 'base' });
    const mid = defineSkill({ name: 'mid', requires: ['base'] });
    const top = defineSkill({ name: 'top', requires: ['mid', 'auth'] });
    const pool: AnySkill[] = [auth, httpClient, search, base, mid, top, counter];
    fc.assert(
      fc.property(fc.shuffledSubarray(pool, { minLength: pool.length, maxLength: pool.length }), (list) => {
        const order = mountedSkills(mounted(mountSkills(fresh(), list)));
        expect([...order].sort()).toEqual(pool.map((s) => s.name).sort());
        for (const skill of pool) for (const required of skill.requires) expect(order.indexOf(required)).toBeLessThan(order.indexOf(skill.name));
      }),
    );
  });

  it('takes configs as [skill, config] pairs', () => {
    const agent = mounted(mountSkills(fresh(), [[counter, { initial: 3 }], [stats, { window: 7 }]]));
    expect(agent.state).toMatchObject({ counter: { count: 3, step: 1 }, stats: { window: 7, samples: [] } });
  });

  it('counts skills already mounted as satisfied requirements, and skips them', () => {
    const agent = mounted(mountSkills(fresh(), [auth, httpClient]));
    const outcome = mountSkills(agent, [search, auth]);
    expect(outcome.ok && mountedSkills(outcome.agent)).toEqual(['auth', 'http_client', 'search']);
    expect(outcome.ok && outcome.effects.map((e) => e.type === 'register_action' && e.action)).toEqual(['query']);
  });

  it('a cycle → dependency_cycle naming the cycle; nothing is mounted', () => {
    const a = defineSkill({ name: 'ring_a', requires: ['ring_b'] });
    const b = defineSkill({ name: 'ring_b', requires: ['ring_a'] });
    const agent = fresh();
    expect(mountSkills(agent, [counter, a, b])).toEqual({
      ok: false,
      error: { code: 'dependency_cycle', message: 'skills require each other in a cycle: ring_a → ring_b → ring_a', skill: 'ring_a', details: { cycle: ['ring_a', 'ring_b', 'ring_a'] } },
    });
    expect(mountedSkills(agent)).toEqual([]);
  });

  it('a requirement neither mounted nor in the list → missing_dependency naming all of them', () => {
    expect(mountSkills(fresh(), [counter, search])).toMatchObject({
      ok: false,
      error: { code: 'missing_dependency', skill: 'search', details: { missing: ['auth', 'http_client'] } },
    });
  });

  it('is all or nothing: one failing skill mounts none of them', () => {
    const twin = defineSkill({ name: 'twin', stateKey: 'counter' });
    const agent = fresh();
    const before = viaJson(agent);
    const outcome = mountSkills(agent, [arithmetic, counter, twin]);
    expect(outcome).toMatchObject({ ok: false, error: { code: 'state_key_conflict', skill: 'twin' } });
    expect(mountSkills(agent, [arithmetic, [counter, { step: 0.5 }]])).toMatchObject({ ok: false, error: { code: 'invalid_config', skill: 'counter' } });
    expect(viaJson(agent)).toEqual(before);
  });

  it('refuses two different skills with the same name', () => {
    const other = defineSkill({ name: 'counter', stateKey: 'counter2' });
    expect(mountSkills(fresh(), [counter, other])).toMatchObject({ ok: false, error: { code: 'invalid_skill', skill: 'counter' } });
  });

  it('refuses a list that is not a list, or holds something that is not a skill', () => {
    expect(mountSkills(fresh(), counter as never)).toMatchObject({ ok: false, error: { code: 'invalid_skill' } });
    expect(mountSkills(fresh(), [counter, { name: 'fake' } as never])).toMatchObject({ ok: false, error: { code: 'invalid_skill' } });
  });
});

describe('introspection', () => {
  it('getSpec returns the metadata of a skill as plain data', () => {
    expect(getSpec(arithmetic)).toEqual({
      name: 'arithmetic',
      stateKey: 'arithmetic',
      description: 'Basic arithmetic operations: add, subtract, multiply, divide.',
      category: 'math',
      vsn: '1.0.0',
      tags: ['math', 'arithmetic', 'numeric'],
      actions: ['add', 'subtract', 'multiply', 'divide'],
      requires: [],
      signalPatterns: ['arithmetic.calculate'],
      instructions: arithmetic.instructions,
    });
    expect(getSpec(search)).toStrictEqual({
      name: 'search',
      stateKey: 'search',
      description: undefined,
      category: undefined,
      vsn: undefined,
      tags: [],
      actions: ['query'],
      requires: ['auth', 'http_client'],
      signalPatterns: [],
      instructions: undefined,
    });
    // A copy: changing it does not change the skill.
    getSpec(search).requires.push('more');
    expect(search.requires).toEqual(['auth', 'http_client']);
  });

  it('mountedSkills and isMounted work on plain data too', () => {
    const data = viaJson(mounted(mountSkills(fresh(), [arithmetic, counter])));
    expect(mountedSkills(data)).toEqual(['arithmetic', 'counter']);
    expect(isMounted(data, counter)).toBe(true);
    expect(isMounted(data, 'stats')).toBe(false);
  });
});

describe('mounting then unmounting gives back the original agent (property)', () => {
  /** A small generated skill: a slice with a default, a config that seeds it, one action. */
  const generatedSkill = (name: string, fallback: number) =>
    defineSkill({
      name,
      schema: z.object({ value: z.number().int().default(fallback), seen: z.array(z.string()).default([]) }),
      configSchema: z.object({ start: z.number().int().optional() }),
      initialState: (config) => (config.start === undefined ? {} : { value: config.start }),
      actions: [defineAction({ name: `${name}_touch`, description: `Touch ${name}`, input: z.object({}), run: () => null })],
    });

  const attachment = fc.oneof(
    fc.record({ initial: fc.integer({ min: -1000, max: 1000 }), step: fc.integer({ min: -9, max: 9 }) }).map((config): SkillAttachment => [counter, config]),
    fc.integer({ min: 1, max: 1e9 }).map((max_value): SkillAttachment => [calculator, { max_value }]),
    fc.integer({ min: 1, max: 500 }).map((window): SkillAttachment => [stats, { window }]),
    fc.constant<SkillAttachment>(arithmetic),
    fc.tuple(fc.constantFrom('gen_a', 'gen_b', 'gen_c'), fc.integer(), fc.option(fc.integer({ min: -5, max: 5 }), { nil: undefined })).map(
      ([name, fallback, start]): SkillAttachment => [generatedSkill(name, fallback), start === undefined ? {} : { start }],
    ),
  );

  it('for random skill sets and configs, one at a time or all together', () => {
    fc.assert(
      fc.property(fc.array(attachment, { maxLength: 6 }), fc.boolean(), (attachments, together) => {
        const byName = new Map<string, SkillAttachment>();
        for (const a of attachments) byName.set((Array.isArray(a) ? a[0] : a).name, a);
        const list = [...byName.values()];
        const original = fresh();
        let agent = original;
        if (together) agent = mounted(mountSkills(agent, list));
        else for (const a of list) agent = Array.isArray(a) ? mounted(mountSkill(agent, a[0], a[1])) : mounted(mountSkill(agent, a as AnySkill));
        expect(mountedSkills(agent)).toEqual(list.map((a) => (Array.isArray(a) ? a[0] : a).name));
        for (const name of [...mountedSkills(agent)].reverse()) agent = mounted(unmountSkill(agent, name));
        expect(agent).toEqual(original);
        expect(JSON.stringify(agent)).toBe(JSON.stringify(original));
      }),
      { numRuns: 200 },
    );
  });
});

describe('a skill name belongs to one skill per agent', () => {
  it('refuses to mount a different skill under the name of a mounted one (skill_conflict), leaving the agent as it was', () => {
    const first = defineSkill({ name: 'twin', description: 'the first' });
    const second = defineSkill({ name: 'twin', description: 'the second' });
    const Agent = defineAgent({ name: 'twins', skills: [first] });
    const agent = Agent.new({ id: 'a' });
    for (const attempt of [mountSkill(agent, second), mountSkills(agent, [second])]) {
      expect(attempt).toEqual({
        ok: false,
        error: {
          code: 'skill_conflict',
          message: "a different skill named 'twin' is already mounted on agent 'a'; unmount it before mounting this one",
          skill: 'twin',
        },
      });
    }
    expect(mountSkill(agent, first)).toMatchObject({ ok: true, agent, effects: [] });
  });
});
