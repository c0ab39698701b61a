/**
 * `cmd`: runs instructions against an agent value and returns the new agent and the effects.
 * For each instruction it resolves the action among the agent's registered actions, validates
 * the params, runs the action, validates its output and state update, and collects effects.
 *
 * It never throws. A malformed instruction, an unknown action, invalid params, a failing or
 * throwing action, an invalid output, state update or effect each become an `error` effect
 * naming the action and the reason, and the agent's state stays exactly as it was before that
 * instruction. By default the remaining instructions are then skipped (`onError: 'continue'`
 * runs them anyway).
 *
 * Sync actions complete synchronously inside `execute`, so the runtime pays for a promise only
 * when an action is async.
 *
 * Pure: no I/O, no XState.
 */
import { nanoid } from 'nanoid';
import { ActionRunContext, failureProblem, isActionFailure, isActionResult, unreadChanges, unreadChangesProblem, type AbortSource, type ActionResult, type AnyAction } from './action.js';
import { type ActionEntry, type Catalog } from './catalog.js';
import { closestName, didYouMean } from './closest-name.js';
import { catalogOf, unlinkedError, withFrozenState, type Agent } from './agent-value.js';
import { checkEffectList, errorEffect, type Effect } from './effects.js';
import { describeThrown, errorInfo, formatIssues, reworded, withCause, type ErrorDetails, type ErrorInfo } from './errors.js';
import { normalizeInstruction, type Instruction, type NormalizedInstruction } from './instruction.js';
import { mountSkills, replaceSkill, unmountSkill, type MountResult } from './mount.js';
import { optionsProblem } from './options.js';
import { describeGiven, isPlainObject } from './plain.js';
import { applyPatch, parseSync, parseWith, type Parsed } from './schema.js';
import type { Result } from './result.js';
import type { Signal } from './signal.js';
import type { InvokeUserCode } from './invoke.js';
import { invalidStateUpdate, updateSlice } from './state-update.js';
import type { AnySkill, SkillAttachment } from './skill.js';
import { isThenable } from './maybe-async.js';

/** Options of `cmd`. */
export interface CmdOptions {
  /** The signal being processed, passed to actions as `ctx.signal`. */
  signal?: Signal;
  /** After a failed instruction: skip the rest (`stop`, the default) or run them (`continue`). */
  onError?: 'stop' | 'continue';
}

/** Options of `execute`: those of `cmd`, and the host's wrapper of user code. */
export interface ExecuteOptions extends CmdOptions {
  /** Wraps every call of an action's `run` (see `InvokeUserCode`); by default it is called directly. */
  invoke?: InvokeUserCode;
  /** Where the actions' `ctx.abortSignal` comes from; without it, the signal is never aborted. */
  abort?: AbortSource | undefined;
}

/** The result of one instruction run by `cmd`: its output, or the error that stopped it. */
export type InstructionResult =
  | { ok: true; action: string; skill: string | undefined; output: unknown }
  | { ok: false; action: string | undefined; skill: string | undefined; error: ErrorInfo };

/** What `cmd` returns: the new agent, the effects for the runtime, and one result per instruction that ran. */
export interface CmdResult<TState extends object = Record<string, unknown>> {
  agent: Agent<TState>;
  effects: Effect[];
  /** One entry per instruction that ran, in order. */
  results: InstructionResult[];
}

type InstructionStep =
  | { ok: true; agent: Agent<object>; output: unknown; effects: Effect[]; action: string; skill: string | undefined }
  | { ok: false; error: ErrorInfo; action: string | undefined; skill: string | undefined };

/** The options `cmd` takes: one entry per key of `CmdOptions`. */
const CMD_OPTIONS = { signal: true, onError: true } as const satisfies Record<keyof CmdOptions, true>;

/**
 * Runs instructions against an agent. Resolves with the new agent, the effects and one result
 * per instruction that ran. Never rejects: options it cannot read (a misspelled `onEror`, an
 * `onError` that is neither `stop` nor `continue`) run nothing, and the one result is their
 * `invalid_options` error.
 */
