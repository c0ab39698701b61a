/**
 * Agent definitions: an agent's name, its own schema and actions, its routes and the skills
 * composed onto it. `defineAgent` validates everything at once (state keys unique and clear of
 * the agent's schema, configs valid, requirements satisfied, no requirement cycle, every route
 * aimed at an action the agent has) and throws a `DefinitionError` naming the culprits. The
 * definition then makes agent values (`new`), runs them (`cmd`), updates and validates them
 * (`set`, `validate`), and re-links agents parsed from JSON (`restore`).
 *
 * Pure: no I/O, no XState.
 */
import type { z } from 'zod';
import { isAction, type AnyAction } from './action.js';
import { Catalog, providerName, type ActiveSkill, type Blueprint } from './catalog.js';
import { CatalogShelf } from './catalog-shelf.js';
import { Agent, catalogOf, unlinkedError, withState, type AgentData, type MountedSkill } from './agent-value.js';
import { cmd, type CmdOptions, type CmdResult } from './cmd.js';
import type { Diagnostic } from './diagnostics.js';
import { DefinitionError, errorInfo, formatIssues, StateError, type ErrorCode, type ErrorExtras, type ErrorInfo } from './errors.js';
import { unknownField, unknownOption } from './options.js';
import { randomId } from './id.js';
import { checkRouteTarget, type Instruction, type RouteTarget } from './instruction.js';
import { orderByDependencies } from './mount.js';
import { deepFreeze, deepMerge, describeValue, isPlainObject } from './plain.js';
import type { Result } from './result.js';
import { actionClashDiagnostic, inContext, missingDependencyError, missingRequirements, stateKeyConflictError, stateKeyHolder } from './skill-rules.js';
import type { SkillResolver } from './skill-registry.js';
import { unknownRouteTarget } from './route-targets.js';
import { validateRoute, type Route } from './router.js';
import { EMPTY_SCHEMA, isObjectSchema, isOpenSchema, parseSync, schemaProblem, stateShapeProblem, strayKey, type ObjectSchema } from './schema.js';
import {
  initialSlice,
  isSkill,
  resolveSkillConfig,
  SKILL_NAME,
  unpackAttachment,
  type AnySkill,
  type SkillAttachment,
  type SkillSpec,
} from './skill.js';

/** Recursively optional, for initial state and `set`. */
export type DeepPartial<T> = T extends readonly unknown[] ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;

type SliceOf<A> = A extends SkillSpec<string, infer K, infer S, unknown>
  ? { [P in K]: S }
  : A extends readonly [SkillSpec<string, infer K, infer S, unknown>, unknown]
    ? { [P in K]: S }
    : never;

/** The agent's own fields (nothing when it declares no schema). */
type OwnState<TSchema extends ObjectSchema> = [keyof TSchema['shape']] extends [never] ? unknown : z.output<TSchema>;

/** One object type instead of an intersection, so an editor shows the state as one object. */
type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The state type of an agent with schema `TSchema` and skills `TSkills`. */
export type AgentState<TSchema extends ObjectSchema, TSkills extends readonly SkillAttachment[]> = Simplify<
  OwnState<TSchema> & ([TSkills[number]] extends [never] ? unknown : UnionToIntersection<SliceOf<TSkills[number]>>)
>;

/** The state slice type of a skill. */
export type SkillState<S> = S extends SkillSpec<string, string, infer T, unknown> ? T : never;


/**
 * The config given with a skill, when it is attached or mounted: any of its config fields (the
 * rest take their defaults).
 */
export type SkillConfigInput<S> =
  S extends SkillSpec<string, string, unknown, infer C> ? (unknown extends C ? Record<string, unknown> : DeepPartial<C>) : Record<string, unknown>;

/** `[skill, config]` pairs whose config is checked against the skill's config type. */
type CheckedAttachments<T extends readonly SkillAttachment[]> = {
  [I in keyof T]: T[I] extends readonly [infer S, unknown] ? readonly [S, SkillConfigInput<S>] : T[I];
};

