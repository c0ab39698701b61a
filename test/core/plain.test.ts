/**
 * Plain-data helpers: recognising plain objects and deep-merging without ever writing to
 * `__proto__`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cloneData, deepFreeze, deepMerge, isPlainObject, jsonCopy } from '../../src/core/plain.js';

describe('isPlainObject', () => {
  it.each<[unknown, boolean]>([
    [{}, true],
    [Object.create(null), true],
    [{ a: 1 }, true],
    [[], false],
    [null, false],
    [new Date(), false],
    [new Map(), false],
    ['x', false],
    [new (class K {})(), false],
  ])('isPlainObject(%j) is %s', (value, expected) => {
    expect(isPlainObject(value)).toBe(expected);
  });
});

describe('deepMerge', () => {
  it('merges nested plain objects, replaces everything else (arrays included), and modifies neither argument', () => {
    const base = { a: { x: 1, y: [1, 2] }, b: 1 };
    const patch = { a: { y: [3] }, c: { z: true } };
    expect(deepMerge(base, patch)).toEqual({ a: { x: 1, y: [3] }, b: 1, c: { z: true } });
    expect(base).toEqual({ a: { x: 1, y: [1, 2] }, b: 1 });
    expect(patch).toEqual({ a: { y: [3] }, c: { z: true } });
  });

  it('never writes __proto__, constructor or prototype', () => {
    const merged = deepMerge({}, JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}, "nested": {"__proto__": {"polluted": true}}}'));
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(merged).toEqual({ nested: {} });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('jsonCopy', () => {
  /** What JSON makes of a value: its copy, or the error it throws. */
  function viaJson(value: unknown): { value: unknown } | { error: string } {
    try {
      return { value: JSON.parse(JSON.stringify(value)) as unknown };
    } catch (error) {
      return { error: (error as Error).name };
    }
  }

  it('gives what a JSON round trip gives, for any value', () => {
    const odd = fc.constantFrom<unknown>(NaN, Infinity, -0, new Date(0), () => 1, Symbol('s'), undefined, { toJSON: () => 'custom' }, new Map([[1, 2]]), Object.create(null));
    const values = fc.oneof(fc.jsonValue(), fc.anything({ withNullPrototype: true, withSparseArray: true }), odd, fc.array(odd), fc.dictionary(fc.string(), odd));
    fc.assert(
      fc.property(values, (value) => {
        const expected = viaJson(value);
        if ('error' in expected) {
          expect(() => jsonCopy(value)).toThrow();
          return;
        }
        const copy = jsonCopy(value);
        expect(copy).toStrictEqual(expected.value);
        expect(JSON.stringify(copy)).toBe(JSON.stringify(expected.value));
        // Frozen all the way down when asked, for state.
        const frozen = jsonCopy(value, { freeze: true });
        expect(frozen).toStrictEqual(expected.value);
        const unfrozen = (item: unknown): boolean => typeof item === 'object' && item !== null && (!Object.isFrozen(item) || Object.values(item).some(unfrozen));
        expect(unfrozen(frozen)).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });

  it('shares nothing with the value copied, and throws on a cycle as JSON does', () => {
    const inner = { list: [1, { deep: true }] };
    const copy = jsonCopy({ inner });
    expect(copy.inner).not.toBe(inner);
    expect(copy.inner.list[1]).not.toBe(inner.list[1]);
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = { back: cyclic };
    expect(() => jsonCopy(cyclic)).toThrow(TypeError);
  });
});

describe('cloneData', () => {
  it('gives what structuredClone gives, for any value, and throws where it throws', () => {
    const odd = fc.constantFrom<unknown>(NaN, -0, 10n, new Date(0), () => 1, Symbol('s'), undefined, new Map([[1, 2]]), Object.create(null), [, 1], new Uint8Array([1]));
    const values = fc.oneof(fc.jsonValue(), fc.anything({ withNullPrototype: true, withSparseArray: true, withBigInt: true, withDate: true, withMap: true }), odd, fc.array(odd), fc.dictionary(fc.string(), odd));
    fc.assert(
      fc.property(values, (value) => {
        let expected: unknown;
        try {
          expected = structuredClone(value);
        } catch (error) {
          expect(() => cloneData(value)).toThrow((error as Error).constructor as new () => Error);
          return;
        }
        expect(cloneData(value)).toStrictEqual(expected);
      }),
      { numRuns: 1000 },
    );
    const cyclic: Record<string, unknown> = { a: [1] };
    cyclic.self = cyclic;
    const copy = cloneData(cyclic);
    expect(copy.self).toBe(copy);
    expect(copy.a).not.toBe(cyclic.a);
  });
});

describe('deepFreeze', () => {
  it('freezes every plain object and array inside, through cycles, and leaves class instances alone', () => {
    const at = new Date(0);
    const root: Record<string, unknown> = { list: [{ n: 1 }, [2, { m: 3 }]], at };
    root.self = root;
    (root.list as unknown[]).push(root.list);
    deepFreeze(root);
    const open = (item: unknown, seen = new Set<unknown>()): boolean => {
      if (typeof item !== 'object' || item === null || item instanceof Date || seen.has(item)) return false;
      seen.add(item);
      return !Object.isFrozen(item) || Object.values(item).some((child) => open(child, seen));
    };
    expect(open(root)).toBe(false);
    expect(Object.isFrozen(at)).toBe(false);
  });

  it('goes through an object its owner froze shallowly, freezing what is inside', () => {
    const inner = { balance: 100, tags: ['a'] };
    const outer = Object.freeze({ account: inner, list: Object.freeze([inner]) });
    deepFreeze(outer);
    expect(Object.isFrozen(inner)).toBe(true);
    expect(Object.isFrozen(inner.tags)).toBe(true);
  });
});
