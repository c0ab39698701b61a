/**
 * The code behind an agent value: a `Catalog` is the agent's definition plus the specs of its
 * mounted skills, indexed for fast lookup (actions by name, state keys, the router, the schema).
 * Every agent value carries its catalog (`agent-value.ts`).
 *
 * Catalogs are immutable: mounting or unmounting builds a new one, so an old agent value keeps
 * working with the skills it had.
 *
 * Pure: no I/O, no XState.
 */
import { z } from 'zod';
import type { AnyAction } from './action.js';
import { diagnostic, type Diagnostic } from './diagnostics.js';
import type { RouteTarget } from './instruction.js';
import { replaceAny, replacingCopierFor, type ReplacingCopier } from './object-copy.js';
import { createRouter, type Route, type Router } from './router.js';
import { catchallOf, hasOnlyItsKeys, type ObjectSchema } from './schema.js';
import type { SkillResolver } from './skill-registry.js';
import type { AnySkill } from './skill.js';

/** What a catalog needs to know about the agent definition. */
export interface Blueprint {
  readonly name: string;
  readonly schema: ObjectSchema;
  readonly ownActions: readonly AnyAction[];
  readonly routes: readonly Route<RouteTarget>[];
  /** The skills attached when the agent was defined. */
  readonly skills: readonly AnySkill[];
  /** Resolves a skill by name: the definition's skills first, then its registry. */
  resolveSkill(name: string): AnySkill | undefined;
  /** The definition's registry (`defineAgent({ registry })`), if it has one. */
  readonly registry: SkillResolver | undefined;
}

export interface ActiveSkill {
  readonly spec: AnySkill;
  readonly config: Record<string, unknown>;
}

/** An action the agent can run, with the skill that provides it (undefined: the agent's own). */
export interface ActionEntry {
  readonly action: AnyAction;
  readonly skill: ActiveSkill | undefined;
}

export class Catalog {
  /** Bare action name → providers, the agent's own first, then skills in mount order. */
  readonly actions: ReadonlyMap<string, readonly ActionEntry[]>;
  /** State key → skill name. */
  readonly stateKeys: ReadonlyMap<string, string>;
  readonly ownKeys: ReadonlySet<string>;
  private routerCache: { router: Router<RouteTarget>; diagnostics: Diagnostic[] } | undefined;
  private schemaCache: ObjectSchema | undefined;
  private stateCopier: ReplacingCopier | undefined;
  private patternedCache: readonly AnySkill[] | undefined;

  constructor(
    readonly blueprint: Blueprint,
    readonly skills: ReadonlyMap<string, ActiveSkill>,
  ) {
    const actions = new Map<string, ActionEntry[]>();
    const add = (entry: ActionEntry) => {
      const list = actions.get(entry.action.name);
      if (list) list.push(entry);
      else actions.set(entry.action.name, [entry]);
    };
    for (const action of blueprint.ownActions) add({ action, skill: undefined });
    const stateKeys = new Map<string, string>();
    for (const active of skills.values()) {
      stateKeys.set(active.spec.stateKey, active.spec.name);
      for (const action of active.spec.actions) add({ action, skill: active });
    }
    this.actions = actions;
    this.stateKeys = stateKeys;
    this.ownKeys = new Set(Object.keys(blueprint.schema.shape));
  }

  withSkill(spec: AnySkill, config: Record<string, unknown>): Catalog {
    const skills = new Map(this.skills);
    skills.set(spec.name, { spec, config });
    return new Catalog(this.blueprint, skills);
  }

  withoutSkill(name: string): Catalog {
    const skills = new Map(this.skills);
    skills.delete(name);
    return new Catalog(this.blueprint, skills);
  }

  /**
   * A copy of an agent state of this catalog with `value` under `key` (a skill's state key, or a
   * field of the agent's own), made on first use. A state holds exactly the agent's own fields and
   * the mounted skills' slices when the agent's schema keeps no other keys and leaves none out.
   */
  get replaceInState(): ReplacingCopier {
    return (this.stateCopier ??=
      (hasOnlyItsKeys(this.blueprint.schema) ? replacingCopierFor([...this.ownKeys, ...this.stateKeys.keys()]) : undefined) ?? replaceAny);
  }

