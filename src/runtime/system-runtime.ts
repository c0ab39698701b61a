/**
 * The agent system: a registry of running agents (not their parent: see `machines/system.ts`),
 * the supervising system actor that carries out their effects, subscriptions to emitted
 * signals, errors and diagnostics, persistence and inspection wiring.
 *
 * `createAgentSystem()` in `system.ts` is the public face; this class is the machinery.
 */
import { nanoid } from 'nanoid';
import { createActor, type InspectionEvent, type Observer } from 'xstate';
import type { AgentDefinition, DeepPartial } from '../core/agent-definition.js';
import { type Catalog } from '../core/catalog.js';
import { catalogOf, type Agent } from '../core/agent-value.js';
import { diagnostic as makeDiagnostic, type Diagnostic } from '../core/diagnostics.js';
import type { Effect, SpawnEffect } from '../core/effects.js';
import { DefinitionError, describeThrown, errorInfo, reworded, toErrorInfo, type ErrorInfo } from '../core/errors.js';
import { describeValue, isPlainObject } from '../core/plain.js';
import { createSkillRegistry, type SkillRegistry, type SkillResolver } from '../core/skill-registry.js';
import type { Signal } from '../core/signal.js';
import { isSkill, type AnySkill } from '../core/skill.js';
import { agentMachine, startingAgentMachine } from '../../machines/agent.js';
import type { LifecycleState } from '../../machines/skill-lifecycle.js';
import { systemMachine, type EffectEvent, type SystemActor, type SystemHost } from '../../machines/system.js';
import { FailureObserver } from '../../machines/xstate-internals.js';
import { AgentProcess } from './agent-process.js';
import { agentIdProblem } from './agent-id.js';
import type { AgentRef } from './agent-ref.js';
import { DIAGNOSTIC_SIGNAL, ERROR_SIGNAL } from '../core/system-signals.js';
import { Broadcaster } from './broadcast.js';
import { checkRuntimeOptions } from './runtime-options.js';
import { listenPatterns, PatternIndex, registeredNames } from './pattern-index.js';
import { effectHandlers, interpretEffect, type EffectHost } from './effects.js';
import { RuntimeError } from '../core/runtime-error.js';
import { unknownOption } from '../core/options.js';
import { Durability, type DurabilityMode, type HeldAnswer } from './durability.js';
import { mountedSkillNames, orderParentsFirst, persistAll, readSnapshot, restoreParentsFirst, waitingForSkills, type AgentSnapshot, type DurableStore, type RestoreHost, type RestorePlan, type SnapshotSource } from './persistence.js';
import type { ProcessHost } from './process-host.js';
import { ProcessRef } from './process-ref.js';
import { idleMsOf, Passivation, type PassivateOptions, type PassivationHost } from './passivation.js';
import { checkCatalog } from '../engine/index.js';
import { refChanged, refChangesHeard } from './ref-changes.js';
import { setTimer } from './timers.js';
import { createTracer, type TraceOption, type TraceRecord, type Tracer } from './trace.js';

/** Anything XState accepts as an inspector, or an `@statelyai/inspect` inspector (its `.inspect` is used). */
export type InspectOption = Observer<InspectionEvent> | ((event: InspectionEvent) => void) | { inspect: Observer<InspectionEvent> | ((event: InspectionEvent) => void) };

/** Options of `createAgentSystem` that the runtime itself takes (those of extensions, such as `models`, are declared with them). */
export interface RuntimeOptions {
  /** An XState inspector: every agent, lifecycle and skill child is reported to it. Off by default (it costs). */
  inspect?: InspectOption;
  /** Every signal, step, effect, lifecycle transition and diagnostic as JSON lines. */
  trace?: TraceOption;
  /** Items an agent's mailbox holds at most (default 10,000). */
  mailboxLimit?: number;
  /** Default `call` timeout in milliseconds (default 5,000). */
  callTimeout?: number;
  /** Definitions the system can spawn by name (`spawn` effects) and restore. Spawned definitions are added. */
  definitions?: readonly AgentDefinition<object>[];
  /** Skills the system can mount by name and resolve when restoring agents. */
  skills?: readonly AnySkill[] | SkillRegistry;
  /**
   * More places to find skills by name, after `skills`: a document-skill registry, for one.
   * A resolver with `load(names)` is asked to load a skill that is mounted by name and not yet
   * loaded.
   */
  resolvers?: readonly SkillResolver[];
  /**
   * Called with errors nobody else received (a failed `send`, a crashed skill...). Default:
   * one line on stderr. Errors are also published as `skillstate.error` signals.
   */
  onUnhandledError?: (error: ErrorInfo, agentId: string | undefined) => void;
  /** Called with diagnostics nobody subscribed to. Default: warnings on stderr. */
  onUnhandledDiagnostic?: (diagnostic: Diagnostic, agentId: string | undefined) => void;
  /**
   * Where the system keeps its agents durable (`createSqliteStore({ path })`). The system
   * restores every agent stored there when it starts, and writes each agent's changes as set by
   * `durability`. Without it, nothing is written unless you persist by hand.
   */
  store?: DurableStore;
  /**
   * When agents are written to `store` (default `'step'`): `'step'`, each step before its answer
   * is given (steps of many agents written together); `'interval'`, at most `intervalMs` after
   * they change, answers not held back (a crash loses the last changes); `'manual'`, on
   * `system.flush()` and at shutdown. It needs `store`.
   */
  durability?: DurabilityMode;
  /** The longest time, in milliseconds, a change waits to be written in `'interval'` durability (default 100); in another durability it is ignored, with a warning. */
  intervalMs?: number;
  /**
   * Drops agents that have had nothing to do for `idleMs` from memory (needs `store`): each is
   * in the store, and its next use — a signal, a call, `getSnapshot`, a published signal it
   * listens to, a scheduled signal falling due — wakes it, under the same ref. Off by default.
   */
  passivate?: PassivateOptions;
}

/** The options `spawn` takes: one entry per key of `SpawnOptions`. */
const SPAWN_OPTIONS = { id: true, state: true, parent: true } as const satisfies Record<keyof SpawnOptions<object>, true>;

/** A resolver that loads skills on demand (a document-skill registry): `has` says which it can load. */
type SkillLoader = SkillResolver & { has?(name: string): boolean; load(names: string[]): Promise<unknown> };

/** Options of `system.spawn`: the id, initial state and parent of the agent. */
export interface SpawnOptions<TState> {
  id?: string;
  /** Initial state, merged over the defaults (as in `definition.new({ state })`). */
  state?: DeepPartial<TState>;
  /** The parent agent (stopping it stops this one). */
  parent?: string | AgentRef<object>;
}

