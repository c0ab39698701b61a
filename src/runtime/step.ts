/**
 * One step of an agent: what happens to its state when it processes one item of its mailbox —
 * a signal, a mount, an unmount, or the start of a spawned agent (its skills' `mount` hooks).
 * For a signal, this is seed 000's "callback flow":
 *
 *   skills whose signalPatterns match → their handleSignal hooks, in mount order
 *   (continue / rewrite / handle / fail) → router over skill and agent routes → instructions →
 *   cmd → `run` effects carried out inline → mount hooks of skills mounted on the way →
 *   transformResult (for calls, chained across skills) → effects for the system to interpret.
 *
 * A step is atomic: when anything in it fails, the agent stays exactly as it was before the
 * step, and the outcome carries the error. The step never throws — whatever user code returns
 * is read inside a guard, since a throw here would stop the agent's actor — and it returns
 * synchronously unless some user code it calls is async. Skills mounted on the way are checked
 * here too (routes, children: `skill-checks.ts`), so that nothing about them can fail later.
 *
 * No XState here: the agent machine calls `runStep` and interprets the outcome.
 */
import { Agent, catalogOf, type Catalog, type MountedSkill } from '../core/catalog.js';
import { execute, stampSkill } from '../core/cmd.js';
import { diagnostic, type Diagnostic } from '../core/diagnostics.js';
import { effectProblem, errorEffect, type Effect, type RunEffect } from '../core/effects.js';
import { describeThrown, errorInfo, formatIssues, reworded, withCause, type ErrorInfo } from '../core/errors.js';
import { instructionsForTarget, type InstructionObject } from '../core/instruction.js';
import { mountSkill, unlinkedError, unmountSkill } from '../core/mount.js';
import { matchesAny } from '../core/pattern.js';
import { isPlainObject, withKey } from '../core/plain.js';
import { applyPatch } from '../core/schema.js';
import { signalProblem, type Signal } from '../core/signal.js';
import type { AnySkill, MountOutcome, SignalDecision, SkillHookContext } from '../core/skill.js';
import { callSafely, andThen } from './hooks.js';
import { forgedRegistration, isRegistration, registrationProblem } from './registration.js';
import { checkRouter, checkSkill } from './skill-checks.js';

/** How deep `run` effects may chain (a run producing a run...) before the step is failed. */
export const MAX_RUN_DEPTH = 16;

export type WorkItem =
  | { kind: 'signal'; signal: Signal; call: boolean }
  | { kind: 'instructions'; instructions: InstructionObject[] }
  | { kind: 'mount'; skill: AnySkill; config: Record<string, unknown> | undefined }
  | { kind: 'unmount'; skill: string }
  | { kind: 'start' };

export interface StepOutcome {
  /** The agent after the step; the agent before it when the step failed. */
  agent: Agent<object>;
  /** Effects for the system to interpret (never `run`: those were carried out in the step). */
  effects: Effect[];
  /** For a call: the reply, or the last action's output, after `transformResult`. */
  result: unknown;
  error: ErrorInfo | undefined;
  diagnostics: Diagnostic[];
  /** The signal as the router saw it, after rewrites. */
  signal: Signal | undefined;
}

type Maybe<T> = T | Promise<T>;

/** Processes one mailbox item. Never throws. */
export function runStep(agent: Agent<object>, item: WorkItem): Maybe<StepOutcome> {
  const catalog = catalogOf(agent);
  if (!catalog) return failedOutcome(agent, unlinkedError(agent), [], undefined);
  switch (item.kind) {
    case 'signal':
      return new Step(agent, catalog, item.signal, item.call).runSignal();
    case 'instructions':
      return new Step(agent, catalog, undefined, false).runInstructions(item.instructions);
    case 'mount':
      return mountStep(agent, item.skill, item.config);
    case 'unmount':
      return unmountStep(agent, item.skill);
    case 'start':
      return startStep(agent);
  }
}

