/**
 * Actions: the unit of work. An action has a name that is a valid LLM tool name, a zod input
 * schema that params are validated against before it runs, and a `run` function that may be
 * sync or async. An action changes state, asks for effects or mounts skills only through what
 * it returns (`result(output, { state, effects, mount, unmount, replace })`), or fails through
 * `fail(reason, message)` or a throw.
 *
 * Pure: no I/O, no XState.
 */
import type { z } from 'zod';
import { closestName, didYouMean } from './closest-name.js';
import { DefinitionError, refuseDefinitionField, type ErrorDetails } from './errors.js';
import { strayField, unknownField } from './options.js';
import { describeGiven, isDefinedAs } from './plain.js';
import type { Effect } from './effects.js';
import { isObjectSchema, isZodSchema, schemaProblem, type ObjectSchema } from './schema.js';
import type { Signal } from './signal.js';

/** Valid LLM tool names, as OpenAI and Anthropic accept them. */
export const ACTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const RESULT = Symbol.for('skillstate.result');
const FAILURE = Symbol.for('skillstate.failure');
/** Where a result keeps what `result` could not read in its changes. */
const UNREAD = Symbol.for('skillstate.unreadChanges');

/** What an action sees besides its params. Read-only: change state by returning `result(...)`. */
export interface ActionContext<TState = unknown, TConfig = unknown> {
  /** The id of the agent running the action. */
  readonly agentId: string;
  /** The agent's whole state. */
  readonly state: Readonly<Record<string, unknown>>;
  /** The state slice of the skill that owns the action (undefined for the agent's own actions). */
  readonly skillState: TState;
  /** The owning skill's config, validated by its config schema. */
  readonly config: TConfig;
  /** The owning skill's name (undefined for the agent's own actions). */
  readonly skill: string | undefined;
  /** The signal being processed, when the action runs because of one. */
  readonly signal: Signal | undefined;
  /**
   * The time, in epoch milliseconds. An action that records a time reads it here rather than
   * from `Date`, and so stays a function of its params and its context.
   */
  now(): number;
  /** A new unique id (a nanoid). An action that makes ids takes them here, for the same reason. */
  newId(): string;
  /**
   * Aborted when the work the action was asked for is no longer wanted while it runs: its agent
   * stops, the call that caused the step is cancelled by its caller or times out, or (for a
   * model's tool call) its turn is cancelled. Its `reason` is a `RuntimeError` whose `code` says
   * why (`agent_stopped`, `cancelled`, `timeout`). Hand it to what the action starts (`fetch`,
   * a script, a child process) so that stops too. Never aborted where nothing can cancel the
   * step (`cmd`, the Restate host).
   */
  readonly abortSignal: AbortSignal;
}

/**
 * Where a step's `ctx.abortSignal` comes from, given by a host that can cancel steps. Asked only
 * when an action first reads the signal, so a step whose actions never read it costs nothing.
 */
export interface AbortSource {
  /**
   * The signal of the step under way; given `steps` (what `steps` was when the action's context
   * was made), the signal of that step, which is one never aborted once that step has ended.
   */
  abortSignal(steps?: number): AbortSignal;
  /**
   * How many steps the host has ended, when it counts them: a context read after its step ended
   * (kept in a closure) then gets a signal of its own, never the signal of a later step.
   */
  readonly steps?: number;
}

/**
 * The context `cmd` gives an action's `run`: the fields as they are, and the abort signal asked
 * of the host on first read (a class, so that getter is on the prototype: a step pays for no
 * closure, and a sync action that never reads the signal allocates nothing for it).
 */
export class ActionRunContext<TState = unknown, TConfig = unknown> implements ActionContext<TState, TConfig> {
  // Own properties, so `{ ...ctx }` keeps them (the conversation's actions copy their context).
  readonly now: () => number;
  readonly newId: () => string;
  private aborting: AbortSignal | undefined;
  /** The host's count of ended steps when this context was made: which step it belongs to. */
  private readonly steps: number | undefined;

