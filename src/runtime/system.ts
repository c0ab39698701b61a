/**
 * The runtime's system: it spawns agents as XState actors, carries out their effects through its
 * supervising system actor, delivers emitted signals to subscribers and agents, and persists and
 * restores agents. Systems are independent: two in one process share nothing. Work that runs
 * beside the agents (the model loop) plugs in as an extension (`extension.ts`); the public
 * `createAgentSystem` (`src/system.ts`) composes the two.
 */
import type { AgentDefinition } from '../core/agent-definition.js';
import type { Agent } from '../core/agent-value.js';
import { setDiagnosticSink } from '../core/diagnostic-sink.js';
import type { Diagnostic } from '../core/diagnostics.js';
import { toErrorInfo, type ErrorInfo } from '../core/errors.js';
import type { SkillRegistry, SkillResolver } from '../core/skill-registry.js';
import { createSignal, type Signal, type SignalLike, toSignal } from '../core/signal.js';
import type { AnySkill } from '../core/skill.js';
import type { SystemActor } from '../../machines/system.js';
import type { AgentRef, AgentSnapshot } from './agent-ref.js';
import { closeRefusedStore } from './durability.js';
import type { StartExtension, SystemExtension, SystemServices } from './extension.js';
import type { ProcessRef } from './process-ref.js';
import { SystemRuntime, type RuntimeOptions, type SpawnOptions } from './system-runtime.js';

/** A system of running agents, made by `createAgentSystem`: spawn, restore, publish, subscribe, persist, shut down. */
export interface AgentSystem {
  /** Starts an agent of `definition`. Throws `StateError` for an invalid initial state, `RuntimeError` for a taken id or a missing parent. */
  spawn<TState extends object>(definition: AgentDefinition<TState>, options?: SpawnOptions<TState>): AgentRef<TState>;
  /** A running agent's ref; a passivated agent's is returned without waking it (it wakes on use). */
  get(id: string): AgentRef | undefined;
  /** Running agents: those in memory in spawn order, then the passivated ones (not woken). */
  list(): AgentRef[];
  /** Stops an agent and its children. Rejects with `unknown_agent` for an id that is not running. */
  stop(id: string): Promise<void>;
  /**
   * Listens to emitted signals whose type matches `pattern` (the one matcher: `*`, `**`). Returns
   * the unsubscribe function, which ends this subscription only (a function subscribed twice is
   * called for each subscription its signal matches). Throws `RouteError` (`invalid_pattern`) for a pattern no signal type
   * can match, `RuntimeError` (`invalid_options`) for a listener that is not a function.
   */
  subscribe(pattern: string, listener: (signal: Signal) => void): () => void;
  /** Publishes a signal from outside any agent, as an `emit` effect would. Returns how many subscribers and agents got it. Throws `agent_stopped` after shutdown. */
  publish(signal: Signal | SignalLike | string): number;
  /** Errors reported by any agent (failed sends, crashed skills, effects that could not be carried out). Throws `invalid_options` for a listener that is not a function. */
  onError(listener: (error: ErrorInfo, agentId: string | undefined) => void): () => void;
  /** Diagnostics: shadowed routes, dropped signals, restarted children... Throws `invalid_options` for a listener that is not a function. */
  onDiagnostic(listener: (diagnostic: Diagnostic, agentId: string | undefined) => void): () => void;
  /** Makes a definition known by name (for `spawn` effects and `restore`). */
  register(definition: AgentDefinition<object>): void;
  /**
   * Snapshots of every running agent, parents before children (a passivated agent's as its store
   * holds it, without waking it). All or nothing: when an agent's
   * state cannot be persisted, the `invalid_state` error names every such agent (`details.agents`,
   * each one's error in `details.errors`) and no snapshot is returned; `persist()` the others one
   * by one to save them anyway.
   */
  persistAll(): AgentSnapshot[];
  /** Restores an agent from `ref.persist()` output (after a JSON round trip, in another process...). */
  restore(snapshot: unknown): AgentRef;
  /** `restore`, after loading the snapshot's mounted skills through the resolvers (document skills are loaded lazily). */
  loadAndRestore(snapshot: unknown): Promise<AgentRef>;
  /**
   * Restores several agents, parents before children whatever their order. All or nothing: when
   * one snapshot cannot be restored (or parent links form a cycle), the ones restored by this call
   * are stopped again and the error is thrown.
   */
  restoreAll(snapshots: readonly unknown[]): AgentRef[];
  /** Skills the system can mount by name and resolve when restoring agents. */
  readonly skills: SkillRegistry;
  /** The supervising system actor. */
  readonly actor: SystemActor;
  /**
   * Writes every change not yet written to the system's `store` now (what `'manual'` durability
   * waits for; nothing to do without a store), and resolves once it is written. A write that fails
   * is reported (`store_failed`), as in any durability.
   */
  flush(): Promise<void>;
  /**
   * Resolves once every agent of the system's `store` is running or reported. `createAgentSystem`
   * returns with the stored agents running, except those with mounted skills a resolver loads
   * lazily (document skills) and their descendants: each is said with an `info` diagnostic
   * (`restore_waits`) and restored once its skills load; this resolves with those, and one whose
   * skills cannot be loaded is reported (`onError`) and left in the store.
   */
  ready(): Promise<AgentRef[]>;
  /** Stops every agent and the system actor, after writing what changed to its `store` (and closing it); the system refuses new work afterwards. */
  shutdown(): Promise<void>;
}

