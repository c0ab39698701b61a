/**
 * Mounting and unmounting skills on an agent value, as pure operations that return the new
 * agent and the effects the runtime must carry out (one `register_action` or
 * `deregister_action` per action). They never throw: every refusal is a result with an error
 * whose code is stable (`missing_dependency`, `state_key_conflict`, `required_by`,
 * `dependency_cycle`, `invalid_config`, `invalid_state`, `skill_conflict`, `unlinked_agent`).
 *
 * Pure: no I/O, no XState.
 */
import { providerName, type ActiveSkill, type Catalog } from './catalog.js';
import { sameData } from './plain.js';
import { catalogOf, unlinkedError, withSkills, type Agent } from './agent-value.js';
import { actionClashDiagnostic, missingDependencyError, missingRequirements, stateKeyConflictError, stateKeyHolder } from './skill-rules.js';
import type { Diagnostic } from './diagnostics.js';
import { Effects, type Effect } from './effects.js';
import { errorInfo, type ErrorInfo } from './errors.js';
import { initialSlice, isSkill, resolveSkillConfig, unpackAttachment, type AnySkill, type SkillAttachment, type SkillSpec } from './skill.js';

/** What `mountSkill`, `mountSkills` and `unmountSkill` return: the new agent with its effects and diagnostics, or the error. */
export type MountResult<TState extends object = Record<string, unknown>> =
  | { ok: true; agent: Agent<TState>; effects: Effect[]; diagnostics: Diagnostic[] }
  | { ok: false; error: ErrorInfo };

/** The state an agent has once `skill` is mounted. */
export type WithSkill<TState, TSkill> = TSkill extends SkillSpec<string, infer K, infer S, unknown> ? TState & { [P in K]: S } : TState;

const SKILL_TAGS = ['skill'];

/**
 * Mounts `skill` on `agent` with `config` (validated by the skill's config schema).
 * Already mounted: ok, the same agent, no effects. A different skill of the same name mounted:
 * `skill_conflict`.
 */
export function mountSkill<TState extends object, TSkill extends AnySkill>(
  agent: Agent<TState>,
  skill: TSkill,
  config?: Record<string, unknown>,
): MountResult<WithSkill<TState, TSkill> & object> {
  const catalog = catalogOf(agent);
  if (!catalog) return { ok: false, error: unlinkedError(agent) };
  if (!isSkill(skill)) return { ok: false, error: errorInfo('invalid_skill', 'mountSkill needs a skill made by defineSkill') };
  const mounted = catalog.skills.get(skill.name);
  if (mounted) {
    if (mounted.spec !== skill) return { ok: false, error: sameNameError(agent, skill.name) };
    const reconfigured = reconfigureError(agent, mounted, config);
    if (reconfigured) return { ok: false, error: reconfigured };
    return { ok: true, agent: agent as unknown as Agent<WithSkill<TState, TSkill> & object>, effects: [], diagnostics: [] };
  }
  return mountInto(agent, catalog, skill, config) as MountResult<WithSkill<TState, TSkill> & object>;
}

/**
 * Mounting a mounted skill changes nothing, so a config that differs from the one it is mounted
 * with is refused rather than dropped: its config is fixed while it is mounted. The same config
 * (after defaults), or none, is fine.
 */
function reconfigureError(agent: Agent<object>, mounted: ActiveSkill, config: unknown): ErrorInfo | undefined {
  if (config === undefined) return undefined;
  const given = resolveSkillConfig(mounted.spec, config);
  if (given.ok && sameData(given.value, mounted.config)) return undefined;
  const name = mounted.spec.name;
  return errorInfo(
    'already_mounted',
    `skill '${name}' is already mounted on agent '${agent.id}' with ${given.ok ? 'a different' : 'another'} config; a mounted skill keeps its config: unmount it and mount it again to change it`,
    { skill: name, details: { config: mounted.config } },
  );
}

/** Two different skills cannot share a name on one agent: names are how agents record skills. */
function sameNameError(agent: Agent<object>, name: string): ErrorInfo {
  return errorInfo(
    'skill_conflict',
    `a different skill named '${name}' is already mounted on agent '${agent.id}'; unmount it before mounting this one`,
    { skill: name },
  );
}

