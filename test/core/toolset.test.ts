/**
 * Tools for language models: every action of every active skill as an OpenAI function tool,
 * parameters from `z.toJSONSchema(input, { io: 'input' })`; a strict mode whose schemas satisfy
 * OpenAI's rules (checked by a walker written here); deterministic, reported renames on name
 * clashes; skill overrides; and the way back from a tool call to an instruction `cmd` runs.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DefinitionError, defineAction, defineAgent, defineSkill, mountSkill } from '../../src/index.js';
import { agentToolset, toolForAction, toolsForAgent, type FunctionTool, type JsonSchema } from '../../src/core/tools.js';
import { ACTION_NAME } from '../../src/core/action.js';
import { add, arithmetic, calculator, counter } from '../../skills/index.js';
import { thrownBy, viaJson } from './support.js';

// ---------------------------------------------------------------------------------------------
// OpenAI strict mode, as documented for Structured Outputs / function calling with strict: true:
// the root is an object (not anyOf); every object lists all its properties in `required` and has
// `additionalProperties: false`; only the supported keywords appear (no `default`, `allOf`,
// `not`, `if`/`then`/`else`, `patternProperties`, `propertyNames`, ...); optional fields are
// expressed as nullable ones.
// ---------------------------------------------------------------------------------------------
const SUPPORTED = new Set([
  'type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const', 'anyOf', '$defs', '$ref', 'description', 'title',
  'pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minItems', 'maxItems',
]);
const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);

function strictViolations(schema: JsonSchema, path = '$', atRoot = true): string[] {
  const found: string[] = [];
  if (atRoot && (schema.type !== 'object' || 'anyOf' in schema)) found.push(`${path}: the root must be an object schema`);
  for (const key of Object.keys(schema)) if (!SUPPORTED.has(key)) found.push(`${path}: unsupported keyword '${key}'`);
  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
  for (const type of types) if (!JSON_TYPES.has(type as string)) found.push(`${path}: unknown type ${String(type)}`);
  if (types.includes('object') || 'properties' in schema) {
    if (schema.additionalProperties !== false) found.push(`${path}: additionalProperties must be false`);
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    const required = (schema.required ?? []) as string[];
    if ([...required].sort().join() !== Object.keys(properties).sort().join()) found.push(`${path}: required must list every property`);
    for (const [key, value] of Object.entries(properties)) found.push(...strictViolations(value, `${path}.${key}`, false));
  }
  if (schema.items !== undefined) found.push(...strictViolations(schema.items as JsonSchema, `${path}[]`, false));
  for (const [i, branch] of ((schema.anyOf ?? []) as JsonSchema[]).entries()) found.push(...strictViolations(branch, `${path}|${i}`, false));
  for (const [key, value] of Object.entries((schema.$defs ?? {}) as Record<string, JsonSchema>)) found.push(...strictViolations(value, `${path}.$defs.${key}`, false));
  return found;
}

/** True when a JSON Schema accepts `null`. */
function acceptsNull(schema: JsonSchema): boolean {
  if (Array.isArray(schema.anyOf) && (schema.anyOf as JsonSchema[]).some(acceptsNull)) return true;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (!types.includes('null')) return false;
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) return false;
  if ('const' in schema && schema.const !== null) return false;
  return true;
}