export function cmd<TState extends object>(
  agent: Agent<TState>,
  instructions: Instruction | readonly Instruction[],
  options?: CmdOptions,
): Promise<CmdResult<TState>> {
  const refused = cmdOptionsProblem(options);
  if (refused) return Promise.resolve(nothingRun(agent, refused));
  return Promise.resolve(execute(agent, instructions, options));
}

/** Why `options` cannot be `cmd`'s: not an object, a key it does not take, an `onError` that is neither `stop` nor `continue`. */
function cmdOptionsProblem(options: unknown): ErrorInfo | undefined {
  const problem = optionsProblem('cmd', options, CMD_OPTIONS, "{ onError: 'continue' }");
  if (problem) return problem;
  const onError: unknown = (options as CmdOptions | undefined)?.onError;
  if (onError === undefined || onError === 'stop' || onError === 'continue') return undefined;
  return errorInfo('invalid_options', `cmd's onError must be 'stop' or 'continue', got ${describeGiven(onError)}`, { subject: 'onError', details: { option: 'onError', value: onError } });
}

/** The result of a `cmd` call that ran nothing: `error` is its one result. */
function nothingRun<TState extends object>(agent: Agent<TState>, error: ErrorInfo): CmdResult<TState> {
  return { agent, effects: [errorEffect(error)], results: [{ ok: false, action: undefined, skill: undefined, error }] };
}

/**
 * `cmd` without the promise when every action is sync: returns a `CmdResult` directly, or a
 * promise of one as soon as an action (or a schema) is async. Never throws.
 */
export function execute<TState extends object>(
  agent: Agent<TState>,
  instructions: Instruction | readonly Instruction[],
  options?: ExecuteOptions,
): CmdResult<TState> | Promise<CmdResult<TState>> {
  const catalog = catalogOf(agent);
  if (!catalog) return nothingRun(agent, unlinkedError(agent));
  const list: readonly unknown[] | undefined = Array.isArray(instructions) ? instructions : undefined;
  if (list === undefined || list.length === 1) {
    // One instruction (what a route and most calls run): no bookkeeping across instructions.
    const step = runInstruction(agent as Agent<object>, catalog, list === undefined ? instructions : list[0], options);
    if (isThenable(step)) return (step as Promise<InstructionStep>).then((done) => onlyResult(agent, done));
    return onlyResult(agent, step);
  }
  const run = new Run(agent as Agent<object>, catalog, list, options);
  for (let i = 0; i < list.length; i++) {
    const step = runInstruction(run.agent, run.catalog, list[i], options);
    if (isThenable(step)) return run.finishAsync(step as Promise<InstructionStep>, i) as Promise<CmdResult<TState>>;
    if (!run.record(step, i)) break;
  }
  return run.result() as CmdResult<TState>;
}

/** The result of a `cmd` call that ran one instruction. */
function onlyResult<TState extends object>(agent: Agent<TState>, step: InstructionStep): CmdResult<TState> {
  if (step.ok) {
    return { agent: step.agent as Agent<TState>, effects: step.effects, results: [{ ok: true, action: step.action, skill: step.skill, output: step.output }] };
  }
  return { agent, effects: [errorEffect(step.error)], results: [{ ok: false, action: step.action, skill: step.skill, error: step.error }] };
}

/** Accumulates the outcome of a `cmd` call across its instructions. */
class Run {
  readonly effects: Effect[] = [];
  readonly results: InstructionResult[] = [];

  constructor(
    public agent: Agent<object>,
    /** The catalog of `agent`: an instruction that mounts or unmounts a skill changes it for the next ones. */
    public catalog: Catalog,
    private readonly list: readonly unknown[],
    private readonly options: ExecuteOptions | undefined,
  ) {}

  /** Records a step; returns false when the remaining instructions must be skipped. */
  record(step: InstructionStep, index: number): boolean {
    if (step.ok) {
      this.agent = step.agent;
      this.catalog = catalogOf(step.agent) ?? this.catalog;
      for (const effect of step.effects) this.effects.push(effect);
      this.results.push({ ok: true, action: step.action, skill: step.skill, output: step.output });
      return true;
    }
    const remaining = this.list.length - index - 1;
    const stop = this.options?.onError !== 'continue';
    const error =
      stop && remaining > 0
        ? reworded(step.error, { message: `${step.error.message} (${remaining} later instruction${remaining > 1 ? 's were' : ' was'} not run)` })
        : step.error;
    this.effects.push(errorEffect(error));
    this.results.push({ ok: false, action: step.action, skill: step.skill, error });
    return !stop;
  }

