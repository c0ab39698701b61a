/**
 * Signals are CloudEvents 1.0 envelopes whose `type` is a dot-separated list of segments made
 * of letters, digits, `_` and `-`. Anything else is refused with `invalid_signal`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSignal, SignalError } from '../../src/index.js';
import { isValidSignalType, MAX_SIGNAL_TYPE_LENGTH, signalProblem, signalTypeSegments, toSignal } from '../../src/core/signal.js';
import { thrownBy, viaJson } from './support.js';

/** The nanoid default alphabet and length. */
const NANOID = /^[A-Za-z0-9_-]{21}$/;

/** An independent statement of the type grammar: non-empty segments of [A-Za-z0-9_-], within the length limit. */
function referenceValidType(type: unknown): boolean {
  return (
    typeof type === 'string' &&
    type.length > 0 &&
    type.length <= MAX_SIGNAL_TYPE_LENGTH &&
    type.split('.').every((segment) => /^[A-Za-z0-9_-]+$/.test(segment))
  );
}

const INVALID_TYPES: [string, unknown][] = [
  ['the empty string', ''],
  ['an empty middle segment', 'a..b'],
  ['a leading dot', '.a'],
  ['a trailing dot', 'a.'],
  ['a space', 'a b'],
  ['a wildcard', 'a*'],
  ['a globstar segment', 'a.**'],
  ['a slash', 'a/b'],
  ['a non-ASCII letter', 'caf\u00e9'],
  ['a newline', 'a\nb'],
  ['a number', 42],
  ['null', null],
  ['undefined', undefined],
  ['an object', { type: 'a' }],
  ['an array', ['a']],
  ['a type one character over the limit', 'a'.repeat(MAX_SIGNAL_TYPE_LENGTH + 1)],
];

describe('createSignal', () => {
  it('produces a CloudEvents 1.0 object with a nanoid id, the default source and an ISO time', () => {
    const before = Date.now();
    const signal = createSignal('calculator.add', { a: 1, b: 2 });
    const after = Date.now();

    expect(Object.keys(signal).sort()).toEqual(['data', 'datacontenttype', 'id', 'source', 'specversion', 'time', 'type']);
    expect(signal.specversion).toBe('1.0');
    expect(signal.id).toMatch(NANOID);
    expect(signal.source).toBe('skillstate');
    expect(signal.type).toBe('calculator.add');
    expect(signal.data).toEqual({ a: 1, b: 2 });
    expect(signal.datacontenttype).toBe('application/json');
    // An ISO 8601 timestamp of "now": it parses back to itself and lies within the call.
    expect(new Date(signal.time).toISOString()).toBe(signal.time);
    expect(Date.parse(signal.time)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(signal.time)).toBeLessThanOrEqual(after);
  });

  it('leaves out data and datacontenttype when no data is given', () => {
    const signal = createSignal('user.created');
    expect(Object.keys(signal).sort()).toEqual(['id', 'source', 'specversion', 'time', 'type']);
  });

  it('keeps falsy data (0, false, null, the empty string) as data', () => {
    for (const data of [0, false, null, '']) {
      const signal = createSignal('a', data);
      expect(signal.data).toBe(data);
      expect(signal.datacontenttype).toBe('application/json');
    }
  });

  it('gives every signal a fresh id', () => {
    const ids = new Set(Array.from({ length: 2000 }, () => createSignal('a').id));
    expect(ids.size).toBe(2000);
  });

  it('uses the given source, subject, id, time and datacontenttype', () => {
    const signal = createSignal('order.shipped', '<xml/>', {
      source: 'urn:shop',
      subject: 'order-7',
      id: 'evt-1',
      time: '2024-12-01T10:00:00.000Z',
      datacontenttype: 'application/xml',
    });
    expect(signal).toEqual({
      specversion: '1.0',
      id: 'evt-1',
      source: 'urn:shop',
      type: 'order.shipped',
      time: '2024-12-01T10:00:00.000Z',
      data: '<xml/>',
      subject: 'order-7',
      datacontenttype: 'application/xml',
    });
  });

  it('turns a Date given as time into its ISO string', () => {
    expect(createSignal('a', undefined, { time: new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 6)) }).time).toBe('2025-01-02T03:04:05.006Z');
  });

  it.each(INVALID_TYPES)('refuses %s as a type with invalid_signal naming it', (_label, type) => {
    const error = thrownBy(() => createSignal(type as string), SignalError, 'invalid_signal');
    expect(error.subject).toBe(String(type));
    if (typeof type === 'string' && type.length > 0 && type.length <= 100) expect(error.message).toContain(`'${type}'`);
    if (typeof type !== 'string') expect(error.message).toContain(`must be a string, got ${typeof type}`);
  });

  it('says which segment is wrong', () => {
    expect(thrownBy(() => createSignal('user.na me.created'), SignalError, 'invalid_signal').message).toContain("invalid segment 'na me'");
    expect(thrownBy(() => createSignal('a..b'), SignalError, 'invalid_signal').message).toContain('empty segment');
    expect(thrownBy(() => createSignal('a'.repeat(3000)), SignalError, 'invalid_signal').message).toContain('3000 characters');
  });

  it('accepts a type exactly at the length limit', () => {
    const type = 'ab.'.repeat(MAX_SIGNAL_TYPE_LENGTH).slice(0, MAX_SIGNAL_TYPE_LENGTH - 1) + 'z';
    expect(type).toHaveLength(MAX_SIGNAL_TYPE_LENGTH);
    expect(createSignal(type).type).toBe(type);
  });

  it.each([
    ['an empty source', { source: '' }],
    ['a source that is not a string', { source: 7 }],
    ['an empty id', { id: '' }],
    ['an id that is not a string', { id: 7 }],
    ['an invalid Date', { time: new Date(Number.NaN) }],
    ['a time that is not a timestamp', { time: 'yesterday' }],
  ])('refuses %s with invalid_signal naming the type', (_label, options) => {
    const error = thrownBy(() => createSignal('billing.paid', undefined, options as never), SignalError, 'invalid_signal');
    expect(error.message).toContain("'billing.paid'");
    expect(error.subject).toBe('billing.paid');
  });

  it('round-trips through JSON unchanged', () => {
    const signal = createSignal('a.b', { nested: { list: [1, 'two', null] } }, { subject: 's' });
    expect(viaJson(signal)).toEqual(signal);
  });

  it('throws for a type exactly when the type grammar says it is invalid (property)', () => {
    const alphabet = fc.constantFrom('a', 'Z', '0', '_', '-', '.', '*', ' ', '\u00e9', '/');
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: alphabet, maxLength: 12 })), (type) => {
        let threw = false;
        try {
          createSignal(type);
        } catch (error) {
          threw = true;
          expect(error).toBeInstanceOf(SignalError);
        }
        expect(threw).toBe(!referenceValidType(type));
      }),
    );
  });
});