/** An agent that starts under the ref of one already running (`start`'s `over`). */
interface TakeOver<TState extends object> {
  ref: ProcessRef<TState>;
  /** Traced in place of `spawn`, the agent's lifecycles after it; none: the caller traces it. */
  traced?: TraceRecord;
}

const withMountHooks = new WeakMap<Catalog, boolean>();

/** Whether any skill of a catalog has a `mount` hook (remembered: agents of one definition share it). */
function hasMountHooks(catalog: Catalog): boolean {
  let known = withMountHooks.get(catalog);
  if (known === undefined) withMountHooks.set(catalog, (known = [...catalog.skills.values()].some((active) => active.spec.mount !== undefined)));
  return known;
}

/**
 * The inspector as a function XState can call from inside any actor's transition, where a throw
 * would stop the actor: an inspector that throws is reported once on stderr and otherwise ignored.
 */
function normalizeInspect(option: InspectOption | undefined): ((event: InspectionEvent) => void) | undefined {
  if (option === undefined) return undefined;
  const observer = typeof option === 'object' && option !== null && 'inspect' in option ? option.inspect : option;
  const next = typeof observer === 'function' ? observer : (event: InspectionEvent) => observer.next?.(event);
  let broken = false;
  return (event) => {
    try {
      next(event);
    } catch (error) {
      if (broken) return;
      broken = true;
      process.stderr.write(`[skillstate] the inspector failed and later failures are not reported: ${describeThrown(error)}\n`);
    }
  };
}

export class SystemRuntime implements SystemHost, ProcessHost, EffectHost, RestoreHost, PassivationHost {
  readonly agents = new Map<string, AgentProcess<object>>();
  readonly definitions = new Map<string, AgentDefinition<object>>();
  readonly skills: SkillRegistry;
  readonly resolvers: SkillResolver[];
  readonly mailboxLimit: number;
  readonly callTimeout: number;
  readonly trace: Tracer | undefined;
  readonly inspect: ((event: InspectionEvent) => void) | undefined;
  readonly actor: SystemActor;
  readonly broadcast: Broadcaster;
  private readonly listeners = new PatternIndex<string>();
  private shutDown = false;
  /**
   * How many agent steps are running on the stack. Work for another actor that arises inside a
   * step (delivering an emitted signal, spawning, stopping) waits until the stack unwinds, so no
   * actor is ever driven from inside another actor's action.
   */
  inStep = 0;
  /**
   * Told of each agent brought back to its last durable state (see `reverted`), as the system's
   * extensions are told of an agent restored from the store: a turn in flight it holds goes on.
   */
  onReverted: ((ref: AgentRef<object>) => void) | undefined;
  /** Errors a waiting caller received (its promise rejected with them): not reported again. */
  private readonly answeredErrors = new WeakSet<ErrorInfo>();

  private readonly effects = effectHandlers(this);

  constructor(options: RuntimeOptions = {}) {
    if (!isPlainObject(options as unknown)) {
      throw new DefinitionError({ code: 'invalid_options', message: `createAgentSystem takes an options object, got ${describeValue(options)}` });
    }
    checkRuntimeOptions(options);
    const limit = options.mailboxLimit ?? 10_000;
    if (!Number.isInteger(limit) || limit < 1) throw new DefinitionError({ code: 'invalid_options', subject: 'mailboxLimit', message: `mailboxLimit must be a positive integer, got ${String(limit)}` });
    this.mailboxLimit = limit;
    this.callTimeout = options.callTimeout ?? 5_000;
    this.skills = Array.isArray(options.skills) || options.skills === undefined ? createSkillRegistry((options.skills as readonly AnySkill[]) ?? []) : (options.skills as SkillRegistry);
    this.resolvers = [...(options.resolvers ?? [])];
    for (const resolver of this.resolvers) {
      if (typeof resolver?.get !== 'function') throw new DefinitionError({ code: 'invalid_skill', message: 'each of resolvers must have a get(name) method' });
    }
    this.trace = createTracer(options.trace);
    this.broadcast = new Broadcaster(options, this.trace);
    // After the broadcaster: registering says what defining each definition found.
    for (const definition of options.definitions ?? []) this.register(definition);
    this.inspect = normalizeInspect(options.inspect);
    this.actor = createActor(systemMachine, { input: { host: this }, ...(this.inspect ? { inspect: this.inspect } : {}) });
    this.actor.subscribe({ error: (error) => this.report(undefined, errorInfo('signal_failed', `the system actor failed: ${String(error)}`)) });
    this.actor.start();
    if (options.passivate !== undefined) {
      const idleMs = idleMsOf(options.passivate, options.store);
      this.durability = durabilityOf(options, this);
      this.passivation = new Passivation(idleMs, this);
    } else if (options.store !== undefined) this.durability = durabilityOf(options, this);
    else {
      // Asked for durability without a store to write to: the agents would live in memory only.
      const option = options.durability !== undefined ? 'durability' : options.intervalMs !== undefined ? 'intervalMs' : undefined;
      if (option !== undefined) {
        throw new DefinitionError({ code: 'invalid_options', subject: option, message: `${option} needs a store to write agents to: createAgentSystem({ store: createSqliteStore({ path }), ${option} })`, details: { option, value: describeValue(options[option]) } });
      }
    }
  }

  // ── Durability ─────────────────────────────────────────────────────────────────────────────

  /** Where agents are kept durable, when the system has a store. */
  readonly durability: Durability | undefined;
  /** Restoring the stored agents as the system opens: they are in the store as they are. */
  private opening = false;

  changed(process: SnapshotSource): void {
    if (!this.opening) this.durability?.changed(process);
  }

  stepsOver(): void {
    this.durability?.stepsOver();
  }

  // ── Passivation ────────────────────────────────────────────────────────────────────────────

  /** Idle agents leave memory and wake on use, when the system passivates (`passivation.ts`). */
  readonly passivation: Passivation | undefined;

  /** Idle sweeps the passivation has made (0 without it): a plain field, as every finished step reads it. */
  sweeps = 0;

  unwritten(): ReadonlySet<string> {
    return this.durability!.unwritten();
  }

  writeSoon(): void {
    // 'step' and 'interval' write on their own; 'manual' writes when asked.
    if (this.durability!.mode === 'manual') void this.durability!.flush();
  }

  passivate(process: AgentProcess<object>): number | undefined {
    const due = process.passivate();
    this.agents.delete(process.id);
    // Still indexed under its patterns: a published signal it listens to wakes it.
    (process.ref as ProcessRef<object>).passivated();
    this.trace?.({ kind: 'passivate', agent: process.id });
    return due;
  }

