/**
 * The steps that change an agent's skills: a mount, an unmount, and the start of a spawned
 * agent (the `mount` hooks of the skills it was defined with). Skills mounted by a step are
 * checked here (routes, children: `skill-checks.ts`) before their `mount` hooks run, so that
 * nothing about them can fail later.
 *
 * Pure: no XState, no timers, no I/O.
 */
import { catalogOf, type Agent, type MountedSkill } from '../core/agent-value.js';
import type { Effect } from '../core/effects.js';
import { describeThrown, errorInfo, withCause, type ErrorInfo } from '../core/errors.js';
import { diagnostic, type Diagnostic } from '../core/diagnostics.js';
import type { InvokeUserCode } from '../core/invoke.js';
import { andThen, type MaybePromise } from '../core/maybe-async.js';
import { mountSkill, unmountSkill } from '../core/mount.js';
import { isPlainObject } from '../core/plain.js';
import type { AnySkill, MountOutcome } from '../core/skill.js';
import { hookContext, hookEffects, patchSlice } from './hook-output.js';
import { failedOutcome, type StepOutcome } from './outcome.js';
import { checkRouter, checkRouteTargets, checkSkill } from './skill-checks.js';
import { callSafely } from './user-code.js';

/** The agent after mount hooks ran, with their effects; or the error of the first that failed. */
type HookedOutcome = { ok: true; agent: Agent<object>; effects: Effect[] } | { ok: false; error: ErrorInfo };

/**
 * Checks every skill mounted on `after` but not on `before` (routes, children) and the router
 * they join, then runs their `mount` hooks in mount order, applying their slice updates and
 * collecting their effects.
 */
export function runMountHooks(
  before: Agent<object>,
  after: Agent<object>,
  invoke: InvokeUserCode | undefined,
): MaybePromise<HookedOutcome> {
  if (after.mounted === before.mounted || after.mounted.length === 0) return { ok: true, agent: after, effects: [] };
  const had = new Set(before.mounted.map((record) => record.name));
  const added = after.mounted.filter((record) => !had.has(record.name));
  if (added.length === 0) return { ok: true, agent: after, effects: [] };
  const mountedCatalog = catalogOf(after)!;
  for (const record of added) {
    const problem = checkSkill(mountedCatalog.skills.get(record.name)!);
    if (problem) return { ok: false, error: problem };
  }
  // Checked once every added skill's routes read well: a route may name an action of another skill mounted with it.
  for (const record of added) {
    const problem = checkRouteTargets(mountedCatalog, mountedCatalog.skills.get(record.name)!);
    if (problem) return { ok: false, error: problem };
  }
  const routing = checkRouter(mountedCatalog);
  if (routing) return { ok: false, error: routing };
  return callMountHooks(after, added, invoke);
}


/** Calls the `mount` hooks of `skills` (mounted on `after`) in order, applying their slice updates. */
function callMountHooks(after: Agent<object>, added: readonly MountedSkill[], invoke: InvokeUserCode | undefined): MaybePromise<HookedOutcome> {
  const effects: Effect[] = [];
  const next = (index: number, agent: Agent<object>): MaybePromise<HookedOutcome> => {
    for (let i = index; i < added.length; i++) {
      const catalog = catalogOf(agent)!;
      const active = catalog.skills.get(added[i]!.name)!;
      const skill = active.spec;
      if (!skill.mount) continue;
      const what = `mount hook of skill '${skill.name}'`;
      const called = callSafely({ what, skill: skill.name }, () => skill.mount!(hookContext(agent, skill, active.config)), invoke);
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
              current = patched.value;
            }
            const checked = hookEffects(value.effects, skill, what);
            if (!checked.ok) return checked;
            effects.push(...checked.value);
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
export function startStep(agent: Agent<object>, invoke: InvokeUserCode | undefined): MaybePromise<StepOutcome> {
  return andThen(callMountHooks(agent, agent.mounted, invoke), (hooked) => {
    if (!hooked.ok) return failedOutcome(agent, hooked.error);
    const refused = runFromMountHook(hooked.effects);
    if (refused) return failedOutcome(agent, refused);
    return { agent: hooked.agent, effects: hooked.effects, result: undefined, error: undefined, diagnostics: [], signal: undefined };
  });
}

export function mountStep(agent: Agent<object>, skill: AnySkill, config: Record<string, unknown> | undefined, invoke: InvokeUserCode | undefined): MaybePromise<StepOutcome> {
  const mounted = mountSkill(agent, skill, config);
  if (!mounted.ok) return failedOutcome(agent, mounted.error);
  return andThen(runMountHooks(agent, mounted.agent, invoke), (hooked) => {
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

export function unmountStep(agent: Agent<object>, skill: string): StepOutcome {
  const unmounted = unmountSkill(agent, skill);
  if (!unmounted.ok) return failedOutcome(agent, unmounted.error);
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
