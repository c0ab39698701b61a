/**
 * Plain-data helpers: recognising plain objects and merging them without ever writing to
 * `__proto__`. Agent state, skill state and effects are plain data; these keep them so.
 *
 * Pure: no I/O, no XState.
 */

export type PlainObject = Record<string, unknown>;

/** True for `{}` literals and `Object.create(null)` objects; false for arrays, class instances, null. */
export function isPlainObject(value: unknown): value is PlainObject {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** True when `key` may be used as an object key holding data (guards against prototype pollution). */
export function isSafeKey(key: string): boolean {
  return !FORBIDDEN_KEYS.has(key);
}

/**
 * Merges `patch` into `base`, recursing into plain objects and replacing everything else
 * (arrays included). Returns a new object; neither argument is modified.
 */
export function deepMerge(base: PlainObject, patch: PlainObject): PlainObject {
  const merged: PlainObject = { ...base };
  for (const key of Object.keys(patch)) {
    if (!isSafeKey(key)) continue;
    const incoming = patch[key];
    const existing = merged[key];
    // A plain object is merged even where there is nothing to merge into, so that unsafe keys
    // nested in it are dropped too.
    merged[key] = isPlainObject(incoming) ? deepMerge(isPlainObject(existing) ? existing : {}, incoming) : incoming;
  }
  return merged;
}

/** True when two pieces of plain data (objects, arrays, primitives) are equal; anything else by identity. */
export function sameData(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => sameData(item, b[i]));
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && sameData(a[key], b[key]));
}

/** What kind of value this is, for an error message: 'null', 'an array', 'an object', 'number'... */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return typeof value;
}

/** A value given where another was expected, for an error message: a number as written, a string quoted, anything else by its kind. */
export function describeGiven(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return `a string, '${value.length > 32 ? `${value.slice(0, 32)}…` : value}'`;
  return describeValue(value);
}

/**
 * True for what a `define*` function made: an object whose `kind` is `kind`, with a string
 * `name` and a function under `method` (checked by shape, so copies from another instance of
 * the package are recognised too).
 */
export function isDefinedAs(value: unknown, kind: string, method: string): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return candidate.kind === kind && typeof candidate.name === 'string' && typeof candidate[method] === 'function';
}

/**
 * The arrays and objects `deepFreeze` is inside of, outermost first: one met again inside itself
 * is a cycle, not new work. (A list, not a set: a set would give every object it sees an identity
 * hash, which costs V8 more than the freezing.)
 */
const inside: object[] = [];

/**
 * Freezes `value` and every plain object and array inside it, in place, and returns it. Stops at
 * what is frozen with everything directly inside it frozen too: committed state shares unchanged
 * parts with the state before it, frozen when they were committed, so each commit pays only for
 * what it created. An object frozen by its owner with something unfrozen inside (`Object.freeze`
 * is shallow) is gone through like any other. Class instances (a `Date`, a `Map`) are left as
 * they are: state is plain data.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  const frozen = Object.isFrozen(value);
  if (frozen && holdsOnlyFrozen(value)) return value;
  const array = Array.isArray(value);
  if (!array && !isPlainObject(value)) return value;
  // Only an array (frozen after its items) or an object frozen already can be one we are inside.
  if ((array || frozen) && inside.includes(value)) return value;
  // Items first, then an array: V8 reads the items of a frozen array on a slow path.
  if (!array) Object.freeze(value);
  inside.push(value);
  try {
    if (array) {
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        if (typeof item === 'object' && item !== null) deepFreeze(item);
      }
    } else {
      for (const key in value) {
        const item = (value as PlainObject)[key];
        if (typeof item === 'object' && item !== null) deepFreeze(item);
      }
    }
  } finally {
    inside.pop();
  }
  if (array) Object.freeze(value);
  return value;
}

/** True when every plain object and array directly inside the frozen `value` is frozen too. */
function holdsOnlyFrozen(value: object): boolean {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (isOpenData(value[i])) return false;
    return true;
  }
  for (const key in value) if (isOpenData((value as PlainObject)[key])) return false;
  return true;
}

