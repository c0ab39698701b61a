/**
 * What skillstate needs of zod: recognising object schemas, parsing without throwing, and
 * validating a state update against a slice schema without re-parsing the whole slice.
 *
 * Pure: no I/O, no XState.
 */
import { z } from 'zod';
import { toIssues, type Issue } from './errors.js';
import { deepFreeze, isPlainObject } from './plain.js';

/** A zod object schema, whatever its unknown-key policy (strip, strict or loose). */
export type ObjectSchema = z.ZodObject<z.core.$ZodShape, z.core.$ZodObjectConfig>;

/** The empty object schema used where a skill or agent declares none. */
export const EMPTY_SCHEMA: ObjectSchema = z.object({});

export type Parsed<T> = { ok: true; value: T } | { ok: false; issues: Issue[] };

interface ZodInternals {
  _zod?: { def?: { type?: string; checks?: unknown[]; catchall?: unknown } };
  safeParse?: unknown;
  shape?: Record<string, z.ZodType>;
}

/**
 * True when `value` is a zod object schema. Duck-typed on zod 4's internals so that a schema
 * built with another copy of zod (a second install in node_modules) is still recognised.
 */
export function isObjectSchema(value: unknown): value is ObjectSchema {
  const internals = value as ZodInternals | null;
  return (
    typeof internals === 'object' &&
    internals !== null &&
    typeof internals.safeParse === 'function' &&
    internals._zod?.def?.type === 'object'
  );
}

/**
 * Why `value` is not the schema expected: when it is a zod 3 schema (which skillstate cannot
 * read), the words say that zod 4 is needed and how to get it; otherwise `expected`.
 */
export function schemaProblem(value: unknown, expected: string): string {
  const old = value as { _def?: { typeName?: unknown }; _zod?: unknown; safeParse?: unknown } | null;
  if (typeof old === 'object' && old !== null && old._zod === undefined && typeof old.safeParse === 'function' && typeof old._def?.typeName === 'string') {
    return `is a zod 3 schema (${old._def.typeName}); skillstate needs zod 4: install zod ^4 and import { z } from 'zod' (with zod 3.25 installed, import { z } from 'zod/v4')`;
  }
  return expected;
}

/**
 * Why an action's `state` schema cannot stand for its skill's slice schema, or undefined when it
 * can: it is the skill's schema itself, or an object schema whose every field the skill's
 * schema has with the same type (the same field schema, or one with the same JSON Schema). Then
 * every slice the skill holds satisfies it.
 */
export function stateSchemaMismatch(declared: ObjectSchema, skill: ObjectSchema): string | undefined {
  if (declared === skill) return undefined;
  const own = skill.shape as Record<string, z.ZodType>;
  for (const [key, field] of Object.entries(declared.shape as Record<string, z.ZodType>)) {
    if (!Object.hasOwn(own, key)) return `field '${key}' is not in the skill's schema`;
    if (!sameFieldType(field, own[key]!)) return `field '${key}' has a different type than in the skill's schema`;
  }
  return undefined;
}

function sameFieldType(a: z.ZodType, b: z.ZodType): boolean {
  if (a === b) return true;
  try {
    return JSON.stringify(z.toJSONSchema(a, { io: 'output' })) === JSON.stringify(z.toJSONSchema(b, { io: 'output' }));
  } catch {
    return false; // a type JSON Schema cannot express (a transform, a custom check): only the same schema will do
  }
}

/** True when `value` is any zod schema. */
export function isZodSchema(value: unknown): value is z.ZodType {
  const internals = value as ZodInternals | null;
  return typeof internals === 'object' && internals !== null && typeof internals.safeParse === 'function' && !!internals._zod;
}

