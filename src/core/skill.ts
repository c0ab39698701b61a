/**
 * Skills: named bundles of actions, a state schema kept under the skill's own state key, a
 * config schema, signal patterns and routes, LLM instructions and tools, and the process-layer
 * hooks (`mount`, `handleSignal`, `transformResult`, `children`) that only the runtime calls.
 * `defineSkill` validates eagerly: a definition that cannot work throws at once, naming the
 * skill and the field.
 *
 * Pure: no I/O, no XState. Hooks are stored here, never called here.
 */
import type { z } from 'zod';
import { isAction, type AnyAction } from './action.js';
import { describeThrown, DefinitionError, refuseDefinitionField, errorInfo, formatIssues, withCause, type ErrorInfo, type Issue } from './errors.js';
import { unknownField } from './options.js';
import type { Effect } from './effects.js';
import { checkRouteTarget, type RouteTarget } from './instruction.js';
import { patternProblem } from './pattern.js';
import { deepMerge, isDefinedAs, isPlainObject, isSafeKey } from './plain.js';
import { validateRoute, type Route } from './router.js';
import { EMPTY_SCHEMA, isObjectSchema, parseSync, schemaProblem, stateSchemaMismatch, stateShapeProblem, strayKey, type ObjectSchema } from './schema.js';
import type { Result } from './result.js';
import type { Signal } from './signal.js';
import { toolProblem, type FunctionTool } from './function-tool.js';

/** A semantic version (`1.2.3`, `1.2.3-beta.1`): what a skill's `vsn` and a document skill's `version` must be. */
export const SEMVER = /^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$/;

/**
 * Skill names and state keys: 1 to 64 characters — letters of any script (`技能`, `мой-навык`),
 * their combining marks, digits, `_` and `-` — starting with a letter or digit.
 */
export const SKILL_NAME = /^[\p{L}\p{N}][\p{L}\p{M}\p{N}_-]{0,63}$/u;

/**
 * True for a key that cannot hold a skill's state slice: one the plain-data helpers never write
 * (`__proto__`, `constructor`, `prototype`), or one every object inherits from `Object.prototype`
 * (`toString`, `hasOwnProperty`), whose inherited value the agent's state would read for the
 * slice. `defineSkill` refuses such a `stateKey`, with a message for each of the two.
 */
export function isReservedStateKey(key: string): boolean {
  return !isSafeKey(key) || key in Object.prototype;
}

/** What the process-layer hooks see. */
export interface SkillHookContext<TState = unknown, TConfig = unknown> {
  readonly agentId: string;
  readonly skill: string;
  /** The skill's current state slice. */
  readonly state: TState;
  readonly config: TConfig;
}

/** What a `mount` hook may return: fields of the slice to change, and effects. */
export interface MountOutcome<TState = unknown> {
  state?: Partial<TState>;
  effects?: readonly Effect[];
}

/**
 * What `handleSignal` decides. Returning nothing means `continue`.
 * - `continue`: pass the signal on unchanged;
 * - `rewrite`: pass this signal on instead (later skills and the router see the new one);
 * - `handle`: the skill handled it: apply the slice update, carry out the effects, skip the router;
 * - `fail`: refuse it: the caller gets the error, the agent lives on with its state unchanged.
 */
export type SignalDecision<TState = unknown> =
  | { decision: 'continue' }
  | { decision: 'rewrite'; signal: Signal }
  | { decision: 'handle'; state?: Partial<TState>; effects?: readonly Effect[]; output?: unknown }
  | { decision: 'fail'; error: ErrorInfo };

/** Constructors for `handleSignal` decisions. */
export const Decision = {
  continue: (): SignalDecision<never> => ({ decision: 'continue' }),
  rewrite: (signal: Signal): SignalDecision<never> => ({ decision: 'rewrite', signal }),
  handle: <TState>(outcome: { state?: Partial<TState>; effects?: readonly Effect[]; output?: unknown } = {}): SignalDecision<TState> => ({
    decision: 'handle',
    ...outcome,
  }),
  fail: (message: string, details?: Record<string, unknown>): SignalDecision<never> => ({
    decision: 'fail',
    error: errorInfo('signal_failed', message, details === undefined ? undefined : { details }),
  }),
} as const;

