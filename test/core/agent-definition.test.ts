/**
 * Agent definitions: composing skills onto an agent, building state from defaults,
 * refusing definitions that cannot work, introspection, `set`, `validate`, `restore`, and the
 * diagnostics a definition reports.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  cmd,
  createSkillRegistry,
  defineAction,
  defineAgent,
  defineSkill,
  DefinitionError,
  mountSkill,
  StateError,
  unmountSkill,
  type Agent,
} from '../../src/index.js';
import { catalogOf, isAgent, withState } from '../../src/core/agent-value.js';
import { arithmetic, calculator, counter } from '../../skills/index.js';
import { auth, httpClient, MathAgent, record, search, stats, thrownBy, viaJson } from './support.js';

const MATH_DEFAULTS = {
  mode: 'interactive',
  calculator: { precision: 2, last_result: 0 },
  stats: { window: 100, samples: [] },
};

describe("new(): the math agent", () => {
  it('builds state from the agent schema defaults, each skill slice under its key, config defaults and initialState', () => {
    const agent = MathAgent.new();
    // mode: agent schema default; calculator: its schema defaults; stats: window from the
    // attached config { window: 100 } through initialState, samples from its schema default.
    expect(agent.state).toEqual(MATH_DEFAULTS);
    expect(agent.definition).toBe('math_agent');
    expect(agent.mounted).toEqual([
      { name: 'calculator', stateKey: 'calculator', config: { max_value: 1_000_000 } },
      { name: 'stats', stateKey: 'stats', config: { window: 100 } },
    ]);
    expect(isAgent(agent)).toBe(true);
  });

  it('gives each agent a nanoid id unless one is given', () => {
    expect(MathAgent.new().id).toMatch(/^[A-Za-z0-9_-]{21}$/);
    expect(MathAgent.new().id).not.toBe(MathAgent.new().id);
    expect(MathAgent.new({ id: 'math-1' }).id).toBe('math-1');
  });

  it('refuses an empty id with a StateError', () => {
    thrownBy(() => MathAgent.new({ id: '' }), StateError, 'invalid_state');
  });

  it.each([
    [null, 'null'],
    [5, 'number'],
    [[{ id: 'x' }], 'an array'],
  ])('refuses options that are not an object (%j) with a StateError saying what it takes', (options, got) => {
    const error = thrownBy(() => MathAgent.new(options as never), StateError, 'invalid_options');
    expect(error.message).toBe(`agent 'math_agent': new() takes { id?, state? }, got ${got}`);
  });

  it('gives each agent its own state objects', () => {
    const a = MathAgent.new();
    const b = MathAgent.new();
    expect(a.state).not.toBe(b.state);
    expect(a.state.stats.samples).not.toBe(b.state.stats.samples);
  });

  it('lets new agents share one frozen list of mounted skills, which no agent can change for another', () => {
    const a = MathAgent.new();
    const b = MathAgent.new();
    expect(Object.isFrozen(a.mounted) && a.mounted.every((record) => Object.isFrozen(record) && Object.isFrozen(record.config))).toBe(true);
    expect(() => (a.mounted as unknown as unknown[]).push({ name: 'intruder' })).toThrow(TypeError);
    expect(() => ((a.mounted[0] as { name: string }).name = 'renamed')).toThrow(TypeError);
    expect(b.mounted.map((record) => record.name)).toEqual(['calculator', 'stats']);
  });

  it('serialises to plain data: id, definition, state and mounted skills', () => {
    const agent = MathAgent.new({ id: 'm' });
    expect(viaJson(agent)).toEqual({ id: 'm', definition: 'math_agent', state: MATH_DEFAULTS, mounted: agent.mounted });
  });

  it('deep-merges the caller’s initial state over the defaults', () => {
    const agent = MathAgent.new({ state: { mode: 'batch', calculator: { precision: 4 }, stats: { samples: [1, 2] } } });
    expect(agent.state).toEqual({ mode: 'batch', calculator: { precision: 4, last_result: 0 }, stats: { window: 100, samples: [1, 2] } });
  });

  it('refuses an invalid initial state with a StateError carrying the issues, their paths from the root', () => {
    const own = thrownBy(() => MathAgent.new({ state: { mode: 'sleepy' as never } }), StateError, 'invalid_state');
    expect(own.issues?.map((issue) => issue.path)).toEqual([['mode']]);
    const slice = thrownBy(() => MathAgent.new({ state: { calculator: { precision: -1 } } }), StateError, 'invalid_state');
    expect(slice.skill).toBe('calculator');
    expect(slice.issues?.map((issue) => issue.path)).toEqual([['calculator', 'precision']]);
  });

  it('refuses an unknown key, at the top and inside a skill slice, naming it', () => {
    expect(thrownBy(() => MathAgent.new({ state: { colour: 'red' } as never }), StateError, 'invalid_state').message).toContain("'colour'");
    const nested = thrownBy(() => MathAgent.new({ state: { calculator: { precison: 3 } } as never }), StateError, 'invalid_state');
    expect(nested.message).toContain("'precison'");
    expect(nested.issues?.map((issue) => issue.path)).toEqual([['calculator', 'precison']]);
  });

  it.each([[5], ['state'], [[1]], [null]])('refuses an initial state that is not an object (%j)', (state) => {
    thrownBy(() => MathAgent.new({ state: state as never }), StateError, 'invalid_state');
  });

  it('refuses a __proto__ key in the initial state and pollutes nothing', () => {
    thrownBy(() => MathAgent.new({ state: JSON.parse('{"__proto__": {"polluted": true}}') }), StateError, 'invalid_state');
    thrownBy(() => MathAgent.new({ state: JSON.parse('{"calculator": {"__proto__": {"polluted": true}}}') }), StateError, 'invalid_state');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('keeps unknown keys when the agent schema is open (z.looseObject)', () => {
    const Open = defineAgent({ name: 'open', schema: z.looseObject({ a: z.number().default(1) }) });
    expect(Open.new({ state: { extra: true } as never }).state).toEqual({ a: 1, extra: true });
  });

  it('an open agent schema keeps its unknown keys through set, validate and restore', () => {
    const Open = defineAgent({ name: 'open', schema: z.looseObject({ a: z.number().default(1) }), skills: [counter] });
    const agent = Open.new({ state: { extra: true } as never });
    const set = Open.set(agent, { more: 2 } as never);
    expect(set.ok && set.value.state).toEqual({ a: 1, extra: true, more: 2, counter: { count: 0, step: 1 } });
    const validated = Open.validate(agent);
    expect(validated.ok && validated.value.state).toEqual({ a: 1, extra: true, counter: { count: 0, step: 1 } });
    const restored = Open.restore(JSON.parse(JSON.stringify(agent)));
    expect(restored.ok && restored.value.state).toEqual({ a: 1, extra: true, counter: { count: 0, step: 1 } });
    // A key that is the state of a skill of the definition not mounted on the agent is still refused, naming the skill.
    const stray = Open.restore({ ...JSON.parse(JSON.stringify(agent)), mounted: [] });
    expect(!stray.ok && stray.error).toMatchObject({ code: 'invalid_snapshot', skill: 'counter' });
  });

  it('an agent without schema or skills starts with an empty state', () => {
    expect(defineAgent({ name: 'empty' }).new().state).toEqual({});
  });
});

describe('defineAgent refuses definitions that cannot work', () => {
  const twin = defineSkill({ name: 'twin', stateKey: 'calculator' });

  it('two skills with the same state key → duplicate_state_key naming both skills', () => {
    const error = thrownBy(() => defineAgent({ name: 'a', skills: [calculator, twin] }), DefinitionError, 'duplicate_state_key');
    expect(error.message).toContain("'calculator'");
    expect(error.message).toContain("'twin'");
    expect(error.details).toEqual({ stateKey: 'calculator', skills: ['calculator', 'twin'] });
  });

  it('a state key equal to an agent schema key → state_key_conflict naming the skill and the key', () => {
    const error = thrownBy(
      () => defineAgent({ name: 'a', schema: z.object({ stats: z.string().default('') }), skills: [stats] }),
      DefinitionError,
      'state_key_conflict',
    );
    expect(error.skill).toBe('stats');
    expect(error.subject).toBe('stats');
    expect(error.message).toContain("state key 'stats' of skill 'stats'");
  });

  it('an invalid skill config → invalid_config naming the skill, with the issues', () => {
    const error = thrownBy(() => defineAgent({ name: 'a', skills: [[stats, { window: 0 }]] }), DefinitionError, 'invalid_config');
    expect(error.skill).toBe('stats');
    expect(error.message).toContain("skill 'stats'");
    expect(error.issues?.map((issue) => issue.path)).toEqual([['window']]);
  });

  it('a requirement that is not attached → missing_dependency naming the skill and what is missing', () => {
    const error = thrownBy(() => defineAgent({ name: 'a', skills: [auth, search] }), DefinitionError, 'missing_dependency');
    expect(error.skill).toBe('search');
    expect(error.details).toEqual({ missing: ['http_client'] });
    expect(error.message).toBe("agent 'a': skill 'search' requires 'http_client', which is not attached");
  });

  it('requirements in a cycle → dependency_cycle naming the cycle', () => {
    const a = defineSkill({ name: 'ring_a', requires: ['ring_b'] });
    const b = defineSkill({ name: 'ring_b', requires: ['ring_c'] });
    const c = defineSkill({ name: 'ring_c', requires: ['ring_a'] });
    const error = thrownBy(() => defineAgent({ name: 'a', skills: [a, b, c] }), DefinitionError, 'dependency_cycle');
    expect(error.details).toEqual({ cycle: ['ring_a', 'ring_b', 'ring_c', 'ring_a'] });
    expect(error.message).toContain('ring_a → ring_b → ring_c → ring_a');
  });

  it('the same skill attached twice → invalid_agent naming it', () => {
    const error = thrownBy(() => defineAgent({ name: 'a', skills: [counter, [counter, { step: 2 }]] }), DefinitionError, 'invalid_agent');
    expect(error.message).toBe("agent 'a': skill 'counter' is attached twice");
  });

  it('accepts requirements attached in any order', () => {
    expect(defineAgent({ name: 'a', skills: [search, httpClient, auth] }).skills().map((s) => s.name)).toEqual(['search', 'http_client', 'auth']);
  });

  it.each<[string, string, Record<string, unknown>]>([
    ['an invalid name', 'invalid_agent', { name: 'my agent' }],
    ['a description that is not a string', 'invalid_agent', { description: 5 }],
    ['a schema that is not a zod object', 'invalid_agent', { schema: z.string() }],
    ['actions that are not actions', 'invalid_agent', { actions: [{ name: 'x' }] }],
    ['two own actions with the same name', 'invalid_agent', { actions: [record, record] }],
    ['skills that are not an array', 'invalid_agent', { skills: calculator }],
    ['a skill not made by defineSkill', 'invalid_agent', { skills: [{ name: 'fake' }] }],
    ['an invalid agent route', 'invalid_route', { routes: [{ path: 'a..b', target: { action: 'x' } }] }],
    ['routes that are not an array', 'invalid_agent', { routes: {} }],
    ['a registry without get()', 'invalid_agent', { registry: {} }],
  ])('%s → %s', (_label, code, patch) => {
    thrownBy(() => defineAgent({ name: 'agent', ...patch } as never), DefinitionError, code as never);
  });

  it('a skill whose routes(config) yields an invalid route → invalid_route naming the skill', () => {
    const skill = defineSkill({ name: 'routed', configSchema: z.object({ prefix: z.string().default('a..b') }), routes: (config) => [{ path: config.prefix, target: { action: 'x' } }] });
    const error = thrownBy(() => defineAgent({ name: 'a', skills: [skill] }), DefinitionError, 'invalid_route');
    expect(error.skill).toBe('routed');
    expect(error.message).toContain("routes of skill 'routed'");
  });

  it('a skill whose routes(config) throws → invalid_route naming the skill', () => {
    const skill = defineSkill({ name: 'routed', routes: () => { throw new Error('no routes today'); } });
    expect(thrownBy(() => defineAgent({ name: 'a', skills: [skill] }), DefinitionError, 'invalid_route').message).toContain('no routes today');
  });

  it.each([[null], [undefined], ['agent']])('refuses a definition that is not an object (%j)', (input) => {
    thrownBy(() => defineAgent(input as never), DefinitionError, 'invalid_agent');
  });
});

describe('introspection', () => {
  it('skills() lists the attached specs in order, as a copy', () => {
    const list = MathAgent.skills();
    expect(list).toEqual([calculator, stats]);
    list.pop();
    expect(MathAgent.skills()).toEqual([calculator, stats]);
  });

  it('actions() is the deduplicated union, the agent’s own first', () => {
    const shared = defineAction({ name: 'shared', description: 'Shared by two skills', input: z.object({}), run: () => 1 });
    const own = defineAction({ name: 'own', description: 'The agent’s own', input: z.object({}), run: () => 2 });
    const extra = defineAction({ name: 'extra', description: 'Only in two', input: z.object({}), run: () => 3 });
    const one = defineSkill({ name: 'one', actions: [shared] });
    const two = defineSkill({ name: 'two', actions: [shared, extra] });
    const Agent = defineAgent({ name: 'a', actions: [own], skills: [one, two] });
    expect(Agent.actions()).toEqual([own, shared, extra]);
    expect(MathAgent.actions().map((a) => a.name)).toEqual(['add', 'subtract', 'multiply', 'record', 'mean']);
  });

  it('skillConfig(skill) is the validated config, by spec or by name', () => {
    expect(MathAgent.skillConfig(calculator)).toEqual({ max_value: 1_000_000 });
    expect(MathAgent.skillConfig('stats')).toEqual({ window: 100 });
    expect(MathAgent.skillConfig(counter)).toBeUndefined();
  });

  it('skillState(agent, skill) is the slice of a mounted skill', async () => {
    const agent = MathAgent.new();
    const { agent: after } = await MathAgent.cmd(agent, { action: 'add', params: { a: 1.5, b: 2.5 } });
    // The calculator's slice: { precision: 2, last_result: 4 }
    expect(MathAgent.skillState(after, calculator)).toEqual({ precision: 2, last_result: 4 });
    expect(MathAgent.skillState(after, 'stats')).toEqual({ window: 100, samples: [] });
    expect(MathAgent.skillState(after, counter)).toBeUndefined();
    const unmounted = unmountSkill(after, 'stats');
    expect(unmounted.ok && MathAgent.skillState(unmounted.agent, stats)).toBeUndefined();
  });

  it('schema is the agent schema with each skill schema nested under its key; parsing {} yields the schema defaults', () => {
    expect(Object.keys(MathAgent.schema.shape)).toEqual(['mode', 'calculator', 'stats']);
    // The merged schema knows schemas, not configs: stats' window is its schema default (50).
    expect(MathAgent.schema.parse({})).toEqual({ mode: 'interactive', calculator: { precision: 2, last_result: 0 }, stats: { window: 50, samples: [] } });
    expect(MathAgent.schema.safeParse({ calculator: { precision: 'two' } }).success).toBe(false);
  });

  it('name, description and kind are kept', () => {
    expect(MathAgent.name).toBe('math_agent');
    expect(MathAgent.description).toBe('Agent with calculation abilities');
    expect(MathAgent.kind).toBe('agent');
  });
});

describe('set(agent, attrs)', () => {
  it('deep-merges and validates, returning a new agent and leaving the old one as it was', () => {
    const agent = MathAgent.new();
    const before = structuredClone(agent.state);
    const updated = MathAgent.set(agent, { calculator: { precision: 5 } });
    expect(updated.ok).toBe(true);
    if (!updated.ok) return;
    expect(updated.value.state).toEqual({ ...MATH_DEFAULTS, calculator: { precision: 5, last_result: 0 } });
    expect(updated.value.id).toBe(agent.id);
    expect(agent.state).toEqual(before);
  });

  it('replaces arrays rather than merging them', () => {
    const agent = MathAgent.new({ state: { stats: { samples: [1, 2, 3] } } });
    const updated = MathAgent.set(agent, { stats: { samples: [9] } });
    expect(updated.ok && updated.value.state.stats.samples).toEqual([9]);
  });

  it('refuses an invalid value with invalid_state and the issues; the agent is unchanged', () => {
    const agent = MathAgent.new();
    const before = structuredClone(agent.state);
    const updated = MathAgent.set(agent, { calculator: { precision: 'max' as never } });
    expect(updated.ok).toBe(false);
    if (updated.ok) return;
    expect(updated.error.code).toBe('invalid_state');
    expect(updated.error.issues?.map((issue) => issue.path)).toEqual([['calculator', 'precision']]);
    expect(agent.state).toEqual(before);
  });

  it('refuses an unknown key, at the top and inside a skill slice, naming it', () => {
    const agent = MathAgent.new();
    const top = MathAgent.set(agent, { colour: 'red' } as never);
    expect(top).toMatchObject({ ok: false, error: { code: 'invalid_state', subject: 'colour' } });
    const nested = MathAgent.set(agent, { stats: { windw: 3 } } as never);
    expect(nested).toMatchObject({ ok: false, error: { code: 'invalid_state', subject: 'stats.windw' } });
    expect(!nested.ok && nested.error.message).toContain("'windw'");
  });

  it('refuses a __proto__ key and pollutes nothing', () => {
    const agent = MathAgent.new();
    expect(MathAgent.set(agent, JSON.parse('{"__proto__": {"polluted": 1}}')).ok).toBe(false);
    expect(MathAgent.set(agent, JSON.parse('{"stats": {"__proto__": {"polluted": 1}}}')).ok).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([[null], [5], [[1]], ['x']])('refuses attrs that are not an object (%j)', (attrs) => {
    expect(MathAgent.set(MathAgent.new(), attrs as never)).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
  });

  it('can set the slice of a skill mounted at run time', () => {
    const mounted = mountSkill(MathAgent.new(), counter);
    if (!mounted.ok) throw new Error(mounted.error.message);
    const updated = MathAgent.set(mounted.agent as never, { counter: { count: 41 } } as never);
    expect(updated.ok && (updated.value.state as Record<string, unknown>).counter).toEqual({ count: 41, step: 1 });
  });

  it('refuses an unlinked agent (plain data) with unlinked_agent', () => {
    expect(MathAgent.set(viaJson(MathAgent.new()) as never, { mode: 'batch' })).toMatchObject({ ok: false, error: { code: 'unlinked_agent' } });
  });
});

describe('validate(agent)', () => {
  it('accepts a valid agent', () => {
    const agent = MathAgent.new();
    const checked = MathAgent.validate(agent);
    expect(checked.ok && checked.value.state).toEqual(agent.state);
  });

  it('reports a state that no longer satisfies the schema', () => {
    // Committed state is frozen, so a corrupted one is built as a new agent value around it.
    const fresh = MathAgent.new();
    const state = fresh.state as Record<string, unknown> & { calculator: Record<string, unknown> };
    const agent = withState(fresh, { ...state, calculator: { ...state.calculator, precision: 'corrupted' } } as never, catalogOf(fresh)!);
    const checked = MathAgent.validate(agent);
    expect(checked.ok).toBe(false);
    expect(!checked.ok && checked.error.code).toBe('invalid_state');
    expect(!checked.ok && checked.error.issues?.map((i) => i.path)).toEqual([['calculator', 'precision']]);
  });

  it('refuses an unlinked agent', () => {
    expect(MathAgent.validate(viaJson(MathAgent.new()) as never)).toMatchObject({ ok: false, error: { code: 'unlinked_agent' } });
  });
});

describe('restore(data)', () => {
  it('re-links an agent parsed from JSON; cmd then works on it', async () => {
    const agent = MathAgent.new({ id: 'r1', state: { stats: { samples: [3] } } });
    const data = viaJson(agent);
    expect(isAgent(data)).toBe(false);
    const restored = MathAgent.restore(data);
    expect(restored.ok).toBe(true);
    if (!restored.ok) return;
    expect(viaJson(restored.value)).toEqual(data);
    const ran = await MathAgent.cmd(restored.value, [{ action: 'record', params: { value: 5 } }, 'mean']);
    expect(ran.results.map((r) => r.ok && r.output)).toEqual([{ count: 2 }, { mean: 4 }]);
  });

  it('re-links skills mounted at run time through the registry of the definition or of the call', () => {
    const Plain = defineAgent({ name: 'plain' });
    const Registered = defineAgent({ name: 'plain', registry: createSkillRegistry([counter]) });
    const mounted = mountSkill(Plain.new({ id: 'p' }), [counter][0]!, { initial: 5 });
    if (!mounted.ok) throw new Error(mounted.error.message);
    const data = viaJson(mounted.agent);

    expect(Plain.restore(data)).toEqual({
      ok: false,
      error: {
        code: 'unknown_skill',
        message: "cannot restore agent 'p': skill 'counter' is mounted on it but neither the definition nor the registry knows it",
        skill: 'counter',
      },
    });
    const viaCall = Plain.restore(data, { skills: createSkillRegistry([counter]) });
    expect(viaCall.ok && viaCall.value.state).toEqual({ counter: { count: 5, step: 1 } });
    const viaDefinition = Registered.restore(data);
    expect(viaDefinition.ok && viaDefinition.value.mounted).toEqual([{ name: 'counter', stateKey: 'counter', config: { initial: 5, step: 1 } }]);
  });

  it('refuses a snapshot of another definition, naming both', () => {
    const data = viaJson(defineAgent({ name: 'other_agent' }).new());
    const restored = MathAgent.restore(data);
    expect(restored.ok).toBe(false);
    expect(!restored.ok && restored.error.code).toBe('invalid_snapshot');
    expect(!restored.ok && restored.error.message).toContain("made by definition 'other_agent', not 'math_agent'");
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['a number', 5],
    ['a string', '{"id":"x"}'],
    ['an array', []],
    ['an empty object', {}],
    ['a record without an id', { definition: 'math_agent', state: {}, mounted: [] }],
    ['a record without a state', { id: 'x', definition: 'math_agent', mounted: [] }],
    ['a record whose mounted list is not an array', { id: 'x', definition: 'math_agent', state: {}, mounted: {} }],
    ['a record with a malformed mounted entry', { id: 'x', definition: 'math_agent', state: {}, mounted: [{ stateKey: 'calculator' }] }],
  ])('refuses %s with invalid_snapshot, never a throw', (_label, data) => {
    const restored = MathAgent.restore(data);
    expect(restored.ok).toBe(false);
    expect(!restored.ok && restored.error.code).toBe('invalid_snapshot');
  });

  it('refuses a snapshot that mounts the same skill twice (invalid_snapshot)', () => {
    const data = viaJson(MathAgent.new({ id: 'twice' }));
    data.mounted.push({ ...data.mounted[0]! });
    expect(MathAgent.restore(data)).toMatchObject({ ok: false, error: { code: 'invalid_snapshot', skill: 'calculator' } });
  });

  it('refuses a snapshot whose mounted skills could never have been mounted together', () => {
    const Open = defineAgent({ name: 'open', schema: z.object({ mode: z.looseObject({}).default({}) }), skills: [auth, httpClient] });
    const squatter = defineSkill({ name: 'squatter', stateKey: 'mode' });
    const twin = defineSkill({ name: 'twin', stateKey: 'auth' });
    const skills = createSkillRegistry([squatter, twin, search]);
    const withSkill = (name: string, stateKey: string) => {
      const data = viaJson(Open.new({ id: 'o' }));
      data.mounted.push({ name, stateKey, config: {} });
      return data;
    };
    expect(Open.restore(withSkill('squatter', 'mode'), { skills })).toMatchObject({ ok: false, error: { code: 'state_key_conflict', skill: 'squatter' } });
    expect(Open.restore(withSkill('twin', 'auth'), { skills })).toMatchObject({ ok: false, error: { code: 'state_key_conflict', skill: 'twin' } });
    const withoutAuth = viaJson(Open.new({ id: 'o' }).toJSON());
    withoutAuth.mounted = withoutAuth.mounted.filter((m) => m.name !== 'auth');
    withoutAuth.mounted.push({ name: 'search', stateKey: 'search', config: {} });
    expect(Open.restore(withoutAuth, { skills })).toMatchObject({ ok: false, error: { code: 'missing_dependency', skill: 'search', details: { missing: ['auth'] } } });
  });

  it('refuses a snapshot whose state fails the schema (invalid_state) or whose config is invalid (invalid_config)', () => {
    const data = viaJson(MathAgent.new());
    (data.state as { calculator: { precision: unknown } }).calculator.precision = 99;
    expect(MathAgent.restore(data)).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
    const badConfig = viaJson(MathAgent.new());
    badConfig.mounted[1]!.config = { window: -5 };
    expect(MathAgent.restore(badConfig)).toMatchObject({ ok: false, error: { code: 'invalid_config', skill: 'stats' } });
  });

  it("refuses a snapshot whose skill slice holds a field the skill's schema does not have, naming both (parsing would drop it)", () => {
    const data = viaJson(MathAgent.new({ id: 'agent' }));
    (data.state as { calculator: Record<string, unknown> }).calculator.history = [1, 2];
    expect(MathAgent.restore(data)).toEqual({
      ok: false,
      error: {
        code: 'invalid_snapshot',
        message: "cannot restore agent 'agent': the state of skill 'calculator' holds 'history', which is not a field of its schema",
        skill: 'calculator',
        subject: 'calculator.history',
      },
    });
  });
});

describe('diagnostics', () => {
  it('report a route shadowed by the same path and priority of another owner', () => {
    const Agent = defineAgent({
      name: 'routed',
      skills: [counter],
      routes: [{ path: 'counter.increment', target: { action: 'increment' } }],
    });
    expect(Agent.diagnostics).toEqual([
      {
        level: 'warning',
        code: 'shadowed_route',
        message: "route 'counter.increment' of skill 'counter' is shadowed by the same route of agent 'routed'",
        skill: 'counter',
        subject: 'counter.increment',
        details: { shadowedBy: "agent 'routed'", priority: 0 },
      },
    ]);
  });

  it('report actions offered under the same name by two providers', () => {
    const Agent = defineAgent({ name: 'clash', skills: [calculator, arithmetic] });
    const clashes = Agent.diagnostics.filter((d) => d.code === 'action_name_clash');
    expect(clashes.map((d) => d.subject)).toEqual(['add', 'subtract', 'multiply']);
    expect(clashes[0]).toEqual({
      level: 'warning',
      code: 'action_name_clash',
      message: "action 'add' is offered by skill 'calculator' and skill 'arithmetic'; a bare 'add' runs the one of skill 'calculator'",
      subject: 'add',
      details: { providers: ["skill 'calculator'", "skill 'arithmetic'"] },
    });
  });

  it('are empty for a definition without clashes', () => {
    expect(MathAgent.diagnostics).toEqual([]);
  });

  it('routes() lists agent routes, then skill routes pinned to their skill', () => {
    const Agent = defineAgent({ name: 'r', skills: [counter], routes: [{ path: 'ping', target: { action: 'get_count' } }] });
    expect(Agent.routes()[0]).toEqual({ path: 'ping', target: { action: 'get_count' } });
    expect(Agent.routes()[1]).toEqual({ path: 'counter.increment', target: { action: 'increment', skill: 'counter' } });
    expect(Agent.routes()).toHaveLength(5);
  });
});

describe('the agent value', () => {
  it('is only changed by returning a new agent', async () => {
    const agent = MathAgent.new();
    const before = viaJson(agent);
    await cmd(agent, { action: 'record', params: { value: 1 } });
    MathAgent.set(agent, { mode: 'batch' });
    mountSkill(agent, counter);
    expect(viaJson(agent)).toEqual(before);
  });

  it('types the state from the schema and the skills', () => {
    const agent: Agent<{ mode: 'interactive' | 'batch'; calculator: { precision: number; last_result: number } }> = MathAgent.new();
    expect(agent.state.calculator.precision).toBe(2);
  });
});