/** What `defineAgent` takes: a name, an own-state schema, own actions and routes, and the skills to attach. */
export interface AgentDefinitionInput<TSchema extends ObjectSchema, TSkills extends readonly SkillAttachment[]> {
  name: string;
  description?: string;
  /** The agent's own state schema (skills add theirs under their state keys). */
  schema?: TSchema;
  /** Skills composed onto every agent of this definition: a skill, or `[skill, config]`. */
  skills?: TSkills & CheckedAttachments<TSkills>;
  /** Agent-level routes; they come before skill routes of the same path and priority. */
  routes?: readonly Route<RouteTarget>[];
  /** The agent's own actions (not part of any skill). */
  actions?: readonly AnyAction[];
  /** Resolves skills mounted at run time when an agent is restored from JSON. */
  registry?: SkillResolver;
}

/** Options of `definition.new()`: the id and initial state of the agent. */
export interface NewAgentOptions<TState> {
  id?: string;
  /** Initial values, merged over the defaults. */
  state?: DeepPartial<TState>;
}

/** The options `definition.new()` takes: one entry per key of `NewAgentOptions`. */
const NEW_OPTIONS = { id: true, state: true } as const satisfies Record<keyof NewAgentOptions<object>, true>;

/** An agent definition made by `defineAgent`: makes agent values (`new`), restores them, and runs pure operations on them. */
export interface AgentDefinition<TState extends object = Record<string, unknown>> {
  readonly kind: 'agent';
  readonly name: string;
  readonly description: string | undefined;
  /** The agent's schema with each skill's schema nested under its state key. */
  readonly schema: ObjectSchema;
  /** Warnings found when the definition was made (shadowed routes, action name clashes). */
  readonly diagnostics: readonly Diagnostic[];
  /** @internal What catalogs of this definition's agents are built from. */
  readonly blueprint: Blueprint;
  /**
   * A new agent with every default applied. Throws a `StateError` when `state` is invalid
   * (`invalid_state`) or an option is not one of `NewAgentOptions` (`invalid_options`).
   */
  'new'(options?: NewAgentOptions<TState>): Agent<TState>;
  /** Runs instructions; never rejects (see `cmd`). */
  cmd(agent: Agent<TState>, instructions: Instruction | readonly Instruction[], options?: CmdOptions): Promise<CmdResult<TState>>;
  /** Deep-merges `attrs` into the state and validates the result. */
  set(agent: Agent<TState>, attrs: DeepPartial<TState>): Result<Agent<TState>>;
  /** Validates the state against the schema of the agent and its mounted skills (defaults applied). */
  validate(agent: Agent<TState>): Result<Agent<TState>>;
  /** Re-links an agent parsed from JSON, resolving its mounted skills by name. */
  restore(data: unknown, options?: { skills?: SkillResolver }): Result<Agent<TState>>;
  /** The skills attached at definition. */
  skills(): AnySkill[];
  /** Every action of the definition (its own and its skills'), deduplicated. */
  actions(): AnyAction[];
  routes(): Route<RouteTarget>[];
  /** The validated config of an attached skill. */
  skillConfig(skill: AnySkill | string): Record<string, unknown> | undefined;
  /** The state slice of a mounted skill. */
  skillState<S extends AnySkill>(agent: Agent<object>, skill: S | string): SkillState<S> | undefined;
}

/** The fields `defineAgent` takes: one entry per key of `AgentDefinitionInput`. */
const AGENT_FIELDS = { name: true, description: true, schema: true, skills: true, routes: true, actions: true, registry: true } as const satisfies Record<
  keyof AgentDefinitionInput<ObjectSchema, []>,
  true
>;

/**
 * Defines an agent. Throws a `DefinitionError` naming the culprits when two skills share a state
 * key (`duplicate_state_key`), a state key collides with the agent's schema
 * (`state_key_conflict`), a config is invalid (`invalid_config`), a skill's requirement is not
 * attached (`missing_dependency`), requirements form a cycle (`dependency_cycle`), or a route
 * targets an action that neither the agent nor its attached skills have (`unknown_action`, naming
 * the route and the action; a route for a skill mounted later names it: `{ action, skill }`), or
 * the definition has a field it does not take (`invalid_agent`, naming it).
 */
