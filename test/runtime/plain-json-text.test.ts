/**
 * A durable row's state is written by one pass that checks and writes it: for plain data its text
 * is exactly the one `JSON.stringify` writes (the row must parse back to `persist()`'s snapshot,
 * byte for byte the same as before), and anything JSON would change, call or refuse is left to
 * the copying path (undefined), which names what it cannot hold.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plainJsonText } from '../../src/runtime/persistence.js';

/** Strings of any UTF-16 code units: quotes, backslashes, control characters, lone surrogates, U+2028. */
const anyString = fc.oneof(fc.string({ unit: 'binary', maxLength: 80 }), fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)), maxLength: 200 }));

/** Plain data as states hold it, keys of any characters (`__proto__` too), numbers of any finite value (-0 included). */
const plain = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, anyString, fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.boolean(), fc.constant(null), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 5 }),
  object: fc.dictionary(fc.oneof(anyString, fc.constantFrom('__proto__', '0', '10', '-1', 'toString')), tie('value'), { maxKeys: 5 }),
})).value;

describe('plainJsonText', () => {
  it("writes plain data as JSON.stringify does, character for character", () => {
    fc.assert(
      fc.property(plain, (value) => {
        expect(plainJsonText(value)).toBe(JSON.stringify(value));
      }),
      { numRuns: 2_000 },
    );
  });

  it('writes large plain data (past the values it writes a piece at a time) as JSON.stringify does', () => {
    fc.assert(
      fc.property(fc.array(plain, { minLength: 200, maxLength: 400 }), (values) => {
        expect(plainJsonText(values)).toBe(JSON.stringify(values));
        const keyed = Object.fromEntries(values.map((value, i) => [`k${i}`, value]));
        expect(plainJsonText(keyed)).toBe(JSON.stringify(keyed));
      }),
      { numRuns: 100 },
    );
    const numbers = Array.from({ length: 10_000 }, (_, i) => (i % 7 === 0 ? -0 : i * 1.5e17));
    // An own '__proto__' key, integer-like keys (JSON writes them first, in order) and keys to escape.
    const keys = Object.fromEntries([['__proto__', 1], ...Array.from({ length: 1_000 }, (_, i) => [i % 3 === 0 ? String(1_000 - i) : `key ${i} "é"`, i])]);
    const records = Array.from({ length: 300 }, (_, i) => ({ id: i, name: `n\n${i}`, tags: ['a', 'b'], ok: i % 2 === 0, none: null }));
    for (const value of [numbers, keys, records, { records, numbers }]) expect(plainJsonText(value)).toBe(JSON.stringify(value));
  });

  it('leaves to the copy what JSON would change, call or refuse, deep in a large value', () => {
    const large = () => Array.from({ length: 1_000 }, (_, i) => ({ i, text: `t${i}` })) as unknown[];
    const at = (index: number, value: unknown) => {
      const values = large();
      values[index] = value;
      return values;
    };
    const deep = (levels: number) => {
      let value: unknown = 1;
      for (let i = 0; i < levels; i++) value = [value];
      return value;
    };
    const refused = [
      at(900, { n: Number.NaN }),
      at(999, { when: new Date(0) }),
      at(500, Object.assign([1], { toJSON: () => 'replaced' })),
      at(700, { inner: { toJSON: () => 'replaced' } }),
      at(998, [1, undefined]),
      at(10, deep(64)),
      [...large(), ...new Array<unknown>(1)],
      Object.fromEntries(large().map((value, i) => [`k${i}`, i === 800 ? new Map() : value])),
    ];
    for (const value of refused) expect(plainJsonText(value)).toBeUndefined();
    // And at depth 63 below the top, inside a large value, it is written.
    expect(plainJsonText(at(10, deep(62)))).toBe(JSON.stringify(at(10, deep(62))));
  });

  it('writes frozen values, null-prototype objects and keys holding undefined as JSON.stringify does', () => {
    const frozen = Object.freeze({ counter: Object.freeze({ count: 3, tags: Object.freeze(['a', 'b']) }) });
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { b: 1, a: [true, null] });
    const gaps = { kept: 1, gone: undefined, nested: { gone: undefined } };
    const numbers = [0, -0, 1e21, 1e-7, 5e-324, Number.MAX_VALUE, -123.456];
    for (const value of [frozen, bare, gaps, numbers, '\u2028\u2029\u007f', 'é技😀', '', [], {}]) expect(plainJsonText(value)).toBe(JSON.stringify(value));
  });

  it('writes a string longer than the quick path as JSON.stringify does', () => {
    for (const text of ['a'.repeat(64), 'a'.repeat(65), `${'a'.repeat(70)}"`, `${'b'.repeat(100)}\ud800`]) expect(plainJsonText(text)).toBe(JSON.stringify(text));
  });

  it('leaves to the copy what JSON would change, call or refuse', () => {
    class Point {
      x = 1;
    }
    const withToJSON = { toJSON: () => 'replaced' };
    const arrayWithToJSON = Object.assign([1, 2], { toJSON: () => 'replaced' });
    const inheritsToJSON = Object.create({ toJSON: () => 'replaced' }) as object;
    const refused: unknown[] = [
      Number.NaN,
      Number.POSITIVE_INFINITY,
      10n,
      undefined,
      () => 1,
      Symbol('s'),
      new Date(0),
      new Map([[1, 2]]),
      new Point(),
      { a: { b: Number.NaN } },
      { f: () => 1 },
      { s: Symbol('s') },
      [1, undefined],
      // A hole: JSON writes null there.
      new Array(2),
      withToJSON,
      arrayWithToJSON,
      { nested: withToJSON },
      inheritsToJSON,
    ];
    for (const value of refused) expect(plainJsonText(value)).toBeUndefined();
  });

  it('looks 64 levels deep and leaves deeper nesting to the copy', () => {
    const nested = (levels: number) => {
      let value: unknown = 1;
      for (let i = 0; i < levels; i++) value = [value];
      return value;
    };
    expect(plainJsonText(nested(64))).toBe(JSON.stringify(nested(64)));
    expect(plainJsonText(nested(65))).toBeUndefined();
  });

  it("writes only an object's own keys, as JSON does, when Object.prototype has an enumerable one", () => {
    const proto = Object.prototype as Record<string, unknown>;
    proto.polluted = 'yes';
    try {
      const value = { a: 1, nested: { b: [2] } };
      expect(plainJsonText(value)).toBe('{"a":1,"nested":{"b":[2]}}');
    } finally {
      delete proto.polluted;
    }
  });
});
