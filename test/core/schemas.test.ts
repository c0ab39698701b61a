/**
 * Schemas users bring: zod 4 only (zod is a peer dependency; a zod 3 schema is refused with words
 * that say zod 4 is needed), and an action's `state` schema may be any object schema its
 * skill's schema satisfies — the skill's schema itself, a copy of it, or some of its fields with
 * the same types — while one it does not satisfy is refused with words that say what to pass.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { z as z3 } from 'zod/v3';
import { defineAction, defineAgent, defineSkill, DefinitionError } from '../../src/index.js';
import pkg from '../../package.json' with { type: 'json' };

/** What `fn` throws. */
function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

const ZOD4 = "skillstate needs zod 4: install zod ^4 and import { z } from 'zod' (with zod 3.25 installed, import { z } from 'zod/v4')";

describe('zod 4 is required, and a zod 3 schema is refused saying so', () => {
  const old = z3.object({ text: z3.string() });
  const CASES: [string, () => unknown, string][] = [
    ['defineAction input', () => defineAction({ name: 'a', description: 'd', input: old as never, run: () => null }), "action 'a': input is a zod 3 schema (ZodObject)"],
    ['defineAction output', () => defineAction({ name: 'a', description: 'd', input: z.object({}), output: z3.string() as never, run: () => null }), "action 'a': output is a zod 3 schema (ZodString)"],
    ['defineAction state', () => defineAction({ name: 'a', description: 'd', input: z.object({}), state: old as never, run: () => null }), "action 'a': state is a zod 3 schema (ZodObject)"],
    ['defineSkill schema', () => defineSkill({ name: 's', schema: old as never }), "skill 's': schema is a zod 3 schema (ZodObject)"],
    ['defineSkill configSchema', () => defineSkill({ name: 's', configSchema: old as never }), "skill 's': configSchema is a zod 3 schema (ZodObject)"],
    ['defineAgent schema', () => defineAgent({ name: 'g', schema: old as never }), "agent 'g': schema is a zod 3 schema (ZodObject)"],
  ];
  it.each(CASES)('%s', (_name, define, start) => {
    const error = thrownBy(define);
    expect(error).toBeInstanceOf(DefinitionError);
    expect((error as Error).message).toBe(`${start}; ${ZOD4}`);
  });

  it('something that is no schema at all keeps the usual words', () => {
    expect((thrownBy(() => defineAction({ name: 'a', description: 'd', input: { text: 'string' } as never, run: () => null })) as Error).message).toBe(
      "action 'a': input must be a zod object schema (z.object({...}))",
    );
  });

  it("a state schema with a field named '__proto__' is refused, naming it: no object holds it as data", () => {
    // A computed key: an own field, not the object's prototype.
    const proto = z.object({ ['__proto__']: z.number() } as Record<string, z.ZodType>);
    expect(Object.hasOwn(proto.shape, '__proto__')).toBe(true);
    const words = "schema has a field named '__proto__', which state cannot hold: rename it";
    const skill = thrownBy(() => defineSkill({ name: 's', schema: proto }));
    expect(skill).toBeInstanceOf(DefinitionError);
    expect((skill as Error).message).toBe(`skill 's': ${words}`);
    const agent = thrownBy(() => defineAgent({ name: 'g', schema: proto }));
    expect(agent).toBeInstanceOf(DefinitionError);
    expect((agent as Error).message).toBe(`agent 'g': ${words}`);
  });

  it('zod is a peer dependency (^4) the app brings, not a dependency of its own', () => {
    const manifest = pkg as { dependencies?: Record<string, string>; peerDependencies?: Record<string, string> };
    expect(manifest.dependencies?.zod).toBeUndefined();
    expect(manifest.peerDependencies?.zod).toMatch(/^\^4/);
  });
});

describe("an action's state schema: any schema its skill's schema satisfies", () => {
  const tasks = z.object({ items: z.array(z.string()).default([]), done: z.number().int().default(0), owner: z.string().optional() });
  const withState = (state: z.ZodObject) => defineAction({ name: 'act', description: 'acts', input: z.object({}), state, run: () => null });

  const ACCEPTED: [string, z.ZodObject][] = [
    ['the very schema', tasks],
    ['a structurally identical schema', z.object({ items: z.array(z.string()).default([]), done: z.number().int().default(0), owner: z.string().optional() })],
    ['some of its fields, the same field schemas', z.object({ items: tasks.shape.items })],
    ['some of its fields, written again', z.object({ done: z.number().int().default(0) })],
    ['a pick of it', tasks.pick({ items: true, owner: true })],
    ['no fields at all', z.object({})],
  ];
  it.each(ACCEPTED)('accepted: %s', (_name, state) => {
    expect(defineSkill({ name: 'todo', schema: tasks, actions: [withState(state)] }).actions).toHaveLength(1);
  });

  const REFUSED: [string, z.ZodObject, string][] = [
    ['a field the skill does not have', z.object({ title: z.string() }), "field 'title' is not in the skill's schema"],
    ['a field of another type', z.object({ done: z.string() }), "field 'done' has a different type than in the skill's schema"],
    ['a field with another check', z.object({ done: z.number() }), "field 'done' has a different type than in the skill's schema"],
    ['a field with another element type', z.object({ items: z.array(z.number()) }), "field 'items' has a different type than in the skill's schema"],
  ];
  it.each(REFUSED)('refused, saying what to pass: %s', (_name, state, why) => {
    const error = thrownBy(() => defineSkill({ name: 'todo', schema: tasks, actions: [withState(state)] }));
    expect(error).toMatchObject({ code: 'invalid_skill' });
    expect((error as Error).message).toBe(
      `skill 'todo': actions[0] ('act') declares a state schema this skill's schema does not satisfy: ${why}; pass the skill's schema itself as the action's state, or an object schema with some of its fields, of the same types`,
    );
  });

  it('a field with a transform (no JSON Schema) must be the same field schema', () => {
    const trimmed = z.string().transform((text) => text.trim());
    const skillSchema = z.object({ name: trimmed.default('') });
    expect(() => defineSkill({ name: 'named', schema: skillSchema, actions: [withState(z.object({ name: skillSchema.shape.name }))] })).not.toThrow();
    expect(() => defineSkill({ name: 'named', schema: skillSchema, actions: [withState(z.object({ name: z.string().transform((text) => text.trim()).default('') }))] })).toThrow(
      "field 'name' has a different type",
    );
  });
});