/** A plain object or array that is not frozen. */
function isOpenData(item: unknown): boolean {
  return typeof item === 'object' && item !== null && !Object.isFrozen(item) && (Array.isArray(item) || isPlainObject(item));
}

/** What `copyJson` returns for a value JSON would turn into something else (or refuse). */
const NOT_PLAIN: unique symbol = Symbol('not plain');

/**
 * `JSON.parse(JSON.stringify(value))`: the value as JSON carries it (frozen all the way down with
 * `freeze`, for values bound for committed state). Plain data (plain objects,
 * arrays, strings, booleans, `null`, finite numbers; keys holding `undefined` or a function are
 * left out, as JSON leaves them) is copied directly, without the text in between; anything else
 * (a `Date`, a class instance, `NaN`, a `toJSON` method, a cycle) goes through JSON itself.
 */
export function jsonCopy<T>(value: T, options: { freeze?: boolean } = {}): T {
  const freeze = options.freeze === true;
  const copied = copyJson(value, 0, freeze);
  if (copied !== NOT_PLAIN) return copied as T;
  const parsed = JSON.parse(JSON.stringify(value)) as T;
  return freeze ? deepFreeze(parsed) : parsed;
}

function copyJson(value: unknown, depth: number, freeze: boolean): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value + 0 : NOT_PLAIN; // + 0: JSON writes -0 as 0
    case 'object':
      break;
    default:
      return NOT_PLAIN;
  }
  if (value === null) return null;
  if (depth > 64 || 'toJSON' in value) return NOT_PLAIN;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = copyJson(value[i], depth + 1, freeze);
      if (item === NOT_PLAIN) return NOT_PLAIN;
      out[i] = item;
    }
    return freeze ? Object.freeze(out) : out;
  }
  if (!isPlainObject(value)) return NOT_PLAIN;
  const out: PlainObject = {};
  for (const key of Object.keys(value)) {
    const item = value[key];
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    if (key === '__proto__') return NOT_PLAIN;
    const copied = copyJson(item, depth + 1, freeze);
    if (copied === NOT_PLAIN) return NOT_PLAIN;
    out[key] = copied;
  }
  return freeze ? Object.freeze(out) : out;
}

/**
 * `structuredClone(value)`, copying plain data (plain objects, arrays without holes or extra
 * keys, primitives, each object met once) directly, which is several times cheaper for the small
 * objects tool calls carry; anything else (a `Date`, a `Map`, a class instance, an object met
 * twice, a function) goes to `structuredClone` itself, so the result, and the error thrown, are
 * the same. (A `Proxy` is read through, where `structuredClone` refuses it.)
 */
export function cloneData<T>(value: T): T {
  const copied = copyData(value, 0, new Set());
  return (copied === NOT_PLAIN ? structuredClone(value) : copied) as T;
}

function copyData(value: unknown, depth: number, seen: Set<object>): unknown {
  if (typeof value !== 'object') return typeof value === 'function' || typeof value === 'symbol' ? NOT_PLAIN : value;
  if (value === null) return null;
  if (depth > 64 || seen.has(value)) return NOT_PLAIN;
  seen.add(value);
  if (Array.isArray(value)) {
    if (Object.keys(value).length !== value.length) return NOT_PLAIN;
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) return NOT_PLAIN;
      const item = copyData(value[i], depth + 1, seen);
      if (item === NOT_PLAIN) return NOT_PLAIN;
      out[i] = item;
    }
    return out;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return NOT_PLAIN;
  const out: PlainObject = {};
  for (const key of Object.keys(value)) {
    if (key === '__proto__') return NOT_PLAIN;
    const item = copyData((value as PlainObject)[key], depth + 1, seen);
    if (item === NOT_PLAIN) return NOT_PLAIN;
    out[key] = item;
  }
  return out;
}