/** Checks, side by side, that every property the original schema leaves optional accepts null in the strict one. */
function optionalFieldsAcceptNull(original: JsonSchema, strict: JsonSchema, path = '$'): string[] {
  const found: string[] = [];
  const originalProperties = (original.properties ?? {}) as Record<string, JsonSchema>;
  const strictProperties = (strict.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((original.required ?? []) as string[]);
  for (const [key, value] of Object.entries(originalProperties)) {
    const converted = strictProperties[key];
    if (!converted) {
      found.push(`${path}.${key}: missing`);
      continue;
    }
    if (!required.has(key) && !acceptsNull(converted)) found.push(`${path}.${key}: optional but does not accept null`);
    const inner = !required.has(key) && Array.isArray(converted.anyOf) && !('properties' in converted) ? (converted.anyOf as JsonSchema[])[0]! : converted;
    found.push(...optionalFieldsAcceptNull(value, inner, `${path}.${key}`));
  }
  if (original.items !== undefined && strict.items !== undefined) found.push(...optionalFieldsAcceptNull(original.items as JsonSchema, strict.items as JsonSchema, `${path}[]`));
  return found;
}

/** The arguments a model in strict mode sends when it leaves out everything it may: null for each nullable field. */
function minimalArguments(schema: JsonSchema): unknown {
  if (acceptsNull(schema)) return null;
  if (Array.isArray(schema.anyOf)) return minimalArguments((schema.anyOf as JsonSchema[])[0]!);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return 'text';
    case 'number':
    case 'integer':
      return 0;
    case 'boolean':
      return false;
    case 'array':
      return [minimalArguments(schema.items as JsonSchema)];
    default:
      return Object.fromEntries(Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>).map(([key, value]) => [key, minimalArguments(value)]));
  }
}

const withoutMetaSchema = (schema: Record<string, unknown>) => {
  const { $schema: _ignored, ...rest } = schema;
  return rest;
};

const booking = defineAction({
  name: 'book',
  description: 'Book a table',
  input: z.object({
    name: z.string().describe('Who books'),
    guests: z.number().int().min(1).default(2).describe('How many people'),
    time: z.string().optional(),
    seating: z.enum(['inside', 'outside']).optional(),
    kind: z.literal('dinner').optional(),
    notes: z.string().nullable().optional(),
    contact: z.object({ phone: z.string(), email: z.string().optional() }).optional(),
    extras: z.array(z.object({ item: z.string(), qty: z.number().int().default(1) })).default([]),
    choice: z.union([z.string(), z.number()]).optional(),
  }),
  run: (params) => params,
});

const restaurant = defineSkill({ name: 'restaurant', actions: [booking] });
const Host = defineAgent({ name: 'host', skills: [restaurant, counter] });

describe('toolsForAgent: OpenAI function tools', () => {
  it('turns each action into { type: function, function: { name, description, parameters } }', () => {
    expect(toolForAction(add)).toEqual({
      type: 'function',
      function: {
        name: 'add',
        description: 'Add two numbers (a + b)',
        parameters: {
          type: 'object',
          properties: { a: { type: 'number', description: 'The first operand' }, b: { type: 'number', description: 'The second operand' } },
          required: ['a', 'b'],
        },
      },
    });
  });

  it('takes parameters from z.toJSONSchema(input, { io: "input" }), so fields with defaults are optional', () => {
    const [tool] = toolsForAgent(Host.new());
    expect(tool!.function.parameters).toEqual(withoutMetaSchema(z.toJSONSchema(booking.input, { io: 'input' })));
    expect(tool!.function.parameters.required).toEqual(['name']);
    expect((tool!.function.parameters.properties as Record<string, JsonSchema>).guests).toMatchObject({ default: 2, description: 'How many people' });
  });

  it('lists the tools of every active skill, the agent’s own actions first', () => {
    const own = defineAction({ name: 'hello', description: 'Say hello', input: z.object({}), run: () => 'hi' });
    const Agent = defineAgent({ name: 'a', actions: [own], skills: [counter] });
    expect(toolsForAgent(Agent.new()).map((t) => t.function.name)).toEqual(['hello', 'increment', 'decrement', 'reset', 'get_count']);
    const withArithmetic = mountSkill(Agent.new(), arithmetic);
    expect(withArithmetic.ok && toolsForAgent(withArithmetic.agent).map((t) => t.function.name)).toEqual([
      'hello', 'increment', 'decrement', 'reset', 'get_count', 'add', 'subtract', 'multiply', 'divide',
    ]);
  });

  it('returns a fresh copy of the parameters each time', () => {
    const first = toolForAction(add);
    (first.function.parameters.properties as Record<string, unknown>).a = 'mangled';
    expect(toolForAction(add).function.parameters.properties).toMatchObject({ a: { type: 'number' } });
  });

  it('refuses an agent that is plain data, saying how to re-link it, rather than giving no tools', () => {
    const error = thrownBy(() => toolsForAgent(viaJson(Host.new({ id: 'h1' })) as never), DefinitionError, 'unlinked_agent');
    expect(error.message).toContain("agent 'h1' is plain data without its definition");
    expect(error.message).toContain('definition.restore(data)');
    const relinked = Host.restore(viaJson(Host.new()));
    if (!relinked.ok) throw new Error(relinked.error.message);
    expect(toolsForAgent(relinked.value)).toEqual(toolsForAgent(Host.new()));
  });
});