  constructor(
    readonly agentId: string,
    readonly state: Readonly<Record<string, unknown>>,
    readonly skillState: TState,
    readonly config: TConfig,
    readonly skill: string | undefined,
    readonly signal: Signal | undefined,
    private readonly abort: AbortSource | undefined,
    now: () => number,
    newId: () => string,
  ) {
    this.now = now;
    this.newId = newId;
    this.steps = abort?.steps;
  }

  get abortSignal(): AbortSignal {
    // Where nothing can cancel the step, a signal of its own all the same: what one run hangs on
    // it (listeners never removed) is not carried into the next.
    return (this.aborting ??= this.abort === undefined ? new AbortController().signal : this.abort.abortSignal(this.steps));
  }
}

/**
 * A skill as an action names it to mount or unmount: any skill made by `defineSkill` fits (it is
 * checked when the mount is applied). Described by shape, so actions need not import skills,
 * which are made of actions.
 */
export interface SkillHandle {
  readonly kind: 'skill';
  readonly name: string;
}

/** What an action may change besides returning its output. */
export interface ActionChanges<TState = unknown> {
  /** Fields of the owning skill's slice to change (validated against the slice schema). */
  state?: Partial<TState>;
  effects?: readonly Effect[];
  /** Skills to mount on the agent (as `mountSkills` would, dependencies first). */
  mount?: readonly (SkillHandle | readonly [SkillHandle, Record<string, unknown>])[];
  /** Skills to unmount, by spec or name. */
  unmount?: readonly (SkillHandle | string)[];
  /**
   * Skills to mount, or, when a skill of the same name is mounted, to put in its place (its
   * slice kept when the new schema accepts it): see `replaceSkill`. Applied after `mount`.
   */
  replace?: readonly SkillHandle[];
}

/** An action's output together with the changes it asks for. Build it with `result()`. */
export interface ActionResult<TOutput = unknown, TState = unknown> extends Readonly<ActionChanges<TState>> {
  readonly [RESULT]: true;
  readonly output: TOutput;
}

/** An expected failure, with a stable reason code. Build it with `fail()`. */
export interface ActionFailure {
  readonly [FAILURE]: true;
  readonly reason: string;
  readonly message: string;
  readonly details?: Record<string, unknown>;
}

/**
 * Returns an output together with changes: a state update, effects, skills to mount or unmount.
 * The changes apply all together or not at all.
 */
export function result<TOutput, TState = unknown>(output: TOutput, changes: ActionChanges<TState> = {}): ActionResult<TOutput, TState> {
  const value: ActionChanges<TState> & { [RESULT]: true; output: TOutput; [UNREAD]?: UnreadChanges } = { [RESULT]: true, output };
  if (typeof changes !== 'object' || changes === null || Array.isArray(changes)) {
    value[UNREAD] = { given: describeGiven(changes) };
    return value;
  }
  // Only the changes given: an absent key and an undefined one read the same to `cmd`, not to
  // `toEqual`. One test per key to copy them (every sync action's step runs this); `strayField`
  // after only looks for a key that is none of them, and builds nothing unless it finds one.
  if (changes.state !== undefined) value.state = changes.state;
  if (changes.effects !== undefined) value.effects = changes.effects;
  if (changes.mount !== undefined) value.mount = changes.mount;
  if (changes.unmount !== undefined) value.unmount = changes.unmount;
  if (changes.replace !== undefined) value.replace = changes.replace;
  // A misspelled `stat` would otherwise change nothing, without a word: `cmd` refuses the result.
  const stray = strayField(changes, CHANGE_FIELDS, 'the changes');
  if (stray) value[UNREAD] = { key: stray.field };
  return value;
}

/** The changes `result` takes: one entry per key of `ActionChanges`. */
const CHANGE_FIELDS = { state: true, effects: true, mount: true, unmount: true, replace: true } as const satisfies Record<keyof ActionChanges, true>;

/** What `result` was given that it cannot read: the first key of its changes it does not take, or changes that are not an object (described). */
export type UnreadChanges = { key: string; given?: undefined } | { given: string; key?: undefined };

/** What `result` could not read in the changes it was given, if anything (`cmd` then refuses the result). */
export function unreadChanges(value: ActionResult): UnreadChanges | undefined {
  return (value as { [UNREAD]?: UnreadChanges })[UNREAD];
}

