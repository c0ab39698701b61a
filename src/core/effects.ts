/**
 * Effects: the closed vocabulary of things the pure core asks the runtime to do. Each effect is
 * a plain object with a `type` and `meta: { skill?, tags? }`; actions are named by name, never
 * by function, so effects survive JSON, persistence and the inspector. Skills add no new kinds.
 *
 * Pure: no I/O, no XState.
 */
import { errorInfo, type ErrorInfo } from './errors.js';
import { strayField } from './options.js';
import { deepFreeze, describeGiven, isPlainObject } from './plain.js';
import type { Result } from './result.js';
import { signalProblem, type Signal } from './signal.js';

/** What every effect carries besides its payload: the skill that produced it and tags. */
export interface EffectMeta {
  /** The skill whose action or hook produced the effect. */
  skill?: string;
  tags?: string[];
}

/** The runtime registers an action on the agent (a skill was mounted). */
export interface RegisterActionEffect {
  type: 'register_action';
  action: string;
  meta: EffectMeta;
}

/** The runtime deregisters an action from the agent (a skill was unmounted). */
export interface DeregisterActionEffect {
  type: 'deregister_action';
  action: string;
  meta: EffectMeta;
}

/** Run an action on this agent next, through `cmd`. */
export interface RunEffect {
  type: 'run';
  action: string;
  params: Record<string, unknown>;
  meta: EffectMeta;
}

/**
 * Answer the caller of the signal being processed (the `call` that is waiting), or, with `to`,
 * the caller of an earlier signal whose answer was deferred (`defer_reply`). With `error`, that
 * caller's promise rejects with it instead.
 */
export interface ReplyEffect {
  type: 'reply';
  data: unknown;
  /** The id of an earlier signal whose answer was deferred: its caller gets this reply. */
  to?: string;
  /** Answers the deferred caller with this error instead of `data` (only with `to`). */
  error?: ErrorInfo;
  meta: EffectMeta;
}

/**
 * The answer to the `call` being processed comes later: its caller keeps waiting (within its
 * timeout) until a later step's `reply` effect names this signal's id in `to`. Ignored when the
 * signal was sent, not called.
 */
export interface DeferReplyEffect {
  type: 'defer_reply';
  meta: EffectMeta;
}

/** Publish a signal to subscribers and to every agent whose patterns match it. */
export interface EmitEffect {
  type: 'emit';
  signal: Signal;
  meta: EffectMeta;
}

/** Start a child agent of this agent from a definition known to the system, by name. */
export interface SpawnEffect {
  type: 'spawn';
  definition: string;
  id?: string;
  state?: Record<string, unknown>;
  meta: EffectMeta;
}

/** Stop an agent: this one when `agent` is absent. */
export interface StopEffect {
  type: 'stop';
  agent?: string;
  reason?: string;
  meta: EffectMeta;
}

/** Deliver a signal to this agent after `delay` milliseconds (cancelled if the agent stops). */
export interface ScheduleEffect {
  type: 'schedule';
  delay: number;
  signal: Signal;
  meta: EffectMeta;
}

/** Report a failure to the caller and to the system's `errors` subscribers. */
export interface ErrorEffect {
  type: 'error';
  error: ErrorInfo;
  meta: EffectMeta;
}

/** An effect: a plain object asking the runtime to do something (register an action, emit, spawn, stop, schedule, report an error...). */
export type Effect =
  | RegisterActionEffect
  | DeregisterActionEffect
  | RunEffect
  | ReplyEffect
  | DeferReplyEffect
  | EmitEffect
  | SpawnEffect
  | StopEffect
  | ScheduleEffect
  | ErrorEffect;

/** The kind of an effect (its `type`). */
export type EffectType = Effect['type'];

/** Every effect kind once: a kind added to `Effect` and missing here (or the reverse) does not compile. */
const EFFECT_KINDS: { readonly [K in EffectType]: true } = {
  register_action: true,
  deregister_action: true,
  run: true,
  reply: true,
  defer_reply: true,
  emit: true,
  spawn: true,
  stop: true,
  schedule: true,
  error: true,
};

/** The fields of each effect kind: one entry per key of its type. */
const EFFECT_FIELDS: { readonly [K in EffectType]: Readonly<Record<keyof Extract<Effect, { type: K }>, true>> } = {
  register_action: { type: true, action: true, meta: true },
  deregister_action: { type: true, action: true, meta: true },
  run: { type: true, action: true, params: true, meta: true },
  reply: { type: true, data: true, to: true, error: true, meta: true },
  defer_reply: { type: true, meta: true },
  emit: { type: true, signal: true, meta: true },
  spawn: { type: true, definition: true, id: true, state: true, meta: true },
  stop: { type: true, agent: true, reason: true, meta: true },
  schedule: { type: true, delay: true, signal: true, meta: true },
  error: { type: true, error: true, meta: true },
};

/** The effect kinds, in a fixed order. */
export const EFFECT_TYPES: readonly EffectType[] = Object.freeze(Object.keys(EFFECT_KINDS) as EffectType[]);