describe('strict mode', () => {
  const strict = agentToolset(Host.new(), { strict: true });
  const bookTool = strict.tools[0]!;
  const properties = bookTool.function.parameters.properties as Record<string, JsonSchema>;

  it('produces schemas that satisfy OpenAI strict mode, and sets strict: true', () => {
    for (const tool of strict.tools) {
      expect(strictViolations(tool.function.parameters), tool.function.name).toEqual([]);
      expect(tool.function.strict).toBe(true);
    }
    expect(strict.diagnostics).toEqual([]);
  });

  it('requires every property and makes the originally optional ones nullable', () => {
    expect(bookTool.function.parameters.required).toEqual(Object.keys(booking.input.shape));
    expect(acceptsNull(properties.name!)).toBe(false);
    for (const key of ['guests', 'time', 'seating', 'kind', 'notes', 'contact', 'extras', 'choice']) expect(acceptsNull(properties[key]!), key).toBe(true);
    const contact = properties.contact!;
    expect(contact.required).toEqual(['phone', 'email']);
    expect(acceptsNull((contact.properties as Record<string, JsonSchema>).phone!)).toBe(false);
    expect(acceptsNull((contact.properties as Record<string, JsonSchema>).email!)).toBe(true);
  });

  it('keeps the enumerated values of a nullable enum or literal', () => {
    expect(acceptsNull(properties.seating!)).toBe(true);
    expect(JSON.stringify(properties.seating)).toContain('"inside","outside"');
    expect(JSON.stringify(properties.kind)).toContain('"dinner"');
  });

  it('removes defaults and notes them in the description', () => {
    expect(properties.guests).not.toHaveProperty('default');
    expect(properties.guests!.description).toBe('How many people Default: 2.');
    expect(properties.extras!.description).toBe('Default: [].');
  });

  it('keeps descriptions of tools and fields', () => {
    expect(bookTool.function.description).toBe('Book a table');
    expect(properties.name!.description).toBe('Who books');
  });

  it('maps a strict call back: a null for an originally optional field is dropped, so zod accepts it', async () => {
    const args = minimalArguments(bookTool.function.parameters);
    expect(args).toEqual({ name: 'text', guests: null, time: null, seating: null, kind: null, notes: null, contact: null, extras: null, choice: null });
    const call = strict.toInstruction('book', JSON.stringify({ ...(args as object), contact: { phone: '555', email: null }, extras: [{ item: 'cake', qty: null }] }));
    expect(call).toEqual({ ok: true, instruction: { action: 'book', skill: 'restaurant', params: { name: 'text', contact: { phone: '555' }, extras: [{ item: 'cake' }] } } });
    if (!call.ok) return;
    const run = await Host.cmd(Host.new(), call.instruction);
    expect(run.results[0]).toEqual({
      ok: true,
      action: 'book',
      skill: 'restaurant',
      output: { name: 'text', guests: 2, contact: { phone: '555' }, extras: [{ item: 'cake', qty: 1 }] },
    });
  });

  it('a strict call of a counter action with null for the optional amount runs with the step', async () => {
    const call = strict.toInstruction('increment', { by: null });
    expect(call).toEqual({ ok: true, instruction: { action: 'increment', skill: 'counter', params: {} } });
    const run = await Host.cmd(Host.new(), call.ok ? call.instruction : 'never');
    expect(run.results[0]).toEqual({ ok: true, action: 'increment', skill: 'counter', output: { count: 1 } });
  });

  it('falls back to a non-strict tool for an input that cannot be strict (a record), and reports it', () => {
    const tally = defineAction({ name: 'tally', description: 'Count things', input: z.object({ counts: z.record(z.string(), z.number()) }), run: () => null });
    const Agent = defineAgent({ name: 'a', skills: [defineSkill({ name: 'ledger', actions: [tally] })] });
    const toolset = agentToolset(Agent.new(), { strict: true });
    expect(toolset.tools).toEqual([toolForAction(tally)]);
    expect(toolset.tools[0]!.function).not.toHaveProperty('strict');
    expect(toolset.diagnostics).toHaveLength(1);
    expect(toolset.diagnostics[0]).toMatchObject({ level: 'warning', code: 'strict_schema_fallback', skill: 'ledger', subject: 'tally' });
    expect(toolset.diagnostics[0]!.message).toContain("tool 'tally' is not strict: 'counts'");
  });

  it('without strict, a null stays a null (and zod says what is wrong with it)', async () => {
    const call = agentToolset(Host.new()).toInstruction('increment', { by: null });
    expect(call).toEqual({ ok: true, instruction: { action: 'increment', skill: 'counter', params: { by: null } } });
    const run = await Host.cmd(Host.new(), call.ok ? call.instruction : 'never');
    expect(run.results[0]).toMatchObject({ ok: false, error: { code: 'invalid_params' } });
  });
});