/**
 * Why `cmd` refuses a result whose changes could not be read (see `unreadChanges`): the key
 * that is not a change, the one it probably meant, and the changes there are.
 */
export function unreadChangesProblem(unread: UnreadChanges): { message: string; details?: ErrorDetails<'invalid_output'> } {
  const known = Object.keys(CHANGE_FIELDS);
  if (unread.key === undefined) return { message: `result(output, changes) was given changes that are not an object (${unread.given}); changes are an object such as { state }` };
  const meant = closestName(unread.key, known);
  const details: ErrorDetails<'invalid_output'> = { field: unread.key, known };
  if (meant !== undefined) details.suggestion = meant;
  return { message: `result(output, changes) was given '${unread.key}', which is not a change${didYouMean(meant)} (changes: ${known.join(', ')})`, details };
}

/** The same result marked with what it could not read: how a result is rebuilt from a record of it (a journal) that says so. */
export function withUnreadChanges<T extends ActionResult>(value: T, unread: UnreadChanges | undefined): T {
  if (unread !== undefined) (value as { [UNREAD]?: UnreadChanges })[UNREAD] = unread;
  return value;
}

/**
 * Fails the action with a reason code (e.g. `division_by_zero`). The caller receives an
 * `action_failed` error whose details carry the reason; the agent's state is left unchanged. A
 * reason that is not a string (`fail(404)`) fails the action with `invalid_output` instead,
 * saying so.
 */
export function fail(reason: string, message?: string, details?: Record<string, unknown>): ActionFailure {
  const failure: { [FAILURE]: true; reason: string; message: string; details?: Record<string, unknown> } = {
    [FAILURE]: true,
    reason,
    // Described, not read as text: `cmd` refuses what is not a string, with a message of its own.
    message: message ?? (typeof reason === 'string' ? reason.replace(/_/g, ' ') : describeGiven(reason)),
  };
  if (details !== undefined) failure.details = details;
  return failure;
}

/** Why `cmd` cannot report a failure `fail` built: a reason that is not a code string. Undefined for one it can. */
export function failureProblem(failure: ActionFailure): string | undefined {
  const reason: unknown = failure.reason;
  return typeof reason === 'string' ? undefined : `fail(reason) needs a reason code string such as 'not_found', got ${describeGiven(reason)}`;
}

export function isActionResult(value: unknown): value is ActionResult {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[RESULT] === true;
}

export function isActionFailure(value: unknown): value is ActionFailure {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[FAILURE] === true;
}

/** The output type of an action whose `run` returns `R`. */
export type OutputOf<R> = R extends ActionFailure ? never : R extends ActionResult<infer O, unknown> ? O : R;

/** An action made by `defineAction`: a valid tool name, a description, an input schema and `run`. */
export interface ActionSpec<TInput extends ObjectSchema = ObjectSchema, TOutput = unknown, TState = unknown, TConfig = unknown> {
  readonly kind: 'action';
  readonly name: string;
  readonly description: string;
  readonly input: TInput;
  readonly output: z.ZodType<TOutput> | undefined;
  /** The slice schema the action expects, when it declares one (used for typing and checked by `defineSkill`). */
  readonly state: ObjectSchema | undefined;
  /** False when the action is hidden from language models: no tool is made for it, yet routes and instructions reach it. */
  readonly tool: boolean;
  /** True when a model's call of this action waits for a person's approval before it runs. */
  readonly needsApproval: boolean;
  run(
    params: z.output<TInput>,
    ctx: ActionContext<TState, TConfig>,
  ): unknown;
}

/** An action of any input, output and state. */
export type AnyAction = ActionSpec<ObjectSchema, unknown, unknown, unknown>;

/** What `defineAction` takes: name, description, input schema, optional output and state schemas, and `run`. */
export interface ActionDefinition<
  TInput extends ObjectSchema,
  TReturn,
  TStateSchema extends ObjectSchema | undefined,
  TConfig,
