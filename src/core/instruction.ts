/**
 * Instructions: what `cmd` runs. An instruction names an action (by name or by the action
 * itself) with params, optionally saying which skill's action is meant when two skills share a
 * name. Route targets produce instructions from signals.
 *
 * Pure: no I/O, no XState.
 */
import { isAction, type AnyAction } from './action.js';
import { describeThrown, errorInfo, RouteError, withCause, type ErrorDetails, type ErrorInfo } from './errors.js';
import { strayField, unknownField, type UnknownField } from './options.js';
import { describeGiven, describeValue, isPlainObject } from './plain.js';
import type { Result } from './result.js';
import type { Signal } from './signal.js';

/** An instruction as an object: the action (by name or by value), its params, and optionally the skill that provides it. */
export interface InstructionObject {
  action: string | AnyAction;
  params?: Record<string, unknown>;
  /** Which skill's action is meant, when several active skills have an action of this name. */
  skill?: string;
}

/** An action name, an action, or `{ action, params, skill }`. */
export type Instruction = string | AnyAction | InstructionObject;

/** An instruction after normalisation. */
export interface NormalizedInstruction {
  action: string;
  /** The action object, when the instruction gave one: resolution then matches by identity. */
  actionSpec: AnyAction | undefined;
  params: Record<string, unknown>;
  skill: string | undefined;
}

/**
 * What a route points at: an action (its params taken from the signal's data, overridden by
 * the route's static params) or a handler that turns the signal into instructions.
 */
export type RouteTarget =
  | InstructionObject
  | ((signal: Signal) => Instruction | readonly Instruction[]);

/** The fields of an instruction object and of an action target: one entry per key of `InstructionObject`. */
const TARGET_FIELDS = { action: true, params: true, skill: true } as const satisfies Record<keyof InstructionObject, true>;

/**
 * Checks what a route points at when the route is defined: a handler, or `{ action, params?,
 * skill? }` with an action name or action, plain-object params and a skill name. Throws a
 * `RouteError` (`invalid_route`) naming the route otherwise — a target given as a bare name, params
 * that are not an object or a misspelled `parms` would each be lost without a word at every signal.
 */
export function checkRouteTarget(route: { path: string; target: unknown }): void {
  const target = route.target;
  if (typeof target === 'function') return;
  const refuse = (problem: string): never => {
    throw new RouteError({ code: 'invalid_route', message: `route '${route.path}' ${problem}`, subject: route.path });
  };
  if (!isPlainObject(target)) {
    refuse(`has a target that is neither { action } nor a handler function, got ${describeGiven(target)}${typeof target === 'string' ? ` (write { action: '${target}' })` : ''}`);
  }
  const { action, params, skill } = target as Record<string, unknown>;
  if (typeof action !== 'string' && !isAction(action)) refuse(`has a target whose action is not an action name or an action made by defineAction, got ${describeGiven(action)}`);
  if (params !== undefined && !isPlainObject(params)) refuse(`has a target whose params are not an object, got ${describeGiven(params)}`);
  if (skill !== undefined && typeof skill !== 'string') refuse(`has a target whose skill is not a skill name, got ${describeGiven(skill)}`);
  const stray = unknownField(target as object, TARGET_FIELDS, { of: 'a target' });
  if (stray) refuse(`has a target whose ${stray.field} ${stray.message}`);
}