  wake(ref: AgentRef<object>): AgentProcess<object> {
    const id = ref.id;
    const passivation = this.passivation;
    if (this.shutDown || passivation?.refs.get(id) !== ref) {
      throw new RuntimeError(errorInfo('agent_stopped', `agent '${id}' is stopped; this ref no longer reaches any agent, even one spawned later with the same id`), id);
    }
    const failed = (error: unknown, fallback: 'store_failed' | 'invalid_snapshot') => {
      const info = toErrorInfo(error, fallback);
      return new RuntimeError(reworded(info, { message: `agent '${id}' is passivated and could not be woken: ${info.message}` }), id);
    };
    let snapshot: unknown;
    try {
      snapshot = this.durability!.store.read!(id);
    } catch (error) {
      throw failed(error, 'store_failed');
    }
    if (snapshot === undefined) {
      throw new RuntimeError(errorInfo('unknown_agent', `agent '${id}' is passivated but its snapshot is no longer in the store; it cannot be woken`, { subject: id }), id);
    }
    const due = passivation.forget(id);
    const opening = this.opening;
    // What wakes is what is stored: nothing to write.
    this.opening = true;
    try {
      const process = this.revive(readSnapshot(snapshot, this), { ref: ref as ProcessRef<object> });
      this.trace?.({ kind: 'wake', agent: id });
      return process;
    } catch (error) {
      // Still passivated, its scheduled signals with it.
      passivation.adopt(ref as ProcessRef<object>, due);
      throw failed(error, 'invalid_snapshot');
    } finally {
      this.opening = opening;
    }
  }

  isPassivated(ref: AgentRef<object>): boolean {
    return !this.shutDown && this.passivation?.refs.get(ref.id) === ref;
  }

  wakeForTimer(id: string): void {
    const passivation = this.passivation;
    const ref = passivation?.refs.get(id);
    if (!ref) return;
    try {
      this.wake(ref);
    } catch (error) {
      const info = toErrorInfo(error, 'store_failed');
      // Its scheduled signals are not dropped: the wake is tried again idleMs later, and said each time.
      passivation!.adopt(ref, Date.now() + passivation!.idleMs);
      this.report(id, reworded(info, { message: `${info.message}; its scheduled signals are due, and waking it is tried again in ${passivation!.idleMs} ms` }));
    }
  }

  /** The agent `id` in memory, woken first when it is passivated; undefined when there is none. */
  private awake(id: string): AgentProcess<object> | undefined {
    const process = this.agents.get(id);
    if (process) return process;
    const ref = this.passivation?.refs.get(id);
    return ref ? this.wake(ref) : undefined;
  }

  /** The ref of agent `id`, in memory or passivated (not woken). */
  refOf(id: string): AgentRef<object> | undefined {
    return this.agents.get(id)?.ref ?? this.passivation?.refs.get(id);
  }

  /** Snapshots of every running agent, parents first: a passivated one's as the store holds it. */
  persistAll(): AgentSnapshot[] {
    const agents = [...this.agents.values()];
    if (!this.passivation?.refs.size) return persistAll(agents);
    const store = this.durability!.store;
    return persistAll(agents, { ids: [...this.passivation.refs.keys()], read: (id) => store.read!(id) });
  }

  /** Refs of every agent: those in memory in spawn order, then the passivated ones. */
  refs(): AgentRef<object>[] {
    const refs = [...this.agents.values()].map((process) => process.ref);
    // One by one: a million passivated refs are too many arguments for one push.
    if (this.passivation) for (const ref of this.passivation.refs.values()) refs.push(ref);
    return refs;
  }

  get mayHoldAnswers(): boolean {
    return this.durability !== undefined;
  }

  holdAnswer(answer: HeldAnswer): boolean {
    return this.durability?.hold(answer) ?? false;
  }

  /**
   * Restores every agent of the store, parents before children. A stored agent that cannot be
   * restored (its definition or a skill is no longer known, its snapshot is damaged) is reported
   * with its id and left in the store, untouched; the others are restored. An agent with mounted
   * skills a resolver loads lazily (document skills) is restored once they load, after this
   * returns, with its descendants: each is said (`restore_waits`), handed to `late` when it runs,
   * and `ready()` resolves when all are done.
   *
   * The store is read a page at a time (`loadPages`): an agent without a parent is opened as its
   * page is read and its snapshot let go; only agents with a parent (and those waiting for their
   * skills) are held, and ordered parents first once every page is read. Opening a store of many
   * agents then holds one page of snapshots, not the whole store.
   */
  openStored(late: (ref: AgentRef<object>) => void = () => {}): AgentRef<object>[] {
    const durability = this.durability;
    if (!durability) return [];
    const store = durability.store;
    const refs: AgentRef<object>[] = [];
    const held: AgentSnapshot[] = [];
    for (const page of store.loadPages ? store.loadPages() : [store.loadAll()]) {
      const now: unknown[] = [];
      for (const entry of page) {
        if (entry.error) this.unrestorable(entry.id, entry.error.toInfo());
        else if (this.opensLast(entry.snapshot)) held.push(entry.snapshot as AgentSnapshot);
        else now.push(entry.snapshot);
      }
      for (const ref of this.restoreStored(now)) refs.push(ref);
    }
    // The agents of a cycle of parent links are each reported and left in the store; the others are restored.
    let ordered: AgentSnapshot[] | undefined;
    for (let left = held; ordered === undefined; ) {
      try {
        ordered = orderParentsFirst(left);
      } catch (error) {
        const info = toErrorInfo(error, 'invalid_snapshot');
        const cycle = cycleFrom(info.subject, left);
        if (cycle.size === 0) {
          // Not a cycle it can name: said once, and the agents restored in the order read.
          this.unrestorable(undefined, info);
          ordered = left;
          break;
        }
        for (const id of cycle) this.unrestorable(id, reworded(info, { subject: id }));
        left = left.filter((snapshot) => !cycle.has(snapshot.id));
      }
    }
    const waiting = waitingForSkills(ordered, (snapshot) => this.loadable(snapshot));
    for (const ref of this.restoreStored(waiting.size === 0 ? ordered : ordered.filter((snapshot) => !waiting.has(snapshot?.id)))) refs.push(ref);
    if (waiting.size > 0) {
      for (const [id, skills] of waiting) {
        this.leftInStore.add(id);
        const why = skills.length > 0 ? `its skill(s) ${skills.map((name) => `'${name}'`).join(', ')} load` : `its parent is restored`;
        this.diagnose(id, makeDiagnostic('info', 'restore_waits', `stored agent '${id}' is restored once ${why}`, { subject: id, details: { skills } }));
      }
      const later = ordered.filter((snapshot) => waiting.has(snapshot?.id));
      this.restoring = this.restoreWhenLoaded(later, waiting, late);
    }
    return refs;
  }