export function defineAgent<TSchema extends ObjectSchema = z.ZodObject<{}>, const TSkills extends readonly SkillAttachment[] = []>(
  input: AgentDefinitionInput<TSchema, TSkills>,
): AgentDefinition<AgentState<TSchema, TSkills>> {
  type TState = AgentState<TSchema, TSkills>;
  if (typeof input !== 'object' || input === null) {
    throw new DefinitionError({ code: 'invalid_agent', message: 'defineAgent needs a definition object' });
  }
  const name = input.name;
  const invalid = <C extends ErrorCode>(code: C, message: string, extras?: ErrorExtras<C>): never => {
    throw new DefinitionError(errorInfo(code, `agent '${String(name)}': ${message}`, extras));
  };
  const raise = ({ code, message, ...extras }: ErrorInfo): never => invalid(code, message, extras);
  if (typeof name !== 'string' || !SKILL_NAME.test(name)) {
    invalid('invalid_agent', 'name must be 1 to 64 letters, digits, "_" or "-", starting with a letter or digit');
  }
  const stray = unknownField(input, AGENT_FIELDS);
  if (stray) invalid('invalid_agent', `${stray.field} ${stray.message}`, { subject: stray.field });
  if (input.description !== undefined && typeof input.description !== 'string') invalid('invalid_agent', 'description must be a string');
  const schema = input.schema ?? EMPTY_SCHEMA;
  if (!isObjectSchema(schema)) invalid('invalid_agent', `schema ${schemaProblem(schema, 'must be a zod object schema')}`);
  const shapeProblem = stateShapeProblem(schema);
  if (shapeProblem) invalid('invalid_agent', `schema ${shapeProblem}`);
  const ownKeys = new Set(Object.keys(schema.shape));

  const ownActions = input.actions ?? [];
  if (!Array.isArray(ownActions) || ownActions.some((action) => !isAction(action))) {
    invalid('invalid_agent', 'actions must be an array of actions made by defineAction');
  }
  const ownNames = new Set<string>();
  for (const action of ownActions) {
    if (ownNames.has(action.name)) invalid('invalid_agent', `has two actions named '${action.name}'`);
    ownNames.add(action.name);
  }

  const attachments = input.skills ?? [];
  if (!Array.isArray(attachments)) invalid('invalid_agent', 'skills must be an array of skills or [skill, config] pairs');
  const active = new Map<string, ActiveSkill>();
  const stateKeyOwner = new Map<string, string>();
  for (const attachment of attachments as readonly SkillAttachment[]) {
    const [skill, rawConfig] = unpackAttachment(attachment);
    if (!isSkill(skill)) invalid('invalid_agent', 'skills must contain skills made by defineSkill (or [skill, config] pairs)');
    if (active.has(skill.name)) invalid('invalid_agent', `skill '${skill.name}' is attached twice`, { skill: skill.name });
    const config = resolveSkillConfig(skill, rawConfig);
    if (!config.ok) invalid('invalid_config', config.error.message, { skill: skill.name, issues: config.error.issues });
    const key = skill.stateKey;
    const holder = stateKeyOwner.get(key);
    if (holder !== undefined) {
      invalid('duplicate_state_key', `skills '${holder}' and '${skill.name}' both use state key '${key}'`, {
        skill: skill.name,
        subject: key,
        details: { stateKey: key, skills: [holder, skill.name] },
      });
    }
    if (ownKeys.has(key)) raise(stateKeyConflictError(skill.name, key, stateKeyHolder({ agent: String(name) }), 'defining'));
    stateKeyOwner.set(key, skill.name);
    active.set(skill.name, { spec: skill, config: (config as { value: Record<string, unknown> }).value });
  }
  for (const { spec } of active.values()) {
    const missing = missingRequirements(spec.requires, (required) => active.has(required));
    if (missing.length) raise(missingDependencyError(spec.name, missing, 'not attached'));
  }
  const ordered = orderByDependencies([...active.values()].map((a) => [a.spec, a.config]), () => false);
  if (!ordered.ok) invalid(ordered.error.code, ordered.error.message, { skill: ordered.error.skill, details: ordered.error.details });

  const routes = input.routes ?? [];
  if (!Array.isArray(routes)) invalid('invalid_agent', 'routes must be an array of routes');
  for (const route of routes) {
    try {
      validateRoute(route);
      checkRouteTarget(route);
    } catch (error) {
      invalid('invalid_route', (error as Error).message, { subject: (route as Route<unknown>)?.path });
    }
  }
  for (const { spec, config } of active.values()) {
    let skillRoutes: readonly Route<RouteTarget>[];
    try {
      skillRoutes = spec.routes(config);
      if (!Array.isArray(skillRoutes)) throw new TypeError('routes(config) did not return an array');
      for (const route of skillRoutes) {
        validateRoute(route);
        checkRouteTarget(route);
      }
    } catch (error) {
      invalid('invalid_route', `routes of skill '${spec.name}': ${(error as Error).message}`, { skill: spec.name });
    }
  }
  if (input.registry !== undefined && typeof input.registry?.get !== 'function') {
    invalid('invalid_agent', 'registry must have a get(name) method (see createSkillRegistry)');
  }

  const staticSkills = [...active.values()].map((a) => a.spec);
  const registry = input.registry;
  const blueprint: Blueprint = {
    name,
    schema,
    ownActions: Object.freeze([...ownActions]),
    routes: Object.freeze([...routes]),
    skills: Object.freeze(staticSkills),
    resolveSkill: (skillName) => active.get(skillName)?.spec ?? registry?.get(skillName),
    registry,
  };
  const catalog = new Catalog(blueprint, active);
  const unroutable = unknownRouteTarget(catalog);
  if (unroutable) raise(unroutable);
  const diagnostics = [...catalog.router().diagnostics, ...actionClashDiagnostics(catalog)];
  // Every new agent starts with these skills mounted: one frozen list, made by the first `new()`
  // and shared (agent values are immutable, so sharing it is safe, and each agent saves the copies).
  let mounted: MountedSkill[] | undefined;
  const ownMounted = () => (mounted ??= deepFreeze([...active.values()].map(({ spec, config }) => ({ name: spec.name, stateKey: spec.stateKey, config }))));
  // Restored agents share catalogs too, starting with this one (made on the first restore).
  let shelf: CatalogShelf | undefined;
  const sharedCatalogs = () => {
    if (shelf) return shelf;
    shelf = new CatalogShelf();
    shelf.add({ catalog, mounted: ownMounted() });
    return shelf;
  };

  const definition: AgentDefinition<TState> = {
    kind: 'agent',
    name,
    description: input.description,
    schema: catalog.schema(),
    diagnostics: Object.freeze(diagnostics),
    blueprint,
    new: (options = {}) => {
      if (!isPlainObject(options)) {
        throw new StateError({ code: 'invalid_options', message: `agent '${name}': new() takes { id?, state? }, got ${describeValue(options)}` });
      }
      // A misspelled `idd` would give the agent a random id, without a word.
      const unknown = unknownOption('new()', options, NEW_OPTIONS);
      if (unknown) throw new StateError({ ...unknown, message: `agent '${name}': ${unknown.message}` });
      const state = buildInitialState(blueprint, catalog, options.state);
      if (!state.ok) throw new StateError(state.error);
      const id = options.id ?? randomId();
      if (typeof id !== 'string' || id.length === 0) {
        throw new StateError({ code: 'invalid_state', message: `agent '${name}': id must be a non-empty string` });
      }
      return Agent.link<TState>({ id, definition: name, state: state.value as TState, mounted: ownMounted() }, catalog);
    },
    cmd: (agent, instructions, options) => cmd(agent, instructions, options),
    set: (agent, attrs) => setState(agent, attrs),
    validate: (agent) => validateState(agent),
    restore: (data, options) => restoreAgent<TState>(blueprint, sharedCatalogs(), data, options?.skills),
    skills: () => [...staticSkills],
    actions: () => catalog.actionList(),
    routes: () => catalog.router().router.routes(),
    skillConfig: (skill) => active.get(typeof skill === 'string' ? skill : skill.name)?.config,
    skillState: <S extends AnySkill>(agent: Agent<object>, skill: S | string) => {
      const skillName = typeof skill === 'string' ? skill : skill.name;
      const record = agent.mounted.find((m) => m.name === skillName);
      return record ? ((agent.state as Record<string, unknown>)[record.stateKey] as SkillState<S>) : undefined;
    },
  };
  return Object.freeze(definition);
}

