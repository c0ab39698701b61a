/**
 * Errors are data: a stable code, the culprit, a message; thrown errors convert to the plain
 * form that travels in results and effects, and describing whatever user code threw never fails.
 */
import { describe, expect, it } from 'vitest';
import { DefinitionError, RouteError, RuntimeError, SkillstateError } from '../../src/index.js';
import { describeThrown, errorInfo, formatIssues, isErrorInfo, toErrorInfo, toIssues } from '../../src/core/errors.js';
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

describe('SkillstateError.is', () => {
  it('is true for its own code only', () => {
    const error = new RuntimeError(errorInfo('mailbox_full', 'full', { details: { capacity: 3 } }), 'a');
    expect(error.is('mailbox_full') && error.details?.capacity).toBe(3);
    expect(error.is('timeout')).toBe(false);
  });
});

describe('toErrorInfo', () => {
  it("keeps a SkillstateError's own code, culprit, details and cause", () => {
    const cause = new Error('disk gone');
    const error = new RuntimeError(errorInfo('invalid_state', 'cannot persist', { subject: 'a', details: { reason: 'unpersistable', agent: 'a', path: ['x'] } }), 'a', { cause });
    const info = toErrorInfo(error, 'signal_failed');
    expect(info).toEqual({ code: 'invalid_state', message: 'cannot persist', subject: 'a', details: { reason: 'unpersistable', agent: 'a', path: ['x'] } });
    expect(info.cause).toBe(cause);
  });

  it('gives anything else the fallback code, with what was thrown described as the message', () => {
    expect(toErrorInfo(new TypeError('x is not a function'), 'action_failed')).toEqual({ code: 'action_failed', message: 'x is not a function' });
    expect(toErrorInfo({ odd: true }, 'signal_failed')).toEqual({ code: 'signal_failed', message: '{"odd":true}' });
    // A plain ErrorInfo thrown by user code is not taken for one of ours: its code is not trusted.
    expect(toErrorInfo({ code: 'timeout', message: 'made up' }, 'action_failed')).toEqual({ code: 'action_failed', message: 'made up' });
  });

  it('lets the fallback word the message and name the culprit', () => {
    const info = toErrorInfo('lookup failed', (described) => errorInfo('unknown_skill', `finding skill 'notes' failed: ${described}`, { skill: 'notes' }));
    expect(info).toEqual({ code: 'unknown_skill', message: "finding skill 'notes' failed: lookup failed", skill: 'notes' });
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