/** The name an action is registered under: `skill/action`, or `action` for the agent's own. */
export function registeredName(effect: RegisterActionEffect | DeregisterActionEffect): string {
  return effect.meta.skill === undefined ? effect.action : `${effect.meta.skill}/${effect.action}`;
}

const EFFECT_TYPE_SET: ReadonlySet<string> = new Set(EFFECT_TYPES);

function meta(value: EffectMeta | undefined): EffectMeta {
  return value ? { ...value } : {};
}

function guard<K extends EffectType>(type: K) {
  return (value: unknown): value is Extract<Effect, { type: K }> =>
    isPlainObject(value) && value.type === type && effectProblem(value) === undefined;
}

/** Where an effect made by a constructor keeps options given to it that are not an object. */
const GIVEN_OPTIONS: unique symbol = Symbol('skillstate.effectOptions');

/** The options of the constructors that take some, by effect kind. */
const CONSTRUCTOR_OPTIONS: Partial<Record<EffectType, string>> = { reply: '{ to, error }', spawn: '{ id, state }', stop: '{ agent, reason }' };

/**
 * The options given to an effect's constructor, as fields of the effect: every one with a value,
 * so that one it does not take (`Effects.stop({ agnet })`, which would otherwise stop the agent
 * itself) reaches `effectProblem`, which refuses the effect naming it. Options that are not an
 * object (`Effects.stop('child')`) are kept aside, refused the same way.
 */
function optionFields(options: unknown): Record<string | symbol, unknown> {
  if (!isPlainObject(options)) return options === undefined ? {} : { [GIVEN_OPTIONS]: options };
  const fields: Record<string, unknown> = {};
  for (const key of Object.keys(options)) if (options[key] !== undefined) fields[key] = options[key];
  return fields;
}

/** Constructors and a type guard for each effect kind. */
export const Effects = {
  registerAction: (action: string, m?: EffectMeta): RegisterActionEffect => ({ type: 'register_action', action, meta: meta(m) }),
  deregisterAction: (action: string, m?: EffectMeta): DeregisterActionEffect => ({ type: 'deregister_action', action, meta: meta(m) }),
  run: (action: string, params: Record<string, unknown> = {}, m?: EffectMeta): RunEffect => ({ type: 'run', action, params, meta: meta(m) }),
  reply: (data: unknown, m?: EffectMeta, options?: { to?: string; error?: ErrorInfo }): ReplyEffect => ({ type: 'reply', data, meta: meta(m), ...optionFields(options) }),
  deferReply: (m?: EffectMeta): DeferReplyEffect => ({ type: 'defer_reply', meta: meta(m) }),
  emit: (signal: Signal, m?: EffectMeta): EmitEffect => ({ type: 'emit', signal, meta: meta(m) }),
  spawn: (definition: string, options?: { id?: string; state?: Record<string, unknown> }, m?: EffectMeta): SpawnEffect => ({ type: 'spawn', definition, meta: meta(m), ...optionFields(options) }),
  stop: (options?: { agent?: string; reason?: string }, m?: EffectMeta): StopEffect => ({ type: 'stop', meta: meta(m), ...optionFields(options) }),
  schedule: (delay: number, signal: Signal, m?: EffectMeta): ScheduleEffect => ({ type: 'schedule', delay, signal, meta: meta(m) }),
  error: (error: ErrorInfo, m?: EffectMeta): ErrorEffect => ({ type: 'error', error, meta: meta(m) }),

  isRegisterAction: guard('register_action'),
  isDeregisterAction: guard('deregister_action'),
  isRun: guard('run'),
  isReply: guard('reply'),
  isDeferReply: guard('defer_reply'),
  isEmit: guard('emit'),
  isSpawn: guard('spawn'),
  isStop: guard('stop'),
  isSchedule: guard('schedule'),
  isError: guard('error'),
} as const;

/** True when `value` is a well-formed effect of any kind. */
export function isEffect(value: unknown): value is Effect {
  return effectProblem(value) === undefined;
}

