/**
 * Plain-data helpers: recognising plain objects and deep-merging without ever writing to
 * `__proto__`.
 */
import { describe, expect, it } from 'vitest';
import { deepMerge, isPlainObject } from '../../src/core/plain.js';

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
