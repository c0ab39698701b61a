/**
 * `register_action` and `deregister_action` effects describe mounts: one per action of a skill
 * mounted or unmounted. The system keeps an agent's registered actions by carrying them out, so
 * the invariant "the registered actions equal the active skills' actions" holds only
 * if no other such effect reaches it. An action or a hook that returns one of its own is refused
 * here, with an error saying how to change an agent's actions (mount a skill), instead of
 * quietly leaving the agent listing an action it cannot run or hiding one it can.
 *
 * Pure: no XState, no timers, no I/O.
 */
import type { Catalog } from '../core/catalog.js';
import { registeredName, type DeregisterActionEffect, type Effect, type RegisterActionEffect } from '../core/effects.js';
import { errorInfo, type ErrorInfo } from '../core/errors.js';

/** True for the effect kinds that only mounting and unmounting may produce. */
export function isRegistration(effect: Effect): effect is RegisterActionEffect | DeregisterActionEffect {
  return effect.type === 'register_action' || effect.type === 'deregister_action';
}

/** The refusal for a registration effect returned by a hook or an action (`by`, of `skill` when known). */
export function forgedRegistration(effect: Effect, by: string, skill?: string): ErrorInfo {
  const name = 'action' in effect ? effect.action : '?';
  return errorInfo('invalid_effect', `${by} returned a '${effect.type}' effect for '${name}': actions are registered by mounting and unmounting skills, not by effects`, { skill });
}

/**
 * Checks that the registration effects among `effects` are exactly those the skill changes
 * from `before` to `after` explain (counted as a net change per `skill/action`, so an unmount
 * and a remount in one step balance out). Cheap when nothing was mounted and no such effect is
 * there. `what` names who returned the effects (`action 'add'`), or makes that name when needed.
 */
export function registrationProblem(before: Catalog, after: Catalog, effects: readonly Effect[], what: string | (() => string), skill?: string): ErrorInfo | undefined {
  if (before.skills === after.skills && !effects.some(isRegistration)) return undefined;
  // Named only now: the common case above never needs the name.
  const by = typeof what === 'string' ? what : what();
  // What the effects register, minus what the skill changes explain: all zeros when they agree.
  const unexplained = new Map<string, number>();
  const add = (key: string, delta: number) => unexplained.set(key, (unexplained.get(key) ?? 0) + delta);
  for (const effect of effects) {
    if (isRegistration(effect)) add(registeredName(effect), effect.type === 'register_action' ? 1 : -1);
  }
  for (const [name, active] of after.skills) {
    if (before.skills.get(name)?.spec !== active.spec) for (const action of active.spec.actions) add(`${name}/${action.name}`, -1);
  }
  for (const [name, active] of before.skills) {
    if (after.skills.get(name)?.spec !== active.spec) for (const action of active.spec.actions) add(`${name}/${action.name}`, 1);
  }
  for (const [key, count] of unexplained) {
    if (count === 0) continue;
    const culprit = effects.filter(isRegistration).find((effect) => registeredName(effect) === key);
    if (culprit) return forgedRegistration(culprit, by, skill);
    return errorInfo('invalid_effect', `${by} changed the agent's skills without the registration effect for '${key}'`, { skill });
  }
  return undefined;
}
