/**
 * Schema helpers: recognising zod object schemas (whatever copy of zod made them), parsing
 * without throwing, and applying a state update to a slice — only known fields, each validated,
 * the current value never modified.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isObjectSchema } from '../../src/core/schema.js';
import { applyPatch, isZodSchema, parseSync, parseWith, strayKey } from '../../src/core/schema.js';
import { deepFreeze } from '../../src/core/plain.js';
import { conversationSchema } from '../../src/model/conversation.js';

const slice = z.object({ count: z.number().int().default(0), label: z.string().optional() });
const refined = z.object({ min: z.number(), max: z.number() }).refine((s) => s.min <= s.max, { message: 'min must not exceed max' });

describe('isObjectSchema and isZodSchema', () => {
  it.each([[z.object({})], [z.strictObject({ a: z.string() })], [z.looseObject({})], [refined]])('recognise an object schema', (schema) => {
    expect(isObjectSchema(schema)).toBe(true);
    expect(isZodSchema(schema)).toBe(true);
  });

  it.each([[z.string()], [z.array(z.object({}))], [z.object({}).optional()], [{ shape: {} }], [null], [5]])('refuse anything else as an object schema', (value) => {
    expect(isObjectSchema(value)).toBe(false);
  });

  it('recognise a schema by its internals, not by identity with this copy of zod', () => {
    const lookalike = { safeParse: () => ({ success: true }), _zod: { def: { type: 'object' } } };
    expect(isObjectSchema(lookalike)).toBe(true);
  });
});

describe('parseSync and parseWith', () => {
  it('return the parsed value or the issues with their paths', () => {
    expect(parseSync(slice, {})).toEqual({ ok: true, value: { count: 0 } });
    const failed = parseSync(slice, { count: 'x' });
    expect(failed.ok).toBe(false);
    expect(!failed.ok && failed.issues.map((i) => [i.path, i.code])).toEqual([[['count'], 'invalid_type']]);
  });

  it('never throw, even when a refinement throws', () => {
    const throwing = z.object({ a: z.number() }).refine(() => { throw new Error('refinement exploded'); });
    expect(parseSync(throwing, { a: 1 })).toEqual({ ok: false, issues: [{ path: [], message: 'schema threw while parsing: refinement exploded' }] });
  });

  it('parseWith switches to async for async refinements; parseSync reports them as an issue', async () => {
    const asyncSchema = z.object({ a: z.number() }).refine(async (s) => s.a > 0, { message: 'must be positive' });
    const pending = parseWith(asyncSchema, { a: -1 });
    expect(pending).toBeInstanceOf(Promise);
    expect(await pending).toMatchObject({ ok: false, issues: [{ message: 'must be positive' }] });
    expect(await parseWith(asyncSchema, { a: 1 })).toEqual({ ok: true, value: { a: 1 } });
    expect(parseSync(asyncSchema, { a: 1 }).ok).toBe(false);
  });
});

describe('applyPatch', () => {
  it('validates the changed fields and returns a new slice, leaving the current one alone', () => {
    const current = { count: 1 };
    expect(applyPatch(slice, current, { count: 2, label: 'two' })).toEqual({ ok: true, value: { count: 2, label: 'two' } });
    expect(current).toEqual({ count: 1 });
  });

  it('reports each invalid field with its path', () => {
    expect(applyPatch(slice, { count: 1 }, { count: 1.5, label: 3 })).toMatchObject({
      ok: false,
      issues: [{ path: ['count'] }, { path: ['label'] }],
    });
  });

  it.each([
    ['a plain schema', slice, { count: 1 }],
    ['a schema with an object-level refinement', refined, { min: 1, max: 2 }],
  ])('refuses an unknown field with %s (never drops it silently)', (_label, schema, current) => {
    const patched = applyPatch(schema as typeof slice, current, { bogus: true });
    expect(patched.ok).toBe(false);
    expect(!patched.ok && patched.issues).toContainEqual(expect.objectContaining({ path: ['bogus'], code: 'unrecognized_keys' }));
  });

  it('refuses a __proto__ key', () => {
    expect(applyPatch(slice, { count: 1 }, JSON.parse('{"__proto__": {"count": 5}}')).ok).toBe(false);
    expect(applyPatch(refined, { min: 1, max: 2 }, JSON.parse('{"__proto__": {"min": 5}}')).ok).toBe(false);
  });

  it('checks an object-level refinement against the whole slice after the update', () => {
    expect(applyPatch(refined, { min: 1, max: 2 }, { min: 5 })).toMatchObject({ ok: false, issues: [{ message: 'min must not exceed max' }] });
    expect(applyPatch(refined, { min: 1, max: 2 }, { max: 9 })).toEqual({ ok: true, value: { min: 1, max: 9 } });
  });

  it('keeps unknown fields of a loose schema and lets a strict schema report them', () => {
    expect(applyPatch(z.looseObject({ a: z.number() }), { a: 1 }, { extra: 2 })).toEqual({ ok: true, value: { a: 1, extra: 2 } });
    expect(applyPatch(z.strictObject({ a: z.number() }), { a: 1 }, { extra: 2 }).ok).toBe(false);
  });

  it.each([[null], [5], [[1]], ['x']])('refuses an update that is not a plain object (%j)', (patch) => {
    expect(applyPatch(slice, { count: 1 }, patch)).toEqual({ ok: false, issues: [{ path: [], message: 'a state update must be a plain object' }] });
  });
});

describe('applyPatch agrees with zod on every field schema', () => {
  // Fields a state update often sets (checked natively) beside look-alikes that must still go to
  // zod: formats, coercion, bounds, refinements, transforms.
  const fields: Record<string, z.ZodType> = {
    number: z.number(),
    int: z.number().int(),
    intDefault: z.number().int().default(0),
    safe: z.number().safe(),
    zint: z.int(),
    int32: z.int32(),
    string: z.string(),
    stringDefault: z.string().default('x'),
    boolean: z.boolean(),
    booleanDefault: z.boolean().default(false),
    email: z.email(),
    uuid: z.uuid(),
    coerced: z.coerce.number(),
    min: z.number().min(0),
    minLength: z.string().min(2),
    refined: z.number().refine((n) => n % 2 === 0),
    trimmed: z.string().trim(),
    optional: z.number().optional(),
    nullable: z.string().nullable(),
    literal: z.literal(3),
    custom: z.number().int({ error: 'whole numbers only' }),
    // Compound fields, which zod parses (its compiled object parsers beat a generic native one).
    enum: z.enum(['a', 'b', '3']),
    literals: z.literal([3, 'a', true, null]),
    unknown: z.unknown(),
    any: z.any(),
    predicate: z.custom<{ role: string }>((value) => typeof value === 'object' && value !== null && 'role' in value),
    truthy: z.custom((value) => (typeof value === 'number' ? value : 0)),
    array: z.array(z.number()),
    arrayDefault: z.array(z.string()).default([]),
    arrayMin: z.array(z.number()).min(1),
    arrayOfObjects: z.array(z.object({ a: z.number(), b: z.string().optional() })),
    object: z.object({ a: z.number(), b: z.string().optional(), c: z.boolean().nullable() }),
    objectDefaults: z.object({ a: z.number().default(0), b: z.array(z.number()).default([]) }),
    objectStrict: z.strictObject({ a: z.number() }),
    objectLoose: z.looseObject({ a: z.number() }),
    objectRefined: z.object({ a: z.number() }).refine((o) => o.a > 0),
    nested: z.object({ list: z.array(z.object({ id: z.string(), tags: z.array(z.enum(['x', 'y'])) })), at: z.number().int() }).nullable(),
    transformed: z.array(z.string().transform((text) => text.length)),
    // The conversation's own slice fields.
    ...Object.fromEntries(Object.entries(conversationSchema.shape).map(([key, field]) => [`conversation.${key}`, field])),
  };
  const message = fc.record({ role: fc.constantFrom('user', 'assistant', 'tool', 'robot'), content: fc.anything() }, { requiredKeys: ['role'] });
  const turn = fc.record(
    {
      n: fc.oneof(fc.integer(), fc.double()),
      id: fc.string(),
      status: fc.constantFrom('thinking', 'acting', 'awaiting-approval', 'done'),
      replyTo: fc.option(fc.string()),
      query: fc.string(),
      steps: fc.integer(),
      toolCalls: fc.integer(),
      pending: fc.array(fc.record({ toolCallId: fc.string(), tool: fc.string(), args: fc.anything(), approval: fc.constantFrom('none', 'needed', 'approved', 'denied', 'maybe') }, { requiredKeys: ['toolCallId', 'tool', 'approval'] }), { maxLength: 2 }),
      ran: fc.array(fc.record({ toolCallId: fc.string(), tool: fc.string(), args: fc.anything(), output: fc.anything() }), { maxLength: 2 }),
      startedAt: fc.string(),
    },
    { requiredKeys: ['n', 'status', 'replyTo', 'query', 'steps', 'toolCalls', 'pending', 'startedAt'] },
  );
  const values = fc.oneof(
    fc.anything(),
    fc.array(fc.oneof(fc.integer(), fc.string(), fc.constantFrom('x', 'y', 'a'))),
    fc.record({ a: fc.oneof(fc.integer(), fc.string()), b: fc.option(fc.string(), { nil: undefined }), c: fc.option(fc.boolean()) }, { requiredKeys: [] }),
    fc.array(fc.record({ a: fc.integer(), b: fc.option(fc.string(), { nil: undefined }) }, { requiredKeys: ['a'] }), { maxLength: 3 }),
    fc.record({ list: fc.array(fc.record({ id: fc.string(), tags: fc.array(fc.constantFrom('x', 'y', 'z')) }), { maxLength: 2 }), at: fc.integer() }),
    fc.array(message, { maxLength: 3 }),
    turn,
    fc.record({ inputTokens: fc.integer(), outputTokens: fc.double(), totalTokens: fc.integer() }, { requiredKeys: [] }),
    fc.constantFrom(NaN, Infinity, -Infinity, -0, 0.5, 2 ** 53, -(2 ** 53), 2 ** 31, 3, '', ' a ', 'a@b.co', '00000000-0000-4000-8000-000000000000', true, null, undefined, '12'),
    fc.double(),
    fc.integer(),
    fc.string(),
  );

  it.each(Object.entries(fields))('%s: the same verdict and value as parsing the whole slice', (_name, field) => {
    const schema = z.object({ field, other: z.number().default(1) });
    fc.assert(
      fc.property(values, (value) => {
        const ours = applyPatch(schema, Object.freeze({ other: 1 }), { field: value });
        const theirs = schema.safeParse({ other: 1, field: value });
        expect(ours.ok).toBe(theirs.success);
        if (ours.ok && theirs.success) {
          expect(ours.value).toStrictEqual(theirs.data);
          // Where zod copies a container, so do we: the state never shares it with the update.
          if (typeof value === 'object' && value !== null && (theirs.data as { field: unknown }).field !== value) expect(ours.value.field).not.toBe(value);
        }
        if (!ours.ok && !theirs.success) expect(ours.issues.map((issue) => issue.path)).toEqual(theirs.error.issues.map((issue) => issue.path));
        // Parsing the field alone (as action params and outputs are parsed) agrees with zod too.
        const alone = parseSync(field, value);
        const zods = field.safeParse(value);
        expect(alone.ok).toBe(zods.success);
        if (alone.ok && zods.success) expect(alone.value).toStrictEqual(zods.data);
      }),
      { numRuns: 300 },
    );
  });
});

describe('applyPatch on a whole slice', () => {
  // Field names as users write them, and the awkward ones: JavaScript's own names, integer-like
  // keys (which objects order first), quotes, backslashes, spaces and non-ASCII. (`__proto__`
  // is refused by defineSkill and defineAgent.)
  const names = fc.oneof(
    fc.string({ minLength: 1, maxLength: 8 }).filter((name) => name !== '__proto__'),
    fc.constantFrom('constructor', 'prototype', 'toString', 'hasOwnProperty', '0', '1', '10', '01', '-1', "a'b", 'a"b', 'a\\b', 'a b', 'ünï', '${x}', '*/', 'return'),
  );
  const fieldKinds = [
    [z.number().int(), fc.integer()],
    [z.string().default('d'), fc.string()],
    [z.array(z.number()).default([]), fc.array(fc.integer(), { maxLength: 3 })],
    [z.boolean().nullable(), fc.option(fc.boolean())],
    [z.number().optional(), fc.option(fc.integer(), { nil: undefined })],
  ] as const;
  const slices = fc.uniqueArray(fc.tuple(names, fc.nat(fieldKinds.length - 1)), { minLength: 1, maxLength: 6, selector: ([name]) => name }).chain((fields) => {
    const schema = z.object(Object.fromEntries(fields.map(([name, kind]) => [name, fieldKinds[kind]![0]])));
    const value = (kind: number) => fieldKinds[kind]![1] as fc.Arbitrary<unknown>;
    const record = (required: boolean) => fc.record(Object.fromEntries(fields.map(([name, kind]) => [name, value(kind)])), required ? undefined : { requiredKeys: [] });
    return fc.tuple(fc.constant(schema), record(true), record(false));
  });

  it('gives what zod gives for the slice with the update, keys in the same order, frozen, the current slice untouched', () => {
    fc.assert(
      fc.property(slices, ([schema, start, patch]) => {
        const parsed = schema.safeParse(start);
        if (!parsed.success) return;
        const current = deepFreeze(parsed.data) as Record<string, unknown>;
        const before = JSON.stringify(current);
        const ours = applyPatch(schema, current, patch);
        const theirs = schema.safeParse({ ...current, ...patch });
        expect(ours.ok).toBe(theirs.success);
        if (!ours.ok || !theirs.success) return;
        // (Not toStrictEqual: it compares the objects' `constructor`, a field name here.)
        expect(ours.value).toEqual(theirs.data);
        expect(Object.keys(ours.value)).toEqual(Object.keys(theirs.data));
        expect(Object.getPrototypeOf(ours.value)).toBe(Object.prototype);
        expect(Object.isFrozen(ours.value)).toBe(true);
        expect(JSON.stringify(current)).toBe(before);
      }),
      { numRuns: 500 },
    );
  });

  it.each(['b', 'toString', 'constructor'])("copies a slice that lacks a field its schema requires ('%s') as it is, adding no key", (missing) => {
    const schema = z.object({ a: z.number(), [missing]: z.number() });
    const patched = applyPatch(schema, Object.freeze({ a: 1 }), { a: 2 });
    expect(patched.ok && Object.keys(patched.value)).toEqual(['a']);
    expect(patched.ok && patched.value.a).toBe(2);
  });
});

describe('strayKey', () => {
  it('names the first key a strip-mode object would drop', () => {
    expect(strayKey(slice, { count: 1, oops: 2 })).toBe('oops');
    expect(strayKey(slice, { count: 1 })).toBeUndefined();
    expect(strayKey(z.looseObject({}), { any: 1 })).toBeUndefined();
  });
});