  async finishAsync(pending: Promise<InstructionStep>, index: number): Promise<CmdResult<object>> {
    if (!this.record(await pending, index)) return this.result();
    for (let i = index + 1; i < this.list.length; i++) {
      const step = await runInstruction(this.agent, this.catalog, this.list[i], this.options);
      if (!this.record(step, i)) break;
    }
    return this.result();
  }

  result(): CmdResult<object> {
    return { agent: this.agent, effects: this.effects, results: this.results };
  }
}

function failed(error: ErrorInfo): InstructionStep {
  return { ok: false, error, action: error.action, skill: error.skill };
}

function runInstruction(agent: Agent<object>, catalog: Catalog, raw: unknown, options: ExecuteOptions | undefined): InstructionStep | Promise<InstructionStep> {
  const normalized = normalizeInstruction(raw);
  if (!normalized.ok) return failed(normalized.error);
  const instruction = normalized.value;
  const entry = resolveAction(catalog, instruction, agent);
  if (!('action' in entry)) return failed(entry.error);
  const parsed = parseWith(entry.action.input, instruction.params);
  if (isThenable(parsed)) return parsed.then((value) => runAction(agent, catalog, entry, value, options));
  return runAction(agent, catalog, entry, parsed, options);
}

function runAction(
  agent: Agent<object>,
  catalog: Catalog,
  entry: ActionEntry,
  params: Parsed<Record<string, unknown>>,
  options: ExecuteOptions | undefined,
): InstructionStep | Promise<InstructionStep> {
  const { action, skill } = entry;
  const skillName = skill?.spec.name;
  if (!params.ok) {
    return failed(
      errorInfo('invalid_params', `invalid params for action '${action.name}': ${formatIssues(params.issues)}`, {
        action: action.name,
        skill: skillName,
        issues: params.issues,
      }),
    );
  }
  const state = agent.state as Record<string, unknown>;
  const ctx = new ActionRunContext(agent.id, state, skill ? state[skill.spec.stateKey] : undefined, skill ? skill.config : {}, skillName, options?.signal, options?.abort, Date.now, nanoid);
  const invoke = options?.invoke;
  let returned: unknown;
  try {
    returned = invoke ? invoke({ what: `action '${action.name}'`, skill: skillName, action: action.name }, () => action.run(params.value, ctx)) : action.run(params.value, ctx);
    if (isThenable(returned)) {
      return Promise.resolve(returned).then(
        (value) => safeFinish(agent, catalog, entry, value),
        (thrown: unknown) => failed(thrownError(action, skillName, thrown)),
      );
    }
  } catch (thrown) {
    return failed(thrownError(action, skillName, thrown));
  }
  return safeFinish(agent, catalog, entry, returned);
}

/**
 * `finish`, with a throw while inspecting what the action returned (a getter that throws, a
 * proxy) reported as the action's failure: cmd never throws.
 */
function safeFinish(agent: Agent<object>, catalog: Catalog, entry: ActionEntry, returned: unknown): InstructionStep {
  try {
    return finish(agent, catalog, entry, returned);
  } catch (thrown) {
    return failed(thrownError(entry.action, entry.skill?.spec.name, thrown));
  }
}

/** Who an error or an effect is about: made where one needs it, not on every step. */
function named(action: string, skill: string | undefined): { action: string; skill: string | undefined } {
  return { action, skill };
}

function thrownError(action: AnyAction, skill: string | undefined, thrown: unknown): ErrorInfo {
  return withCause(errorInfo('action_failed', `action '${action.name}' failed: ${describeThrown(thrown)}`, { action: action.name, skill }), thrown);
}

