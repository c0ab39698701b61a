/**
 * The `unmount` hooks of skills: called once a skill has left its agent (unmounted, or its
 * agent stopped), so it can release what it holds outside the agent. They run after the fact:
 * the unmount is done whatever they do, and what they return is ignored. A hook that throws or
 * rejects is reported as `hook_failed` naming the skill; it never stops the unmount, the agent
 * or the other hooks.
 */
import { catalogOf, type Agent } from '../core/catalog.js';
import type { ErrorInfo } from '../core/errors.js';
import type { AnySkill } from '../core/skill.js';
import { callSafely, isThenable, type Outcome } from './hooks.js';

/**
 * Calls the `unmount` hooks of the skills named in `skills`, as they were mounted on `agent` (the
 * agent before they left: the hook sees the slice as it last was), last mounted first.
 */
export function callUnmountHooks(agent: Agent<object>, skills: readonly string[], report: (error: ErrorInfo) => void): void {
  const catalog = catalogOf(agent);
  if (!catalog) return;
  for (let i = skills.length - 1; i >= 0; i--) {
    const active = catalog.skills.get(skills[i]!);
    if (!active?.spec.unmount) continue;
    const spec: AnySkill = active.spec;
    const ctx = { agentId: agent.id, skill: spec.name, state: (agent.state as Record<string, unknown>)[spec.stateKey], config: active.config };
    const called = callSafely({ what: `unmount hook of skill '${spec.name}'`, skill: spec.name }, () => spec.unmount!(ctx));
    const check = (outcome: Outcome<unknown>) => {
      if (!outcome.ok) report(outcome.error);
    };
    if (isThenable(called)) void (called as Promise<Outcome<unknown>>).then(check);
    else check(called);
  }
}