describe('strict mode on generated inputs (property)', () => {
  interface Field {
    schema: z.ZodType;
    sample: unknown;
  }
  const leaves: Field[] = [
    { schema: z.string(), sample: 's' },
    { schema: z.number(), sample: 1.5 },
    { schema: z.number().int(), sample: 2 },
    { schema: z.boolean(), sample: true },
    { schema: z.enum(['x', 'y']), sample: 'y' },
    { schema: z.literal('k'), sample: 'k' },
  ];
  const wrap = (field: Field, how: 'optional' | 'default' | 'nullable'): Field =>
    how === 'optional'
      ? { schema: field.schema.optional(), sample: field.sample }
      : how === 'default'
        ? { schema: field.schema.default(field.sample as never), sample: field.sample }
        : { schema: field.schema.nullable(), sample: field.sample };
  const key = fc.constantFrom('a', 'b', 'c', 'd');
  const { field } = fc.letrec<{ field: Field; object: Field }>((tie) => ({
    field: fc
      .tuple(
        fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.constantFrom(...leaves), tie('object'), tie('field').map((f) => ({ schema: z.array(f.schema), sample: [f.sample] }))),
        fc.array(fc.constantFrom('optional' as const, 'default' as const, 'nullable' as const), { maxLength: 2 }),
      )
      .map(([base, wrappers]) => wrappers.reduce(wrap, base)),
    object: fc.dictionary(key, tie('field'), { maxKeys: 4 }).map((shape) => ({
      schema: z.object(Object.fromEntries(Object.entries(shape).map(([k, f]) => [k, f.schema]))),
      sample: Object.fromEntries(Object.entries(shape).map(([k, f]) => [k, f.sample])),
    })),
  }));

  it('every strict schema satisfies the rules, and a call with null for everything optional runs', async () => {
    await fc.assert(
      fc.asyncProperty(fc.dictionary(key, field, { maxKeys: 4 }), async (shape) => {
        const input = z.object(Object.fromEntries(Object.entries(shape).map(([k, f]) => [k, f.schema])));
        const echo = defineAction({ name: 'echo', description: 'Echo', input, run: (params) => params });
        const Agent = defineAgent({ name: 'gen', actions: [echo] });
        const toolset = agentToolset(Agent.new(), { strict: true });
        const tool = toolset.tools[0]!;
        expect(toolset.diagnostics).toEqual([]);
        expect(strictViolations(tool.function.parameters)).toEqual([]);
        expect(optionalFieldsAcceptNull(toolForAction(echo).function.parameters, tool.function.parameters)).toEqual([]);
        const call = toolset.toInstruction('echo', JSON.stringify(minimalArguments(tool.function.parameters)));
        expect(call.ok).toBe(true);
        const run = await Agent.cmd(Agent.new(), call.ok ? call.instruction : 'never');
        expect(run.results[0]!.ok, JSON.stringify(run.results[0])).toBe(true);
      }),
      { numRuns: 150 },
    );
  });
});