function mountInto<TState extends object>(
  agent: Agent<TState>,
  catalog: Catalog,
  skill: AnySkill,
  rawConfig: unknown,
): MountResult<TState> {
  const config = resolveSkillConfig(skill, rawConfig);
  if (!config.ok) return config;
  const missing = missingRequirements(skill.requires, (name) => catalog.skills.has(name));
  if (missing.length) return { ok: false, error: missingDependencyError(skill.name, missing, 'not mounted') };
  const conflict = stateKeyConflict(agent, catalog, skill);
  if (conflict) return { ok: false, error: conflict };
  const slice = initialSlice(skill, config.value);
  if (!slice.ok) return slice;

  const state = { ...(agent.state as Record<string, unknown>), [skill.stateKey]: slice.value } as TState;
  const mounted = [...agent.mounted, { name: skill.name, stateKey: skill.stateKey, config: config.value }];
  const next = withSkills(agent, state, mounted, catalog.withSkill(skill, config.value));
  const effects = skill.actions.map((action) => Effects.registerAction(action.name, { skill: skill.name, tags: [...SKILL_TAGS] }));
  return { ok: true, agent: next, effects, diagnostics: [...actionClashes(catalog, skill), ...newRouteDiagnostics(catalog, catalogOf(next)!)] };
}

/**
 * What the router of `after` reports (a route shadowed by another) that the router of `before`
 * did not. Routes that cannot be built report nothing here: the check of the skill's routes
 * refuses them, naming the skill.
 */
function newRouteDiagnostics(before: Catalog, after: Catalog): Diagnostic[] {
  let found: readonly Diagnostic[];
  let known: Set<string>;
  try {
    found = after.router().diagnostics;
    if (found.length === 0) return [];
    known = new Set(before.router().diagnostics.map((note) => note.message));
  } catch {
    return [];
  }
  return found.filter((note) => !known.has(note.message));
}

function stateKeyConflict(agent: Agent<object>, catalog: Catalog, skill: AnySkill): ErrorInfo | undefined {
  const key = skill.stateKey;
  const owner = catalog.stateKeys.get(key);
  if (owner !== undefined) return stateKeyConflictError(skill.name, key, stateKeyHolder({ skill: owner }));
  if (catalog.ownKeys.has(key) || Object.hasOwn(agent.state, key)) return stateKeyConflictError(skill.name, key, stateKeyHolder({ agent: agent.definition }));
  return undefined;
}

function actionClashes(catalog: Catalog, skill: AnySkill): Diagnostic[] {
  const found: Diagnostic[] = [];
  for (const action of skill.actions) {
    const existing = catalog.actions.get(action.name)?.[0];
    if (!existing) continue;
    found.push(actionClashDiagnostic(action.name, [providerName(catalog, existing), `skill '${skill.name}'`], skill.name));
  }
  return found;
}

/** The refusal to unmount `skill` while the skills named in `requiredBy` require it. */
export function requiredByError(skill: string, requiredBy: readonly string[]): ErrorInfo {
  return errorInfo('required_by', `skill '${skill}' cannot be unmounted: ${requiredBy.map((n) => `'${n}'`).join(', ')} ${requiredBy.length > 1 ? 'require' : 'requires'} it`, {
    skill,
    details: { requiredBy: [...requiredBy] },
  });
}

/**
 * Unmounts a skill (given by spec or name). Not mounted: ok, the same agent, no effects.
 * Refused with `required_by` while another mounted skill requires it.
 */
export function unmountSkill<TState extends object>(agent: Agent<TState>, skill: AnySkill | string): MountResult<TState> {
  const catalog = catalogOf(agent);
  if (!catalog) return { ok: false, error: unlinkedError(agent) };
  const name = typeof skill === 'string' ? skill : skill?.name;
  const active = typeof name === 'string' ? catalog.skills.get(name) : undefined;
  if (!active) return { ok: true, agent, effects: [], diagnostics: [] };
  const requiredBy = [...catalog.skills.values()].filter((other) => other.spec.requires.includes(active.spec.name)).map((other) => other.spec.name);
  if (requiredBy.length) return { ok: false, error: requiredByError(active.spec.name, requiredBy) };
  const state = { ...(agent.state as Record<string, unknown>) };
  delete state[active.spec.stateKey];
  const mounted = agent.mounted.filter((record) => record.name !== active.spec.name);
  const next = withSkills(agent, state as TState, mounted, catalog.withoutSkill(active.spec.name));
  const effects = active.spec.actions.map((action) => Effects.deregisterAction(action.name, { skill: active.spec.name, tags: [...SKILL_TAGS] }));
  return { ok: true, agent: next, effects, diagnostics: [] };
}