/** Why `value` is not a well-formed effect, or undefined when it is. */
export function effectProblem(value: unknown): string | undefined {
  if (!isPlainObject(value)) return 'an effect must be a plain object';
  const type = value.type;
  if (typeof type !== 'string' || !EFFECT_TYPE_SET.has(type)) {
    return `unknown effect type '${String(type)}'; known types: ${EFFECT_TYPES.join(', ')}`;
  }
  // A misspelled field (`agnet` for a stop's agent, which would stop the agent itself) is refused, not dropped.
  const fields = EFFECT_FIELDS[type as EffectType];
  if (GIVEN_OPTIONS in value) {
    return `effect '${type}' was made with options that are not a plain object (${describeGiven((value as { [GIVEN_OPTIONS]: unknown })[GIVEN_OPTIONS])}): Effects.${type} takes ${CONSTRUCTOR_OPTIONS[type as EffectType] ?? 'no options'}`;
  }
  const stray = strayField(value, fields, `a '${type}' effect`);
  if (stray) return `effect '${type}': ${stray.field} ${stray.message}`;
  if (value.meta !== undefined) {
    const problem = metaProblem(type, value.meta);
    if (problem) return problem;
  }
  switch (type as EffectType) {
    case 'register_action':
    case 'deregister_action':
      return typeof value.action === 'string' ? undefined : `effect '${type}' needs an action name`;
    case 'run':
      if (typeof value.action !== 'string') return `effect 'run' needs an action name`;
      return value.params === undefined || isPlainObject(value.params) ? undefined : `effect 'run' of '${value.action}' has params that are not an object`;
    case 'reply':
      if (value.to !== undefined && (typeof value.to !== 'string' || value.to === '')) return `effect 'reply' has a 'to' that is not a signal id`;
      if (value.error !== undefined) {
        if (value.to === undefined) return `effect 'reply' carries an error but no 'to': a step's own caller gets its error from the step`;
        if (!isPlainObject(value.error) || typeof value.error.code !== 'string' || typeof value.error.message !== 'string') return `effect 'reply' has an error without a code and a message`;
      }
      return undefined;
    case 'defer_reply':
      return undefined;
    case 'emit': {
      const problem = signalProblem(value.signal);
      return problem ? `effect 'emit' carries an invalid signal: ${problem}` : undefined;
    }
    case 'spawn':
      return typeof value.definition === 'string' && value.definition.length > 0
        ? undefined
        : `effect 'spawn' needs the name of an agent definition`;
    case 'stop':
      return value.agent === undefined || typeof value.agent === 'string' ? undefined : `effect 'stop' has an agent id that is not a string`;
    case 'schedule': {
      const delay = value.delay;
      if (typeof delay !== 'number' || !Number.isFinite(delay) || delay < 0) {
        return `effect 'schedule' needs a delay in milliseconds (a finite number >= 0), got ${describeGiven(delay)}`;
      }
      const problem = signalProblem(value.signal);
      return problem ? `effect 'schedule' carries an invalid signal: ${problem}` : undefined;
    }
    case 'error':
      return isPlainObject(value.error) && typeof value.error.code === 'string' && typeof value.error.message === 'string'
        ? undefined
        : `effect 'error' needs an error with a code and a message`;
  }
}

/** The fields of an effect's meta: one entry per key of `EffectMeta`. */
const META_FIELDS = { skill: true, tags: true } as const satisfies Record<keyof EffectMeta, true>;

/** Why an effect's meta is not `{ skill?: string, tags?: string[] }`, or undefined when it is. */
function metaProblem(type: string, meta: unknown): string | undefined {
  if (!isPlainObject(meta)) return `effect '${type}' has a meta that is not an object`;
  // A misspelled `tag` would be dropped without a word.
  const stray = strayField(meta, META_FIELDS, 'an effect meta');
  if (stray) return `effect '${type}' has a meta whose ${stray.field} ${stray.message}`;
  if (meta.skill !== undefined && typeof meta.skill !== 'string') return `effect '${type}' has a meta whose skill is not a string`;
  if (meta.tags !== undefined && !(Array.isArray(meta.tags) && meta.tags.every((tag) => typeof tag === 'string'))) {
    return `effect '${type}' has meta tags that are not an array of strings`;
  }
  return undefined;
}

/** An `error` effect for a failure, with the skill recorded in its meta. */
export function errorEffect(error: ErrorInfo): ErrorEffect {
  return error.skill === undefined ? { type: 'error', error, meta: {} } : { type: 'error', error, meta: { skill: error.skill } };
}

/** Builds an `error` effect directly from a code and a message. */
export function failureEffect(code: ErrorInfo['code'], message: string, extras?: Parameters<typeof errorInfo>[2]): ErrorEffect {
  return errorEffect(errorInfo(code, message, extras));
}

/** Records the producing skill on an effect that does not name one. */
export function stampSkill(effect: Effect, skill: string | undefined): Effect {
  if (skill === undefined || effect.meta?.skill !== undefined) return effect.meta ? effect : { ...effect, meta: {} };
  return { ...effect, meta: { ...effect.meta, skill } };
}

/**
 * Checks the effects user code returned (`what`: `action 'add'`, `mount hook of skill 'x'`):
 * an array of valid effects, each stamped with `extras.skill` and frozen all the way down. The
 * one check of an effect list, for actions and hooks alike.
 */
export function checkEffectList(produced: unknown, what: string, extras: { action?: string; skill?: string | undefined }): Result<Effect[]> {
  if (!Array.isArray(produced)) return { ok: false, error: errorInfo('invalid_effect', `${what} returned effects that are not an array`, extras) };
  const effects = new Array<Effect>(produced.length);
  for (let i = 0; i < produced.length; i++) {
    const effect: unknown = produced[i];
    const problem = effectProblem(effect);
    if (problem) return { ok: false, error: errorInfo('invalid_effect', `${what} returned an invalid effect at index ${i}: ${problem}`, extras) };
    // Frozen: the same effect reaches the trace, subscribers and the agents a signal is emitted to.
    effects[i] = deepFreeze(stampSkill(effect as Effect, extras.skill));
  }
  return { ok: true, value: effects };
}