function finish(agent: Agent<object>, catalog: Catalog, entry: ActionEntry, returned: unknown): InstructionStep {
  const { action, skill } = entry;
  const skillName = skill?.spec.name;
  if (isActionFailure(returned)) {
    const problem = failureProblem(returned);
    if (problem !== undefined) return failed(errorInfo('invalid_output', `action '${action.name}' returned a failure that cannot be reported: ${problem}`, named(action.name, skillName)));
    const details: ErrorDetails<'action_failed'> = { reason: returned.reason };
    if (returned.details) details.details = returned.details;
    return failed(errorInfo('action_failed', `action '${action.name}' failed: ${returned.message}`, { ...named(action.name, skillName), details }));
  }
  let output = returned;
  let patch: unknown;
  let produced: readonly unknown[] | undefined;
  let changes: ActionResult | undefined;
  if (isActionResult(returned)) {
    const unread = unreadChanges(returned);
    if (unread !== undefined) {
      const { message, details } = unreadChangesProblem(unread);
      // Applied without it, the result would change less than the action asked, without a word.
      return failed(errorInfo('invalid_output', `action '${action.name}' returned a result it cannot apply: ${message}`, { ...named(action.name, skillName), subject: unread.key, details }));
    }
    changes = returned;
    output = returned.output;
    patch = returned.state;
    produced = returned.effects;
  } else if (action.state !== undefined && changesWithoutResult(returned)) {
    // Taken as the output, it would change nothing, without a word.
    return failed(
      errorInfo(
        'invalid_output',
        `action '${action.name}' returned { state: {…} } as a plain object, which is its output and changes no state: return result(output, { state: {…} }) to update the state (or result({ state: … }) for an output that has a 'state' field)`,
        named(action.name, skillName),
      ),
    );
  }
  if (action.output) {
    const checked = parseSync(action.output, output);
    if (!checked.ok) {
      return failed(
        errorInfo('invalid_output', `action '${action.name}' returned an invalid output: ${formatIssues(checked.issues)}`, {
          ...named(action.name, skillName),
          issues: checked.issues,
        }),
      );
    }
    output = checked.value;
  }

  let next = agent;
  if (patch !== undefined) {
    const state = updatedState(agent, catalog, entry, patch);
    if (!state.ok) return failed(state.error);
    next = withFrozenState(agent, state.value, catalog);
  }

  let effects: Effect[] = [];
  if (produced !== undefined) {
    const checked = checkEffectList(produced, `action '${action.name}'`, named(action.name, skillName));
    if (!checked.ok) return failed(checked.error);
    effects = checked.value;
  }
  if (changes && (changes.mount !== undefined || changes.unmount !== undefined || changes.replace !== undefined)) {
    const remounted = applyMounts(next, changes, named(action.name, skillName));
    if (!remounted.ok) return failed(remounted.error);
    next = remounted.agent;
    effects = [...effects, ...remounted.effects];
  }
  return { ok: true, agent: next, output, effects, action: action.name, skill: skillName };
}

/** The keys `result`'s changes have, with `output`. */
const CHANGE_KEYS = new Set(['output', 'state', 'effects', 'mount', 'unmount', 'replace']);

/** A plain object holding a state update (an object) and nothing but `result`'s keys: changes given without `result`. */
function changesWithoutResult(returned: unknown): boolean {
  if (!isPlainObject(returned) || !isPlainObject(returned.state)) return false;
  for (const key of Object.keys(returned)) if (!CHANGE_KEYS.has(key)) return false;
  return true;
}

/** Unmounts, then mounts, then replaces, the skills an action asked for; all or nothing. */
function applyMounts(
  agent: Agent<object>,
  changes: ActionResult,
  extras: { action: string; skill: string | undefined },
): { ok: true; agent: Agent<object>; effects: Effect[] } | { ok: false; error: ErrorInfo } {
  let current = agent;
  const effects: Effect[] = [];
  const refuse = (error: ErrorInfo) => ({
    ok: false as const,
    error: reworded(error, { message: `action '${extras.action}' could not change its agent's skills: ${error.message}`, action: extras.action }),
  });
  /** Applies `change` to each of `skills` in turn; the refusal of the first that fails, if any. */
  const each = <T>(skills: readonly T[], change: (agent: Agent<object>, skill: T) => MountResult<object>) => {
    for (const skill of skills) {
      const step = change(current, skill);
      if (!step.ok) return refuse(step.error);
      current = step.agent;
      effects.push(...step.effects);
    }
    return undefined;
  };
  if (changes.unmount !== undefined) {
    if (!Array.isArray(changes.unmount)) return refuse(errorInfo('invalid_skill', 'unmount must be an array of skills or names'));
    const refused = each(changes.unmount, unmountSkill);
    if (refused) return refused;
  }
  if (changes.mount !== undefined) {
    // Typed by shape in `ActionChanges` (actions cannot import skills); `mountSkills` checks each is a skill.
    const step = mountSkills(current, changes.mount as readonly SkillAttachment[]);
    if (!step.ok) return refuse(step.error);
    current = step.agent;
    effects.push(...step.effects);
  }
  if (changes.replace !== undefined) {
    if (!Array.isArray(changes.replace)) return refuse(errorInfo('invalid_skill', 'replace must be an array of skills'));
    // Typed by shape (see `mount` above); `replaceSkill` checks each is a skill.
    const refused = each(changes.replace as readonly AnySkill[], replaceSkill);
    if (refused) return refused;
  }
  return { ok: true, agent: current, effects };
}

