/**
 * Errors are data: a stable code, the culprit, a message; thrown errors convert to the plain
 * form that travels in results and effects, and describing whatever user code threw never fails.
 */
import { describe, expect, it } from 'vitest';
import { DefinitionError, RouteError, SkillstateError } from '../../src/index.js';
import { describeThrown, errorInfo, formatIssues, isErrorInfo, toIssues } from '../../src/core/errors.js';
import { viaJson } from './support.js';

describe('SkillstateError', () => {
  it('carries the code and the culprit, and converts to plain data', () => {
    const error = new DefinitionError({ code: 'invalid_skill', message: "skill 'x': name is bad", skill: 'x', details: { field: 'name' } });
    expect(error).toBeInstanceOf(SkillstateError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('DefinitionError');
    expect(error.code).toBe('invalid_skill');
    expect(error.toInfo()).toEqual({ code: 'invalid_skill', message: "skill 'x': name is bad", skill: 'x', details: { field: 'name' } });
    expect(viaJson(error)).toEqual(error.toInfo());
    expect(new RouteError({ code: 'invalid_route', message: 'm' }).toInfo()).toEqual({ code: 'invalid_route', message: 'm' });
  });
});

describe('errorInfo and isErrorInfo', () => {
  it('leave out the extras that are undefined', () => {
    expect(errorInfo('no_route', 'none', { skill: undefined, subject: 'a.b' })).toEqual({ code: 'no_route', message: 'none', subject: 'a.b' });
    expect(Object.keys(errorInfo('no_route', 'none'))).toEqual(['code', 'message']);
  });

  it.each([[{ code: 'x', message: 'y' }, true], [{ code: 'x' }, false], [null, false], ['x', false]])('isErrorInfo(%j) is %s', (value, expected) => {
    expect(isErrorInfo(value)).toBe(expected);
  });
});

describe('describeThrown', () => {
  it.each<[string, unknown, string]>([
    ['an Error', new Error('boom'), 'boom'],
    ['an Error without a message', new TypeError(), 'TypeError'],
    ['a string', 'plain words', 'plain words'],
    ['an ErrorInfo', { code: 'x', message: 'as info' }, 'as info'],
    ['null', null, 'null'],
    ['undefined', undefined, 'undefined'],
    ['a number', 42, '42'],
    ['an object', { reason: 'odd' }, '{"reason":"odd"}'],
    ['a bigint', 10n, '10'],
    ['a symbol', Symbol('s'), 'Symbol(s)'],
  ])('describes %s', (_label, thrown, expected) => {
    expect(describeThrown(thrown)).toBe(expected);
  });

  it('never throws, even for a value whose every description throws', () => {
    const hostile = { toJSON() { throw new Error('no'); }, toString() { throw new Error('no'); } };
    expect(describeThrown(hostile)).toBe('a thrown object that cannot be described');
    const trap = new Proxy({}, { getPrototypeOf() { throw new Error('trap'); }, get() { throw new Error('trap'); } });
    expect(typeof describeThrown(trap)).toBe('string');
  });
});

describe('toIssues and formatIssues', () => {
  it('convert zod-like issues and format them on one line', () => {
    const issues = toIssues([
      { path: ['a', 0, Symbol.for('k')], message: 'bad', code: 'custom' },
      { path: [], message: 'root problem' },
    ]);
    expect(issues).toEqual([{ path: ['a', 0, 'Symbol(k)'], message: 'bad', code: 'custom' }, { path: [], message: 'root problem' }]);
    expect(formatIssues(issues)).toBe('a.0.Symbol(k): bad; root problem');
  });
});
