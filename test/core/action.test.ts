/**
 * Actions: `defineAction` validates eagerly and names the action and the field; `result()` and
 * `fail()` are the only ways an action asks for changes or reports an expected failure.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAction, DefinitionError, Effects, fail, result } from '../../src/index.js';
import { ACTION_NAME, isAction, isActionFailure, isActionResult } from '../../src/core/action.js';
import { thrownBy } from './support.js';

/** The string-keyed fields of a value (the brand symbols of results and failures left out). */
const fields = (value: object) => Object.fromEntries(Object.entries(value));

const valid = {
  name: 'add',
  description: 'Add two numbers',
  input: z.object({ a: z.number(), b: z.number() }),
  run: ({ a, b }: { a: number; b: number }) => ({ result: a + b }),
};

describe('defineAction', () => {
  it('keeps every field and marks the spec as an action', () => {
    const output = z.object({ result: z.number() });
    const state = z.object({ n: z.number().default(0) });
    const action = defineAction({ ...valid, output, state });
    expect(action.kind).toBe('action');
    expect(action.name).toBe('add');
    expect(action.description).toBe('Add two numbers');
    expect(action.input).toBe(valid.input);
    expect(action.output).toBe(output);
    expect(action.state).toBe(state);
    expect(action.run({ a: 2, b: 3 }, {} as never)).toEqual({ result: 5 });
    expect(Object.isFrozen(action)).toBe(true);
    expect(isAction(action)).toBe(true);
  });

  it('leaves output and state undefined when not given', () => {
    const action = defineAction(valid);
    expect(action.output).toBeUndefined();
    expect(action.state).toBeUndefined();
  });

  it.each(['a', 'A_b-9', 'x'.repeat(64)])('accepts the tool name %j', (name) => {
    expect(defineAction({ ...valid, name }).name).toBe(name);
    expect(ACTION_NAME.test(name)).toBe(true);
  });

  it.each<[string, string, Record<string, unknown>]>([
    ['an empty name', 'name', { name: '' }],
    ['a name with a space', 'name', { name: 'add two' }],
    ['a name with a dot', 'name', { name: 'math.add' }],
    ['a 65-character name', 'name', { name: 'x'.repeat(65) }],
    ['a name that is not a string', 'name', { name: 42 }],
    ['an empty description', 'description', { description: '' }],
    ['a blank description', 'description', { description: '   ' }],
    ['a missing description', 'description', { description: undefined }],
    ['a description that is not a string', 'description', { description: 7 }],
    ['an input that is not an object schema', 'input', { input: z.string() }],
    ['an input that is an array schema', 'input', { input: z.array(z.number()) }],
    ['an input that is a plain object', 'input', { input: { a: 1 } }],
    ['a missing input', 'input', { input: undefined }],
    ['an output that is not a zod schema', 'output', { output: { type: 'number' } }],
    ['a state that is not an object schema', 'state', { state: z.number() }],
    ['a run that is not a function', 'run', { run: 'a + b' }],
    ['a missing run', 'run', { run: undefined }],
  ])('refuses %s with invalid_action naming the action and the field', (_label, field, patch) => {
    const definition = { ...valid, ...patch };
    const error = thrownBy(() => defineAction(definition as never), DefinitionError, 'invalid_action');
    expect(error.details).toEqual({ field });
    expect(error.message).toContain(`action '${String(definition.name)}'`);
    expect(error.message).toContain(`${field} `);
    expect(error.action).toBe(typeof definition.name === 'string' ? definition.name : undefined);
  });

  it.each([[null], [undefined], [42], ['add']])('refuses a definition that is not an object (%j)', (definition) => {
    expect(thrownBy(() => defineAction(definition as never), DefinitionError, 'invalid_action').message).toBe('defineAction needs a definition object');
  });
});

describe('result()', () => {
  it('wraps an output alone, with no change keys', () => {
    const value = result({ ok: 1 });
    expect(isActionResult(value)).toBe(true);
    expect(value.output).toEqual({ ok: 1 });
    expect(Object.keys(value)).toEqual(['output']);
  });

  it('carries the state update, effects, skills to mount and to unmount', () => {
    const effect = Effects.reply('hi');
    const value = result(3, { state: { n: 3 }, effects: [effect], mount: [], unmount: ['counter'] });
    expect(fields(value)).toEqual({ output: 3, state: { n: 3 }, effects: [effect], mount: [], unmount: ['counter'] });
  });

  it('keeps undefined and null outputs as outputs', () => {
    expect(result(undefined).output).toBeUndefined();
    expect(result(null).output).toBeNull();
  });
});

describe('fail()', () => {
  it('records the reason, a message derived from it and no details by default', () => {
    const failure = fail('division_by_zero');
    expect(isActionFailure(failure)).toBe(true);
    expect(fields(failure)).toEqual({ reason: 'division_by_zero', message: 'division by zero' });
  });

  it('keeps an explicit message and details', () => {
    expect(fields(fail('too_big', 'result 7 exceeds 5', { value: 7 }))).toEqual({ reason: 'too_big', message: 'result 7 exceeds 5', details: { value: 7 } });
  });
});

describe('isActionResult and isActionFailure', () => {
  it.each([[null], [undefined], [0], ['result'], [[]], [{ output: 1 }], [{ reason: 'x', message: 'y' }]])('reject look-alikes (%j)', (value) => {
    expect(isActionResult(value)).toBe(false);
    expect(isActionFailure(value)).toBe(false);
  });

  it('tell a result from a failure', () => {
    expect(isActionResult(fail('x'))).toBe(false);
    expect(isActionFailure(result(1))).toBe(false);
  });
});

describe('isAction', () => {
  it.each([[null], [{}], [{ kind: 'action', name: 'x' }], [{ kind: 'skill', name: 'x', run: () => 1 }]])('rejects %j', (value) => {
    expect(isAction(value)).toBe(false);
  });
});