  /**
   * Whether a stored agent is opened once the whole store is read: one with a parent (whose
   * parent may be on a later page), or with skills that load lazily (whose children wait with it).
   */
  private opensLast(snapshot: unknown): boolean {
    if (!isPlainObject(snapshot)) return false;
    const stored = snapshot as unknown as AgentSnapshot;
    return stored.parent !== undefined || this.loadable(stored).length > 0;
  }

  /** Restores stored agents in the order given, each failure reported with its id. */
  private restoreStored(snapshots: readonly unknown[]): AgentRef<object>[] {
    const refs: AgentRef<object>[] = [];
    this.opening = true;
    try {
      for (const snapshot of snapshots) {
        try {
          const ref = this.passivation ? this.openStoredAgent(snapshot, this.passivation) : this.restore(snapshot);
          if (ref) refs.push(ref);
        } catch (error) {
          const id = isPlainObject(snapshot) && typeof snapshot.id === 'string' ? snapshot.id : undefined;
          this.unrestorable(id, toErrorInfo(error, 'invalid_snapshot'));
        }
      }
    } finally {
      this.opening = false;
    }
    return refs;
  }

  /** Stored agents restored after their skills load, when the system opened: see `ready()`. */
  private restoring: Promise<AgentRef<object>[]> | undefined;

  /** Resolves, once every stored agent waiting for its skills to load is restored or reported, with those restored. */
  ready(): Promise<AgentRef<object>[]> {
    return this.restoring ?? Promise.resolve([]);
  }

  /** The mounted skills of a stored agent that nothing knows yet and a resolver may load. */
  private loadable(snapshot: AgentSnapshot): string[] {
    const definition = isPlainObject(snapshot) ? this.definitions.get(snapshot.definition) : undefined;
    const known = (name: string) => {
      try {
        return (definition?.blueprint.resolveSkill(name) ?? this.resolveSkill(name)) !== undefined;
      } catch {
        return true; // a resolver that fails is reported by the restore, naming it
      }
    };
    const loaders = this.loaders(definition);
    return mountedSkillNames(snapshot).filter((name) => !known(name) && loaders.some((loader) => typeof loader.has !== 'function' || loader.has(name)));
  }

  /** The resolvers that load skills (`load(names)`): the system's, then the definition's registry. */
  private loaders(definition: AgentDefinition<object> | undefined): SkillLoader[] {
    const registry = definition?.blueprint.registry;
    const candidates = registry && !this.resolvers.includes(registry) ? [...this.resolvers, registry] : this.resolvers;
    return candidates.filter((resolver): resolver is SkillLoader => typeof (resolver as Partial<SkillLoader>).load === 'function');
  }

  /** Loads every skill the waiting agents need, then restores them parents first; one whose skills fail to load is reported and left in the store. */
  private async restoreWhenLoaded(later: readonly AgentSnapshot[], waiting: ReadonlyMap<string, string[]>, late: (ref: AgentRef<object>) => void): Promise<AgentRef<object>[]> {
    const loads = new Map<string, Promise<ErrorInfo | undefined>>();
    for (const snapshot of later) {
      const definition = this.definitions.get(snapshot.definition);
      for (const name of waiting.get(snapshot.id)!) {
        if (loads.has(name)) continue;
        const loading = this.loadSkill(name, definition).then(
          () => undefined,
          (error: unknown) => toErrorInfo(error, 'unknown_skill'),
        );
        loads.set(name, loading);
      }
    }
    const failed = new Map<string, ErrorInfo>();
    for (const [name, loading] of loads) {
      const error = await loading;
      if (error) failed.set(name, error);
    }
    // Shut down meanwhile: they stay in the store for the next system.
    if (this.shuttingDown) return [];
    const restorable = later.filter((snapshot) => {
      const error = waiting.get(snapshot.id)!.map((name) => failed.get(name)).find((found) => found !== undefined);
      if (error) this.unrestorable(snapshot.id, error);
      return error === undefined;
    });
    const refs = this.restoreStored(restorable);
    for (const ref of refs) late(ref);
    return refs;
  }

  /**
   * A stored agent as a passivating system opens: restored into memory, or, when it rests (as
   * far as its snapshot tells), left in the store passivated — its ref kept, its listen patterns
   * indexed, a timer for its soonest scheduled signal — so opening a store of many agents costs
   * the memory of the active ones. Returns the ref of an agent restored into memory.
   */
  private openStoredAgent(snapshot: unknown, passivation: Passivation): AgentRef<object> | undefined {
    const plan = readSnapshot(snapshot, this);
    let soonest: number | undefined;
    for (const { due } of plan.scheduled) soonest = Math.min(soonest ?? Infinity, due);
    const children = (snapshot as AgentSnapshot).children?.length ?? 0;
    if (plan.orphanOf !== undefined || !passivation.restsStored(plan.agent, children, plan.starting, soonest)) return this.restored(plan);
    const id = plan.agent.id;
    passivation.adopt(new ProcessRef<object>(this, id, plan.definition.name, plan.parent, undefined), soonest);
    if (plan.parent !== undefined) (this.awake(plan.parent)!.childIds ??= new Set()).add(id);
    for (const pattern of listenPatterns(catalogOf(plan.agent)!)) this.listeners.add(pattern, id);
    if (this.trace) {
      const record: Parameters<Tracer>[0] = { kind: 'spawn', agent: id, definition: plan.definition.name, restored: true };
      if (plan.parent !== undefined) record.parent = plan.parent;
      this.trace(record);
      this.trace({ kind: 'passivate', agent: id });
    }
    return undefined;
  }

  /**
   * Ids of stored agents not running: not restored (reported), or waiting for their skills to
   * load. A new agent of such an id would write over the snapshot the store keeps for it.
   */
  private readonly leftInStore = new Set<string>();

  private unrestorable(agentId: string | undefined, error: ErrorInfo): void {
    if (agentId !== undefined && !this.isRunning(agentId)) this.leftInStore.add(agentId);
    this.report(agentId, reworded(error, { message: `stored agent${agentId === undefined ? '' : ` '${agentId}'`} was not restored and is left in the store: ${error.message}` }));
  }

  withDescendants(agentIds: readonly string[]): string[] {
    const ids = new Set<string>();
    const add = (id: string) => {
      if (ids.has(id)) return;
      ids.add(id);
      // A passivated agent has no children.
      for (const child of this.agents.get(id)?.childIds ?? []) add(child);
    };
    for (const id of agentIds) add(id);
    return [...ids];
  }

