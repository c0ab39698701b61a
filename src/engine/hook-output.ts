/**
 * Reading what a skill's hook returned: the context a hook is called with, its slice update
 * (validated like an action's) and its effects (checked like an action's; registration effects
 * are refused, since only mounting registers actions).
 *
 * Pure: no XState, no timers, no I/O.
 */
import { withFrozenState, type Agent } from '../core/agent-value.js';
import type { Catalog } from '../core/catalog.js';
import { checkEffectList, type Effect } from '../core/effects.js';
import type { Result } from '../core/result.js';
import type { AnySkill, SkillHookContext } from '../core/skill.js';
import { updateSlice } from '../core/state-update.js';
import { forgedRegistration, isRegistration } from './registration.js';

/** What a hook of `skill` sees. */
export function hookContext(agent: Agent<object>, skill: AnySkill, config: Record<string, unknown>): SkillHookContext {
  return { agentId: agent.id, skill: skill.name, state: (agent.state as Record<string, unknown>)[skill.stateKey], config };
}

/** Applies a hook's slice update, validated like an action's. */
export function patchSlice(agent: Agent<object>, catalog: Catalog, skill: AnySkill, patch: unknown, what: string): Result<Agent<object>> {
  const state = updateSlice(agent.state as Record<string, unknown>, skill, patch, what, catalog.replaceInState);
  return state.ok ? { ok: true, value: withFrozenState(agent, state.value, catalog) } : state;
}

/** Checks and stamps effects a hook returned. */
export function hookEffects(effects: unknown, skill: AnySkill, what: string): Result<Effect[]> {
  if (effects === undefined) return { ok: true, value: [] };
  const checked = checkEffectList(effects, what, { skill: skill.name });
  if (!checked.ok) return checked;
  const forged = checked.value.find(isRegistration);
  if (forged) return { ok: false, error: forgedRegistration(forged, what, skill.name) };
  return checked;
}