> {
  /** A valid tool name: letters, digits, `_` and `-`, at most 64 characters. */
  name: string;
  /** What the action does, for people and language models. */
  description: string;
  /** Params are validated against this before `run` is called. */
  input: TInput;
  /** When given, the output is validated against it after `run`. */
  output?: z.ZodType;
  /** The owning skill's slice schema, to type `ctx.skillState` and the state in `result()`. */
  state?: TStateSchema;
  /**
   * Whether language models see the action as a tool (default true). A hidden action is still
   * reached by routes, instructions and `ref.run`; a model that names it gets `unknown_action`.
   */
  tool?: boolean;
  /**
   * When true, a model-driven agent's turn pauses in `awaiting-approval` before running a call
   * of this action, until a `chat.approve` or `chat.deny` signal names the tool call.
   */
  needsApproval?: boolean;
  run(
    params: z.output<TInput>,
    ctx: ActionContext<TStateSchema extends ObjectSchema ? z.output<TStateSchema> : unknown, TConfig>,
  ): TReturn;
}

type StateOf<S> = S extends ObjectSchema ? z.output<S> : unknown;

/** The fields `defineAction` takes: one entry per key of `ActionDefinition`. */
const ACTION_FIELDS = { name: true, description: true, input: true, output: true, state: true, tool: true, needsApproval: true, run: true } as const satisfies Record<
  keyof ActionDefinition<ObjectSchema, unknown, undefined, unknown>,
  true
>;

/**
 * Defines an action. Throws a `DefinitionError` (code `invalid_action`) naming the action and
 * the field when the definition cannot work.
 *
 * @example
 * const add = defineAction({
 *   name: 'add',
 *   description: 'Add two numbers',
 *   input: z.object({ a: z.number(), b: z.number() }),
 *   run: ({ a, b }) => ({ result: a + b }),
 * });
 */
export function defineAction<
  TInput extends ObjectSchema,
  TReturn,
  TStateSchema extends ObjectSchema | undefined = undefined,
  TConfig = unknown,
>(
  definition: ActionDefinition<TInput, TReturn, TStateSchema, TConfig>,
): ActionSpec<TInput, OutputOf<Awaited<TReturn>>, StateOf<TStateSchema>, TConfig> {
  const name = definition?.name;
  const problem = (field: string, message: string): never => refuseDefinitionField('action', name, field, message);
  if (typeof definition !== 'object' || definition === null) {
    throw new DefinitionError({ code: 'invalid_action', message: 'defineAction needs a definition object' });
  }
  const stray = unknownField(definition, ACTION_FIELDS);
  if (stray) problem(stray.field, stray.message);
  if (typeof name !== 'string' || !ACTION_NAME.test(name)) {
    problem('name', 'must be 1 to 64 ASCII letters, digits, "_" or "-" (a valid tool name)');
  }
  if (typeof definition.description !== 'string' || definition.description.trim() === '') {
    problem('description', 'must be a non-empty string (language models read it to choose the tool)');
  }
  if (!isObjectSchema(definition.input)) problem('input', schemaProblem(definition.input, 'must be a zod object schema (z.object({...}))'));
  if (definition.output !== undefined && !isZodSchema(definition.output)) problem('output', schemaProblem(definition.output, 'must be a zod schema'));
  if (definition.state !== undefined && !isObjectSchema(definition.state)) problem('state', schemaProblem(definition.state, 'must be a zod object schema'));
  if (typeof definition.run !== 'function') problem('run', 'must be a function');
  if (definition.tool !== undefined && typeof definition.tool !== 'boolean') problem('tool', 'must be a boolean (false hides the action from language models)');
  if (definition.needsApproval !== undefined && typeof definition.needsApproval !== 'boolean') problem('needsApproval', 'must be a boolean');

  const run = definition.run;
  return Object.freeze({
    kind: 'action' as const,
    name,
    description: definition.description,
    input: definition.input,
    output: definition.output as z.ZodType<OutputOf<Awaited<TReturn>>> | undefined,
    state: definition.state,
    tool: definition.tool ?? true,
    needsApproval: definition.needsApproval ?? false,
    run: run as ActionSpec<TInput, OutputOf<Awaited<TReturn>>, StateOf<TStateSchema>, TConfig>['run'],
  });
}

/** True when `value` is an action made by `defineAction`. */
export function isAction(value: unknown): value is AnyAction {
  return isDefinedAs(value, 'action', 'run');
}