  /**
   * A write of these agents failed (`why` says how, `failure` is its error): each is brought
   * back to its last durable state under the ref its users hold — its process replaced by one
   * restored from the store, as a passivated agent wakes — or stopped when it never was written.
   * Parents go first, so a child finds its parent running; child agents not named here run on,
   * still its children. Callers still waiting on a replaced process get `failure`.
   */
  reverted(agentIds: readonly string[], why: string, failure: ErrorInfo): void {
    const durability = this.durability;
    if (!durability) return;
    const { stored, unreadable } = this.storedOf(durability.store, agentIds);
    const depth = (process: AgentProcess<object>) => {
      let levels = 0;
      for (let parent = process.parent; parent !== undefined; parent = this.agents.get(parent)?.parent) levels++;
      return levels;
    };
    // A passivated agent (not in memory) wakes from the store: already its last durable state.
    const processes = agentIds.flatMap((id) => this.agents.get(id) ?? []).sort((a, b) => depth(a) - depth(b));
    this.opening = true;
    try {
      for (const process of processes) {
        // Stopped meanwhile, with a parent that was never written.
        if (this.agents.get(process.id) !== process) continue;
        const snapshot = stored.get(process.id);
        const unread = unreadable.get(process.id);
        if (unread !== undefined) {
          // Its row stays, and so its id stays taken (see `unrestorable`), once it is stopped.
          this.stopTree(process, `${why}; its last written state could not be read back`, false);
          this.unrestorable(process.id, unread);
        } else if (snapshot === undefined) this.stopTree(process, `${why}; it was never written`, false);
        else this.revert(process, snapshot, why, failure);
      }
    } finally {
      this.opening = false;
    }
  }

  /** Replaces an agent's process with one restored from `snapshot`, under the same ref (see `reverted`). */
  private revert(process: AgentProcess<object>, snapshot: unknown, why: string, failure: ErrorInfo): void {
    const id = process.id;
    const reason = `${why}; restored to its last durable state`;
    const before = process.lifecycles.states(process.agent.mounted);
    process.revert(reason, () => new RuntimeError(reworded(failure, { message: `agent '${id}' went back to its last durable state before answering (${why}): ${failure.message}` }), id));
    this.agents.delete(id);
    for (const pattern of process.patterns) this.listeners.delete(pattern, id);
    process.patterns = [];
    let back: AgentProcess<object>;
    try {
      const plan = readSnapshot(snapshot, this);
      // Skills mounted since the last write go back with it: their lifecycles end in the trace.
      if (this.trace) for (const [skill, state] of Object.entries(before)) if (state !== 'inactive' && !plan.agent.mounted.some((record) => record.name === skill)) this.trace({ kind: 'lifecycle', agent: id, skill, state: 'inactive' });
      back = this.revive(plan, { ref: process.ref as ProcessRef<object>, traced: { kind: 'revert', agent: id, reason } });
    } catch (error) {
      this.unrestorable(id, toErrorInfo(error, 'invalid_snapshot'));
      // Its ref reaches the ended process: stopped, with its children.
      this.stopTree(process, `${reason}, which could not be restored`, false);
      return;
    }
    // Child agents running on stay its children; those reverted too are linked again as they start.
    for (const child of process.childIds ?? []) if (this.isRunning(child)) (back.childIds ??= new Set()).add(child);
    this.onReverted?.(back.ref);
  }

  /**
   * The stored snapshots of these agents, by id: each read on its own when the store can
   * (`read`), not every row of the store for a few agents. One that is damaged, or that the store
   * fails to read, is in `unreadable` with its error, not in `stored`.
   */
  private storedOf(store: DurableStore, agentIds: readonly string[]): { stored: Map<string, unknown>; unreadable: Map<string, ErrorInfo> } {
    const stored = new Map<string, unknown>();
    const unreadable = new Map<string, ErrorInfo>();
    if (!store.read) {
      const wanted = new Set(agentIds);
      for (const entry of store.loadAll()) {
        if (!wanted.has(entry.id)) continue;
        if (entry.error) unreadable.set(entry.id, entry.error.toInfo());
        else stored.set(entry.id, entry.snapshot);
      }
      return { stored, unreadable };
    }
    for (const id of agentIds) {
      try {
        const snapshot = store.read(id);
        if (snapshot !== undefined) stored.set(id, snapshot);
      } catch (error) {
        unreadable.set(id, toErrorInfo(error, 'invalid_snapshot'));
      }
    }
    return { stored, unreadable };
  }

  // ── Definitions and skills ─────────────────────────────────────────────────────────────────

  /**
   * A skill by name: the system's own skills first, then the resolvers, in order. A registry or
   * resolver that throws is user code failing: a `RuntimeError` (`unknown_skill`) naming it.
   */
  resolveSkill(name: string): AnySkill | undefined {
    let where = 'the system skill registry';
    try {
      const own = this.skills.get(name);
      if (own) return own;
      for (const [index, resolver] of this.resolvers.entries()) {
        where = `resolver ${index}`;
        const found = resolver.get(name);
        if (found) return found;
      }
    } catch (error) {
      throw new RuntimeError(errorInfo('unknown_skill', `${where} failed to look up skill '${name}': ${describeThrown(error)}`, { skill: name }));
    }
    return undefined;
  }

  /** Asks the resolvers that can load skills to load `name`; resolves with the skill, if any loaded it. */
  async loadSkill(name: string, definition?: AgentDefinition<object>): Promise<AnySkill | undefined> {
    for (const loader of this.loaders(definition)) {
      if (typeof loader.has === 'function' && !loader.has(name)) continue;
      await loader.load([name]);
      const found = loader.get(name);
      if (found) return found;
    }
    return undefined;
  }

  register(definition: AgentDefinition<object>): void {
    if (typeof definition !== 'object' || definition === null || definition.kind !== 'agent') {
      throw new DefinitionError({ code: 'invalid_agent', message: 'expected an agent definition made by defineAgent' });
    }
    const existing = this.definitions.get(definition.name);
    if (existing && existing !== definition) {
      throw new DefinitionError({
        code: 'invalid_agent',
        message: `a different agent definition named '${definition.name}' is already registered in this system; definitions are found by name, so names must be unique`,
      });
    }
    if (existing) return;
    this.definitions.set(definition.name, definition);
    // What defining it found (shadowed routes, action name clashes), said once per system.
    for (const note of definition.diagnostics) this.diagnose(undefined, note);
  }

  // ── Agents ──────────────────────────────────────────────────────────────────────────────