function actionClashDiagnostics(catalog: Catalog): Diagnostic[] {
  const found: Diagnostic[] = [];
  for (const [action, entries] of catalog.actions) {
    if (entries.length < 2) continue;
    found.push(actionClashDiagnostic(action, entries.map((entry) => providerName(catalog, entry))));
  }
  return found;
}

function buildInitialState(blueprint: Blueprint, catalog: Catalog, initial: unknown): Result<Record<string, unknown>> {
  const fail = (message: string, issues?: ErrorInfo['issues']): Result<never> => ({
    ok: false,
    error: errorInfo('invalid_state', `agent '${blueprint.name}': ${message}`, issues ? { issues } : undefined),
  });
  if (initial !== undefined && !isPlainObject(initial)) return fail('initial state must be a plain object');
  const values = (initial ?? {}) as Record<string, unknown>;
  const unknownKey = Object.keys(values).find((key) => !catalog.ownKeys.has(key) && !catalog.stateKeys.has(key));
  if (unknownKey !== undefined && !isOpenSchema(blueprint.schema)) {
    return fail(`initial state has '${unknownKey}', which is neither a field of the agent's schema nor a skill's state key`);
  }
  const own: Record<string, unknown> = {};
  for (const key of Object.keys(values)) if (!catalog.stateKeys.has(key)) own[key] = values[key];
  const parsed = parseSync(blueprint.schema, own);
  if (!parsed.ok) return fail(`invalid initial state: ${formatIssues(parsed.issues)}`, parsed.issues);
  const state: Record<string, unknown> = { ...parsed.value };
  for (const { spec, config } of catalog.skills.values()) {
    const override = values[spec.stateKey];
    if (override !== undefined && !isPlainObject(override)) return fail(`initial state of skill '${spec.name}' must be a plain object`);
    const stray = override === undefined ? undefined : strayKey(spec.schema, override);
    if (stray !== undefined) {
      return fail(`initial state of skill '${spec.name}' has '${stray}', which is not a field of its schema`, [
        { path: [spec.stateKey, stray], message: `unknown field '${stray}'`, code: 'unrecognized_keys' },
      ]);
    }
    const slice = initialSlice(spec, config, override);
    // The slice's issue paths start inside the slice; the caller gave the whole state.
    if (!slice.ok) return { ok: false, error: withIssuesUnder(slice.error, spec.stateKey) };
    state[spec.stateKey] = slice.value;
  }
  return { ok: true, value: state };
}

