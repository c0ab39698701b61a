/**
 * Allowed actions: a skill whose metadata holds `allowedActions` (action names; `*` matches any
 * run of characters; `Name(...)` counts as `Name` and a trailing comma is ignored, as Agent Skills' `allowed-tools` writes
 * argument rules this layer cannot check) restricts which actions of its agent may run, and which
 * tools are offered, while it is mounted. Its own actions always may, and so do actions hidden from
 * models (`tool: false`: the restriction is on what a model may call). With several such skills
 * mounted, an action may run when any of them allows it. No such skill mounted: no restriction.
 *
 * Pure: no I/O, no XState.
 */
import type { ActionEntry, Catalog } from './catalog.js';
import { errorInfo, type ErrorInfo } from './errors.js';

/** The metadata key a skill sets to restrict its agent's actions while it is mounted. */
export const ALLOWED_ACTIONS_KEY = 'allowedActions';

interface Gate {
  /** The restricting skills, named in refusals. */
  skills: string[];
  allows(action: string, skill: string | undefined): boolean;
}


function toPattern(rule: string): RegExp {
  const name = rule.replace(/,$/, '').replace(/\(.*\)$/s, '').trim();
  return new RegExp(`^${name.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
}

/** The gate of a catalog's restricting skills, built once per catalog; null when none restricts. */
function gateOf(catalog: Catalog): Gate | null {
  let gate = catalog.allowedGate as Gate | null | undefined;
  if (gate !== undefined) return gate;
  const skills: string[] = [];
  const patterns: RegExp[] = [];
  for (const active of catalog.skills.values()) {
    const rules = active.spec.metadata[ALLOWED_ACTIONS_KEY];
    if (!Array.isArray(rules) || !rules.length) continue;
    skills.push(active.spec.name);
    for (const rule of rules) if (typeof rule === 'string' && rule.trim()) patterns.push(toPattern(rule));
  }
  const restricting = new Set(skills);
  gate = skills.length ? { skills, allows: (action, skill) => (skill !== undefined && restricting.has(skill)) || patterns.some((pattern) => pattern.test(action)) } : null;
  catalog.allowedGate = gate;
  return gate;
}

/** Whether the action (of `skill`, or the agent's own) may run on an agent with this catalog. */
export function isActionAllowed(catalog: Catalog, action: string, skill: string | undefined): boolean {
  return gateOf(catalog)?.allows(action, skill) ?? true;
}

/** The `action_not_allowed` error for an action a mounted skill's allowed list leaves out, or undefined. */
export function actionRefusal(catalog: Catalog, entry: ActionEntry, agentId: string): ErrorInfo | undefined {
  const gate = gateOf(catalog);
  const skill = entry.skill?.spec.name;
  if (!gate || entry.action.tool === false || gate.allows(entry.action.name, skill)) return undefined;
  const names = gate.skills.map((name) => `'${name}'`).join(', ');
  return errorInfo(
    'action_not_allowed',
    `action '${entry.action.name}' may not run on agent '${agentId}' while skill ${names} ${gate.skills.length > 1 ? 'are' : 'is'} active: ${gate.skills.length > 1 ? 'their' : 'its'} allowed tools leave it out`,
    { action: entry.action.name, skill, details: { restrictedBy: gate.skills } },
  );
}