describe('isValidSignalType and signalTypeSegments', () => {
  it.each(['a', 'a.b', 'user.profile.updated', 'A-b_c.0', '0', '_', '-.-'])('%s is a valid type', (type) => {
    expect(isValidSignalType(type)).toBe(true);
    expect(signalTypeSegments(type)).toEqual(type.split('.'));
  });

  it.each(INVALID_TYPES)('%s is not a valid type', (_label, type) => {
    expect(isValidSignalType(type)).toBe(false);
    expect(signalTypeSegments(type)).toBeUndefined();
  });

  it('agrees with the type grammar on arbitrary strings (property)', () => {
    fc.assert(
      fc.property(fc.string(), (type) => {
        expect(isValidSignalType(type)).toBe(referenceValidType(type));
      }),
    );
  });
});

describe('signalProblem', () => {
  it('returns undefined for a valid signal, full or minimal', () => {
    expect(signalProblem(createSignal('a.b', 1))).toBeUndefined();
    expect(signalProblem({ type: 'a.b' })).toBeUndefined();
  });

  it.each([
    [null, 'a signal must be an object'],
    [5, 'a signal must be an object'],
    ['a.b', 'a signal must be an object'],
    [{}, 'a signal type must be a string, got undefined'],
    [{ type: 'a..b' }, "signal type 'a..b' has an empty segment"],
    [{ type: 'a', specversion: '0.3' }, "signal 'a' has specversion '0.3'; only '1.0' is supported"],
    [{ type: 'a', id: 5 }, "signal 'a' needs a non-empty string id"],
    // What createSignal refuses, a full signal made by hand may not carry either.
    [{ ...createSignal('a'), id: '' }, "signal 'a' needs a non-empty string id"],
    [{ ...createSignal('a'), source: '' }, "signal 'a' needs a non-empty source"],
    [{ ...createSignal('a'), time: 'yesterday-ish' }, 'signal \'a\' has time "yesterday-ish", which is not a timestamp (give a Date or an ISO 8601 string)'],
    [{ ...createSignal('a'), time: '' }, 'signal \'a\' has time "", which is not a timestamp (give a Date or an ISO 8601 string)'],
  ])('explains what is wrong with %j', (value, problem) => {
    expect(signalProblem(value)).toBe(problem);
  });
});

describe('toSignal', () => {
  it.each([null, undefined, 42, true])('refuses %s with a SignalError, not a TypeError', (value) => {
    const error = thrownBy(() => toSignal(value as never), SignalError, 'invalid_signal');
    expect(error.message).toBe('a signal must be an object');
  });

  it('creates a signal from a type string', () => {
    const signal = toSignal('a.b');
    expect(signal.type).toBe('a.b');
    expect(signal.specversion).toBe('1.0');
    expect(signal.id).toMatch(NANOID);
  });

  it('fills in the CloudEvents fields of { type, data }', () => {
    const signal = toSignal({ type: 'a.b', data: { x: 1 } });
    expect(signal).toMatchObject({ specversion: '1.0', source: 'skillstate', type: 'a.b', data: { x: 1 }, datacontenttype: 'application/json' });
    expect(signal.id).toMatch(NANOID);
  });

  it('keeps the fields a partial signal already has', () => {
    const signal = toSignal({ type: 'a', source: 'urn:x', id: 'id-1', time: '2024-01-01T00:00:00.000Z', subject: 's' } as never);
    expect(signal).toEqual({ specversion: '1.0', id: 'id-1', source: 'urn:x', type: 'a', time: '2024-01-01T00:00:00.000Z', subject: 's' });
  });

  it('returns a complete signal as it is', () => {
    const signal = createSignal('a.b', 1);
    expect(toSignal(signal)).toBe(signal);
  });

  it.each([[{ type: 'a..b' }], [{ type: 7 }], ['bad type'], [{ type: 'a', specversion: '2.0' }]])('refuses %j with invalid_signal', (value) => {
    thrownBy(() => toSignal(value as never), SignalError, 'invalid_signal');
  });
});