function failedOutcome(agent: Agent<object>, error: ErrorInfo, diagnostics: Diagnostic[], signal: Signal | undefined): StepOutcome {
  return { agent, effects: [errorEffect(error)], result: undefined, error, diagnostics, signal };
}

function hookContext(agent: Agent<object>, skill: AnySkill, config: Record<string, unknown>): SkillHookContext {
  return { agentId: agent.id, skill: skill.name, state: (agent.state as Record<string, unknown>)[skill.stateKey], config };
}

/** Applies a hook's slice update, validated like an action's. */
function patchSlice(agent: Agent<object>, catalog: Catalog, skill: AnySkill, patch: unknown, what: string): { ok: true; agent: Agent<object> } | { ok: false; error: ErrorInfo } {
  const state = agent.state as Record<string, unknown>;
  const applied = applyPatch(skill.schema, state[skill.stateKey] as Record<string, unknown>, patch);
  if (!applied.ok) {
    return {
      ok: false,
      error: errorInfo('invalid_state_update', `${what} returned an invalid state update: ${formatIssues(applied.issues)}`, {
        skill: skill.name,
        issues: applied.issues,
      }),
    };
  }
  return { ok: true, agent: Agent.link({ id: agent.id, definition: agent.definition, state: withKey(state, skill.stateKey, applied.value), mounted: agent.mounted }, catalog) };
}

/** Checks and stamps effects a hook returned. */
function hookEffects(effects: unknown, skill: AnySkill, what: string): { ok: true; effects: Effect[] } | { ok: false; error: ErrorInfo } {
  if (effects === undefined) return { ok: true, effects: [] };
  if (!Array.isArray(effects)) return { ok: false, error: errorInfo('invalid_effect', `${what} returned effects that are not an array`, { skill: skill.name }) };
  const stamped: Effect[] = [];
  for (const [i, effect] of effects.entries()) {
    const problem = effectProblem(effect);
    if (problem) return { ok: false, error: errorInfo('invalid_effect', `${what} returned an invalid effect at index ${i}: ${problem}`, { skill: skill.name }) };
    const checked = stampSkill(effect as Effect, skill.name);
    if (isRegistration(checked)) return { ok: false, error: forgedRegistration(checked, what, skill.name) };
    stamped.push(checked);
  }
  return { ok: true, effects: stamped };
}

/**
 * One step: the signal pipeline for a signal, or instructions run directly (a model's tool
 * calls). Holds the candidate agent and the effects gathered so far; on failure everything
 * gathered is dropped and the original agent is returned.
 */
