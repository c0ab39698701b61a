/**
 * The rules every set of skills on one agent obeys, each as one function with one message,
 * called wherever the rule is checked: defining an agent, mounting a skill, restoring a snapshot.
 *
 * - A skill's required skills are there (`missing_dependency`).
 * - No two state owners share a state key (`state_key_conflict`).
 * - Two providers of one action name are reported (`action_name_clash`): a bare name runs the first.
 *
 * Pure: no I/O, no XState.
 */
import { diagnostic, type Diagnostic } from './diagnostics.js';
import { errorInfo, type ErrorInfo } from './errors.js';

/** The skills among `requires` that `has` does not know. */
export function missingRequirements(requires: readonly string[], has: (name: string) => boolean): string[] {
  return requires.filter((name) => !has(name));
}

/** `skill` requires `missing`, which are not there; `where` says how they are missing (`not mounted`, `not attached`...). */
export function missingDependencyError(skill: string, missing: readonly string[], where: string): ErrorInfo {
  const names = missing.map((name) => `'${name}'`).join(', ');
  return errorInfo('missing_dependency', `skill '${skill}' requires ${names}, which ${missing.length > 1 ? 'are' : 'is'} ${where}`, {
    skill,
    details: { missing: [...missing] },
  });
}

/** The owner of a state key as messages name it: another skill, or the agent's own schema. */
export function stateKeyHolder(owner: { skill: string } | { agent: string }): string {
  return 'skill' in owner ? `skill '${owner.skill}'` : `the agent '${owner.agent}' schema`;
}

/**
 * `skill` cannot use state `key`: `holder` (see `stateKeyHolder`) has it. Said of a skill being
 * mounted (or restored), or of a skill attached to a definition, where the key is the skill's own.
 */
export function stateKeyConflictError(skill: string, key: string, holder: string, when: 'mounting' | 'defining' = 'mounting'): ErrorInfo {
  const message = when === 'mounting' ? `skill '${skill}' cannot use state key '${key}': it is taken by ${holder}` : `state key '${key}' of skill '${skill}' is taken by ${holder}`;
  return errorInfo('state_key_conflict', message, {
    skill,
    subject: key,
    details: { stateKey: key, takenBy: holder },
  });
}

/** `action` is offered by several `providers` (`skill 'x'`, `agent 'y'`), in the order a bare name resolves them. */
export function actionClashDiagnostic(action: string, providers: readonly string[], skill?: string): Diagnostic {
  return diagnostic('warning', 'action_name_clash', `action '${action}' is offered by ${providers.join(' and ')}; a bare '${action}' runs the one of ${providers[0]}`, {
    skill,
    subject: action,
    details: { providers: [...providers] },
  });
}

/** Prefixes an error's message with what was being done (`cannot restore agent 'a': ...`). */
export function inContext(error: ErrorInfo, context: string): ErrorInfo {
  return { ...error, message: `${context}: ${error.message}` };
}