/** The resolvers each system was made with (`createAgentSystem({ resolvers })`), kept out of its public surface. */
const RESOLVERS = new WeakMap<AgentSystem, readonly SkillResolver[]>();

/**
 * The skill resolvers `system` looks names up in after its own skills (document skill registries,
 * MCP skills...), in order; none for a system this module did not make. What the studio lists as
 * mountable beside the definitions' own skills and registries.
 */
export function resolversOf(system: AgentSystem): readonly SkillResolver[] {
  return RESOLVERS.get(system) ?? [];
}

/**
 * Starts a system with `extensions` beside its agents. The options are not checked by key here:
 * `createAgentSystem`, which knows every extension's options too, does that.
 */
export function createRuntimeSystem(options: RuntimeOptions, extensions: readonly StartExtension[] = []): AgentSystem {
  let runtime: SystemRuntime;
  try {
    runtime = new SystemRuntime(options);
  } catch (error) {
    closeRefusedStore(options.store);
    throw error;
  }
  const services: SystemServices = {
    get: (id) => runtime.refOf(id) as AgentRef | undefined,
    // The refs an extension holds are the system's own (from `get`).
    callTool: (ref, tool, args, record, callOptions, interrupt) => (ref as ProcessRef).callToolRecorded(tool, args, record, callOptions, interrupt),
    agent: (id) => {
      const process = runtime.agents.get(id);
      return process && !process.isStopped ? (process.agent as Agent<object>) : undefined;
    },
    subscribe: (pattern, listener) => runtime.broadcast.subscribe(pattern, listener),
    publish: (signal, from) => void runtime.publish(signal, from),
    listening: (type) => runtime.listening(type),
    diagnose: (agentId, diagnostic) => runtime.diagnose(agentId, diagnostic),
    report: (agentId, error) => runtime.report(agentId, error),
    inspect: runtime.inspect,
    trace: runtime.trace,
    resolvers: runtime.resolvers,
  };
  /** The system never starts (an extension refused its options, its store cannot be read): it closes its store at once. */
  const refuse = (error: unknown): never => {
    // A store that fails to close too (a damaged file) is reported: its failure must not hide why the system was refused.
    try {
      runtime.durability?.release();
    } catch (closing) {
      runtime.report(undefined, toErrorInfo(closing, 'store_failed'));
    }
    void runtime.shutdown();
    throw error;
  };
  let started: SystemExtension[];
  try {
    started = extensions.map((start) => start(services));
  } catch (error) {
    return refuse(error);
  }
  const keepers = started.filter((extension) => extension.keeps !== undefined);
  if (runtime.passivation && keepers.length > 0) runtime.passivation.keeps = (agent) => keepers.some((extension) => extension.keeps!(agent));
  const restored = <R extends AgentRef>(ref: R): R => {
    for (const extension of started) extension.restored?.(ref);
    return ref;
  };
  // An agent back at its last durable state after a failed write goes on from there, as one restored.
  runtime.onReverted = (ref) => void restored(ref as AgentRef);
  // A durable system starts with the agents of its store, turns in flight resumed.
  let stored: AgentRef<object>[];
  try {
    stored = runtime.openStored((late) => restored(late as AgentRef));
  } catch (error) {
    return refuse(error);
  }
  for (const ref of stored) restored(ref as AgentRef);
  const system: AgentSystem = {
    spawn: (definition, spawnOptions) => runtime.spawn(definition, spawnOptions),
    get: (id) => runtime.refOf(id) as AgentRef | undefined,
    list: () => runtime.refs() as AgentRef[],
    stop: (id) => runtime.stopAgent(id, 'stopped by request'),
    subscribe: (pattern, listener) => runtime.broadcast.subscribe(pattern, listener),
    publish: (signal) => {
      runtime.assertRunning();
      return runtime.publish(typeof signal === 'string' ? createSignal(signal) : toSignal(signal), undefined);
    },
    onError: (listener) => runtime.broadcast.onError(listener),
    onDiagnostic: (listener) => runtime.broadcast.onDiagnostic(listener),
    register: (definition) => runtime.register(definition),
    persistAll: () => runtime.persistAll(),
    restore: (snapshot) => restored(runtime.restore(snapshot) as AgentRef),
    loadAndRestore: async (snapshot) => restored((await runtime.loadAndRestore(snapshot)) as AgentRef),
    restoreAll: (snapshots) => runtime.restoreAll(snapshots).map((ref) => restored(ref as AgentRef)),
    skills: runtime.skills,
    actor: runtime.actor,
    flush: () => runtime.durability?.flush() ?? Promise.resolve(),
    ready: () => runtime.ready() as Promise<AgentRef[]>,
    shutdown: () => {
      for (const extension of started) extension.stop?.();
      return runtime.shutdown();
    },
  };
  RESOLVERS.set(system, runtime.resolvers);
  // What a skill watcher following this system did to its agents reaches its diagnostic listeners.
  setDiagnosticSink(system, (diagnostic, agentId) => runtime.diagnose(agentId, diagnostic));
  return system;
}

/** The options the runtime takes, by key: one entry per key of `RuntimeOptions`. */
export const RUNTIME_OPTIONS = {
  inspect: true,
  trace: true,
  mailboxLimit: true,
  callTimeout: true,
  definitions: true,
  skills: true,
  resolvers: true,
  onUnhandledError: true,
  onUnhandledDiagnostic: true,
  store: true,
  durability: true,
  intervalMs: true,
  passivate: true,
} as const satisfies Record<keyof RuntimeOptions, true>;

export type { RuntimeOptions, SpawnOptions, AnySkill };