describe('name clashes', () => {
  it('the first provider keeps the bare name; later ones become <skill>_<action>, each rename reported', () => {
    const Agent = defineAgent({ name: 'both', skills: [calculator, arithmetic] });
    const toolset = agentToolset(Agent.new());
    expect(toolset.tools.map((t) => t.function.name)).toEqual(['add', 'subtract', 'multiply', 'arithmetic_add', 'arithmetic_subtract', 'arithmetic_multiply', 'divide']);
    expect(toolset.diagnostics.map((d) => [d.code, d.skill, d.subject, d.details?.renamedTo])).toEqual([
      ['tool_name_clash', 'arithmetic', 'add', 'arithmetic_add'],
      ['tool_name_clash', 'arithmetic', 'subtract', 'arithmetic_subtract'],
      ['tool_name_clash', 'arithmetic', 'multiply', 'arithmetic_multiply'],
    ]);
    expect(toolset.diagnostics[0]!.message).toBe("tool 'add' of skill 'arithmetic' clashes with the tool of skill 'calculator'; it is offered as 'arithmetic_add'");
  });

  it('is deterministic: the same agent gives the same names; the mount order decides who keeps the bare name', () => {
    const Agent = defineAgent({ name: 'both', skills: [arithmetic, calculator] });
    const names = () => toolsForAgent(Agent.new()).map((t) => t.function.name);
    expect(names()).toEqual(names());
    expect(names()).toEqual(['add', 'subtract', 'multiply', 'divide', 'calculator_add', 'calculator_subtract', 'calculator_multiply']);
  });

  it('a renamed tool runs the action of its own skill', async () => {
    const Agent = defineAgent({ name: 'both', skills: [calculator, arithmetic] });
    const toolset = agentToolset(Agent.new());
    const rounded = toolset.toInstruction('add', { a: 0.1, b: 0.2 });
    const exact = toolset.toInstruction('arithmetic_add', '{"a": 0.1, "b": 0.2}');
    expect(exact).toEqual({ ok: true, instruction: { action: 'add', skill: 'arithmetic', params: { a: 0.1, b: 0.2 } } });
    const run = await Agent.cmd(Agent.new(), [rounded.ok ? rounded.instruction : 'x', exact.ok ? exact.instruction : 'x']);
    // calculator rounds to its precision (2); arithmetic does not.
    expect(run.results.map((r) => r.ok && r.output)).toEqual([{ result: 0.3 }, { result: 0.1 + 0.2 }]);
  });

  it('the agent’s own action keeps the bare name over a skill’s', () => {
    const own = defineAction({ name: 'add', description: 'The agent’s add', input: z.object({}), run: () => 'own' });
    const Agent = defineAgent({ name: 'owner', actions: [own], skills: [arithmetic] });
    expect(toolsForAgent(Agent.new()).map((t) => t.function.name)).toEqual(['add', 'arithmetic_add', 'subtract', 'multiply', 'divide']);
  });

  it('names stay unique, valid and bound to the right action for random skill sets (property)', () => {
    const actionNames = fc.uniqueArray(fc.constantFrom('go', 'run', 'alpha_go', 'beta_go', 'x'.repeat(64)), { minLength: 1, maxLength: 3 });
    const skillNames = ['alpha', 'beta', 'gamma'];
    fc.assert(
      fc.property(fc.tuple(actionNames, actionNames, actionNames), (sets) => {
        const skills = sets.map((names, i) =>
          defineSkill({
            name: skillNames[i]!,
            actions: names.map((name) => defineAction({ name, description: `${skillNames[i]}.${name}`, input: z.object({}), run: () => null })),
          }),
        );
        const Agent = defineAgent({ name: 'gen', skills });
        const toolset = agentToolset(Agent.new());
        const names = toolset.tools.map((t) => t.function.name);
        expect(new Set(names).size).toBe(names.length);
        expect(names).toHaveLength(sets.flat().length);
        for (const name of names) expect(ACTION_NAME.test(name), name).toBe(true);
        for (const tool of toolset.tools) {
          const call = toolset.toInstruction(tool.function.name, {});
          expect(call.ok).toBe(true);
          if (!call.ok) continue;
          // The description says which skill's action the tool is: the binding must agree.
          expect(`${call.instruction.skill}.${call.instruction.action as string}`).toBe(tool.function.description);
        }
        // Every tool that could not keep its action's name is reported once, with its new name.
        const renamed = [...toolset.bindings.values()].filter((b) => b.tool !== b.action).map((b) => b.tool);
        expect(toolset.diagnostics.filter((d) => d.code === 'tool_name_clash').map((d) => d.details?.renamedTo)).toEqual(renamed);
      }),
    );
  });
});