/**
 * Orders skills so that each comes after the skills it requires (already-mounted skills count
 * as satisfied). Returns a `dependency_cycle` error naming the cycle, or `missing_dependency`.
 */
export function orderByDependencies(
  skills: readonly [AnySkill, unknown][],
  isMounted: (name: string) => boolean,
): { ok: true; order: [AnySkill, unknown][] } | { ok: false; error: ErrorInfo } {
  const byName = new Map<string, [AnySkill, unknown]>();
  for (const entry of skills) {
    const existing = byName.get(entry[0].name);
    if (existing && existing[0] !== entry[0]) {
      return { ok: false, error: errorInfo('invalid_skill', `two different skills are named '${entry[0].name}'`, { skill: entry[0].name }) };
    }
    if (!existing) byName.set(entry[0].name, entry);
  }
  const order: [AnySkill, unknown][] = [];
  const done = new Set<string>();
  const stack: string[] = [];
  const visit = (name: string): ErrorInfo | undefined => {
    if (done.has(name)) return undefined;
    const at = stack.indexOf(name);
    if (at >= 0) {
      const cycle = [...stack.slice(at), name];
      return errorInfo('dependency_cycle', `skills require each other in a cycle: ${cycle.join(' → ')}`, {
        skill: name,
        details: { cycle },
      });
    }
    const entry = byName.get(name)!;
    const missing = missingRequirements(entry[0].requires, (required) => byName.has(required) || isMounted(required));
    if (missing.length) return missingDependencyError(name, missing, 'neither mounted nor being mounted');
    stack.push(name);
    for (const required of entry[0].requires) {
      if (!byName.has(required)) continue;
      const error = visit(required);
      if (error) return error;
    }
    stack.pop();
    done.add(name);
    order.push(entry);
    return undefined;
  };
  for (const name of byName.keys()) {
    const error = visit(name);
    if (error) return { ok: false, error };
  }
  return { ok: true, order };
}

/**
 * Mounts several skills, each after the skills it requires. All or nothing: on any error the
 * result is that error and no skill is mounted.
 */
export function mountSkills<TState extends object>(agent: Agent<TState>, skills: readonly SkillAttachment[]): MountResult<TState> {
  const catalog = catalogOf(agent);
  if (!catalog) return { ok: false, error: unlinkedError(agent) };
  if (!Array.isArray(skills)) return { ok: false, error: errorInfo('invalid_skill', 'mountSkills needs an array of skills') };
  const entries: [AnySkill, unknown][] = [];
  for (const attachment of skills) {
    const [skill, config] = unpackAttachment(attachment);
    if (!isSkill(skill)) return { ok: false, error: errorInfo('invalid_skill', 'mountSkills got something that is not a skill made by defineSkill') };
    const mounted = catalog.skills.get(skill.name);
    if (mounted && mounted.spec !== skill) return { ok: false, error: sameNameError(agent, skill.name) };
    const reconfigured = mounted && reconfigureError(agent, mounted, config);
    if (reconfigured) return { ok: false, error: reconfigured };
    if (!mounted) entries.push([skill, config]);
  }
  const ordered = orderByDependencies(entries, (name) => catalog.skills.has(name));
  if (!ordered.ok) return ordered;
  let current: Agent<TState> = agent;
  const effects: Effect[] = [];
  const diagnostics: Diagnostic[] = [];
  for (const [skill, config] of ordered.order) {
    const step = mountInto(current, catalogOf(current)!, skill, config);
    if (!step.ok) return step;
    current = step.agent;
    effects.push(...step.effects);
    diagnostics.push(...step.diagnostics);
  }
  return { ok: true, agent: current, effects, diagnostics };
}

