/**
 * Skills: `defineSkill` keeps every field of seeds 000 and 001, defaults the state key to the
 * name, and refuses a definition that cannot work with `invalid_skill`, naming the skill and
 * the field. Plus the `Decision` constructors, config resolution and the initial slice.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Decision, defineAction, defineSkill, DefinitionError, createSignal } from '../../src/index.js';
import type { FunctionTool } from '../../src/core/tools.js';
import { initialSlice, isSkill, resolveSkillConfig, unpackAttachment } from '../../src/core/skill.js';
import { thrownBy } from './support.js';

const noop = defineAction({ name: 'noop', description: 'Does nothing', input: z.object({}), run: () => null });
const other = defineAction({ name: 'other', description: 'Does nothing else', input: z.object({}), run: () => null });
const tool: FunctionTool = { type: 'function', function: { name: 'noop', description: 'Custom', parameters: { type: 'object', properties: {} } } };

describe('defineSkill keeps every field', () => {
  const schema = z.object({ precision: z.number().int().default(2) });
  const configSchema = z.object({ max_value: z.number().default(10) });
  const hooks = {
    mount: () => ({ state: { precision: 3 } }),
    handleSignal: () => Decision.continue(),
    transformResult: (_signal: unknown, value: unknown) => value,
    children: () => [],
  };
  const skill = defineSkill({
    name: 'calculator',
    stateKey: 'calc',
    description: 'Basic arithmetic',
    category: 'math',
    vsn: '0.1.0',
    tags: ['math', 'utility'],
    actions: [noop, other],
    schema,
    configSchema,
    signalPatterns: ['calculator.*'],
    routes: [{ path: 'calculator.noop', target: { action: 'noop' } }],
    requires: ['arithmetic'],
    instructions: 'Use it for sums.',
    tools: [tool],
    initialState: (config) => ({ precision: config.max_value > 5 ? 4 : 1 }),
    metadata: { root: '/skills/calculator' },
    ...hooks,
  });

  it('as given', () => {
    expect(skill.kind).toBe('skill');
    expect(skill.name).toBe('calculator');
    expect(skill.stateKey).toBe('calc');
    expect(skill.description).toBe('Basic arithmetic');
    expect(skill.category).toBe('math');
    expect(skill.vsn).toBe('0.1.0');
    expect(skill.tags).toEqual(['math', 'utility']);
    expect(skill.actions).toEqual([noop, other]);
    expect(skill.schema).toBe(schema);
    expect(skill.configSchema).toBe(configSchema);
    expect(skill.signalPatterns).toEqual(['calculator.*']);
    expect(skill.requires).toEqual(['arithmetic']);
    expect(skill.instructions).toBe('Use it for sums.');
    expect(skill.metadata).toEqual({ root: '/skills/calculator' });
    expect(skill.routes({ max_value: 1 })).toEqual([{ path: 'calculator.noop', target: { action: 'noop' } }]);
    expect(skill.tools({ max_value: 1 })).toEqual([tool]);
    expect(skill.initialState({ max_value: 10 })).toEqual({ precision: 4 });
    expect(skill.initialState({ max_value: 1 })).toEqual({ precision: 1 });
    expect(isSkill(skill)).toBe(true);
  });

  it('with the process-layer hooks stored, callable, and bound to the definition', () => {
    expect(skill.mount?.({} as never)).toEqual({ state: { precision: 3 } });
    expect(skill.handleSignal?.(createSignal('calculator.add'), {} as never)).toEqual({ decision: 'continue' });
    expect(skill.transformResult?.(createSignal('a'), 42, {} as never)).toBe(42);
    expect(skill.children?.({ max_value: 1 })).toEqual([]);
    const withThis = defineSkill({
      name: 'bound',
      label: 'from the definition',
      transformResult(this: { label: string }) {
        return this.label;
      },
    } as never);
    expect(withThis.transformResult?.(createSignal('a'), null, {} as never)).toBe('from the definition');
  });

  it('frozen, with copies of the lists it was given', () => {
    const tags = ['a'];
    const actions = [noop];
    const frozen = defineSkill({ name: 'f', tags, actions });
    tags.push('b');
    actions.push(other);
    expect(frozen.tags).toEqual(['a']);
    expect(frozen.actions).toEqual([noop]);
    expect(Object.isFrozen(frozen)).toBe(true);
  });

  it('routes and tools may be functions of the config', () => {
    const configured = defineSkill({
      name: 'configured',
      actions: [noop],
      configSchema: z.object({ prefix: z.string().default('x') }),
      routes: (config) => [{ path: `${config.prefix}.noop`, target: { action: 'noop' } }],
      tools: (config) => [{ ...tool, function: { ...tool.function, description: config.prefix } }],
    });
    expect(configured.routes({ prefix: 'calc' })).toEqual([{ path: 'calc.noop', target: { action: 'noop' } }]);
    expect(configured.tools({ prefix: 'calc' })?.[0]?.function.description).toBe('calc');
  });
});

describe('defineSkill defaults', () => {
  const skill = defineSkill({ name: 'minimal' });

  it('the state key is the name', () => {
    expect(skill.stateKey).toBe('minimal');
  });

  it('every optional field has an empty or undefined default', () => {
    expect(skill.description).toBeUndefined();
    expect(skill.category).toBeUndefined();
    expect(skill.vsn).toBeUndefined();
    expect(skill.instructions).toBeUndefined();
    expect(skill.configSchema).toBeUndefined();
    expect(skill.tags).toEqual([]);
    expect(skill.actions).toEqual([]);
    expect(skill.signalPatterns).toEqual([]);
    expect(skill.requires).toEqual([]);
    expect(skill.metadata).toEqual({});
    expect(skill.routes({})).toEqual([]);
    expect(skill.tools({})).toBeUndefined();
    expect(skill.initialState({})).toEqual({});
    expect(skill.schema.parse({})).toEqual({});
    expect(skill.mount).toBeUndefined();
    expect(skill.handleSignal).toBeUndefined();
    expect(skill.transformResult).toBeUndefined();
    expect(skill.children).toBeUndefined();
  });
});

describe('defineSkill refuses a definition that cannot work', () => {
  const stateA = z.object({ n: z.number().default(0) });
  // Not a schema stateA satisfies: the same field with another type.
  const stateB = z.object({ n: z.string().default('') });
  const foreign = defineAction({ name: 'foreign', description: 'Uses another skill state', input: z.object({}), state: stateB, run: () => null });
  const duplicate = defineAction({ name: 'noop', description: 'Same name as noop', input: z.object({}), run: () => null });

  it.each<[string, string, Record<string, unknown>]>([
    ['a name with a dot', 'name', { name: 'my.skill' }],
    ['a name starting with a dash', 'name', { name: '-skill' }],
    ['an empty name', 'name', { name: '' }],
    ['a 65-character name', 'name', { name: 'x'.repeat(65) }],
    ['a name that is not a string', 'name', { name: 7 }],
    ['the reserved state key __proto__', 'stateKey', { stateKey: '__proto__' }],
    ['the reserved state key constructor', 'stateKey', { stateKey: 'constructor' }],
    ['the reserved state key prototype', 'stateKey', { stateKey: 'prototype' }],
    ['a state key with a space', 'stateKey', { stateKey: 'my key' }],
    ['a schema that is not a zod object', 'schema', { schema: z.string() }],
    ['a schema that is a plain object', 'schema', { schema: { n: 1 } }],
    ['a config schema that is not a zod object', 'configSchema', { configSchema: z.number() }],
    ['actions that are not an array', 'actions', { actions: noop }],
    ['an action not made by defineAction', 'actions[1]', { actions: [noop, { name: 'x', run: () => 1 }] }],
    ['two actions with the same name', 'actions', { actions: [noop, duplicate] }],
    ["an action declaring a state schema its skill's schema does not satisfy", 'actions[0]', { schema: stateA, actions: [foreign] }],
    ['an invalid signal pattern', 'signalPatterns', { signalPatterns: ['ok.*', 'a..b'] }],
    ['signal patterns that are not strings', 'signalPatterns', { signalPatterns: [5] }],
    ['a route with an invalid path', 'routes', { routes: [{ path: 'a**', target: { action: 'noop' } }] }],
    ['a route with an out-of-range priority', 'routes', { routes: [{ path: 'a', target: { action: 'noop' }, priority: 101 }] }],
    ['routes that are neither a list nor a function', 'routes', { routes: 'a.b' }],
    ['requires naming the skill itself', 'requires', { requires: ['probe'] }],
    ['requires naming an invalid skill name', 'requires', { requires: ['not a name'] }],
    ['requires that are not strings', 'requires', { requires: [{ name: 'auth' }] }],
    ['a mount hook that is not a function', 'mount', { mount: {} }],
    ['a handleSignal hook that is not a function', 'handleSignal', { handleSignal: 'continue' }],
    ['a transformResult hook that is not a function', 'transformResult', { transformResult: 1 }],
    ['a children hook that is not a function', 'children', { children: [] }],
    ['an initialState that is not a function', 'initialState', { initialState: { n: 1 } }],
    ['a vsn that is not semantic', 'vsn', { vsn: '1.0' }],
    ['a vsn with a v prefix', 'vsn', { vsn: 'v1.0.0' }],
    ['a vsn that is not a string', 'vsn', { vsn: 1 }],
    ['a description that is not a string', 'description', { description: ['x'] }],
    ['a category that is not a string', 'category', { category: 1 }],
    ['instructions that are not a string', 'instructions', { instructions: {} }],
    ['tags that are not strings', 'tags', { tags: ['ok', 2] }],
    ['tools that are neither a list nor a function', 'tools', { tools: 'noop' }],
    ['a tool that is not a function tool', 'tools[0]', { tools: [{ name: 'noop' }] }],
    ['a tool with an invalid name', 'tools[0]', { tools: [{ type: 'function', function: { name: 'a b', description: 'x', parameters: {} } }] }],
    ['metadata that is not a plain object', 'metadata', { metadata: ['a'] }],
  ])('%s → invalid_skill naming the skill and the field', (_label, field, patch) => {
    const definition = { name: 'probe', actions: [noop], ...patch };
    const error = thrownBy(() => defineSkill(definition as never), DefinitionError, 'invalid_skill');
    expect(error.details).toEqual({ field });
    expect(error.message).toContain(`skill '${String(definition.name)}': ${field} `);
    expect(error.skill).toBe(typeof definition.name === 'string' ? definition.name : undefined);
  });

  it.each([[null], [undefined], ['calculator'], [42]])('refuses a definition that is not an object (%j)', (definition) => {
    expect(thrownBy(() => defineSkill(definition as never), DefinitionError, 'invalid_skill').message).toBe('defineSkill needs a definition object');
  });

  it('accepts an action that declares this skill’s own state schema', () => {
    const own = defineAction({ name: 'own', description: 'Uses its skill state', input: z.object({}), state: stateA, run: () => null });
    expect(defineSkill({ name: 'ok', schema: stateA, actions: [own] }).actions).toEqual([own]);
  });
});

describe('Decision constructors', () => {
  it('continue, rewrite, handle and fail build the documented decisions', () => {
    const signal = createSignal('a.b');
    expect(Decision.continue()).toEqual({ decision: 'continue' });
    expect(Decision.rewrite(signal)).toEqual({ decision: 'rewrite', signal });
    expect(Decision.handle()).toEqual({ decision: 'handle' });
    expect(Decision.handle({ state: { n: 1 }, effects: [], output: 'done' })).toEqual({ decision: 'handle', state: { n: 1 }, effects: [], output: 'done' });
    expect(Decision.fail('no such op')).toEqual({ decision: 'fail', error: { code: 'signal_failed', message: 'no such op' } });
    expect(Decision.fail('no such op', { op: 'modulo' })).toEqual({
      decision: 'fail',
      error: { code: 'signal_failed', message: 'no such op', details: { op: 'modulo' } },
    });
  });
});

describe('resolveSkillConfig', () => {
  const configured = defineSkill({ name: 'configured', configSchema: z.object({ max_value: z.number().int().positive().default(1_000_000) }) });

  it('applies the config schema defaults', () => {
    expect(resolveSkillConfig(configured, undefined)).toEqual({ ok: true, value: { max_value: 1_000_000 } });
    expect(resolveSkillConfig(configured, { max_value: 5 })).toEqual({ ok: true, value: { max_value: 5 } });
  });

  it('refuses an invalid config with invalid_config naming the skill, with the issues', () => {
    const resolved = resolveSkillConfig(configured, { max_value: -1 });
    expect(resolved.ok).toBe(false);
    if (resolved.ok) return;
    expect(resolved.error.code).toBe('invalid_config');
    expect(resolved.error.skill).toBe('configured');
    expect(resolved.error.message).toContain("invalid config for skill 'configured': max_value:");
    expect(resolved.error.issues?.map((issue) => issue.path)).toEqual([['max_value']]);
  });

  it.each([[5], ['x'], [[1]], [null]])('refuses a config that is not a plain object (%j)', (config) => {
    expect(resolveSkillConfig(configured, config)).toEqual({
      ok: false,
      error: { code: 'invalid_config', message: "config for skill 'configured' must be a plain object", skill: 'configured' },
    });
  });

  it('passes a config through when the skill declares no config schema', () => {
    expect(resolveSkillConfig(defineSkill({ name: 'free' }), { any: 1 })).toEqual({ ok: true, value: { any: 1 } });
    expect(resolveSkillConfig(defineSkill({ name: 'free' }), undefined)).toEqual({ ok: true, value: {} });
  });
});

describe('initialSlice', () => {
  const schema = z.object({ count: z.number().int().default(0), step: z.number().int().default(1), tags: z.array(z.string()).default([]) });

  it('is the schema defaults when there is no initialState', () => {
    expect(initialSlice(defineSkill({ name: 's', schema }), {})).toEqual({ ok: true, value: { count: 0, step: 1, tags: [] } });
  });

  it('puts initialState(config) over the defaults, and the caller’s overrides over that', () => {
    const skill = defineSkill({ name: 's', schema, initialState: (config: Record<string, unknown>) => ({ count: config.start as number }) } as never);
    expect(initialSlice(skill, { start: 7 })).toEqual({ ok: true, value: { count: 7, step: 1, tags: [] } });
    expect(initialSlice(skill, { start: 7 }, { step: 3 })).toEqual({ ok: true, value: { count: 7, step: 3, tags: [] } });
  });

  it('treats an initialState returning null or undefined as empty', () => {
    expect(initialSlice(defineSkill({ name: 's', schema, initialState: () => null as never }), {})).toEqual({ ok: true, value: { count: 0, step: 1, tags: [] } });
    expect(initialSlice(defineSkill({ name: 's', schema, initialState: () => undefined as never }), {})).toEqual({ ok: true, value: { count: 0, step: 1, tags: [] } });
  });

  it('reports an initialState that throws as invalid_state naming the skill, without throwing', () => {
    const skill = defineSkill({ name: 'fragile', schema, initialState: () => { throw new Error('no seed'); } });
    expect(initialSlice(skill, {})).toEqual({
      ok: false,
      error: { code: 'invalid_state', message: "initialState of skill 'fragile' threw: no seed", skill: 'fragile' },
    });
  });

  it.each([[[1, 2]], [5], ['state']])('reports an initialState returning %j as invalid_state', (seed) => {
    const skill = defineSkill({ name: 'odd', schema, initialState: () => seed as never });
    expect(initialSlice(skill, {})).toEqual({
      ok: false,
      error: { code: 'invalid_state', message: "initialState of skill 'odd' must return a plain object", skill: 'odd' },
    });
  });

  it('reports a slice that fails the schema as invalid_state with the issues', () => {
    const skill = defineSkill({ name: 'bad', schema, initialState: () => ({ count: 1.5 }) });
    const slice = initialSlice(skill, {});
    expect(slice.ok).toBe(false);
    if (slice.ok) return;
    expect(slice.error.code).toBe('invalid_state');
    expect(slice.error.skill).toBe('bad');
    expect(slice.error.issues?.map((issue) => issue.path)).toEqual([['count']]);
  });
});

describe('unpackAttachment', () => {
  it('splits a skill or a [skill, config] pair', () => {
    const skill = defineSkill({ name: 's' });
    expect(unpackAttachment(skill)).toEqual([skill, undefined]);
    expect(unpackAttachment([skill, { a: 1 }])).toEqual([skill, { a: 1 }]);
  });
});