describe('skill tool overrides', () => {
  const noop = defineAction({ name: 'noop', description: 'Does nothing', input: z.object({}), run: () => 'nothing' });
  const custom: FunctionTool = { type: 'function', function: { name: 'noop', description: 'A hand-written description', parameters: { type: 'object', properties: {} } } };
  const ghost: FunctionTool = { type: 'function', function: { name: 'ghost', description: 'Bound to nothing', parameters: { type: 'object', properties: {} } } };

  it('are used instead of the derived tools; an override matching no action is reported', async () => {
    const skill = defineSkill({ name: 'custom', actions: [noop], tools: [custom, ghost] });
    const Agent = defineAgent({ name: 'a', skills: [skill] });
    const toolset = agentToolset(Agent.new());
    expect(toolset.tools).toEqual([custom, ghost]);
    expect(toolset.diagnostics).toEqual([
      {
        level: 'warning',
        code: 'unbound_tool',
        message: "tool 'ghost' of skill 'custom' matches none of its actions; calls to it cannot run",
        skill: 'custom',
        subject: 'ghost',
      },
    ]);
    const call = toolset.toInstruction('noop', {});
    expect(call).toEqual({ ok: true, instruction: { action: 'noop', skill: 'custom', params: {} } });
    expect(toolset.toInstruction('ghost', {})).toMatchObject({ ok: false, error: { code: 'unknown_action', subject: 'ghost' } });
    expect((await Agent.cmd(Agent.new(), call.ok ? call.instruction : 'x')).results[0]).toMatchObject({ ok: true, output: 'nothing' });
  });

  it('may be a function of the skill config', () => {
    const skill = defineSkill({
      name: 'custom',
      actions: [noop],
      configSchema: z.object({ tone: z.string().default('plain') }),
      tools: (config) => [{ ...custom, function: { ...custom.function, description: `In a ${config.tone} tone` } }],
    });
    const Agent = defineAgent({ name: 'a', skills: [[skill, { tone: 'cheerful' }]] });
    expect(toolsForAgent(Agent.new())[0]!.function.description).toBe('In a cheerful tone');
  });

  it('an override function that throws falls back to the derived tools, and is reported', () => {
    const skill = defineSkill({ name: 'custom', actions: [noop], tools: () => { throw new Error('no tools today'); } });
    const toolset = agentToolset(defineAgent({ name: 'a', skills: [skill] }).new());
    expect(toolset.tools).toEqual([toolForAction(noop)]);
    expect(toolset.diagnostics).toMatchObject([{ level: 'warning', code: 'invalid_tools', skill: 'custom' }]);
    expect(toolset.diagnostics[0]!.message).toContain('no tools today');
  });

  it('an override function returning a malformed tool: that tool is left out, and reported', () => {
    const skill = defineSkill({ name: 'custom', actions: [noop], tools: () => [custom, { name: 'broken' } as never] });
    const toolset = agentToolset(defineAgent({ name: 'a', skills: [skill] }).new());
    expect(toolset.tools).toEqual([custom]);
    expect(toolset.diagnostics).toMatchObject([{ level: 'warning', code: 'invalid_tools', skill: 'custom' }]);
  });
});

