/**
 * What the runtime checks of a skill before it runs on an agent: its routes (they join the
 * agent's router and the system's pattern index) and its children (actor logic its lifecycle
 * starts and supervises). Both come from functions of the skill's config — user code — which
 * are called here, where a throw or a malformed answer fails the step that mounts the skill (or
 * the spawn or restore that would start it) with an error naming the skill. Never later, inside
 * an actor's transition, where a throw would stop the actor.
 *
 * The checked children are kept per active skill, so a lifecycle starts exactly what was
 * checked and `children(config)` is not called again for every spawn. A catalog that passed is
 * remembered: agents of one definition share theirs, so spawning pays one lookup.
 */
import type { ActiveSkill, Catalog } from '../core/catalog.js';
import { describeThrown, errorInfo, withCause, type ErrorInfo } from '../core/errors.js';
import { checkRouteTarget } from '../core/instruction.js';
import { unknownSkillRouteTarget } from '../core/route-targets.js';
import { validateRoute } from '../core/router.js';
import type { ChildSpec, RestartPolicy } from '../core/skill.js';

const NO_CHILDREN: readonly ChildSpec[] = Object.freeze([]);
const RESTART_POLICIES: ReadonlySet<RestartPolicy> = new Set(['permanent', 'transient', 'temporary']);

const checkedChildren = new WeakMap<ActiveSkill, readonly ChildSpec[]>();
/** Catalogs that passed. A failure is not kept: the code behind it may be fixed (or flaky) and is asked again. */
const checkedCatalogs = new WeakSet<Catalog>();

/** Checks a skill's routes and children for its config; undefined when both are sound. */
export function checkSkill(active: ActiveSkill): ErrorInfo | undefined {
  return checkRoutes(active) ?? checkChildren(active);
}

/** Checks every skill of a catalog, then the router they make together. A catalog that passed is remembered. */
export function checkCatalog(catalog: Catalog): ErrorInfo | undefined {
  if (checkedCatalogs.has(catalog)) return undefined;
  for (const active of catalog.skills.values()) {
    const problem = checkSkill(active);
    if (problem) return problem;
  }
  const problem = checkRouter(catalog);
  if (!problem) checkedCatalogs.add(catalog);
  return problem;
}

/** Builds the catalog's router (it is kept), turning a failure into an error instead of a throw. */
export function checkRouter(catalog: Catalog): ErrorInfo | undefined {
  try {
    catalog.router();
    return undefined;
  } catch (thrown) {
    return errorInfo('invalid_route', `the routes of agent '${catalog.blueprint.name}' and its skills cannot be combined: ${describeThrown(thrown)}`);
  }
}

/** The checked children of a skill; empty when it has none or they did not pass the check. */
export function childSpecs(active: ActiveSkill | undefined): readonly ChildSpec[] {
  if (!active?.spec.children) return NO_CHILDREN;
  if (!checkedChildren.has(active)) checkChildren(active);
  return checkedChildren.get(active) ?? NO_CHILDREN;
}

/**
 * The first route of `active`, mounted at run time, aimed at an action nothing on the agent has
 * (`unknown_action`, as `defineAgent` refuses it), rather than a route that fails at every signal
 * it matches. Its routes were read by `checkSkill` first.
 */
export function checkRouteTargets(catalog: Catalog, active: ActiveSkill): ErrorInfo | undefined {
  try {
    const problem = unknownSkillRouteTarget(catalog, active);
    return problem && { ...problem, message: `mounting skill '${active.spec.name}': ${problem.message}` };
  } catch (thrown) {
    return errorInfo('invalid_route', `routes of skill '${active.spec.name}': routes(config) failed: ${describeThrown(thrown)}`, { skill: active.spec.name });
  }
}

function checkRoutes(active: ActiveSkill): ErrorInfo | undefined {
  const skill = active.spec.name;
  const refuse = (message: string, subject?: string) => errorInfo('invalid_route', `routes of skill '${skill}': ${message}`, { skill, subject });
  let routes: unknown;
  try {
    routes = active.spec.routes(active.config);
  } catch (thrown) {
    return refuse(`routes(config) failed: ${describeThrown(thrown)}`);
  }
  if (!Array.isArray(routes)) return refuse('routes(config) did not return an array');
  for (const route of routes as unknown[]) {
    try {
      validateRoute(route as never);
      checkRouteTarget(route as never);
    } catch (thrown) {
      return refuse(describeThrown(thrown), typeof (route as { path?: unknown })?.path === 'string' ? (route as { path: string }).path : undefined);
    }
  }
  return undefined;
}

/** Calls `children(config)` once, checks every spec, and keeps them when they pass. */
function checkChildren(active: ActiveSkill): ErrorInfo | undefined {
  const children = active.spec.children;
  if (!children) return undefined;
  if (checkedChildren.has(active)) return undefined;
  const skill = active.spec.name;
  let specs: unknown;
  try {
    specs = children(active.config);
  } catch (thrown) {
    return withCause(errorInfo('hook_failed', `children of skill '${skill}' failed: ${describeThrown(thrown)}`, { skill }), thrown);
  }
  try {
    if (!Array.isArray(specs)) return errorInfo('invalid_skill', `children of skill '${skill}' must return an array of child specs`, { skill });
    const ids = new Set<string>();
    for (const [index, spec] of (specs as unknown[]).entries()) {
      const problem = childProblem(spec, ids);
      if (problem) return errorInfo('invalid_skill', `children of skill '${skill}': the child at index ${index} ${problem}`, { skill });
    }
  } catch (thrown) {
    return errorInfo('hook_failed', `children of skill '${skill}' returned specs that cannot be read: ${describeThrown(thrown)}`, { skill });
  }
  checkedChildren.set(active, Object.freeze([...(specs as ChildSpec[])]));
  return undefined;
}

/** Why a child spec cannot be started and supervised, or undefined. `ids` collects the ids seen. */
function childProblem(spec: unknown, ids: Set<string>): string | undefined {
  if (typeof spec !== 'object' || spec === null) return 'is not an object';
  const { id, logic, restart, maxRestarts, withinMs } = spec as Partial<ChildSpec>;
  if (typeof id !== 'string' || id.length === 0) return 'needs a non-empty string id';
  if (ids.has(id)) return `has the id '${id}' of an earlier child; ids must be unique`;
  ids.add(id);
  const candidate = logic as { transition?: unknown; getInitialSnapshot?: unknown } | undefined;
  if ((typeof candidate !== 'object' && typeof candidate !== 'function') || candidate === null || typeof candidate.transition !== 'function' || typeof candidate.getInitialSnapshot !== 'function') {
    return `('${id}') has logic that is not XState actor logic (fromCallback, fromPromise, createMachine...)`;
  }
  if (restart !== undefined && !RESTART_POLICIES.has(restart)) return `('${id}') has restart '${String(restart)}'; use permanent, transient or temporary`;
  if (maxRestarts !== undefined && (!Number.isInteger(maxRestarts) || maxRestarts < 0)) return `('${id}') has maxRestarts ${String(maxRestarts)}; it must be an integer >= 0`;
  // A window of 0 (or less) would never count a restart: a child that crashes as it starts would loop forever.
  if (withinMs !== undefined && (typeof withinMs !== 'number' || !(withinMs > 0) || !Number.isFinite(withinMs))) {
    return `('${id}') has withinMs ${String(withinMs)}; it must be a finite number of milliseconds > 0`;
  }
  return undefined;
}