  /**
   * The mounted skills with signal patterns, in mount order, found on first use: the only ones a
   * signal's hooks can concern, and most agents have none, so a step need not go through them all.
   */
  get patterned(): readonly AnySkill[] {
    return (this.patternedCache ??= Object.freeze([...this.skills.values()].filter((active) => active.spec.signalPatterns.length > 0).map((active) => active.spec)));
  }

  /** Every action of the agent, deduplicated, the agent's own first. */
  actionList(): AnyAction[] {
    const seen = new Set<AnyAction>();
    for (const entries of this.actions.values()) for (const entry of entries) seen.add(entry.action);
    return [...seen];
  }

  /** Action names registered on the agent, qualified by skill: `skill/action` (or `action` for its own). */
  registeredActions(): string[] {
    const names: string[] = [];
    for (const action of this.blueprint.ownActions) names.push(action.name);
    for (const active of this.skills.values()) for (const action of active.spec.actions) names.push(`${active.spec.name}/${action.name}`);
    return names;
  }

  /** The router over the agent's routes, then each mounted skill's, in mount order. Built once. */
  router(): { router: Router<RouteTarget>; diagnostics: Diagnostic[] } {
    if (!this.routerCache) this.routerCache = buildRouter(this);
    return this.routerCache;
  }

  /**
   * The agent's schema with every mounted skill's schema nested under its state key, keeping (or
   * refusing) the keys it does not declare as the agent's schema does.
   */
  schema(): ObjectSchema {
    if (!this.schemaCache) {
      const own = this.blueprint.schema;
      const shape: Record<string, z.ZodType> = { ...(own.shape as Record<string, z.ZodType>) };
      for (const active of this.skills.values()) shape[active.spec.stateKey] = active.spec.schema.prefault({});
      const catchall = catchallOf(own);
      this.schemaCache = catchall ? z.object(shape).catchall(catchall) : z.object(shape);
    }
    return this.schemaCache;
  }
}

/**
 * Builds the router. A skill route whose target is an action of the skill is pinned to that
 * skill, so a name shared with another skill cannot divert it. Two routes with the same path
 * and priority are both kept (the router returns every match) but the later one can never come
 * first, so it is reported as shadowed.
 */
function buildRouter(catalog: Catalog): { router: Router<RouteTarget>; diagnostics: Diagnostic[] } {
  const router = createRouter<RouteTarget>();
  const diagnostics: Diagnostic[] = [];
  const owners = new Map<string, string>();
  const record = (route: Route<RouteTarget>, owner: string, skill: string | undefined) => {
    const key = `${route.path}\u0000${route.priority ?? 0}`;
    const first = owners.get(key);
    if (first === undefined) owners.set(key, owner);
    else {
      diagnostics.push(
        diagnostic('warning', 'shadowed_route', `route '${route.path}' of ${owner} is shadowed by the same route of ${first}`, {
          skill,
          subject: route.path,
          details: { shadowedBy: first, priority: route.priority ?? 0 },
        }),
      );
    }
  };
  const agentOwner = `agent '${catalog.blueprint.name}'`;
  for (const route of catalog.blueprint.routes) {
    router.add(route);
    record(route, agentOwner, undefined);
  }
  for (const active of catalog.skills.values()) {
    const own = new Set(active.spec.actions.map((action) => action.name));
    for (const route of active.spec.routes(active.config)) {
      const target = route.target;
      const pinned: Route<RouteTarget> =
        typeof target !== 'function' && target.skill === undefined && own.has(typeof target.action === 'string' ? target.action : target.action.name)
          ? { ...route, target: { ...target, skill: active.spec.name } }
          : route;
      router.add(pinned);
      record(route, `skill '${active.spec.name}'`, active.spec.name);
    }
  }
  return { router, diagnostics };
}

/** How messages name the provider of an action: `skill 'x'`, or `agent 'y'` for the agent's own. */
export function providerName(catalog: Catalog, entry: ActionEntry): string {
  return entry.skill ? `skill '${entry.skill.spec.name}'` : `agent '${catalog.blueprint.name}'`;
}
