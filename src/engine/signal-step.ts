/**
 * The signal pipeline of one step, and instructions run directly (a model's tool calls):
 *
 *   skills whose signalPatterns match → their handleSignal hooks, in mount order
 *   (continue / rewrite / handle / fail) → router over skill and agent routes → instructions →
 *   cmd → `run` effects carried out inline → mount hooks of skills mounted on the way →
 *   transformResult (for calls, chained across skills) → effects for the host.
 *
 * Atomic: when anything fails, everything gathered is dropped and the outcome carries the
 * agent as it was before the step, with the error.
 *
 * Pure: no XState, no timers, no I/O.
 */
import type { AbortSource } from '../core/action.js';
import { catalogOf, type Agent } from '../core/agent-value.js';
import type { Catalog } from '../core/catalog.js';
import { didYouMean } from '../core/closest-name.js';
import { execute, type CmdResult } from '../core/cmd.js';
import { diagnostic, type Diagnostic } from '../core/diagnostics.js';
import type { Effect, RunEffect } from '../core/effects.js';
import { describeThrown, errorInfo, reworded, withCause, type ErrorInfo } from '../core/errors.js';
import { actionInstruction, instructionsForTarget, type InstructionObject } from '../core/instruction.js';
import type { InvokeUserCode } from '../core/invoke.js';
import { andThen, isThenable, type MaybePromise } from '../core/maybe-async.js';
import { matchesAny } from '../core/pattern.js';
import { strayField } from '../core/options.js';
import { likelyRoute } from '../core/router.js';
import { deepFreeze, isPlainObject } from '../core/plain.js';
import { signalProblem, type Signal } from '../core/signal.js';
import type { AnySkill, SignalDecision } from '../core/skill.js';
import { hookContext, hookEffects, patchSlice } from './hook-output.js';
import { runMountHooks } from './mount-step.js';
import { failedOutcome, type StepOutcome } from './outcome.js';
import { registrationProblem } from './registration.js';
import { callSafely } from './user-code.js';

/** The fields of a `Decision.handle`: one entry per key of its decision. */
const HANDLE_FIELDS = { decision: true, state: true, effects: true, output: true } as const satisfies Record<keyof Extract<SignalDecision, { decision: 'handle' }>, true>;

const NO_SKILLS: readonly AnySkill[] = Object.freeze([]);

/** How deep `run` effects may chain (a run producing a run...) before the step is failed. */
export const MAX_RUN_DEPTH = 16;

/**
 * One step: the signal pipeline for a signal, or instructions run directly (a model's tool
 * calls). Holds the candidate agent and the effects gathered so far; on failure everything
 * gathered is dropped and the original agent is returned.
 */
export class AgentStep {
  private agent: Agent<object>;
  private readonly effects: Effect[] = [];
  private readonly diagnostics: Diagnostic[] = [];
  private result: unknown = undefined;
  private replied = false;

  constructor(
    private readonly original: Agent<object>,
    private catalog: Catalog,
    private signal: Signal | undefined,
    private readonly call: boolean,
    private readonly invoke: InvokeUserCode | undefined,
    /** Where the actions' `ctx.abortSignal` comes from (the host's, when it can cancel a step). */
    private readonly abort: AbortSource | undefined,
  ) {
    this.agent = original;
  }

  // The stages below call the next one directly when the previous one was sync (no closure
  // made per step): only user code that returned a promise pays for chaining on it.
  runSignal(): MaybePromise<StepOutcome> {
    const handled = this.handlers(0);
    return isThenable(handled) ? (handled as Promise<boolean | StepOutcome>).then((done) => this.afterHandlers(done)) : this.afterHandlers(handled as boolean | StepOutcome);
  }

  private afterHandlers(handled: boolean | StepOutcome): MaybePromise<StepOutcome> {
    if (handled !== true) return handled === false ? this.route() : handled;
    return this.afterActions();
  }

