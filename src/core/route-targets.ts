/**
 * What a route may name, checked when an agent is defined, so that a route to an action nobody
 * provides fails at `defineAgent` instead of at the first signal it matches.
 *
 * The rule: a route whose target is `{ action }` names an action the agent has when it is
 * defined — one of its own actions or an action of a skill attached to it (a skill's route may
 * name an action of another attached skill). A route that also names its skill,
 * `{ action, skill }`, is how a route reaches a skill mounted later (a code skill mounted at run
 * time, a document skill loaded by `load_skill`, an MCP server's skill): when that skill is
 * attached, it must have the action; when it is not, the route waits for the skill to be mounted.
 * A handler target (a function) is not checked: what it returns is known only per signal.
 *
 * Pure: no I/O, no XState.
 */
import type { AnyAction } from './action.js';
import type { ActiveSkill, Catalog } from './catalog.js';
import { errorInfo, type ErrorInfo } from './errors.js';
import type { RouteTarget } from './instruction.js';
import type { Route } from './router.js';

/** The first route of the agent or of its attached skills whose target no attached provider has, as an `unknown_action` error. */
export function unknownRouteTarget(catalog: Catalog): ErrorInfo | undefined {
  for (const route of catalog.blueprint.routes) {
    const problem = routeTargetProblem(catalog, route, undefined);
    if (problem) return problem;
  }
  for (const active of catalog.skills.values()) {
    const problem = unknownSkillRouteTarget(catalog, active);
    if (problem) return problem;
  }
  return undefined;
}

/**
 * The first route of `active`, a skill of the agent `catalog` describes, whose target nothing the
 * agent has provides (`unknown_action`): checked when a skill is mounted at run time, by the rule
 * `defineAgent` holds its attached skills to.
 */
export function unknownSkillRouteTarget(catalog: Catalog, active: ActiveSkill): ErrorInfo | undefined {
  for (const route of active.spec.routes(active.config)) {
    const problem = routeTargetProblem(catalog, route, active.spec.name);
    if (problem) return problem;
  }
  return undefined;
}

function routeTargetProblem(catalog: Catalog, route: Route<RouteTarget>, owner: string | undefined): ErrorInfo | undefined {
  const target = route.target;
  if (typeof target === 'function') return undefined;
  const name = typeof target.action === 'string' ? target.action : target.action.name;
  const given: AnyAction | undefined = typeof target.action === 'string' ? undefined : target.action;
  const provides = (entries: readonly { action: AnyAction }[]) => entries.some((entry) => entry.action.name === name && (given === undefined || entry.action === given));
  const of = owner === undefined ? '' : ` of skill '${owner}'`;
  const refuse = (message: string, available: string[]) =>
    errorInfo('unknown_action', `route '${route.path}'${of} targets action '${name}', ${message}`, {
      action: name,
      subject: route.path,
      ...(owner === undefined ? {} : { skill: owner }),
      details: { route: route.path, available },
    });
  const what = given === undefined ? 'an action of that name' : 'this action object';

  if (target.skill !== undefined) {
    const named = catalog.skills.get(target.skill);
    // A skill the agent does not have yet: the route is for when it is mounted.
    if (!named) return undefined;
    if (provides(named.spec.actions.map((action) => ({ action })))) return undefined;
    const actions = named.spec.actions.map((action) => action.name);
    return refuse(`but skill '${target.skill}' does not have ${what} (its actions: ${actions.join(', ') || 'none'})`, actions);
  }
  if (provides(catalog.actions.get(name) ?? [])) return undefined;
  const available = [...catalog.actions.keys()];
  return refuse(
    `but neither the agent's own actions nor its skills' have ${what} (actions: ${available.join(', ') || 'none'}); ` +
      `a route to an action of a skill mounted later names that skill: { action: '${name}', skill: '<skill>' }`,
    available,
  );
}
