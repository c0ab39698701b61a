/**
 * What skillstate needs of zod: recognising object schemas, parsing without throwing, and
 * validating a state update against a slice schema without re-parsing the whole slice.
 *
 * Pure: no I/O, no XState.
 */
import { z } from 'zod';
import { toIssues, type Issue } from './errors.js';
import { copierFor, copyAny, type Copier } from './object-copy.js';
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
 * Why `schema` cannot describe state, or undefined when it can: a field named `__proto__` is
 * one no object holds as data (zod drops it, and writing it would change the object's prototype).
 */
export function stateShapeProblem(schema: ObjectSchema): string | undefined {
  return Object.hasOwn(schema.shape, '__proto__') ? "has a field named '__proto__', which state cannot hold: rename it" : undefined;
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
  try {
    return toParsed(schema.safeParse(value));
  } catch (thrown) {
    return parseFailure(thrown);
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
  if (catchallOf(schema) !== undefined) return undefined;
  const shape = schema.shape as Record<string, unknown>;
  return Object.keys(value).find((key) => !Object.hasOwn(shape, key));
}

/** The schema of the keys an object schema does not declare: undefined (strip), `never` (strict) or any other (kept). */
export function catchallOf(schema: ObjectSchema): z.ZodType | undefined {
  return (schema as unknown as { _zod: { def: { catchall?: z.ZodType } } })._zod.def.catchall;
}

/** True when `schema` keeps the keys it does not declare, whatever they hold (`z.looseObject`). */
export function isOpenSchema(schema: ObjectSchema): boolean {
  const catchall = catchallOf(schema);
  return catchall !== undefined && typeOf(catchall) === 'unknown';
}

function typeOf(schema: z.ZodType): string | undefined {
  return (schema as unknown as ZodInternals)._zod?.def?.type;
}

/** How updates are applied to the objects of one slice schema, worked out once per schema. */
interface PatchPlan {
  /** Validating the changed fields alone is as good as validating the whole object. */
  byField: boolean;
  /** A shallow copy of an object of the schema, the copy a field-by-field update writes into. */
  copy: Copier;
}

const plans = new WeakMap<ObjectSchema, PatchPlan>();
/** The schema of the last update and its plan: updates come in runs of one skill's state. */
let lastSchema: ObjectSchema | undefined;
let lastPlan: PatchPlan | undefined;

function patchPlan(schema: ObjectSchema): PatchPlan {
  if (schema === lastSchema) return lastPlan!;
  let plan = plans.get(schema);
  if (plan === undefined) {
    const def = (schema as unknown as ZodInternals)._zod!.def!;
    const byField = !(def.checks && def.checks.length > 0) && def.catchall === undefined;
    // What zod outputs for a strip-mode schema whose fields are all present has exactly its keys,
    // and so has every slice committed under it (each is such an output, or a copy of one with
    // validated fields written in).
    const copy = byField && hasOnlyItsKeys(schema) ? copierFor(Object.keys(schema.shape)) : undefined;
    plan = { byField, copy: copy ?? copyAny };
    plans.set(schema, plan);
  }
  lastSchema = schema;
  lastPlan = plan;
  return plan;
}

/**
 * True when every object `schema` outputs has exactly the schema's keys: no catch-all keeps
 * others, and no field is optional (zod leaves an optional field out when it is missing).
 */
export function hasOnlyItsKeys(schema: ObjectSchema): boolean {
  const catchall = catchallOf(schema);
  if (catchall !== undefined && typeOf(catchall) !== 'never') return false;
  return Object.values(schema.shape as Record<string, z.ZodType>).every((field) => (field as unknown as { _zod?: { optout?: string } })._zod?.optout !== 'optional');
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
  const plan = patchPlan(schema);
  if (!plan.byField) {
    const stray = strayKey(schema, patch);
    if (stray !== undefined) return { ok: false, issues: [unknownField(stray)] };
    const parsed = parseSync(schema, { ...current, ...patch }) as Parsed<Record<string, unknown>>;
    if (parsed.ok) deepFreeze(parsed.value);
    return parsed;
  }
  const next = plan.copy(current);
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
    if (plainCheck(field)?.(value) === true) {
      next[key] = value;
      continue;
    }
    const parsed = field.safeParse(value);
    if (parsed.success) next[key] = deepFreeze(parsed.data);
    else for (const issue of toIssues(parsed.error.issues)) (issues ??= []).push({ ...issue, path: [key, ...issue.path] });
  }
  return issues;
}

/** A check of a primitive field that accepts exactly what its schema would pass through unchanged; false means "ask zod". */
type PlainCheck = (value: unknown) => boolean;

interface CheckDef {
  check?: string;
  format?: string;
  when?: unknown;
}
interface FieldDef {
  type?: string;
  checks?: { _zod?: { def?: CheckDef } }[];
  innerType?: z.ZodType;
}

const isNumber: PlainCheck = (value) => typeof value === 'number' && Number.isFinite(value);
const isSafeInteger: PlainCheck = (value) => Number.isSafeInteger(value);
const isString: PlainCheck = (value) => typeof value === 'string';
const isBoolean: PlainCheck = (value) => typeof value === 'boolean';
const plainChecks = new WeakMap<z.ZodType, PlainCheck | null>();

/**
 * A native check for the commonest state fields (`z.number()`, `.int()`, `z.string()`,
 * `z.boolean()`, each maybe with a `.default()`), which every state update validates: accepting a
 * value only where the schema would accept it as it is, so a value it turns down still goes to zod,
 * which words the issue. Anything else (coercion, refinements, bounds, other types) has none.
 */
function plainCheck(schema: z.ZodType): PlainCheck | null {
  let check = plainChecks.get(schema);
  if (check === undefined) {
    check = buildPlainCheck(schema);
    plainChecks.set(schema, check);
  }
  return check;
}

/** Def keys that change nothing about which values pass: anything else (`coerce`, a string or number format...) does. */
const NEUTRAL_KEYS = new Set(['type', 'checks', 'error']);

function buildPlainCheck(schema: z.ZodType): PlainCheck | null {
  const internals = (schema as unknown as { _zod?: { def?: FieldDef; check?: unknown } })._zod;
  const def = internals?.def;
  if (!def) return null;
  // A default applies to `undefined` only: any other value is the inner schema's to check.
  if (def.type === 'default' && def.innerType) {
    const inner = plainCheck(def.innerType);
    return inner && ((value) => value !== undefined && inner(value));
  }
  // A format schema (`z.int()`, `z.email()`...) is a check itself, and coercion changes the value.
  if (internals.check !== undefined || Object.keys(def).some((key) => !NEUTRAL_KEYS.has(key))) return null;
  const checks = def.checks ?? [];
  if (def.type === 'number') {
    if (checks.length === 0) return isNumber;
    const only = checks.length === 1 ? checks[0]!._zod?.def : undefined;
    return only?.check === 'number_format' && only.format === 'safeint' && only.when === undefined ? isSafeInteger : null;
  }
  if (checks.length > 0) return null;
  if (def.type === 'string') return isString;
  if (def.type === 'boolean') return isBoolean;
  return null;
}

function unknownField(key: string): Issue {
  return { path: [key], message: `unknown field '${key}'`, code: 'unrecognized_keys' };
}