function withIssuesUnder(error: ErrorInfo, key: string): ErrorInfo {
  return error.issues ? { ...error, issues: error.issues.map((issue) => ({ ...issue, path: [key, ...issue.path] })) } : error;
}


function setState<TState extends object>(agent: Agent<TState>, attrs: unknown): Result<Agent<TState>> {
  const catalog = catalogOf(agent);
  if (!catalog) return { ok: false, error: unlinkedError(agent) };
  if (!isPlainObject(attrs)) return { ok: false, error: errorInfo('invalid_state', 'set needs a plain object of fields to change') };
  const unknownKey = Object.keys(attrs).find((key) => !catalog.ownKeys.has(key) && !catalog.stateKeys.has(key));
  if (unknownKey !== undefined && !isOpenSchema(catalog.blueprint.schema)) {
    return {
      ok: false,
      error: errorInfo('invalid_state', `cannot set '${unknownKey}': it is neither a field of the agent's schema nor the state key of a mounted skill`, {
        subject: unknownKey,
      }),
    };
  }
  for (const key of Object.keys(attrs)) {
    const skill = catalog.stateKeys.get(key);
    const patch = attrs[key];
    if (skill === undefined || !isPlainObject(patch)) continue;
    const stray = strayKey(catalog.skills.get(skill)!.spec.schema, patch);
    if (stray !== undefined) {
      return {
        ok: false,
        error: errorInfo('invalid_state', `cannot set '${key}.${stray}': skill '${skill}' has no field '${stray}'`, { skill, subject: `${key}.${stray}` }),
      };
    }
  }
  return validated(agent, catalog, deepMerge(agent.state as Record<string, unknown>, attrs));
}

