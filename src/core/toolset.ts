/**
 * Tools for language models: every action of every active skill as an OpenAI-style function
 * tool, its parameters the JSON Schema of the action's input (`io: 'input'`, so fields with
 * defaults are optional). `strict: true` produces schemas OpenAI's strict mode accepts (every
 * field required, optional ones nullable, no additional properties, no unsupported keywords);
 * a schema that cannot be made strict is sent non-strict and reported.
 *
 * Two skills may offer actions with the same name. The first (the agent's own, then skills in
 * mount order) keeps the bare name; later ones become `<skill>_<action>`, and each rename is
 * reported. `agentToolset(agent).toInstruction(name, args)` maps a tool call back to an
 * instruction for `cmd`.
 *
 * Pure: no I/O, no XState.
 */
import { z } from 'zod';
import { ACTION_NAME, type AnyAction } from './action.js';
import { type Catalog } from './catalog.js';
import { closestName, didYouMean } from './closest-name.js';
import { catalogOf, type Agent } from './agent-value.js';
import { diagnostic, type Diagnostic } from './diagnostics.js';
import { DefinitionError, describeThrown, errorInfo, type ErrorInfo } from './errors.js';
import type { InstructionObject } from './instruction.js';
import { unlinkedError } from './agent-value.js';
import { optionsProblem } from './options.js';
import { cloneData, isPlainObject } from './plain.js';
import { RuntimeError } from './runtime-error.js';
import type { AnySkill } from './skill.js';
import { toolProblem, type FunctionTool, type JsonSchema } from './function-tool.js';


/** Options of turning actions into function tools (strict mode, a tool name). */
export interface ToolOptions {
  /** Produce OpenAI strict-mode schemas (and set `strict: true`) where the input allows it. */
  strict?: boolean;
  /** Use this name instead of the action's. */
  name?: string;
}

/** Where a tool call goes. */
export interface ToolBinding {
  tool: string;
  action: string;
  skill: string | undefined;
  /** Property paths that strict mode made nullable; a `null` there means "left out". */
  nullablePaths: readonly (readonly string[])[];
}

/** An agent's actions as function tools for a model, and the way back from a tool call to an instruction. */
export interface Toolset {
  tools: FunctionTool[];
  bindings: ReadonlyMap<string, ToolBinding>;
  /** Renamed tools, strict-mode fallbacks, override tools that match no action, and invalid overrides. */
  diagnostics: Diagnostic[];
  /** Turns a tool call (arguments as an object or a JSON string) into an instruction for `cmd`. */
  toInstruction(tool: string, args: unknown): { ok: true; instruction: InstructionObject } | { ok: false; error: ErrorInfo };
}

const inputSchemas = new WeakMap<AnyAction, JsonSchema>();

