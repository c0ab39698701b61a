/**
 * The agent value: plain data — `{ id, definition, state, mounted }` — that serialises to JSON
 * as is, plus a private link to its catalog (the code that runs it), which JSON, spreading and
 * equality never see. An agent that lost the link (parsed from JSON) is re-linked with
 * `definition.restore(data)`. Agent values are immutable: every change returns a new one.
 *
 * Pure: no I/O, no XState.
 */
import type { Catalog } from './catalog.js';
import { errorInfo, type ErrorInfo } from './errors.js';
import { deepFreeze } from './plain.js';

/** A mounted skill as the agent records it: by name, with its validated config. */
export interface MountedSkill {
  name: string;
  stateKey: string;
  config: Record<string, unknown>;
}

/** The plain-data form of an agent. */
export interface AgentData<TState extends object = Record<string, unknown>> {
  id: string;
  /** The name of the agent definition this agent was made from. */
  definition: string;
  state: TState;
  /** Mounted skills, in mount order. */
  mounted: MountedSkill[];
}

let readCatalog: (agent: Agent<object>) => Catalog | undefined;

/**
 * An agent: plain data (`id`, `definition`, `state`, `mounted`) plus a private link to the code
 * that runs it. Create agents with `definition.new()`; change them with `cmd`, `set`,
 * `mountSkill` and `unmountSkill`, which return new agents.
 */
export class Agent<TState extends object = Record<string, unknown>> implements AgentData<TState> {
  readonly id: string;
  readonly definition: string;
  readonly state: TState;
  readonly mounted: MountedSkill[];
  readonly #catalog: Catalog | undefined;

  static {
    readCatalog = (agent) => (#catalog in agent ? agent.#catalog : undefined);
  }

  /** `state` and `mounted` must be frozen all the way down: `link` and `linkFrozen` see to it. */
  private constructor(id: string, definition: string, state: TState, mounted: MountedSkill[], catalog: Catalog | undefined) {
    this.id = id;
    this.definition = definition;
    this.state = state;
    this.mounted = mounted;
    this.#catalog = catalog;
    // Frozen: whoever holds an agent value (an action, a hook, a subscriber, `getSnapshot()`)
    // can read it, never change it behind the schema and the commit.
    Object.freeze(this);
  }

  /** @internal Use `definition.new()` or `definition.restore()`. */
  static link<S extends object>(data: AgentData<S>, catalog: Catalog): Agent<S> {
    return new Agent(data.id, data.definition, deepFreeze(data.state), deepFreeze(data.mounted), catalog);
  }

  /** @internal `link` for state and mounted skills that are frozen all the way down already (see `withFrozenState`). */
  static linkFrozen<S extends object>(id: string, definition: string, state: S, mounted: MountedSkill[], catalog: Catalog): Agent<S> {
    return new Agent(id, definition, state, mounted, catalog);
  }

  toJSON(): AgentData<TState> {
    return { id: this.id, definition: this.definition, state: this.state, mounted: this.mounted };
  }
}

/** The catalog behind an agent value, or undefined when it is plain data without one. */
export function catalogOf(agent: unknown): Catalog | undefined {
  return agent instanceof Agent ? readCatalog(agent) : undefined;
}

/** True when `value` is a linked agent made by skillstate. */
export function isAgent(value: unknown): value is Agent {
  return catalogOf(value) !== undefined;
}

/**
 * A new agent value with `state` and the same id and mounted skills, linked to `catalog` (by
 * default the agent's own). Every state change that keeps the mounted skills goes through here.
 */
export function withState<S extends object>(agent: Agent<S>, state: S, catalog: Catalog = readCatalog(agent)!): Agent<S> {
  return Agent.link({ id: agent.id, definition: agent.definition, state, mounted: agent.mounted }, catalog);
}

/**
 * `withState` for a state frozen all the way down already, as a step builds it: each object it
 * made frozen when it was made, the rest shared with committed state. Walking the whole state
 * again on every commit would cost more than the step's own work.
 */
export function withFrozenState<S extends object>(agent: Agent<S>, state: S, catalog: Catalog): Agent<S> {
  return Agent.linkFrozen(agent.id, agent.definition, state, agent.mounted, catalog);
}

/** A new agent value with other mounted skills (and the state they bring), linked to their catalog. */
export function withSkills<S extends object>(agent: Agent<object>, state: S, mounted: MountedSkill[], catalog: Catalog): Agent<S> {
  return Agent.link({ id: agent.id, definition: agent.definition, state, mounted }, catalog);
}

/** The refusal for an agent value that is plain data without its catalog (parsed from JSON, spread). */
export function unlinkedError(agent: unknown): ErrorInfo {
  const id = typeof agent === 'object' && agent !== null ? (agent as { id?: unknown }).id : undefined;
  return errorInfo(
    'unlinked_agent',
    `agent${typeof id === 'string' ? ` '${id}'` : ''} is plain data without its definition; ` +
      'create it with definition.new() or re-link it with definition.restore(data)',
  );
}