/** Parses synchronously; async refinements make it return a promise instead. Never throws. */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown): Parsed<T> | Promise<Parsed<T>> {
  const native = parsedNatively(schema, value);
  if (native !== undefined) return native;
  let outcome: ReturnType<typeof schema.safeParse>;
  try {
    outcome = schema.safeParse(value);
  } catch (thrown) {
    if (thrown instanceof z.core.$ZodAsyncError) return schema.safeParseAsync(value).then(toParsed, parseFailure);
    return parseFailure(thrown);
  }
  return toParsed(outcome);
}

/** Parses synchronously, reporting async refinements as an issue. Never throws. */
export function parseSync<T>(schema: z.ZodType<T>, value: unknown): Parsed<T> {
  const native = parsedNatively(schema, value);
  if (native !== undefined) return native;
  try {
    return toParsed(schema.safeParse(value));
  } catch (thrown) {
    return parseFailure(thrown);
  }
}

/** The value as zod would parse it, when the native parse is sure of it (see `nativeParse`); else undefined. */
function parsedNatively<T>(schema: z.ZodType<T>, value: unknown): Parsed<T> | undefined {
  const native = nativeParse(schema);
  if (native === null) return undefined;
  try {
    const parsed = native(value);
    return parsed === ASK_ZOD ? undefined : { ok: true, value: parsed as T };
  } catch {
    return undefined; // a custom check that throws: zod reports it
  }
}

function toParsed<T>(outcome: z.ZodSafeParseResult<T>): Parsed<T> {
  return outcome.success ? { ok: true, value: outcome.data } : { ok: false, issues: toIssues(outcome.error.issues) };
}

function parseFailure(thrown: unknown): { ok: false; issues: Issue[] } {
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  return { ok: false, issues: [{ path: [], message: `schema threw while parsing: ${message}` }] };
}

/**
 * The first key of `value` that `schema` does not declare and would silently drop (a strip-mode
 * object), or undefined. Strict objects report unknown keys themselves; loose ones keep them.
 */
export function strayKey(schema: ObjectSchema, value: Record<string, unknown>): string | undefined {
  if ((schema as unknown as ZodInternals)._zod!.def!.catchall !== undefined) return undefined;
  const shape = schema.shape as Record<string, unknown>;
  return Object.keys(value).find((key) => !Object.hasOwn(shape, key));
}

const fieldByField = new WeakMap<ObjectSchema, boolean>();

/** True when validating the changed fields alone is as good as validating the whole object. */
function patchableFieldByField(schema: ObjectSchema): boolean {
  let answer = fieldByField.get(schema);
  if (answer === undefined) {
    const def = (schema as unknown as ZodInternals)._zod!.def!;
    answer = !(def.checks && def.checks.length > 0) && def.catchall === undefined;
    fieldByField.set(schema, answer);
  }
  return answer;
}

/**
 * Applies a partial update to an object that already satisfies `schema`, validating only the
 * keys the update touches when that is equivalent to validating the whole object (no
 * object-level refinements, no catch-all). Unknown keys are refused: a state update that names
 * a field the schema does not have is a mistake, and dropping it silently would hide it.
 *
 * `current` is committed state, frozen all the way down; the object returned is frozen all the
 * way down too, freezing only what is new (the updated values), not what it shares with `current`.
 */
export function applyPatch(
  schema: ObjectSchema,
  current: Record<string, unknown>,
  patch: unknown,
): Parsed<Record<string, unknown>> {
  if (!isPlainObject(patch)) {
    return { ok: false, issues: [{ path: [], message: 'a state update must be a plain object' }] };
  }
  const shape = schema.shape as Record<string, z.ZodType>;
  if (!patchableFieldByField(schema)) {
    const stray = strayKey(schema, patch);
    if (stray !== undefined) return { ok: false, issues: [unknownField(stray)] };
    const parsed = parseSync(schema, { ...current, ...patch }) as Parsed<Record<string, unknown>>;
    if (parsed.ok) deepFreeze(parsed.value);
    return parsed;
  }
  const next: Record<string, unknown> = Object.assign({}, current);
  let issues: Issue[] | undefined;
  try {
    issues = validateFields(shape, patch, next);
  } catch (thrown) {
    return parseFailure(thrown); // an async refinement, or a schema that throws
  }
  return issues ? { ok: false, issues } : { ok: true, value: Object.freeze(next) };
}

