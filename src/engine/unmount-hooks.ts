/**
 * The `unmount` hooks of skills: called once a skill has left its agent (unmounted, or its
 * agent stopped), so it can release what it holds outside the agent. They run after the fact:
 * the unmount is done whatever they do, and what they return is ignored. A hook that throws or
 * rejects is reported as `hook_failed` naming the skill; it never stops the unmount, the agent
 * or the other hooks.
 *
 * Pure: no XState, no timers, no I/O (the hooks themselves are user code).
 */
import { catalogOf, type Agent } from '../core/agent-value.js';
import type { ErrorInfo } from '../core/errors.js';
import type { AnySkill } from '../core/skill.js';
import { isThenable } from '../core/maybe-async.js';
import type { Result } from '../core/result.js';
import { hookContext } from './hook-output.js';
import { callSafely } from './user-code.js';

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
    const ctx = hookContext(agent, spec, active.config);
    const called = callSafely({ what: `unmount hook of skill '${spec.name}'`, skill: spec.name }, () => spec.unmount!(ctx));
    const check = (outcome: Result<unknown>) => {
      if (!outcome.ok) report(outcome.error);
    };
    if (isThenable(called)) void (called as Promise<Result<unknown>>).then(check);
    else check(called);
  }
}