  spawn<TState extends object>(definition: AgentDefinition<TState>, options: SpawnOptions<TState> = {}): AgentRef<TState> {
    this.assertRunning();
    if (!isPlainObject(options as unknown)) {
      throw new RuntimeError(errorInfo('invalid_agent', `spawn takes { id?, state?, parent? } as its options, got ${describeValue(options)}`));
    }
    const unknown = unknownOption('spawn', options, SPAWN_OPTIONS);
    if (unknown) throw new RuntimeError(unknown);
    this.register(definition as AgentDefinition<object>);
    const id = options.id ?? nanoid();
    const badId = agentIdProblem(id);
    if (badId) throw new RuntimeError(badId, typeof id === 'string' ? id : undefined);
    if (this.isRunning(id)) throw new RuntimeError(errorInfo('duplicate_agent', `an agent with id '${id}' is already running`, { subject: id }), id);
    if (this.leftInStore.has(id)) {
      throw new RuntimeError(errorInfo('duplicate_agent', `agent '${id}' is in the store without running (it could not be restored, or waits for its skills to load); a new agent of that id would write over its snapshot: make its definition and skills known and open the store again, or spawn under another id`, { subject: id }), id);
    }
    const parent = this.parentId(options.parent);
    const agent = definition.new({ id, state: options.state as never });
    // A restored agent's state already holds what its hooks did: only a new agent runs them.
    return this.start(definition, agent, parent, undefined, hasMountHooks(catalogOf(agent)!)).ref;
  }

  private parentId(parent: string | AgentRef<object> | undefined): string | undefined {
    if (parent === undefined) return undefined;
    const id = typeof parent === 'string' ? parent : parent.id;
    const process = this.awake(id);
    if (!process || process.isStopped) throw new RuntimeError(errorInfo('unknown_agent', `parent agent '${id}' is not running`, { subject: id }), id);
    return id;
  }

  private start<TState extends object>(
    definition: AgentDefinition<TState>,
    agent: Agent<TState>,
    parent: string | undefined,
    resume: ReadonlyMap<string, LifecycleState> | undefined,
    /** The agent runs its skills' `mount` hooks first: it starts in `starting`. */
    hooks = false,
    /**
     * The ref this agent takes over (a passivated agent waking, an agent reverted), and the
     * record traced in place of `spawn`, its lifecycles after it (none: the caller traces it).
     */
    over?: TakeOver<TState>,
  ): AgentProcess<TState> {
    // Routes and children of every skill, checked before anything starts (remembered per catalog,
    // so agents of one definition pay once): a bad one is an error here, not a dead actor.
    const problem = checkCatalog(catalogOf(agent)!);
    if (problem) throw new RuntimeError({ ...problem, message: `cannot start agent '${agent.id}': ${problem.message}` }, agent.id);
    const process = new AgentProcess<TState>(agent, definition, this, parent, resume);
    if (over) over.ref.woke(process);
    process.ref = over?.ref ?? new ProcessRef(this, agent.id, definition.name, parent, process);
    process.actor = createActor(hooks ? startingAgentMachine : agentMachine, {
      id: agent.id,
      input: { agent: agent as Agent<object>, host: process },
      ...(this.inspect ? { inspect: this.inspect } : {}),
    });
    process.actor.subscribe(new FailureObserver(this, process as AgentProcess<object>));
    this.agents.set(agent.id, process as AgentProcess<object>);
    if (parent !== undefined) {
      const parentProcess = this.awake(parent)!;
      (parentProcess.childIds ??= new Set()).add(agent.id);
      // Its snapshot lists its children: written again with the child.
      this.changed(parentProcess);
    }
    process.registeredAtStart = registeredNames(catalogOf(agent)!);
    // Traced before the actor starts: whatever happens as it starts (a skill's child crashing
    // past its budget, a failed mount hook, the actor itself failing) is recorded after the agent
    // and its lifecycles, so a trace read in order ends in the state they are in.
    // A woken agent is traced as woken (by `wake`), its lifecycles as they were.
    if (this.trace && (!over || over.traced)) {
      if (over?.traced) this.trace(over.traced);
      else {
        const record: Parameters<Tracer>[0] = { kind: 'spawn', agent: agent.id, definition: definition.name };
        if (parent !== undefined) record.parent = parent;
        if (resume !== undefined) record.restored = true;
        this.trace(record);
      }
      process.lifecycles.traceStart();
    }
    process.actor.start();
    if (hooks) process.runMountHooks();
    this.reindex(agent.id, agent as Agent<object>);
    this.changed(process as AgentProcess<object>);
    // Whoever follows the agent from outside (an MCP server) subscribes to its new actor now.
    refChanged(this.actor, process.ref);
    return process;
  }

  /** An agent's actor failed (a step never throws: this is a last line of defence). */
  actorFailed(process: AgentProcess<object>, error: unknown): void {
    // Stopped first, so a listener told of the failure can spawn the id again.
    if (this.agents.get(process.id) === process) this.stopTree(process, 'its actor failed');
    this.report(process.id, errorInfo('signal_failed', `agent '${process.id}': its actor failed: ${describeThrown(error)}`));
  }

  /** Stops an agent, its children first. */
  stopAgent(id: string, reason: string): Promise<void> {
    let process = this.agents.get(id);
    if (!process) {
      if (!this.passivation?.refs.has(id)) return Promise.reject(new RuntimeError(errorInfo('unknown_agent', `no agent '${id}' is running`, { subject: id }), id));
      // A passivated agent wakes to stop: its skills' unmount hooks see its last state. One that
      // cannot be woken is dropped all the same (nothing else could remove it), and why is reported.
      process = this.wokenToStop(id, true, `${reason}; it could not be woken to stop`);
    }
    if (process) this.stopTree(process, reason);
    return Promise.resolve();
  }

  /** Stops an agent, its children first; `forget`: a durable system deletes them from its store. */
  private stopTree(process: AgentProcess<object>, reason: string, forget = true): void {
    for (const child of [...(process.childIds ?? [])]) {
      const childProcess = this.wokenToStop(child, forget, `its parent '${process.id}' stopped; it could not be woken to stop`);
      if (childProcess) this.stopTree(childProcess, `its parent '${process.id}' stopped`, forget);
    }
    process.terminate(reason);
    this.agents.delete(process.id);
    if (forget) this.durability?.removed(process.id);
    const parent = process.parent === undefined ? undefined : this.agents.get(process.parent);
    if (parent?.childIds?.delete(process.id) && forget) this.changed(parent);
    for (const pattern of process.patterns) this.listeners.delete(pattern, process.id);
    process.patterns = [];
    this.trace?.({ kind: 'stop', agent: process.id, reason });
  }

  /**
   * Agent `id`, about to be stopped, woken when passivated. One that cannot be woken is dropped
   * (and deleted from the store when `forget`), and why is reported; `why` is its stop's reason.
   */
  private wokenToStop(id: string, forget: boolean, why: string): AgentProcess<object> | undefined {
    try {
      return this.awake(id);
    } catch (error) {
      const ref = this.passivation?.refs.get(id);
      const parentId = ref?.parent;
      this.passivation?.forget(id);
      if (ref) refChanged(this.actor, ref);
      // Its patterns went with its snapshot: it leaves the index by id.
      this.listeners.deleteEverywhere(id);
      if (forget) this.durability?.removed(id);
      const parent = parentId === undefined ? undefined : this.agents.get(parentId);
      if (parent?.childIds?.delete(id) && forget) this.changed(parent);
      this.report(id, toErrorInfo(error, 'store_failed'));
      this.trace?.({ kind: 'stop', agent: id, reason: why });
      return undefined;
    }
  }