/** Normalises an instruction, or explains why it is malformed. Never throws. */
export function normalizeInstruction(value: unknown): Result<NormalizedInstruction> {
  if (typeof value === 'string') {
    return { ok: true, value: { action: value, actionSpec: undefined, params: {}, skill: undefined } };
  }
  if (isAction(value)) {
    return { ok: true, value: { action: value.name, actionSpec: value, params: {}, skill: undefined } };
  }
  if (!isPlainObject(value)) {
    return { ok: false, error: malformed(`an instruction must be an action name, an action or { action, params }; got ${describeValue(value)}`) };
  }
  const { action, params, skill } = value;
  let name: string;
  let actionSpec: AnyAction | undefined;
  if (typeof action === 'string') name = action;
  else if (isAction(action)) {
    name = action.name;
    actionSpec = action;
  } else {
    return { ok: false, error: malformed(`instruction has no action: 'action' must be an action name or an action, got ${describeValue(action)}`) };
  }
  if (params !== undefined && !isPlainObject(params)) {
    return { ok: false, error: malformed(`instruction for '${name}' has params that are not an object (got ${describeValue(params)})`, name) };
  }
  if (skill !== undefined && typeof skill !== 'string') {
    return { ok: false, error: malformed(`instruction for '${name}' names a skill that is not a string`, name) };
  }
  // A misspelled `parms` would run the action with no params at all, without a word.
  const stray = strayField(value, TARGET_FIELDS, 'an instruction');
  if (stray) return { ok: false, error: strayFieldError(stray, name) };
  return { ok: true, value: { action: name, actionSpec, params: params ?? {}, skill } };
}

/** The `invalid_instruction` error for an instruction with a field it does not take, naming the field and the one it probably meant. */
function strayFieldError(stray: UnknownField, action: string): ErrorInfo<'invalid_instruction'> {
  const details: ErrorDetails<'invalid_instruction'> = { field: stray.field, known: stray.known };
  if (stray.suggestion !== undefined) details.suggestion = stray.suggestion;
  return errorInfo('invalid_instruction', `instruction for '${action}': ${stray.field} ${stray.message}`, { action, subject: stray.field, details });
}

/**
 * Instructions as plain data, `{ action, params, skill? }` with the action by name — what a
 * mailbox item carries, so traces and the inspector show it as is — or the first refusal.
 */
export function plainInstructions(list: readonly unknown[]): Result<InstructionObject[]> {
  const plain: InstructionObject[] = [];
  for (const instruction of list) {
    const normalized = normalizeInstruction(instruction);
    if (!normalized.ok) return normalized;
    const { action, params, skill } = normalized.value;
    plain.push(skill === undefined ? { action, params } : { action, params, skill });
  }
  return { ok: true, value: plain };
}

function malformed(message: string, action?: string): ErrorInfo {
  return errorInfo('invalid_instruction', message, action === undefined ? undefined : { action });
}

/**
 * Turns a route target and the signal it matched into instructions. For an action target the
 * params are the signal's data (when it is an object) with the route's static params on top.
 * A handler that throws or returns something that is not an instruction list yields an error.
 */
export function instructionsForTarget(
  target: RouteTarget,
  signal: Signal,
): { ok: true; instructions: Instruction[] } | { ok: false; error: ErrorInfo } {
  if (typeof target === 'function') {
    let produced: Instruction | readonly Instruction[];
    try {
      produced = target(signal);
    } catch (thrown) {
      return {
        ok: false,
        error: withCause(errorInfo('signal_failed', `route handler for '${signal.type}' threw: ${describeThrown(thrown)}`, { subject: signal.type }), thrown),
      };
    }
    const instructions = Array.isArray(produced) ? [...(produced as unknown[])] : [produced as unknown];
    for (const instruction of instructions) {
      const normalized = normalizeInstruction(instruction);
      if (!normalized.ok) {
        return {
          ok: false,
          error: errorInfo('invalid_instruction', `route handler for '${signal.type}' returned an invalid instruction: ${normalized.error.message}`, {
            subject: signal.type,
          }),
        };
      }
    }
    return { ok: true, instructions: instructions as Instruction[] };
  }
  return { ok: true, instructions: [actionInstruction(target, signal)] };
}

const NO_PARAMS: Record<string, unknown> = Object.freeze({});

/**
 * The instruction an action target makes of the signal it matched: params are the signal's data
 * (when it is an object) with the route's static params on top.
 */
export function actionInstruction(target: InstructionObject, signal: Signal): InstructionObject {
  const data = isPlainObject(signal.data) ? signal.data : NO_PARAMS;
  const instruction: InstructionObject = { action: target.action, params: target.params ? { ...data, ...target.params } : data };
  if (target.skill !== undefined) instruction.skill = target.skill;
  return instruction;
}
