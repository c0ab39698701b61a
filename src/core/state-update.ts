/**
 * Applying a state update that user code returned (an action's `result(..., { state })`, a
 * hook's `{ state }`) to a skill's slice, validated against the slice schema. One rule and one
 * message for actions and hooks alike: an update that does not fit is `invalid_state_update`.
 *
 * Pure: no I/O, no XState.
 */
import { errorInfo, formatIssues, type ErrorInfo } from './errors.js';
import { withKey } from './plain.js';
import type { Result } from './result.js';
import { applyPatch } from './schema.js';
import type { AnySkill } from './skill.js';

/** The refusal of a state update returned by `what` (`action 'add'`, `mount hook of skill 'x'`). */
export function invalidStateUpdate(what: string, detail: string, extras: Pick<ErrorInfo, 'action' | 'skill' | 'issues'>): ErrorInfo {
  return errorInfo('invalid_state_update', `${what} returned an invalid state update: ${detail}`, extras);
}

/**
 * `state` with `skill`'s slice patched by `patch`, or the refusal naming `what` (and `action`,
 * when an action returned it). `state` is committed state (frozen all the way down); so is what
 * this returns, frozen as it is built: the new slice and the new state object are the only
 * objects made besides what the update brought.
 */
export function updateSlice(state: Record<string, unknown>, skill: AnySkill, patch: unknown, what: string, action?: string): Result<Record<string, unknown>> {
  const applied = applyPatch(skill.schema, state[skill.stateKey] as Record<string, unknown>, patch);
  if (!applied.ok) {
    const extras = action === undefined ? { skill: skill.name, issues: applied.issues } : { action, skill: skill.name, issues: applied.issues };
    return { ok: false, error: invalidStateUpdate(what, formatIssues(applied.issues), extras) };
  }
  return { ok: true, value: Object.freeze(withKey(state, skill.stateKey, applied.value)) };
}
