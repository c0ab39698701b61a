/**
 * Applying a state update that user code returned (an action's `result(..., { state })`, a
 * hook's `{ state }`) to a skill's slice, validated against the slice schema. One rule and one
 * message for actions and hooks alike: an update that does not fit is `invalid_state_update`.
 *
 * Pure: no I/O, no XState.
 */
import { errorInfo, formatIssues, type ErrorInfo } from './errors.js';
import { replaceAny, type ReplacingCopier } from './object-copy.js';
import type { Result } from './result.js';
import { applyPatch, EMPTY_SCHEMA } from './schema.js';
import type { AnyAction } from './action.js';
import type { AnySkill } from './skill.js';

/** The refusal of a state update returned by `what` (`action 'add'`, `mount hook of skill 'x'`). */
export function invalidStateUpdate(what: string, detail: string, extras: Pick<ErrorInfo, 'action' | 'skill' | 'issues'>): ErrorInfo {
  return errorInfo('invalid_state_update', `${what} returned an invalid state update: ${detail}`, extras);
}

/**
 * `state` with `skill`'s slice patched by `patch`, or the refusal naming who returned it: `by`,
 * a hook (`mount hook of skill 'x'`), or an action. `state` is committed state
 * (frozen all the way down); so is what this returns, frozen as it is built: the new slice and
 * the new state object are the only objects made besides what the update brought.
 */
export function updateSlice(
  state: Record<string, unknown>,
  skill: AnySkill,
  patch: unknown,
  by: string | Pick<AnyAction, 'name'>,
  /** How the new state is copied from `state` (the catalog's `replaceInState`). */
  replace: ReplacingCopier = replaceAny,
): Result<Record<string, unknown>> {
  const applied = applyPatch(skill.schema, state[skill.stateKey] as Record<string, unknown>, patch);
  if (!applied.ok) {
    // A skill defined without a schema holds no state: every field is unknown to it, which says
    // less than where the field should have been declared.
    const detail = skill.schema === EMPTY_SCHEMA ? `${formatIssues(applied.issues)}; skill '${skill.name}' has no state schema: give defineSkill a schema with the fields its actions update` : formatIssues(applied.issues);
    if (typeof by === 'string') return { ok: false, error: invalidStateUpdate(by, detail, { skill: skill.name, issues: applied.issues }) };
    return { ok: false, error: invalidStateUpdate(`action '${by.name}'`, detail, { action: by.name, skill: skill.name, issues: applied.issues }) };
  }
  return { ok: true, value: Object.freeze(replace(state, skill.stateKey, applied.value)) };
}