  /** Indexes the agent under the patterns it listens to (after spawn and after each mount change). */
  reindex(agentId: string, agent: Agent<object>): void {
    const process = this.agents.get(agentId);
    if (!process || process.isStopped) return;
    const next = listenPatterns(catalogOf(agent)!);
    if (next === process.patterns) return;
    for (const pattern of process.patterns) this.listeners.delete(pattern, process.id);
    for (const pattern of next) this.listeners.add(pattern, process.id);
    process.patterns = next;
  }

  /** `restore`, after asking the resolvers to load the snapshot's mounted skills (document skills). */
  async loadAndRestore(snapshot: unknown): Promise<AgentRef<object>> {
    for (const name of mountedSkillNames(snapshot)) if (!this.resolveSkill(name)) await this.loadSkill(name);
    return this.restore(snapshot);
  }

  restore(snapshot: unknown): AgentRef<object> {
    this.assertRunning();
    return this.restored(readSnapshot(snapshot, this));
  }

  /** Starts the agent of a snapshot read back (`restore`), and says when it was restored without its parent. */
  private restored(plan: RestorePlan): AgentRef<object> {
    const process = this.revive(plan);
    // Said once the agent runs (a snapshot refused above warns of nothing), after its spawn in the trace.
    if (plan.orphanOf !== undefined) {
      this.diagnose(process.id, makeDiagnostic('warning', 'orphan_restored', `agent '${process.id}' was restored without its parent '${plan.orphanOf}', which is not running`, { subject: process.id }));
    }
    return process.ref;
  }

  /** Starts the agent a snapshot read back describes, its scheduled signals armed again; `over`: under that ref. */
  private revive(plan: RestorePlan, over?: TakeOver<object>): AgentProcess<object> {
    this.leftInStore.delete(plan.agent.id);
    const hooks = plan.starting && hasMountHooks(catalogOf(plan.agent)!);
    const process = this.start(plan.definition, plan.agent, plan.parent, plan.lifecycles, hooks, over);
    const now = Date.now();
    for (const { due, signal } of plan.scheduled) this.schedule(process.id, Math.max(0, due - now), signal, due);
    return process;
  }

  /** Restores several agents, parents before children; when one fails, those restored by this call are stopped again. */
  restoreAll(snapshots: readonly unknown[]): AgentRef<object>[] {
    return restoreParentsFirst(
      snapshots,
      (snapshot) => this.restore(snapshot),
      (restored) => {
        // Children were restored after their parents: stopping the parents first stops them too.
        for (const ref of restored) if (this.agents.get(ref.id)?.ref === ref) void this.stopAgent(ref.id, 'restoreAll failed');
      },
    );
  }

  // ── Effects (called by the system actor) ────────────────────────────────────────────────────

  /**
   * Hands a step's effects to the system actor, one event each. `answered`: a caller already
   * receives the step's error. A step's effects are all carried out before any effect they cause:
   * effects handed over while others are being handed over wait behind them.
   */
  interpret(agentId: string, effects: readonly Effect[], answered: boolean): void {
    // Effects waiting already: an outer call is sending them, and sends these after them.
    const sending = this.handedOver.length > 0;
    for (const effect of effects) this.handedOver.push({ type: effect.type, agent: agentId, effect, answered });
    if (sending) return;
    try {
      for (let i = 0; i < this.handedOver.length; i++) this.actor.send(this.handedOver[i]!);
    } finally {
      this.handedOver.length = 0;
    }
  }

  /** Effects handed to the system actor by `interpret`, in order, while they are being sent (empty otherwise). */
  private readonly handedOver: EffectEvent[] = [];

  /**
   * Carries out one effect, for the system actor. Never throws: the system actor carries out
   * every agent's effects, and a throw would stop it for all of them.
   */
  carryOut(agentId: string, effect: Effect, answered: boolean): void {
    this.trace?.({ kind: 'effect', agent: agentId, effect });
    try {
      interpretEffect(this.effects, effect, { agent: agentId, answered });
    } catch (error) {
      this.report(agentId, errorInfo('signal_failed', `agent '${agentId}': effect '${effect.type}' could not be carried out: ${describeThrown(error)}`));
    }
  }

  // ── EffectHost (called by the effect handlers) ─────────────────────────────────────────────

  markAnswered(error: ErrorInfo): void {
    this.answeredErrors.add(error);
  }

  wasAnswered(error: ErrorInfo): boolean {
    return this.answeredErrors.has(error);
  }

  registerAction(agentId: string, name: string, registered: boolean): void {
    this.agents.get(agentId)?.registerAction(name, registered);
  }

  /** Whether the agent is running: in memory, or passivated. */
  isRunning(agentId: string): boolean {
    return this.agents.has(agentId) || (this.passivation?.refs.has(agentId) ?? false);
  }

  close(agentId: string, reason: string): void {
    this.agents.get(agentId)?.close(reason);
  }

  /** Runs `work` now, or once the agent steps on the stack are over. */
  afterStep(work: () => void): void {
    if (this.inStep === 0) work();
    else queueMicrotask(work);
  }

  spawnChild(parentId: string, effect: SpawnEffect): void {
    const definition = this.definitions.get(effect.definition);
    if (!definition) {
      this.report(parentId, errorInfo('unknown_agent', `agent '${parentId}' asked to spawn definition '${effect.definition}', which this system does not know`, { subject: effect.definition }));
      return;
    }
    try {
      const options: SpawnOptions<object> = { parent: parentId };
      if (effect.id !== undefined) options.id = effect.id;
      if (effect.state !== undefined) options.state = effect.state;
      this.spawn(definition, options);
    } catch (error) {
      const info = toErrorInfo(error, 'invalid_state');
      this.report(parentId, reworded(info, { message: `agent '${parentId}' could not spawn '${effect.definition}': ${info.message}` }));
    }
  }

  /** Delivers `signal` to the agent after `delay` ms; `due` is when that is, as a snapshot records it. */
  schedule(agentId: string, delay: number, signal: Signal, due = Date.now() + delay): void {
    const process = this.agents.get(agentId);
    if (!process || process.isStopped) return;
    const timer = setTimer(() => {
      process.fired(timer);
      try {
        process.ref.send(signal);
      } catch (error) {
        process.unsent(timer);
        this.report(agentId, errorInfo('mailbox_full', `scheduled signal '${signal.type}' for agent '${agentId}' could not be delivered: ${(error as Error).message}`));
      }
    }, delay);
    (process.scheduled ??= new Map()).set(timer, { due: new Date(due).toISOString(), signal });
  }