/** Validates each patched field, writing the parsed values into `next`; returns the issues, if any. */
function validateFields(shape: Record<string, z.ZodType>, patch: Record<string, unknown>, next: Record<string, unknown>): Issue[] | undefined {
  let issues: Issue[] | undefined;
  for (const key in patch) {
    const field = Object.hasOwn(shape, key) ? shape[key] : undefined;
    if (field === undefined) {
      (issues ??= []).push(unknownField(key));
      continue;
    }
    const value = patch[key];
    const native = parsedNatively(field, value);
    if (native !== undefined && native.ok) {
      next[key] = deepFreeze(native.value);
      continue;
    }
    const parsed = field.safeParse(value);
    if (parsed.success) next[key] = deepFreeze(parsed.data);
    else for (const issue of toIssues(parsed.error.issues)) (issues ??= []).push({ ...issue, path: [key, ...issue.path] });
  }
  return issues;
}

/** What a native parse returns when it cannot say for sure: zod decides (and words the issue). */
const ASK_ZOD: unique symbol = Symbol('ask zod');

/**
 * A native parse of a field: what zod's parse would return for a value it accepts, or `ASK_ZOD`.
 * It copies arrays and objects as zod does (so the state never shares a container with the
 * caller) and keeps what zod keeps as it is (`z.unknown()`, `z.custom()` values).
 */
type NativeParse = (value: unknown) => unknown;

interface CheckDef {
  check?: string;
  format?: string;
  when?: unknown;
}
interface FieldDef {
  type?: string;
  checks?: { _zod?: { def?: CheckDef } }[];
  innerType?: z.ZodType;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  catchall?: unknown;
  fn?: (value: unknown) => unknown;
}

const asNumber: NativeParse = (value) => (typeof value === 'number' && Number.isFinite(value) ? value : ASK_ZOD);
const asSafeInteger: NativeParse = (value) => (Number.isSafeInteger(value) ? value : ASK_ZOD);
const asString: NativeParse = (value) => (typeof value === 'string' ? value : ASK_ZOD);
const asBoolean: NativeParse = (value) => (typeof value === 'boolean' ? value : ASK_ZOD);
const asIs: NativeParse = (value) => value;
const nativeParses = new WeakMap<z.ZodType, NativeParse | null>();

/**
 * A native parse for the field shapes state updates use most, accepting a value only where the
 * schema would accept it and returning what the schema would return: `z.number()`, `.int()`,
 * `z.string()`, `z.boolean()`, `z.enum()`, `z.literal()`, `z.unknown()`, `z.custom()`, and arrays,
 * strip-mode objects, optionals, nullables and defaults of those. A value it is not sure of (a
 * default to fill in, a key to strip, anything refused) goes to zod, as does every other schema
 * (coercion, formats, bounds, refinements, transforms).
 */
function nativeParse(schema: z.ZodType): NativeParse | null {
  let parse = nativeParses.get(schema);
  if (parse === undefined) {
    nativeParses.set(schema, null); // a recursive schema reaching itself while being built gets zod
    parse = buildNativeParse(schema);
    nativeParses.set(schema, parse);
  }
  return parse;
}

/** Def keys that change nothing about which values pass: anything else (`coerce`, a string or number format...) does. */
const NEUTRAL_KEYS = new Set(['type', 'checks', 'error']);