describe('toInstruction(tool, args)', () => {
  const toolset = agentToolset(Host.new());

  it('accepts arguments as an object or as a JSON string', () => {
    const expected = { ok: true, instruction: { action: 'reset', skill: 'counter', params: { to: 4 } } };
    expect(toolset.toInstruction('reset', { to: 4 })).toEqual(expected);
    expect(toolset.toInstruction('reset', '{"to": 4}')).toEqual(expected);
  });

  it.each([[undefined], [null], [''], ['   ']])('treats %j as no arguments', (args) => {
    expect(toolset.toInstruction('get_count', args)).toEqual({ ok: true, instruction: { action: 'get_count', skill: 'counter', params: {} } });
  });

  it('does not change the arguments it was given', () => {
    const strictToolset = agentToolset(Host.new(), { strict: true });
    const args = { by: null };
    strictToolset.toInstruction('increment', args);
    expect(args).toEqual({ by: null });
  });

  it('invalid JSON → invalid_params naming the tool and the action', () => {
    const call = toolset.toInstruction('reset', '{"to": ');
    expect(call.ok).toBe(false);
    expect(!call.ok && call.error).toMatchObject({ code: 'invalid_params', action: 'reset', skill: 'counter' });
    expect(!call.ok && call.error.message).toContain("arguments of tool 'reset' are not valid JSON");
  });

  it.each([['[1, 2]'], ['5'], ['"text"'], [[1]], [42], [new Map()]])('arguments that are not an object (%j) → invalid_params', (args) => {
    expect(toolset.toInstruction('reset', args)).toMatchObject({ ok: false, error: { code: 'invalid_params', action: 'reset' } });
  });

  it('arguments that cannot be copied (a function inside) → invalid_params, not a throw', () => {
    expect(toolset.toInstruction('reset', { to: 1, callback: () => 1 })).toMatchObject({ ok: false, error: { code: 'invalid_params', action: 'reset' } });
  });

  it('an unknown tool → unknown_action listing the known tools', () => {
    expect(toolset.toInstruction('fly', {})).toEqual({
      ok: false,
      error: { code: 'unknown_action', message: "no tool named 'fly'; known tools: book, increment, decrement, reset, get_count", subject: 'fly' },
    });
  });

  it('a misspelled tool → unknown_action naming the tool it was likely meant to be', () => {
    expect(toolset.toInstruction('incremnet', {})).toMatchObject({
      ok: false,
      error: { code: 'unknown_action', message: "no tool named 'incremnet'; known tools: book, increment, decrement, reset, get_count; did you mean 'increment'?" },
    });
  });

  it('an agent that is plain data → unlinked_agent, before any tool call', () => {
    thrownBy(() => agentToolset(viaJson(Host.new()) as never), DefinitionError, 'unlinked_agent');
  });
});