function refuseUpdate(action: AnyAction, detail: string, issues?: ErrorInfo['issues']): { ok: false; error: ErrorInfo } {
  return { ok: false, error: invalidStateUpdate(`action '${action.name}'`, detail, { action: action.name, issues }) };
}

function updatedState(
  agent: Agent<object>,
  catalog: Catalog,
  entry: ActionEntry,
  patch: unknown,
): Result<Record<string, unknown>> {
  const state = agent.state as Record<string, unknown>;
  const { action, skill } = entry;
  if (skill) return updateSlice(state, skill.spec, patch, action, catalog.replaceInState);
  // The agent's own actions update the agent's own fields, never a skill's slice.
  if (!isPlainObject(patch)) return refuseUpdate(action, 'a state update must be a plain object');
  const intruding = Object.keys(patch).find((key) => catalog.stateKeys.has(key));
  if (intruding !== undefined) return refuseUpdate(action, `'${intruding}' is the state of skill '${catalog.stateKeys.get(intruding)}'`);
  const own: Record<string, unknown> = {};
  for (const key of catalog.ownKeys) if (Object.hasOwn(state, key)) own[key] = state[key];
  const applied = applyPatch(catalog.blueprint.schema, own, patch);
  if (!applied.ok) return refuseUpdate(action, formatIssues(applied.issues), applied.issues);
  return { ok: true, value: Object.freeze(Object.assign({}, state, applied.value)) };
}

/** Finds the action an instruction names among the agent's registered actions. */
function resolveAction(catalog: Catalog, instruction: NormalizedInstruction, agent: Agent<object>): ActionEntry | { error: ErrorInfo } {
  const entries = catalog.actions.get(instruction.action);
  if (!entries) {
    return { error: errorInfo('unknown_action', `${unregistered(catalog, instruction.action, agent)}`, named(instruction.action, instruction.skill)) };
  }
  let candidates = entries;
  if (instruction.skill !== undefined) {
    candidates = entries.filter((entry) => entry.skill?.spec.name === instruction.skill);
    if (!candidates.length) {
      const reason = catalog.skills.has(instruction.skill)
        ? `skill '${instruction.skill}' has no action '${instruction.action}'`
        : `skill '${instruction.skill}' is not mounted`;
      return { error: errorInfo('unknown_action', `action '${instruction.action}' is not registered on agent '${agent.id}': ${reason}`, named(instruction.action, instruction.skill)) };
    }
  }
  if (instruction.actionSpec) {
    const spec = instruction.actionSpec;
    const found = candidates.find((entry) => entry.action === spec);
    if (!found) {
      return {
        error: errorInfo(
          'unknown_action',
          `action '${instruction.action}' is registered on agent '${agent.id}', but not this action object: no active skill provides it`,
          named(instruction.action, instruction.skill),
        ),
      };
    }
    return found;
  }
  return candidates[0]!;
}

function unregistered(catalog: Catalog, name: string, agent: Agent<object>): string {
  const base = `action '${name}' is not registered on agent '${agent.id}': no active skill provides it`;
  const provider = catalog.blueprint.skills.find(
    (skill) => skill.actions.some((action) => action.name === name),
  );
  if (provider) return `${base} (skill '${provider.name}' does, but it is not mounted)`;
  return `${base}${didYouMean(closestName(name, catalog.actions.keys()))}`;
}