function validateState<TState extends object>(agent: Agent<TState>): Result<Agent<TState>> {
  const catalog = catalogOf(agent);
  if (!catalog) return { ok: false, error: unlinkedError(agent) };
  return validated(agent, catalog, agent.state as Record<string, unknown>);
}

function validated<TState extends object>(agent: Agent<TState>, catalog: Catalog, state: Record<string, unknown>): Result<Agent<TState>> {
  const parsed = parseSync(catalog.schema(), state);
  if (!parsed.ok) {
    return {
      ok: false,
      error: errorInfo('invalid_state', `invalid state for agent '${agent.id}': ${formatIssues(parsed.issues)}`, { issues: parsed.issues }),
    };
  }
  return {
    ok: true,
    value: withState(agent, parsed.value as TState, catalog),
  };
}

function restoreAgent<TState extends object>(blueprint: Blueprint, shelf: CatalogShelf, data: unknown, extra: SkillResolver | undefined): Result<Agent<TState>> {
  const bad = (message: string): Result<never> => ({ ok: false, error: errorInfo('invalid_snapshot', `cannot restore agent: ${message}`) });
  if (!isPlainObject(data) && !(data instanceof Agent)) return bad('the data is not an object');
  const record = data as Partial<AgentData>;
  if (typeof record.id !== 'string' || record.id.length === 0) return bad('it has no id');
  if (record.definition !== blueprint.name) {
    return bad(`it was made by definition '${String(record.definition)}', not '${blueprint.name}'`);
  }
  if (!isPlainObject(record.state)) return bad(`agent '${record.id}' has no state object`);
  if (!Array.isArray(record.mounted)) return bad(`agent '${record.id}' has no list of mounted skills`);
  const skills = new Map<string, ActiveSkill>();
  for (const entry of record.mounted as unknown[]) {
    if (!isPlainObject(entry) || typeof entry.name !== 'string') return bad(`agent '${record.id}' has a malformed mounted-skill record`);
    const spec = blueprint.resolveSkill(entry.name) ?? extra?.get(entry.name);
    if (!spec) {
      return {
        ok: false,
        error: errorInfo(
          'unknown_skill',
          `cannot restore agent '${record.id}': skill '${entry.name}' is mounted on it but neither the definition nor the registry knows it`,
          { skill: entry.name },
        ),
      };
    }
    if (skills.has(spec.name)) {
      return { ok: false, error: errorInfo('invalid_snapshot', `cannot restore agent '${record.id}': skill '${spec.name}' is mounted twice`, { skill: spec.name }) };
    }
    const config = resolveSkillConfig(spec, entry.config);
    if (!config.ok) return config;
    skills.set(spec.name, { spec, config: config.value });
  }
  let shared = shelf.find([...skills.values()]);
  if (!shared) {
    // Checked once per set of skills: a shared catalog's set passed already.
    const inconsistent = snapshotConflict(record.id, blueprint, skills);
    if (inconsistent) return { ok: false, error: inconsistent };
    const mounted = deepFreeze([...skills.values()].map(({ spec, config }) => ({ name: spec.name, stateKey: spec.stateKey, config })));
    shared = { catalog: new Catalog(blueprint, skills), mounted };
    shelf.add(shared);
  }
  const { catalog, mounted } = shared;
  const stray = unownedSlice(record.id, catalog, record.state, extra) ?? strayField(record.id, catalog, record.state);
  if (stray) return { ok: false, error: stray };
  const parsed = parseSync(catalog.schema(), record.state);
  if (!parsed.ok) {
    return {
      ok: false,
      error: errorInfo('invalid_state', `cannot restore agent '${record.id}': ${formatIssues(parsed.issues)}`, { issues: parsed.issues }),
    };
  }
  return { ok: true, value: Agent.link({ id: record.id, definition: blueprint.name, state: parsed.value as TState, mounted }, catalog) };
}