/** Names of the skills mounted on `agent`, in mount order. */
export function mountedSkills(agent: { mounted: readonly { name: string }[] }): string[] {
  return agent.mounted.map((record) => record.name);
}

/** True when `skill` (a spec or a name) is mounted on `agent`. */
export function isMounted(agent: { mounted: readonly { name: string }[] }, skill: AnySkill | string): boolean {
  const name = typeof skill === 'string' ? skill : skill.name;
  return agent.mounted.some((record) => record.name === name);
}

/**
 * Replaces a mounted skill by another version of it (same name): the catalog gets the new spec,
 * the slice is kept as the new schema reads it, and the effects deregister the old actions and
 * register the new ones. Not mounted: mounted, as `mountSkill` would. The same spec mounted: ok,
 * the same agent, no effects. Refused, leaving the old version, when the kept slice does not fit
 * the new schema (`invalid_state`), the kept config does not fit the new config schema
 * (`invalid_config`), the state key changes, a requirement is not mounted, or either version has
 * children or a `mount` hook (those need an unmount and a mount: `skill_conflict`).
 */
export function replaceSkill<TState extends object>(agent: Agent<TState>, skill: AnySkill): MountResult<TState> {
  const catalog = catalogOf(agent);
  if (!catalog) return { ok: false, error: unlinkedError(agent) };
  if (!isSkill(skill)) return { ok: false, error: errorInfo('invalid_skill', 'replaceSkill needs a skill made by defineSkill') };
  const active = catalog.skills.get(skill.name);
  if (!active) return mountInto(agent, catalog, skill, undefined);
  if (active.spec === skill) return { ok: true, agent, effects: [], diagnostics: [] };
  const refuse = (code: ErrorInfo['code'], why: string, issues?: ErrorInfo['issues']) => ({
    ok: false as const,
    error: errorInfo(code, `skill '${skill.name}' cannot be replaced on agent '${agent.id}' by its new version: ${why}; the old version stays`, { skill: skill.name, issues }),
  });
  const old = active.spec;
  if (old.stateKey !== skill.stateKey) return refuse('skill_conflict', `its state key changes from '${old.stateKey}' to '${skill.stateKey}'`);
  if (old.children || skill.children || old.mount || skill.mount) return refuse('skill_conflict', 'it has children or a mount hook; unmount it and mount the new version');
  const missing = skill.requires.filter((name) => !catalog.skills.has(name));
  if (missing.length) return refuse('missing_dependency', `it now requires ${missing.map((name) => `'${name}'`).join(', ')}, not mounted`);
  const config = resolveSkillConfig(skill, active.config);
  if (!config.ok) return refuse('invalid_config', `its config does not fit the new config schema: ${config.error.message}`, config.error.issues);
  const slice = skill.schema.safeParse((agent.state as Record<string, unknown>)[skill.stateKey] ?? {});
  if (!slice.success) {
    const issues = slice.error.issues.map((issue) => ({ path: issue.path.filter((key): key is string | number => typeof key !== 'symbol'), message: issue.message }));
    return refuse('invalid_state', `its state no longer fits the new schema (${issues.map((issue) => `${issue.path.join('.') || '(slice)'}: ${issue.message}`).join('; ')})`, issues);
  }
  const state = { ...(agent.state as Record<string, unknown>), [skill.stateKey]: slice.data } as TState;
  const mounted = agent.mounted.map((record) => (record.name === skill.name ? { name: skill.name, stateKey: skill.stateKey, config: config.value } : record));
  const next = withSkills(agent, state, mounted, catalog.withSkill(skill, config.value));
  const tags = { skill: skill.name, tags: [...SKILL_TAGS] };
  const effects = [...old.actions.map((action) => Effects.deregisterAction(action.name, tags)), ...skill.actions.map((action) => Effects.registerAction(action.name, tags))];
  return { ok: true, agent: next, effects, diagnostics: [...actionClashes(catalog.withoutSkill(skill.name), skill), ...newRouteDiagnostics(catalog, catalogOf(next)!)] };
}