/**
 * Actor logic, described structurally so the pure core needs no XState import. Any XState v5
 * logic (`createMachine`, `fromPromise`, `fromCallback`...) fits.
 */
export interface ActorLogicLike {
  transition: (...args: never[]) => unknown;
  getInitialSnapshot: (...args: never[]) => unknown;
}

/** How a crashed child is treated: always restarted, restarted only after a failure, or never. */
export type RestartPolicy = 'permanent' | 'transient' | 'temporary';

/** A child actor a skill runs while it is active. */
export interface ChildSpec {
  /** Unique among the skill's children; part of the child's `systemId`. */
  id: string;
  logic: ActorLogicLike;
  input?: unknown;
  /** Default `permanent`. */
  restart?: RestartPolicy;
  /** At most this many restarts within `withinMs`; past it the skill reports failure. Default 3 in 5000 ms. */
  maxRestarts?: number;
  withinMs?: number;
  /**
   * The child keeps nothing its agent's state does not: stopping it and starting it again loses
   * nothing. An idle agent running it may then be passivated (`createAgentSystem({ passivate })`),
   * and the child starts again when the agent wakes. Default false: the agent stays in memory.
   */
  stoppable?: boolean;
}

/** A skill, ready to be attached to an agent or mounted at run time. */
export interface SkillSpec<
  TName extends string = string,
  TKey extends string = string,
  TState = unknown,
  TConfig = unknown,
> {
  readonly kind: 'skill';
  readonly name: TName;
  readonly stateKey: TKey;
  readonly description: string | undefined;
  readonly category: string | undefined;
  readonly vsn: string | undefined;
  readonly tags: readonly string[];
  readonly actions: readonly AnyAction[];
  readonly schema: ObjectSchema;
  readonly configSchema: ObjectSchema | undefined;
  readonly signalPatterns: readonly string[];
  readonly requires: readonly string[];
  readonly instructions: string | undefined;
  /** Free-form facts about the skill (document skills record their root path and source here). */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** Routes for the runtime's router; a function receives the skill's config. */
  routes(config: TConfig): readonly Route<RouteTarget>[];
  /** The LLM tools for this skill; undefined means "derive them from the actions". */
  tools(config: TConfig): readonly FunctionTool[] | undefined;
  initialState(config: TConfig): Partial<TState> | Record<string, unknown>;
  mount?(ctx: SkillHookContext<TState, TConfig>): void | MountOutcome<TState> | Promise<void | MountOutcome<TState>>;
  handleSignal?(
    signal: Signal,
    ctx: SkillHookContext<TState, TConfig>,
  ): void | SignalDecision<TState> | Promise<void | SignalDecision<TState>>;
  transformResult?(signal: Signal, result: unknown, ctx: SkillHookContext<TState, TConfig>): unknown;
  unmount?(ctx: SkillHookContext<TState, TConfig>): void | Promise<void>;
  children?(config: TConfig): readonly ChildSpec[];
}

/** A skill of any name, key, state and config. */
export type AnySkill = SkillSpec<string, string, unknown, unknown>;

/** A skill attached to an agent: the skill alone, or with its config. */
export type SkillAttachment = AnySkill | readonly [AnySkill, Record<string, unknown>];

/** What `defineSkill` takes: name, schema, actions, routes, signal patterns, hooks, tools and children. */
export interface SkillDefinition<
  TName extends string,
  TKey extends string,
  TSchema extends ObjectSchema,
  TConfigSchema extends ObjectSchema,