  /**
   * Runs instructions directly. With `record`, that action runs in the same step once they and
   * the `run` effects they produced are done, its params given the step's result as `output`
   * (and, when an `error` effect was produced, that error as `error`): the step commits both or
   * neither, and its caller gets the instructions' result, not the record's.
   */
  runInstructions(instructions: InstructionObject[], record?: InstructionObject): MaybePromise<StepOutcome> {
    this.pendingRecord = record;
    return this.afterInstructions(this.instructions(instructions));
  }

  /** The record of a run of instructions, made once their `run` effects are carried out. */
  private pendingRecord: InstructionObject | undefined;

  /** Runs `record` with the result so far as its `output` param, keeping that result as the step's. */
  private record(record: InstructionObject): MaybePromise<StepOutcome | undefined> {
    const output = this.result;
    let error: ErrorInfo | undefined;
    for (const effect of this.effects) {
      if (effect.type === 'error') {
        error = effect.error;
        break;
      }
    }
    const params = { ...(isPlainObject(record.params) ? record.params : {}), output, ...(error ? { error: { code: error.code, message: error.message } } : {}) };
    return andThen(this.instructions({ ...record, params }), (failed) => {
      this.result = output;
      return failed;
    });
  }

  /** The signal of a signal step (the pipeline's stages that use it only run for signals). */
  private get current(): Signal {
    return this.signal!;
  }

  private fail(error: ErrorInfo): StepOutcome {
    return failedOutcome(this.original, error, this.diagnostics, this.signal);
  }

  /** Skills whose patterns match, in mount order. */
  private interested(): readonly AnySkill[] {
    let found: AnySkill[] | undefined;
    for (const spec of this.catalog.patterned) if (matchesAny(this.current.type, spec.signalPatterns)) (found ??= []).push(spec);
    return found ?? NO_SKILLS;
  }

  /**
   * Runs the `handleSignal` hooks from index `from` on. Resolves true when a skill handled the
   * signal, false when the router should take it, or a failed outcome.
   */
  private handlers(from: number, skills = this.interested()): MaybePromise<boolean | StepOutcome> {
    for (let i = from; i < skills.length; i++) {
      const skill = skills[i]!;
      if (!skill.handleSignal) continue;
      const config = this.catalog.skills.get(skill.name)!.config;
      const what = `handleSignal of skill '${skill.name}'`;
      const decided = callSafely({ what, skill: skill.name }, () => skill.handleSignal!(this.current, hookContext(this.agent, skill, config)), this.invoke);
      const next = (outcome: Awaited<typeof decided>): MaybePromise<boolean | StepOutcome> => {
        if (!outcome.ok) return this.fail(outcome.error);
        let verdict: ReturnType<AgentStep['decide']>;
        try {
          verdict = this.decide(skill, outcome.value, what);
        } catch (thrown) {
          return this.fail(withCause(errorInfo('hook_failed', `${what} returned a decision that cannot be read: ${describeThrown(thrown)}`, { skill: skill.name }), thrown));
        }
        if (verdict === 'continue') return this.handlers(i + 1, skills);
        return verdict;
      };
      return andThen(decided, next);
    }
    return false;
  }