/** A field of a mounted skill's slice in a snapshot that its schema does not have: parsing would drop it without a word. */
function strayField(id: string, catalog: Catalog, state: Record<string, unknown>): ErrorInfo | undefined {
  for (const { spec } of catalog.skills.values()) {
    const slice = state[spec.stateKey];
    const field = isPlainObject(slice) ? strayKey(spec.schema, slice) : undefined;
    if (field === undefined) continue;
    return errorInfo('invalid_snapshot', `cannot restore agent '${id}': the state of skill '${spec.name}' holds '${field}', which is not a field of its schema`, {
      skill: spec.name,
      subject: `${spec.stateKey}.${field}`,
    });
  }
  return undefined;
}

/**
 * A key of a snapshot's state that nothing would keep: neither a field of the agent's schema nor
 * the slice of a mounted skill. Parsing would drop it without a word, so the snapshot is
 * refused, naming the key (and the skill, when it is the slice of a skill known by that key).
 */
function unownedSlice(id: string, catalog: Catalog, state: Record<string, unknown>, extra: SkillResolver | undefined): ErrorInfo | undefined {
  for (const key of Object.keys(state)) {
    if (catalog.ownKeys.has(key) || catalog.stateKeys.has(key)) continue;
    const owner = sliceOwner(catalog.blueprint, key, extra);
    // An agent whose schema is open keeps keys it does not declare, as `new` and `set` do.
    if (owner === undefined && isOpenSchema(catalog.blueprint.schema)) continue;
    if (owner !== undefined) {
      return errorInfo(
        'invalid_snapshot',
        `cannot restore agent '${id}': its state holds '${key}', the state of skill '${owner}', but the snapshot's mounted list does not include that skill; add it to agent.mounted or remove the slice`,
        { skill: owner, subject: key },
      );
    }
    return errorInfo(
      'invalid_snapshot',
      `cannot restore agent '${id}': its state holds '${key}', which is neither a field of agent '${catalog.blueprint.name}' nor the state of a mounted skill`,
      { subject: key },
    );
  }
  return undefined;
}

/** The skill known to the definition (or the resolver) whose state key is `key`, if any. */
function sliceOwner(blueprint: Blueprint, key: string, extra: SkillResolver | undefined): string | undefined {
  const known = blueprint.skills.find((skill) => skill.stateKey === key);
  if (known) return known.name;
  // A skill's state key defaults to its name: ask for a skill of that name too.
  let found: AnySkill | undefined;
  try {
    found = blueprint.resolveSkill(key) ?? extra?.get(key);
  } catch {
    found = undefined; // a resolver that fails here is reported when the skill is needed, not now
  }
  return found && found.stateKey === key ? found.name : undefined;
}

/** What makes a set of mounted skills impossible to have reached by mounting: a shared state key or a missing requirement. */
function snapshotConflict(id: string, blueprint: Blueprint, skills: ReadonlyMap<string, ActiveSkill>): ErrorInfo | undefined {
  const ownKeys = new Set(Object.keys(blueprint.schema.shape));
  const keyOwner = new Map<string, string>();
  const context = `cannot restore agent '${id}'`;
  for (const { spec } of skills.values()) {
    const owner = keyOwner.get(spec.stateKey);
    const holder = ownKeys.has(spec.stateKey) ? stateKeyHolder({ agent: blueprint.name }) : owner !== undefined ? stateKeyHolder({ skill: owner }) : undefined;
    if (holder !== undefined) return inContext(stateKeyConflictError(spec.name, spec.stateKey, holder), context);
    keyOwner.set(spec.stateKey, spec.name);
  }
  for (const { spec } of skills.values()) {
    const missing = missingRequirements(spec.requires, (required) => skills.has(required));
    if (missing.length) return inContext(missingDependencyError(spec.name, missing, 'not mounted'), context);
  }
  return undefined;
}