> {
  name: TName;
  /** Where the skill's state lives in the agent's state. Default: the name. */
  stateKey?: TKey;
  actions?: readonly AnyAction[];
  /** The state slice schema; its defaults build the initial slice. */
  schema?: TSchema;
  /** Per-agent configuration, validated (defaults applied) when the skill is attached or mounted. */
  configSchema?: TConfigSchema;
  description?: string;
  category?: string;
  vsn?: string;
  tags?: readonly string[];
  /** Signals this skill's `handleSignal` wants to see. */
  signalPatterns?: readonly string[];
  routes?: readonly Route<RouteTarget>[] | ((config: z.output<TConfigSchema>) => readonly Route<RouteTarget>[]);
  /** Names of skills that must be mounted before this one. */
  requires?: readonly string[];
  /** Instructions for a language model on how to use the skill. */
  instructions?: string;
  /** Overrides the tools derived from the actions. */
  tools?: readonly FunctionTool[] | ((config: z.output<TConfigSchema>) => readonly FunctionTool[]);
  /** The initial slice (before schema defaults), from the config. */
  initialState?: (config: z.output<TConfigSchema>) => Partial<z.input<TSchema>>;
  metadata?: Record<string, unknown>;
  mount?(
    ctx: SkillHookContext<z.output<TSchema>, z.output<TConfigSchema>>,
  ): void | MountOutcome<z.output<TSchema>> | Promise<void | MountOutcome<z.output<TSchema>>>;
  handleSignal?(
    signal: Signal,
    ctx: SkillHookContext<z.output<TSchema>, z.output<TConfigSchema>>,
  ): void | SignalDecision<z.output<TSchema>> | Promise<void | SignalDecision<z.output<TSchema>>>;
  transformResult?(signal: Signal, result: unknown, ctx: SkillHookContext<z.output<TSchema>, z.output<TConfigSchema>>): unknown;
  /**
   * Called once the skill has left its agent — unmounted, or its agent stopped — with its slice
   * as it last was, to release what it holds outside the agent. The unmount is already done: what
   * it returns is ignored, and a throw or a rejection is reported (`hook_failed`), never blocking.
   */
  unmount?(ctx: SkillHookContext<z.output<TSchema>, z.output<TConfigSchema>>): void | Promise<void>;
  children?(config: z.output<TConfigSchema>): readonly ChildSpec[];
}

const HOOKS = ['mount', 'unmount', 'handleSignal', 'transformResult', 'children', 'initialState'] as const;

/** The fields `defineSkill` takes: one entry per key of `SkillDefinition`. */
const SKILL_FIELDS = {
  name: true,
  stateKey: true,
  actions: true,
  schema: true,
  configSchema: true,
  description: true,
  category: true,
  vsn: true,
  tags: true,
  signalPatterns: true,
  routes: true,
  requires: true,
  instructions: true,
  tools: true,
  initialState: true,
  metadata: true,
  mount: true,
  handleSignal: true,
  transformResult: true,
  unmount: true,
  children: true,
} as const satisfies Record<keyof SkillDefinition<string, string, ObjectSchema, ObjectSchema>, true>;

/**
 * Defines a skill. Throws a `DefinitionError` (code `invalid_skill`) naming the skill and the
 * field when the definition cannot work.
 */
export function defineSkill<
  const TName extends string,
  const TKey extends string = TName,
  TSchema extends ObjectSchema = z.ZodObject<{}>,
  TConfigSchema extends ObjectSchema = z.ZodObject<{}>,
