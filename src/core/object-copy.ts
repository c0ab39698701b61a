/**
 * Copies of committed state objects whose keys are known in advance: a slice of a schema whose
 * every field is always present, or an agent's state, whose keys are its own fields and its
 * skills' state keys. Such a copy is made by an object literal generated once for the keys,
 * which V8 builds from a template several times faster than `Object.assign` copies a frozen
 * object (committed state is frozen). Where code cannot be generated (zod's `jitless` is set, or
 * `new Function` is refused), and for an object that lacks one of the keys, the copy is made by
 * `Object.assign`, with the same result.
 *
 * Pure: no I/O, no XState.
 */
import { z } from 'zod';
import type { PlainObject } from './plain.js';

/**
 * A copy of `source` with `value` under `key` (one of the keys the copier was made for). The
 * copy is a new plain object, not frozen, its keys in the order the copier was made with.
 */
export type ReplacingCopier = (source: PlainObject, key: string, value: unknown) => PlainObject;

/** A copy of `source`, a new plain object, not frozen. */
export type Copier = (source: PlainObject) => PlainObject;

/** `Object.assign({}, source)`: a copy of any plain object. */
export function copyAny(source: PlainObject): PlainObject {
  return Object.assign({}, source);
}

/** `copyAny` with `value` under `key`. */
export function replaceAny(source: PlainObject, key: string, value: unknown): PlainObject {
  const copy = Object.assign({}, source);
  copy[key] = value;
  return copy;
}

let generating: boolean | undefined;

/** Whether code may be generated here: not under zod's `jitless`, nor where `new Function` is refused. */
function mayGenerate(): boolean {
  if (generating === undefined) {
    try {
      generating = z.config().jitless !== true && typeof new Function('return 1') === 'function';
    } catch {
      generating = false;
    }
  }
  return generating;
}

/**
 * The generated source of a check that `s` has each of `keys` as its own: `in` is the fast
 * check, and a key objects inherit (`toString`) is checked with `hasOwn`.
 */
function presence(keys: readonly string[]): string {
  return keys.map((key) => (key in Object.prototype ? `hasOwn(s, ${JSON.stringify(key)})` : `${JSON.stringify(key)} in s`)).join(' && ');
}

function generate<T>(keys: readonly string[], params: string, body: string, fallback: T): T | undefined {
  if (keys.length === 0 || keys.includes('__proto__') || !mayGenerate()) return undefined;
  const source = `return function copy(${params}) {\nif (!(${presence(keys)})) return fallback(${params});\n${body}\n};`;
  return new Function('fallback', 'hasOwn', source)(fallback, Object.hasOwn) as T;
}

/**
 * A copier of objects whose own enumerable keys are exactly `keys`, or undefined where none can
 * be generated. The caller answers for "exactly": a key the object has beyond `keys` would not
 * be copied. A key it lacks sends the copy to `Object.assign`.
 */
export function copierFor(keys: readonly string[]): Copier | undefined {
  const fields = keys.map((key) => `${JSON.stringify(key)}: s[${JSON.stringify(key)}]`);
  return generate<Copier>(keys, 's', `return { ${fields.join(', ')} };`, copyAny);
}

/** How many keys a replacing copier is generated for at most: it holds one literal per key. */
const MAX_REPLACING_KEYS = 32;

/** `copierFor` that puts a new value under one of the keys, chosen per call. */
export function replacingCopierFor(keys: readonly string[]): ReplacingCopier | undefined {
  if (keys.length > MAX_REPLACING_KEYS) return undefined;
  // One literal per key that may be replaced, each with the value in its place.
  const cases = keys.map((replaced) => {
    const fields = keys.map((key) => `${JSON.stringify(key)}: ${key === replaced ? 'v' : `s[${JSON.stringify(key)}]`}`);
    return `case ${JSON.stringify(replaced)}: return { ${fields.join(', ')} };`;
  });
  return generate<ReplacingCopier>(keys, 's, k, v', `switch (k) {\n${cases.join('\n')}\ndefault: return fallback(s, k, v);\n}`, replaceAny);
}