  // ── Publishing ─────────────────────────────────────────────────────────────────────────────

  /** Whether a signal of `type` would reach any subscriber or any agent: progress nobody follows is not published. */
  listening(type: string): boolean {
    return this.broadcast.hasSubscribers(type) || this.listeners.lookup(type).size > 0;
  }

  /** Delivers an emitted signal to subscribers and to every other agent whose patterns match. */
  publish(signal: Signal, from: string | undefined): number {
    let delivered = this.broadcast.toSubscribers(signal, from);
    for (const id of this.listeners.lookup(signal.type)) {
      if (id === from) continue;
      // A passivated listener wakes as its ref sends.
      const ref = this.refOf(id);
      if (!ref) continue;
      delivered++;
      try {
        ref.send(signal);
      } catch (error) {
        const info = toErrorInfo(error, 'mailbox_full');
        this.report(id, reworded(info, { message: `emitted signal '${signal.type}' could not be delivered to agent '${id}': ${info.message}` }));
      }
    }
    if (delivered === 0 && signal.type !== ERROR_SIGNAL && signal.type !== DIAGNOSTIC_SIGNAL) {
      this.diagnose(from, makeDiagnostic('warning', 'dropped_signal', `signal '${signal.type}' emitted${from ? ` by agent '${from}'` : ''} reached no subscriber and no agent`, { subject: signal.type }));
    }
    return delivered;
  }

  report(agentId: string | undefined, error: ErrorInfo, answered = false): void {
    this.broadcast.report(agentId, error, answered);
  }

  diagnose(agentId: string | undefined, diagnostic: Diagnostic): void {
    this.broadcast.diagnose(agentId, diagnostic);
  }

  toJSON(): unknown {
    return { system: 'skillstate', agents: this.agents.size };
  }

  // ── Lifetime ─────────────────────────────────────────────────────────────────────────────

  /** Throws `agent_stopped` once the system is shut down. */
  assertRunning(): void {
    if (this.shutDown) throw new RuntimeError(errorInfo('agent_stopped', 'the agent system has been shut down'));
  }

  /** The shutdown under way, once one started: a second call waits for the same. */
  private shuttingDown: Promise<void> | undefined;

  shutdown(): Promise<void> {
    return (this.shuttingDown ??= this.stopAll());
  }

  private async stopAll(): Promise<void> {
    if (this.shutDown) return;
    // Passivated agents stay in the store, as the others are about to.
    this.passivation?.stop();
    // What changed is written; the agents stay in the store for the next system to restore.
    // (Without a store, the agents stop at once, before this returns.)
    if (this.durability) {
      try {
        await this.durability.close();
      } catch (error) {
        this.report(undefined, toErrorInfo(error, 'store_failed'));
      }
    }
    for (const process of [...this.agents.values()]) {
      // A child stopped with its parent earlier in this loop is gone already: stopped once.
      if (this.agents.get(process.id) !== process) continue;
      if (process.parent === undefined || !this.agents.has(process.parent)) this.stopTree(process, 'the system shut down', false);
    }
    this.shutDown = true;
    // Passivated agents stopped with the system (they stay in the store): they woke for the steps
    // taken while it wrote its last changes; from now on no list, stop or persistAll reaches them.
    if (this.passivation && refChangesHeard()) for (const ref of [...this.passivation.refs.values()]) refChanged(this.actor, ref);
    this.passivation?.refs.clear();
    this.actor.stop();
    this.broadcast.clear();
    this.listeners.clear();
    this.trace?.close();
    // Let actors stopped from inside a step finish stopping.
    await new Promise<void>((resolve) => queueMicrotask(resolve));
  }

  get isShutDown(): boolean {
    return this.shutDown;
  }

  /** Registers skills the system can mount by name and use when restoring. */
  registerSkills(skills: readonly AnySkill[]): void {
    for (const skill of skills) {
      if (!isSkill(skill)) throw new DefinitionError({ code: 'invalid_skill', message: 'only skills made by defineSkill can be registered' });
    }
    this.skills.register(skills);
  }
}

/** The durability a system's options ask for, checked. */
function durabilityOf(options: RuntimeOptions, host: SystemRuntime): Durability {
  const store = options.store!;
  if (typeof store?.commit !== 'function' || typeof store.loadAll !== 'function' || typeof store.close !== 'function') {
    throw new DefinitionError({ code: 'invalid_options', subject: 'store', message: 'store must be a durable store, such as createSqliteStore({ path }) makes (with commit, loadAll and close)', details: { option: 'store', value: describeValue(store) } });
  }
  if (Durability.inUse(store)) {
    throw new DefinitionError({ code: 'invalid_options', subject: 'store', message: 'store is the store of another system that has not shut down (one system per store: both would run the same agents and write over each other); give this system a store of its own, or shut the other down and open the file again with createSqliteStore({ path })', details: { option: 'store', value: describeValue(store) } });
  }
  const mode = options.durability ?? 'step';
  if (mode !== 'step' && mode !== 'interval' && mode !== 'manual') {
    throw new DefinitionError({ code: 'invalid_options', subject: 'durability', message: `durability must be 'step', 'interval' or 'manual', got ${typeof mode === 'string' ? `'${mode}'` : describeValue(mode)}`, details: { option: 'durability', value: mode } });
  }
  const intervalMs = options.intervalMs ?? 100;
  if (typeof intervalMs !== 'number' || !(intervalMs >= 0) || !Number.isFinite(intervalMs)) {
    throw new DefinitionError({ code: 'invalid_options', subject: 'intervalMs', message: `intervalMs must be a number of milliseconds, 0 or more, got ${typeof intervalMs === 'number' ? intervalMs : describeValue(intervalMs)}`, details: { option: 'intervalMs', value: intervalMs } });
  }
  if (options.intervalMs !== undefined && mode !== 'interval') {
    host.diagnose(undefined, makeDiagnostic('warning', 'option_ignored', `intervalMs is ignored: it is how late a change may be written in 'interval' durability, and this system's durability is '${mode}'`, { subject: 'intervalMs', details: { option: 'intervalMs', durability: mode } }));
  }
  return new Durability(store, mode, intervalMs, host);
}

/** The agents of the cycle of parent links `snapshots` hold through `id`: its parent, its parent's, and so on back to it. */
function cycleFrom(id: string | undefined, snapshots: readonly AgentSnapshot[]): Set<string> {
  const parents = new Map(snapshots.map((snapshot) => [snapshot.id, snapshot.parent]));
  const cycle = new Set<string>();
  for (let at = id; at !== undefined && parents.has(at) && !cycle.has(at); at = parents.get(at)) cycle.add(at);
  return cycle;
}