>(
  definition: SkillDefinition<TName, TKey, TSchema, TConfigSchema>,
): SkillSpec<TName, TKey, z.output<TSchema>, z.output<TConfigSchema>> {
  if (typeof definition !== 'object' || definition === null) {
    throw new DefinitionError({ code: 'invalid_skill', message: 'defineSkill needs a definition object' });
  }
  const name = definition.name;
  const invalid = (field: string, message: string): never => refuseDefinitionField('skill', name, field, message);
  if (typeof name !== 'string' || !SKILL_NAME.test(name)) {
    invalid('name', 'must be 1 to 64 letters, digits, "_" or "-", starting with a letter or digit');
  }
  // Hooks are bound to the definition, so a field of another name may be theirs (`this.label`):
  // only one that looks like a misspelled field is refused.
  const stray = unknownField(definition, SKILL_FIELDS, { misspelledOnly: true });
  if (stray) invalid(stray.field, stray.message);
  const stateKey = (definition.stateKey ?? name) as TKey;
  if (typeof stateKey !== 'string' || !SKILL_NAME.test(stateKey) || !isSafeKey(stateKey)) {
    invalid('stateKey', `'${String(stateKey)}' must be 1 to 64 letters, digits, "_" or "-" and not a reserved key`);
  }
  if (stateKey in Object.prototype) {
    invalid('stateKey', `'${stateKey}' is a name every object inherits from Object.prototype, so the agent's state would read the inherited value for the slice: give the skill another stateKey`);
  }
  const optionalString = (field: 'description' | 'category' | 'vsn' | 'instructions') => {
    const value = definition[field];
    if (value !== undefined && typeof value !== 'string') invalid(field, 'must be a string');
  };
  optionalString('description');
  optionalString('category');
  optionalString('vsn');
  optionalString('instructions');
  if (definition.vsn !== undefined && !SEMVER.test(definition.vsn)) {
    invalid('vsn', `'${definition.vsn}' is not a semantic version (e.g. 1.0.0)`);
  }

  const schema = definition.schema ?? EMPTY_SCHEMA;
  if (!isObjectSchema(schema)) invalid('schema', schemaProblem(schema, 'must be a zod object schema (z.object({...}))'));
  const shapeProblem = stateShapeProblem(schema);
  if (shapeProblem) invalid('schema', shapeProblem);
  const configSchema = definition.configSchema;
  if (configSchema !== undefined && !isObjectSchema(configSchema)) invalid('configSchema', schemaProblem(configSchema, 'must be a zod object schema'));

  const actions = definition.actions ?? [];
  if (!Array.isArray(actions)) invalid('actions', 'must be an array of actions made by defineAction');
  const seen = new Set<string>();
  actions.forEach((action, i) => {
    if (!isAction(action)) invalid(`actions[${i}]`, 'is not an action made by defineAction');
    if (seen.has(action.name)) invalid('actions', `has two actions named '${action.name}'`);
    seen.add(action.name);
    const mismatch = action.state === undefined ? undefined : stateSchemaMismatch(action.state, schema);
    if (mismatch !== undefined) {
      invalid(
        `actions[${i}]`,
        `('${action.name}') declares a state schema this skill's schema does not satisfy: ${mismatch}; pass the skill's schema itself as the action's state, or an object schema with some of its fields, of the same types`,
      );
    }
  });

  const stringList = (field: 'tags' | 'signalPatterns' | 'requires'): readonly string[] => {
    const value = definition[field] ?? [];
    if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) invalid(field, 'must be an array of strings');
    return Object.freeze([...value]);
  };
  const tags = stringList('tags');
  const signalPatterns = stringList('signalPatterns');
  for (const pattern of signalPatterns) {
    const problem = patternProblem(pattern);
    if (problem) invalid('signalPatterns', `has an invalid pattern: ${problem}`);
  }
  const requires = stringList('requires');
  for (const required of requires) {
    if (!SKILL_NAME.test(required)) invalid('requires', `names '${required}', which is not a valid skill name`);
    if (required === name) invalid('requires', 'names the skill itself');
  }

  for (const hook of HOOKS) {
    const value = definition[hook];
    if (value !== undefined && typeof value !== 'function') invalid(hook, 'must be a function');
  }
  const routes = definition.routes ?? [];
  if (typeof routes !== 'function') {
    if (!Array.isArray(routes)) invalid('routes', 'must be an array of routes or a function of the config');
    for (const route of routes) {
      try {
        validateRoute(route);
        checkRouteTarget(route);
      } catch (error) {
        invalid('routes', `has an invalid route: ${(error as Error).message}`);
      }
    }
  }
  const tools = definition.tools;
  if (tools !== undefined && typeof tools !== 'function' && !Array.isArray(tools)) {
    invalid('tools', 'must be an array of function tools or a function of the config');
  }
  if (Array.isArray(tools)) {
    tools.forEach((tool, i) => {
      const problem = toolProblem(tool);
      if (problem) invalid(`tools[${i}]`, problem);
    });
  }
  if (definition.metadata !== undefined && !isPlainObject(definition.metadata)) invalid('metadata', 'must be a plain object');

  const initialState = definition.initialState;
  const spec: SkillSpec<TName, TKey, z.output<TSchema>, z.output<TConfigSchema>> = {
    kind: 'skill',
    name,
    stateKey,
    description: definition.description,
    category: definition.category,
    vsn: definition.vsn,
    tags,
    actions: Object.freeze([...actions]),
    schema,
    configSchema,
    signalPatterns,
    requires,
    instructions: definition.instructions,
    metadata: Object.freeze({ ...definition.metadata }),
    routes: typeof routes === 'function' ? (config) => routes(config) : () => routes,
    tools: (config) => (typeof tools === 'function' ? tools(config) : tools),
    initialState: (config) => (initialState ? initialState(config) : {}),
  };
  if (definition.mount) spec.mount = definition.mount.bind(definition);
  if (definition.handleSignal) spec.handleSignal = definition.handleSignal.bind(definition);
  if (definition.transformResult) spec.transformResult = definition.transformResult.bind(definition);
  if (definition.unmount) spec.unmount = definition.unmount.bind(definition);
  if (definition.children) spec.children = definition.children.bind(definition);
  return Object.freeze(spec);
}