  private decide(skill: AnySkill, decision: void | SignalDecision, what: string): 'continue' | boolean | StepOutcome {
    if (decision === undefined || decision === null) return 'continue';
    if (!isPlainObject(decision) || typeof decision.decision !== 'string') {
      return this.fail(errorInfo('hook_failed', `${what} returned something that is not a decision (use Decision.continue/rewrite/handle/fail)`, { skill: skill.name }));
    }
    switch (decision.decision) {
      case 'continue':
        return 'continue';
      case 'rewrite': {
        const problem = signalProblem(decision.signal);
        if (problem) return this.fail(errorInfo('hook_failed', `${what} rewrote the signal into an invalid one: ${problem}`, { skill: skill.name }));
        this.signal = deepFreeze(decision.signal);
        return 'continue';
      }
      case 'fail': {
        const error = decision.error ?? errorInfo('signal_failed', `${what} refused the signal`);
        return this.fail(reworded(error, { skill: error.skill ?? skill.name }));
      }
      case 'handle': {
        // A misspelled `stat` would handle the signal and change nothing, without a word.
        const stray = strayField(decision, HANDLE_FIELDS, 'Decision.handle');
        if (stray) return this.fail(errorInfo('hook_failed', `${what} returned Decision.handle whose ${stray.field} ${stray.message}`, { skill: skill.name, subject: stray.field }));
        if (decision.state !== undefined) {
          const patched = patchSlice(this.agent, this.catalog, skill, decision.state, what);
          if (!patched.ok) return this.fail(patched.error);
          this.agent = patched.value;
        }
        const checked = hookEffects(decision.effects, skill, what);
        if (!checked.ok) return this.fail(checked.error);
        this.gather(checked.value);
        if (decision.output !== undefined) this.result = decision.output;
        return true;
      }
      default:
        return this.fail(errorInfo('hook_failed', `${what} returned an unknown decision '${String((decision as { decision: unknown }).decision)}'`, { skill: skill.name }));
    }
  }

  private route(): MaybePromise<StepOutcome> {
    const { router } = this.catalog.router();
    const routed = router.route(this.current);
    for (const guardError of routed.guardErrors) {
      this.diagnostics.push(diagnostic('warning', 'guard_failed', guardError.message, { subject: guardError.subject }));
    }
    if (!routed.ok) {
      const hint = didYouMean(likelyRoute(router, this.current.type));
      return this.fail(hint === '' ? routed.error : reworded(routed.error, { message: `${routed.error.message}${hint}` }));
    }
    const target = routed.matches[0]!.target;
    let failed: MaybePromise<StepOutcome | undefined>;
    if (typeof target === 'function') {
      const produced = instructionsForTarget(target, this.current);
      if (!produced.ok) return this.fail(produced.error);
      failed = this.instructions(produced.instructions);
    } else failed = this.instructions(actionInstruction(target, this.current));
    return this.afterInstructions(failed);
  }

  /** After the instructions of a route or a run: the failed outcome, or the rest of the step. */
  private afterInstructions(failed: MaybePromise<StepOutcome | undefined>): MaybePromise<StepOutcome> {
    if (isThenable(failed)) return (failed as Promise<StepOutcome | undefined>).then((stopped) => stopped ?? this.afterActions());
    return (failed as StepOutcome | undefined) ?? this.afterActions();
  }

  /** Runs instructions through `cmd`; returns a failed outcome, or undefined on success. */
  private instructions(instructions: InstructionObject | unknown[]): MaybePromise<StepOutcome | undefined> {
    const ran = execute(this.agent, instructions as InstructionObject | InstructionObject[], { signal: this.signal, invoke: this.invoke, abort: this.abort });
    return isThenable(ran) ? (ran as Promise<CmdResult<object>>).then((done) => this.ran(done)) : this.ran(ran as CmdResult<object>);
  }

  /** Takes what `cmd` returned into the step; a failed outcome, or undefined on success. */
  private ran(ran: CmdResult<object>): StepOutcome | undefined {
    for (const result of ran.results) if (!result.ok) return this.fail(result.error);
    const catalog = catalogOf(ran.agent)!;
    // Nothing to check (and no name to make) when no effect came back and the skills did not change.
    if (ran.effects.length > 0 || catalog.skills !== this.catalog.skills) {
      const skill = ran.results.length === 1 ? ran.results[0]!.skill : undefined;
      const forged = registrationProblem(this.catalog, catalog, ran.effects, () => `action ${ran.results.map((r) => `'${r.action}'`).join(', ')}`, skill);
      if (forged) return this.fail(forged);
    }
    this.agent = ran.agent;
    this.catalog = catalog;
    const last = ran.results.at(-1);
    if (last?.ok && !this.replied) this.result = last.output;
    this.gather(ran.effects);
    return undefined;
  }