class Step {
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
  ) {
    this.agent = original;
  }

  runSignal(): Maybe<StepOutcome> {
    return andThen(this.handlers(0), (handled) => {
      if (handled !== true) return handled === false ? this.route() : handled;
      return this.afterActions();
    });
  }

  runInstructions(instructions: InstructionObject[]): Maybe<StepOutcome> {
    return andThen(this.instructions(instructions), (failed) => failed ?? this.afterActions());
  }

  /** The signal of a signal step (the pipeline's stages that use it only run for signals). */
  private get current(): Signal {
    return this.signal!;
  }

  private fail(error: ErrorInfo): StepOutcome {
    return failedOutcome(this.original, error, this.diagnostics, this.signal);
  }

  /** Skills whose patterns match, in mount order. */
  private interested(): AnySkill[] {
    const found: AnySkill[] = [];
    for (const active of this.catalog.skills.values()) {
      if (active.spec.signalPatterns.length && matchesAny(this.current.type, active.spec.signalPatterns)) found.push(active.spec);
    }
    return found;
  }

  /**
   * Runs the `handleSignal` hooks from index `from` on. Resolves true when a skill handled the
   * signal, false when the router should take it, or a failed outcome.
   */
  private handlers(from: number, skills = this.interested()): Maybe<boolean | StepOutcome> {
    for (let i = from; i < skills.length; i++) {
      const skill = skills[i]!;
      if (!skill.handleSignal) continue;
      const config = this.catalog.skills.get(skill.name)!.config;
      const what = `handleSignal of skill '${skill.name}'`;
      const decided = callSafely({ what, skill: skill.name }, () => skill.handleSignal!(this.current, hookContext(this.agent, skill, config)));
      const next = (outcome: Awaited<typeof decided>): Maybe<boolean | StepOutcome> => {
        if (!outcome.ok) return this.fail(outcome.error);
        let verdict: ReturnType<Step['decide']>;
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
        this.signal = decision.signal;
        return 'continue';
      }
      case 'fail': {
        const error = decision.error ?? errorInfo('signal_failed', `${what} refused the signal`);
        return this.fail(reworded(error, { skill: error.skill ?? skill.name }));
      }
      case 'handle': {
        if (decision.state !== undefined) {
          const patched = patchSlice(this.agent, this.catalog, skill, decision.state, what);
          if (!patched.ok) return this.fail(patched.error);
          this.agent = patched.agent;
        }
        const checked = hookEffects(decision.effects, skill, what);
        if (!checked.ok) return this.fail(checked.error);
        this.gather(checked.effects);
        if (decision.output !== undefined) this.result = decision.output;
        return true;
      }
      default:
        return this.fail(errorInfo('hook_failed', `${what} returned an unknown decision '${String((decision as { decision: unknown }).decision)}'`, { skill: skill.name }));
    }
  }

  private route(): Maybe<StepOutcome> {
    const routed = this.catalog.router().router.route(this.current);
    for (const guardError of routed.guardErrors) {
      this.diagnostics.push(diagnostic('warning', 'guard_failed', guardError.message, { subject: guardError.subject }));
    }
    if (!routed.ok) return this.fail(routed.error);
    const target = routed.matches[0]!.target;
    const produced = instructionsForTarget(target, this.current);
    if (!produced.ok) return this.fail(produced.error);
    return andThen(this.instructions(produced.instructions), (failed) => failed ?? this.afterActions());
  }

  /** Runs instructions through `cmd`; returns a failed outcome, or undefined on success. */
  private instructions(instructions: unknown[]): Maybe<StepOutcome | undefined> {
    return andThen(execute(this.agent, instructions as InstructionObject[], { signal: this.signal }), (ran) => {
      const failure = ran.results.find((r) => !r.ok);
      if (failure && !failure.ok) return this.fail(failure.error);
      const catalog = catalogOf(ran.agent)!;
      const by = `action ${ran.results.map((r) => `'${r.action}'`).join(', ')}`;
      const forged = registrationProblem(this.catalog, catalog, ran.effects, by, ran.results.length === 1 ? ran.results[0]!.skill : undefined);
      if (forged) return this.fail(forged);
      this.agent = ran.agent;
      this.catalog = catalog;
      const last = ran.results.at(-1);
      if (last?.ok && !this.replied) this.result = last.output;
      this.gather(ran.effects);
      return undefined;
    });
  }

  /** Keeps effects for the system, setting aside `reply` (it answers the caller) and `run` (carried out next). */
  private pendingRuns: RunEffect[] = [];
  /** The agent as of the last mount hooks: skills mounted since then have not had theirs yet. */
  private hooked: Agent<object> | undefined;
  private gather(effects: readonly Effect[]): void {
    for (const effect of effects) {
      if (effect.type === 'run') this.pendingRuns.push(effect);
      else if (effect.type === 'reply') {
        this.result = effect.data;
        this.replied = true;
        this.effects.push(effect);
      } else this.effects.push(effect);
    }
  }

  /** Carries out `run` effects (breadth first, bounded), then mount hooks, then transforms. */
  private afterActions(depth = 0): Maybe<StepOutcome> {
    if (this.pendingRuns.length) {
      if (depth >= MAX_RUN_DEPTH) {
        const what = this.signal ? `signal '${this.signal.type}'` : 'instructions';
        return this.fail(errorInfo('effect_loop', `${what}: 'run' effects chained more than ${MAX_RUN_DEPTH} deep`, { subject: this.signal?.type }));
      }
      const runs = this.pendingRuns;
      this.pendingRuns = [];
      const instructions = runs.map((run) => this.runInstruction(run));
      return andThen(this.instructions(instructions), (failed) => failed ?? this.afterActions(depth + 1));
    }
    return andThen(runMountHooks(this.hooked ?? this.original, this.agent), (hooked) => {
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
  private runInstruction(run: RunEffect): InstructionObject {
    const instruction: InstructionObject = { action: run.action, params: run.params ?? {} };
    const skill = run.meta.skill;
    if (skill !== undefined && this.catalog.skills.get(skill)?.spec.actions.some((a) => a.name === run.action)) instruction.skill = skill;
    return instruction;
  }

  private transform(from = 0, skills = this.interested()): Maybe<StepOutcome> {
    for (let i = from; i < skills.length; i++) {
      const skill = skills[i]!;
      if (!skill.transformResult) continue;
      const config = this.catalog.skills.get(skill.name)!.config;
      const what = `transformResult of skill '${skill.name}'`;
      const transformed = callSafely({ what, skill: skill.name }, () =>
        skill.transformResult!(this.current, this.result, hookContext(this.agent, skill, config)),
      );
      return andThen(transformed, (outcome) => {
        if (!outcome.ok) return this.fail(outcome.error);
        this.result = outcome.value;
        return this.transform(i + 1, skills);
      });
    }
    return this.finish();
  }

  private finish(): StepOutcome {
    const reported = this.effects.find((effect) => effect.type === 'error');
    return {
      agent: this.agent,
      effects: this.effects,
      result: this.result,
      error: reported?.type === 'error' ? reported.error : undefined,
      diagnostics: this.diagnostics,
      signal: this.signal,
    };
  }
}

/**
 * Checks every skill mounted on `after` but not on `before` (routes, children) and the router
 * they join, then runs their `mount` hooks in mount order, applying their slice updates and
 * collecting their effects.
 */
export function runMountHooks(
  before: Agent<object>,
  after: Agent<object>,
): Maybe<{ ok: true; agent: Agent<object>; effects: Effect[] } | { ok: false; error: ErrorInfo }> {
  if (after.mounted === before.mounted || after.mounted.length === 0) return { ok: true, agent: after, effects: [] };
  const had = new Set(before.mounted.map((record) => record.name));
  const added = after.mounted.filter((record) => !had.has(record.name));
  if (added.length === 0) return { ok: true, agent: after, effects: [] };
  const mountedCatalog = catalogOf(after)!;
  for (const record of added) {
    const problem = checkSkill(mountedCatalog.skills.get(record.name)!);
    if (problem) return { ok: false, error: problem };
  }
  const routing = checkRouter(mountedCatalog);
  if (routing) return { ok: false, error: routing };
  return callMountHooks(after, added);
}

type HookedOutcome = { ok: true; agent: Agent<object>; effects: Effect[] } | { ok: false; error: ErrorInfo };

/** Calls the `mount` hooks of `skills` (mounted on `after`) in order, applying their slice updates. */
function callMountHooks(after: Agent<object>, added: readonly MountedSkill[]): Maybe<HookedOutcome> {
  const effects: Effect[] = [];
  const next = (index: number, agent: Agent<object>): Maybe<HookedOutcome> => {
    for (let i = index; i < added.length; i++) {
      const catalog = catalogOf(agent)!;
      const active = catalog.skills.get(added[i]!.name)!;
      const skill = active.spec;
      if (!skill.mount) continue;
      const what = `mount hook of skill '${skill.name}'`;
      const called = callSafely({ what, skill: skill.name }, () => skill.mount!(hookContext(agent, skill, active.config)));
      return andThen(called, (outcome) => {
        if (!outcome.ok) return outcome;
        const value = outcome.value as void | MountOutcome;
        let current = agent;
        try {
          if (value !== undefined && value !== null) {
            if (!isPlainObject(value)) return { ok: false as const, error: errorInfo('hook_failed', `${what} must return nothing or { state, effects }`, { skill: skill.name }) };
            if (value.state !== undefined) {
              const patched = patchSlice(current, catalog, skill, value.state, what);
              if (!patched.ok) return patched;
              current = patched.agent;
            }
            const checked = hookEffects(value.effects, skill, what);
            if (!checked.ok) return checked;
            effects.push(...checked.effects);
          }
        } catch (thrown) {
          return { ok: false as const, error: withCause(errorInfo('hook_failed', `${what} returned something that cannot be read: ${describeThrown(thrown)}`, { skill: skill.name }), thrown) };
        }
        return next(i + 1, current);
      });
    }
    return { ok: true, agent, effects };
  };
  return next(0, after);
}

/** A `run` effect from a mount hook is refused: there is no signal whose step it could continue. */
function runFromMountHook(effects: readonly Effect[]): ErrorInfo | undefined {
  const run = effects.find((effect) => effect.type === 'run');
  if (!run) return undefined;
  const skill = run.meta.skill;
  return errorInfo('invalid_effect', `mount hook of skill '${skill}' returned 'run' effects; run actions from signals instead`, { skill });
}

/**
 * The start of a spawned agent: the `mount` hooks of the skills it was defined with, in mount
 * order, as when each is mounted at run time. When one fails, the agent keeps the state it was
 * created with and the error is reported.
 */
function startStep(agent: Agent<object>): Maybe<StepOutcome> {
  return andThen(callMountHooks(agent, agent.mounted), (hooked) => {
    if (!hooked.ok) return failedOutcome(agent, hooked.error, [], undefined);
    const refused = runFromMountHook(hooked.effects);
    if (refused) return failedOutcome(agent, refused, [], undefined);
    return { agent: hooked.agent, effects: hooked.effects, result: undefined, error: undefined, diagnostics: [], signal: undefined };
  });
}

function mountStep(agent: Agent<object>, skill: AnySkill, config: Record<string, unknown> | undefined): Maybe<StepOutcome> {
  const mounted = mountSkill(agent, skill, config);
  if (!mounted.ok) return failedOutcome(agent, mounted.error, [], undefined);
  return andThen(runMountHooks(agent, mounted.agent), (hooked) => {
    if (!hooked.ok) return failedOutcome(agent, hooked.error, mounted.diagnostics, undefined);
    const refused = runFromMountHook(hooked.effects);
    if (refused) return failedOutcome(agent, refused, mounted.diagnostics, undefined);
    const effects = [...mounted.effects, ...hooked.effects];
    return {
      agent: hooked.agent,
      effects,
      result: { skill: skill.name, mounted: mounted.agent !== agent, effects },
      error: undefined,
      diagnostics: mounted.diagnostics,
      signal: undefined,
    };
  });
}

function unmountStep(agent: Agent<object>, skill: string): StepOutcome {
  const unmounted = unmountSkill(agent, skill);
  if (!unmounted.ok) return failedOutcome(agent, unmounted.error, [], undefined);
  const changed = unmounted.agent !== agent;
  return {
    agent: unmounted.agent,
    effects: unmounted.effects,
    result: { skill, unmounted: changed, effects: unmounted.effects },
    error: undefined,
    diagnostics: changed ? [] : [notMounted(agent, skill)],
    signal: undefined,
  };
}

/** Unmounting a skill that is not mounted changes nothing, and says so (a misspelt name must not pass). */
function notMounted(agent: Agent<object>, skill: string): Diagnostic {
  let known = false;
  try {
    known = catalogOf(agent)!.blueprint.resolveSkill(skill) !== undefined;
  } catch {
    // a registry that fails to look the name up: the skill is then described as unknown
  }
  const why = known ? 'it is not mounted' : 'no skill of that name is mounted or known to its definition';
  return diagnostic('warning', 'not_mounted', `agent '${agent.id}': unmount of skill '${skill}' changed nothing: ${why}`, { skill });
}