/** True when `value` is a skill made by `defineSkill`. */
export function isSkill(value: unknown): value is AnySkill {
  return isDefinedAs(value, 'skill', 'initialState');
}

/** Validates a skill's config with its config schema, applying defaults. */
export function resolveSkillConfig(
  skill: AnySkill,
  config: unknown,
): Result<Record<string, unknown>> {
  if (config !== undefined && !isPlainObject(config)) {
    return { ok: false, error: errorInfo('invalid_config', `config for skill '${skill.name}' must be a plain object`, { skill: skill.name }) };
  }
  if (!skill.configSchema) return { ok: true, value: config ?? {} };
  // A key the schema would drop without a word is most likely a typo: refused, as in state.
  const stray = config === undefined ? undefined : strayKey(skill.configSchema, config);
  if (stray !== undefined) {
    return {
      ok: false,
      error: configError(skill.name, [{ path: [stray], message: `unknown field '${stray}' (the config schema has ${knownFields(skill.configSchema)})`, code: 'unrecognized_keys' }]),
    };
  }
  const parsed = parseSync(skill.configSchema, config ?? {});
  if (parsed.ok) return { ok: true, value: parsed.value as Record<string, unknown> };
  return { ok: false, error: configError(skill.name, parsed.issues) };
}

function knownFields(schema: ObjectSchema): string {
  const names = Object.keys(schema.shape);
  return names.length ? names.map((name) => `'${name}'`).join(', ') : 'no fields';
}

function configError(skill: string, issues: Issue[]): ErrorInfo {
  return errorInfo('invalid_config', `invalid config for skill '${skill}': ${formatIssues(issues)}`, { skill, issues });
}

/**
 * Builds a skill's initial slice: `initialState(config)`, then the slice schema's defaults,
 * then the caller's values on top, validated. Never throws.
 */
export function initialSlice(
  skill: AnySkill,
  config: Record<string, unknown>,
  overrides?: Record<string, unknown>,
): Result<Record<string, unknown>> {
  let initial: unknown;
  try {
    initial = skill.initialState(config);
  } catch (thrown) {
    return {
      ok: false,
      error: withCause(errorInfo('invalid_state', `initialState of skill '${skill.name}' threw: ${describeThrown(thrown)}`, { skill: skill.name }), thrown),
    };
  }
  if (initial === undefined || initial === null) initial = {};
  if (!isPlainObject(initial)) {
    return { ok: false, error: errorInfo('invalid_state', `initialState of skill '${skill.name}' must return a plain object`, { skill: skill.name }) };
  }
  const parsed = parseSync(skill.schema, overrides ? deepMerge(initial, overrides) : initial);
  if (parsed.ok) return { ok: true, value: parsed.value as Record<string, unknown> };
  return {
    ok: false,
    error: errorInfo('invalid_state', `invalid state for skill '${skill.name}': ${formatIssues(parsed.issues)}`, {
      skill: skill.name,
      issues: parsed.issues,
    }),
  };
}

/** Splits an attachment into its skill and raw config. */
export function unpackAttachment(attachment: SkillAttachment): [AnySkill, unknown] {
  return Array.isArray(attachment) ? [attachment[0] as AnySkill, attachment[1]] : [attachment as AnySkill, undefined];
}

/** A skill's metadata as plain data (what a UI or a registry listing shows). */
export interface SkillSummary {
  name: string;
  stateKey: string;
  description: string | undefined;
  category: string | undefined;
  vsn: string | undefined;
  tags: string[];
  actions: string[];
  requires: string[];
  signalPatterns: string[];
  instructions: string | undefined;
}

/** The metadata of a skill, as plain data. */
export function getSpec(skill: AnySkill): SkillSummary {
  return {
    name: skill.name,
    stateKey: skill.stateKey,
    description: skill.description,
    category: skill.category,
    vsn: skill.vsn,
    tags: [...skill.tags],
    actions: skill.actions.map((action) => action.name),
    requires: [...skill.requires],
    signalPatterns: [...skill.signalPatterns],
    instructions: skill.instructions,
  };
}