  /** Keeps effects for the system, setting aside `reply` (it answers the caller) and `run` (carried out next). */
  private pendingRuns: RunEffect[] = [];
  /** The agent as of the last mount hooks: skills mounted since then have not had theirs yet. */
  private hooked: Agent<object> | undefined;
  private gather(effects: readonly Effect[]): void {
    for (const effect of effects) {
      if (effect.type === 'run') this.pendingRuns.push(effect);
      else if (effect.type === 'reply' && effect.to === undefined) {
        this.result = effect.data;
        this.replied = true;
        this.effects.push(effect);
      } else this.effects.push(effect);
    }
  }

  /** Carries out `run` effects (breadth first, bounded), then mount hooks, then transforms. */
  private afterActions(depth = 0): MaybePromise<StepOutcome> {
    if (this.pendingRuns.length) {
      if (depth >= MAX_RUN_DEPTH) {
        const what = this.signal ? `signal '${this.signal.type}'` : 'instructions';
        return this.fail(errorInfo('effect_loop', `${what}: 'run' effects chained more than ${MAX_RUN_DEPTH} deep`, { subject: this.signal?.type }));
      }
      const runs = this.pendingRuns;
      this.pendingRuns = [];
      const instructions = runs.map((run) => this.runEffectInstruction(run));
      return andThen(this.instructions(instructions), (failed) => failed ?? this.afterActions(depth + 1));
    }
    if (this.pendingRecord !== undefined) {
      const record = this.pendingRecord;
      this.pendingRecord = undefined;
      return andThen(this.record(record), (failed) => failed ?? this.afterActions(depth));
    }
    const before = this.hooked ?? this.original;
    // No skill mounted since the last mount hooks (the common step): none to call.
    if (this.agent.mounted === before.mounted) return this.call && this.signal ? this.transform() : this.finish();
    return andThen(runMountHooks(before, this.agent, this.invoke), (hooked) => {
      if (!hooked.ok) return this.fail(hooked.error);
      this.agent = hooked.agent;
      this.hooked = hooked.agent;
      this.catalog = catalogOf(hooked.agent)!;
      this.gather(hooked.effects);
      if (this.pendingRuns.length) return this.afterActions(depth + 1);
      return this.call && this.signal ? this.transform() : this.finish();
    });
  }

  /** A `run` effect as an instruction: pinned to the skill that produced it when it has that action. */
  private runEffectInstruction(run: RunEffect): InstructionObject {
    const instruction: InstructionObject = { action: run.action, params: run.params ?? {} };
    const skill = run.meta.skill;
    if (skill !== undefined && this.catalog.skills.get(skill)?.spec.actions.some((a) => a.name === run.action)) instruction.skill = skill;
    return instruction;
  }

  private transform(from = 0, skills = this.interested()): MaybePromise<StepOutcome> {
    for (let i = from; i < skills.length; i++) {
      const skill = skills[i]!;
      if (!skill.transformResult) continue;
      const config = this.catalog.skills.get(skill.name)!.config;
      const what = `transformResult of skill '${skill.name}'`;
      const transformed = callSafely({ what, skill: skill.name }, () =>
        skill.transformResult!(this.current, this.result, hookContext(this.agent, skill, config)),
      this.invoke);
      return andThen(transformed, (outcome) => {
        if (!outcome.ok) return this.fail(outcome.error);
        this.result = outcome.value;
        return this.transform(i + 1, skills);
      });
    }
    return this.finish();
  }

  private finish(): StepOutcome {
    let error: ErrorInfo | undefined;
    for (const effect of this.effects) {
      if (effect.type === 'error') {
        error = effect.error;
        break;
      }
    }
    return {
      agent: this.agent,
      effects: this.effects,
      result: this.result,
      error,
      diagnostics: this.diagnostics,
      signal: this.signal,
    };
  }
}