function buildNativeParse(schema: z.ZodType): NativeParse | null {
  const internals = (schema as unknown as { _zod?: { def?: FieldDef; check?: unknown; values?: unknown } })._zod;
  const def = internals?.def;
  if (!def) return null;
  const checks = def.checks ?? [];
  switch (def.type) {
    // A default applies to `undefined` only: any other value is the inner schema's to parse.
    case 'default':
      return wrap(def.innerType, (inner) => (value) => (value === undefined ? ASK_ZOD : inner(value)));
    case 'optional':
      return wrap(def.innerType, (inner) => (value) => (value === undefined ? undefined : inner(value)));
    case 'nullable':
      return wrap(def.innerType, (inner) => (value) => (value === null ? null : inner(value)));
    case 'array':
      return checks.length > 0 ? null : wrap(def.element, arrayOf);
    case 'object':
      return checks.length > 0 || def.catchall !== undefined || !def.shape ? null : objectOf(def.shape);
    // The set of values zod itself checks against.
    case 'enum':
    case 'literal': {
      const values = internals.values;
      return checks.length > 0 || !(values instanceof Set) ? null : (value) => (values.has(value) ? value : ASK_ZOD);
    }
    case 'unknown':
    case 'any':
      return checks.length > 0 ? null : asIs;
    case 'custom': {
      const fn = def.fn;
      // Exactly true: anything else (a promise, a truthy value) is zod's to read.
      return checks.length > 0 || typeof fn !== 'function' ? null : (value) => (fn(value) === true ? value : ASK_ZOD);
    }
  }
  // A format schema (`z.int()`, `z.email()`...) is a check itself, and coercion changes the value.
  if (internals.check !== undefined || Object.keys(def).some((key) => !NEUTRAL_KEYS.has(key))) return null;
  if (def.type === 'number') {
    if (checks.length === 0) return asNumber;
    const only = checks.length === 1 ? checks[0]!._zod?.def : undefined;
    return only?.check === 'number_format' && only.format === 'safeint' && only.when === undefined ? asSafeInteger : null;
  }
  if (checks.length > 0) return null;
  if (def.type === 'string') return asString;
  if (def.type === 'boolean') return asBoolean;
  return null;
}

function wrap(inner: z.ZodType | undefined, make: (inner: NativeParse) => NativeParse): NativeParse | null {
  const parse = inner ? nativeParse(inner) : null;
  return parse ? make(parse) : null;
}

function arrayOf(element: NativeParse): NativeParse {
  return (value) => {
    if (!Array.isArray(value)) return ASK_ZOD;
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = element(value[i]);
      if (item === ASK_ZOD) return ASK_ZOD;
      out[i] = item;
    }
    return out;
  };
}

/**
 * A strip-mode object: a new object with the declared keys, in their order. A declared key the
 * value lacks is left out when its schema is optional; any other missing key (a default, a
 * required field) goes to zod, as does a key zod would strip.
 */
function objectOf(shape: Record<string, z.ZodType>): NativeParse | null {
  const keys = Object.keys(shape);
  if (keys.includes('__proto__') || Object.getOwnPropertySymbols(shape).length > 0) return null;
  const fields: { key: string; parse: NativeParse; optional: boolean }[] = [];
  for (const key of keys) {
    const parse = nativeParse(shape[key]!);
    if (parse === null) return null;
    fields.push({ key, parse, optional: (shape[key] as unknown as { _zod: { def: FieldDef } })._zod.def.type === 'optional' });
  }
  const declared = new Set(keys);
  return (value) => {
    if (!isPlainObject(value)) return ASK_ZOD;
    for (const key in value) if (!declared.has(key)) return ASK_ZOD;
    const out: Record<string, unknown> = {};
    for (const { key, parse, optional } of fields) {
      if (!(key in value)) {
        if (optional) continue;
        return ASK_ZOD;
      }
      const parsed = parse(value[key]);
      if (parsed === ASK_ZOD) return ASK_ZOD;
      out[key] = parsed;
    }
    return out;
  };
}

function unknownField(key: string): Issue {
  return { path: [key], message: `unknown field '${key}'`, code: 'unrecognized_keys' };
}