/** The JSON Schema of an action's input (cached per action). */
export function inputJsonSchema(action: AnyAction): JsonSchema {
  let schema = inputSchemas.get(action);
  if (!schema) {
    const generated = z.toJSONSchema(action.input, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    delete generated.$schema;
    schema = generated;
    inputSchemas.set(action, schema);
  }
  return structuredClone(schema);
}

/**
 * Converts one action to a function tool. With `strict`, returns the tool and, when the input
 * cannot be expressed in strict mode, the reason it was left non-strict.
 */
export function toolForAction(action: AnyAction, options: ToolOptions = {}): FunctionTool {
  refuseToolOptions('toolForAction', options, TOOL_OPTIONS);
  return convert(action, options).tool;
}

/** The options `toolForAction` takes: one entry per key of `ToolOptions`. */
const TOOL_OPTIONS = { strict: true, name: true } as const satisfies Record<keyof ToolOptions, true>;
/** The options `toolsForAgent`, `agentToolset` and a ref's `toolset` take: those of `toolForAction` but `name`. */
const AGENT_TOOL_OPTIONS = { strict: true } as const satisfies Record<keyof Omit<ToolOptions, 'name'>, true>;

/**
 * Why `options` cannot be the options of `where` (`toolsForAgent`, a ref's `toolset`): not an
 * object, or a key other than `strict` — a misspelled `strict` would hand a model the non-strict
 * schemas without a word.
 */
export function agentToolOptionsProblem(where: string, options: unknown): ErrorInfo | undefined {
  return optionsProblem(where, options, AGENT_TOOL_OPTIONS, '{ strict: true }');
}

/** Throws the `invalid_options` `RuntimeError` for tool options `where` cannot read. */
function refuseToolOptions(where: string, options: unknown, known: Readonly<Record<string, true>>): void {
  const problem = optionsProblem(where, options, known, '{ strict: true }');
  if (problem) throw new RuntimeError(problem);
}

function convert(action: AnyAction, options: ToolOptions): { tool: FunctionTool; nullablePaths: string[][]; strictProblem?: string } {
  const parameters = inputJsonSchema(action);
  const name = options.name ?? action.name;
  if (!options.strict) {
    return { tool: { type: 'function', function: { name, description: action.description, parameters } }, nullablePaths: [] };
  }
  const nullablePaths: string[][] = [];
  const strict = toStrictSchema(parameters, [], nullablePaths);
  if ('problem' in strict) {
    return {
      tool: { type: 'function', function: { name, description: action.description, parameters } },
      nullablePaths: [],
      strictProblem: strict.problem,
    };
  }
  return { tool: { type: 'function', function: { name, description: action.description, parameters: strict.schema, strict: true } }, nullablePaths };
}

/** Keywords OpenAI's strict mode rejects; their presence makes a schema non-strict. */
const UNSUPPORTED = ['allOf', 'not', 'if', 'then', 'else', 'patternProperties', 'propertyNames', 'dependentRequired', 'dependentSchemas', 'unevaluatedProperties', 'minProperties', 'maxProperties', 'contains'];

/**
 * Rewrites a JSON Schema for OpenAI strict mode: every object closed and fully required, each
 * originally optional property made nullable (its path recorded), `default` moved into the
 * description, `oneOf` turned into `anyOf`. Returns a problem instead when a keyword has no
 * strict equivalent.
 */
function toStrictSchema(schema: JsonSchema, path: string[], nullablePaths: string[][]): { schema: JsonSchema } | { problem: string } {
  const where = path.length ? `'${path.join('.')}'` : 'the root';
  for (const keyword of UNSUPPORTED) {
    if (keyword in schema) return { problem: `${where} uses '${keyword}', which strict mode does not support` };
  }
  const out: JsonSchema = { ...schema };
  if ('default' in out) {
    const note = `Default: ${JSON.stringify(out.default)}.`;
    out.description = typeof out.description === 'string' ? `${out.description} ${note}` : note;
    delete out.default;
  }
  if (Array.isArray(out.oneOf)) {
    out.anyOf = out.oneOf;
    delete out.oneOf;
  }
  if (Array.isArray(out.anyOf)) {
    const branches: JsonSchema[] = [];
    for (const branch of out.anyOf as JsonSchema[]) {
      const converted = toStrictSchema(branch, path, nullablePaths);
      if ('problem' in converted) return converted;
      branches.push(converted.schema);
    }
    out.anyOf = branches;
  }
  if (isPlainObject(out.$defs)) {
    const defs: JsonSchema = {};
    for (const [key, value] of Object.entries(out.$defs)) {
      const converted = toStrictSchema(value as JsonSchema, [...path, `$defs.${key}`], nullablePaths);
      if ('problem' in converted) return converted;
      defs[key] = converted.schema;
    }
    out.$defs = defs;
  }
  const isObject = out.type === 'object' || isPlainObject(out.properties);
  if (isObject) {
    if (out.additionalProperties !== undefined && out.additionalProperties !== false) {
      return { problem: `${where} is a record or an open object (additionalProperties), which strict mode does not support` };
    }
    const properties = (isPlainObject(out.properties) ? out.properties : {}) as Record<string, JsonSchema>;
    const required = new Set(Array.isArray(out.required) ? (out.required as string[]) : []);
    const strictProperties: Record<string, JsonSchema> = {};
    for (const [key, value] of Object.entries(properties)) {
      const converted = toStrictSchema(value, [...path, key], nullablePaths);
      if ('problem' in converted) return converted;
      strictProperties[key] = required.has(key) ? converted.schema : nullable(converted.schema);
      if (!required.has(key)) nullablePaths.push([...path, key]);
    }
    out.properties = strictProperties;
    out.required = Object.keys(strictProperties);
    out.additionalProperties = false;
  }
  if (out.type === 'array' && isPlainObject(out.items)) {
    const converted = toStrictSchema(out.items as JsonSchema, [...path, '*'], nullablePaths);
    if ('problem' in converted) return converted;
    out.items = converted.schema;
  }
  return { schema: out };
}

function nullable(schema: JsonSchema): JsonSchema {
  // An enum or a const restricts the values as well as the type: null must be let through both.
  if ('const' in schema) return schema.const === null ? schema : { anyOf: [schema, { type: 'null' }] };
  const values = Array.isArray(schema.enum) ? schema.enum : undefined;
  const withNull = values && !values.includes(null) ? { ...schema, enum: [...values, null] } : schema;
  if (typeof schema.type === 'string') return { ...withNull, type: [schema.type, 'null'] };
  if (Array.isArray(schema.type)) return schema.type.includes('null') ? withNull : { ...withNull, type: [...schema.type, 'null'] };
  return { anyOf: [schema, { type: 'null' }] };
}

/** Removes `null` values at the given paths (strict mode's way of leaving a field out). */
function dropNulls(value: unknown, path: readonly string[], depth = 0): void {
  if (depth >= path.length) return;
  const key = path[depth]!;
  if (key === '*') {
    if (Array.isArray(value)) for (const item of value) dropNulls(item, path, depth + 1);
    return;
  }
  if (!isPlainObject(value)) return;
  if (depth === path.length - 1) {
    if (value[key] === null) delete value[key];
  } else dropNulls(value[key], path, depth + 1);
}

/**
 * The function tools for every action of every active skill (and the agent's own actions).
 * Throws `DefinitionError` (`unlinked_agent`) for plain agent data without its definition, and
 * a `RuntimeError` (`invalid_options`) for an option other than `strict`.
 */
export function toolsForAgent(agent: Agent<object>, options: Omit<ToolOptions, 'name'> = {}): FunctionTool[] {
  refuseToolOptions('toolsForAgent', options, AGENT_TOOL_OPTIONS);
  return agentToolset(agent, options).tools;
}

/**
 * The agent's tools with their bindings to actions, the diagnostics (renames, strict-mode
 * fallbacks, override tools bound to no action) and a way back from a tool call to an instruction.
 * Throws `DefinitionError` (`unlinked_agent`) for plain agent data without its definition: an
 * empty tool list would hide the mistake.
 */
export function agentToolset(agent: Agent<object>, options: Omit<ToolOptions, 'name'> = {}): Toolset {
  refuseToolOptions('agentToolset', options, AGENT_TOOL_OPTIONS);
  const catalog = catalogOf(agent);
  if (!catalog) throw new DefinitionError(unlinkedError(agent));
  const tools: FunctionTool[] = [];
  const bindings = new Map<string, ToolBinding>();
  const diagnostics: Diagnostic[] = [];
  collectTools(catalog, options, tools, bindings, diagnostics);
  return {
    tools,
    bindings,
    diagnostics,
    toInstruction(tool, args) {
      const binding = bindings.get(tool);
      if (!binding) {
        return {
          ok: false,
          error: errorInfo('unknown_action', `no tool named '${tool}'; known tools: ${[...bindings.keys()].join(', ') || '(none)'}${didYouMean(closestName(tool, bindings.keys()))}`, { subject: tool }),
        };
      }
      let params: unknown = args ?? {};
      if (typeof params === 'string') {
        try {
          params = params.trim() === '' ? {} : JSON.parse(params);
        } catch (error) {
          return {
            ok: false,
            error: errorInfo('invalid_params', `arguments of tool '${tool}' are not valid JSON: ${(error as Error).message}`, {
              action: binding.action,
              skill: binding.skill,
            }),
          };
        }
      }
      if (!isPlainObject(params)) {
        return { ok: false, error: errorInfo('invalid_params', `arguments of tool '${tool}' must be a JSON object`, { action: binding.action, skill: binding.skill }) };
      }
      let copy: Record<string, unknown>;
      try {
        copy = cloneData(params);
      } catch (error) {
        return {
          ok: false,
          error: errorInfo('invalid_params', `arguments of tool '${tool}' are not plain data: ${describeThrown(error)}`, {
            action: binding.action,
            skill: binding.skill,
          }),
        };
      }
      for (const path of binding.nullablePaths) dropNulls(copy, path);
      const instruction: InstructionObject = { action: binding.action, params: copy };
      if (binding.skill !== undefined) instruction.skill = binding.skill;
      return { ok: true, instruction };
    },
  };
}

function collectTools(
  catalog: Catalog,
  options: Omit<ToolOptions, 'name'>,
  tools: FunctionTool[],
  bindings: Map<string, ToolBinding>,
  diagnostics: Diagnostic[],
): void {
  const owners = new Map<string, string>();
  const claim = (wanted: string, skill: string | undefined, owner: string): string => {
    let name = wanted;
    if (owners.has(name)) {
      const base = skill ? `${skill}_${wanted}`.slice(0, 64) : wanted;
      name = base;
      for (let n = 2; owners.has(name) || !ACTION_NAME.test(name); n++) name = `${base.slice(0, 60)}_${n}`;
      diagnostics.push(
        diagnostic('warning', 'tool_name_clash', `tool '${wanted}' of ${owner} clashes with the tool of ${owners.get(wanted)}; it is offered as '${name}'`, {
          skill,
          subject: wanted,
          details: { renamedTo: name, keptBy: owners.get(wanted) },
        }),
      );
    }
    owners.set(name, owner);
    return name;
  };
  const addAction = (action: AnyAction, skill: string | undefined, owner: string) => {
    if (action.tool === false) return;
    const name = claim(action.name, skill, owner);
    const converted = convert(action, { ...options, name });
    if (converted.strictProblem) {
      diagnostics.push(
        diagnostic('warning', 'strict_schema_fallback', `tool '${name}' is not strict: ${converted.strictProblem}`, { skill, subject: name }),
      );
    }
    tools.push(converted.tool);
    bindings.set(name, { tool: name, action: action.name, skill, nullablePaths: converted.nullablePaths });
  };

  for (const action of catalog.blueprint.ownActions) addAction(action, undefined, `agent '${catalog.blueprint.name}'`);
  for (const active of catalog.skills.values()) {
    const owner = `skill '${active.spec.name}'`;
    const override = overrideTools(active.spec, active.config, diagnostics);
    if (override === undefined) {
      for (const action of active.spec.actions) addAction(action, active.spec.name, owner);
      continue;
    }
    const actionNames = new Set(active.spec.actions.map((action) => action.name));
    for (const tool of override) {
      const wanted = tool.function.name;
      const name = claim(wanted, active.spec.name, owner);
      tools.push(name === wanted ? tool : { ...tool, function: { ...tool.function, name } });
      if (actionNames.has(wanted)) {
        bindings.set(name, { tool: name, action: wanted, skill: active.spec.name, nullablePaths: [] });
      } else {
        diagnostics.push(
          diagnostic('warning', 'unbound_tool', `tool '${wanted}' of ${owner} matches none of its actions; calls to it cannot run`, {
            skill: active.spec.name,
            subject: wanted,
          }),
        );
      }
    }
  }
}

/**
 * A skill's override tools, checked: an override that throws or is not a list falls back to the
 * derived tools, and a malformed tool is left out; each is reported as `invalid_tools`.
 */
function overrideTools(skill: AnySkill, config: Record<string, unknown>, diagnostics: Diagnostic[]): readonly FunctionTool[] | undefined {
  const report = (message: string) =>
    diagnostics.push(diagnostic('warning', 'invalid_tools', `tools of skill '${skill.name}' ${message}`, { skill: skill.name }));
  let override: unknown;
  try {
    override = skill.tools(config);
  } catch (thrown) {
    report(`threw: ${describeThrown(thrown)}; its actions are offered as derived tools instead`);
    return undefined;
  }
  if (override === undefined) return undefined;
  if (!Array.isArray(override)) {
    report('are not a list of function tools; its actions are offered as derived tools instead');
    return undefined;
  }
  return override.filter((tool: unknown, i: number) => {
    const problem = toolProblem(tool);
    if (problem) report(`[${i}] ${problem}; it is left out`);
    return problem === undefined;
  }) as FunctionTool[];
}
