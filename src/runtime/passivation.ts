/**
 * Passivation: in a durable system, an agent with nothing to do is dropped from memory and woken
 * from its stored snapshot when it is next used, so memory follows the active agents rather than
 * all of them (`createAgentSystem({ store, passivate: { idleMs } })`).
 *
 * Idle time costs the hot path one field write: each finished step records the number of sweeps
 * made so far (`AgentProcess.lastActive`). One system-wide timer sweeps every `idleMs / 2`; an
 * agent whose last step is three sweeps old has been idle for at least `idleMs`. An `idleMs` too
 * long for one interval of Node's timers (about 49 days) sweeps at the longest interval Node
 * takes, and counts as many more sweeps. It is passivated
 * when it also rests: an empty mailbox and no step under way, no caller waiting for an answer, its
 * `mount` hooks done, no child agents, no skill child that cannot be stopped and started again
 * (`ChildSpec.stoppable`), no work an extension holds for it (a model turn in flight), no
 * scheduled signal due within `idleMs`, and its latest snapshot written. What stays in memory is
 * its ref (id, definition, parent), its place in the index of emitted-signal listeners, and one
 * timer when it has scheduled signals; the system (`system-runtime.ts`) does the eviction and the
 * waking, this file decides who rests.
 */
import { catalogOf, type Agent } from '../core/agent-value.js';
import type { Catalog } from '../core/catalog.js';
import { DefinitionError } from '../core/errors.js';
import { describeValue, isPlainObject } from '../core/plain.js';
import type { AgentProcess } from './agent-process.js';
import { unknownOption } from '../core/options.js';
import type { ProcessRef } from './process-ref.js';
import { clearTimer, MAX_TIMER_DELAY, setTimer, type Timer } from './timers.js';

/** The `passivate` option of `createAgentSystem`: when an idle agent is dropped from memory. */
export interface PassivateOptions {
  /** How long, in milliseconds, an agent has had nothing to do before it is passivated (at most half as long again). */
  idleMs: number;
}

/** The keys `PassivateOptions` takes. */
const PASSIVATE_OPTIONS = { idleMs: true } as const satisfies Record<keyof PassivateOptions, true>;

/** `idleMs` of a system's `passivate` option, checked: it needs a store that reads one agent (`read`). */
export function idleMsOf(option: unknown, store: { read?: unknown } | undefined): number {
  const invalid = (message: string, value: unknown) => new DefinitionError({ code: 'invalid_options', subject: 'passivate', message, details: { option: 'passivate', value: describeValue(value) } });
  if (!isPlainObject(option)) throw invalid(`passivate must be { idleMs }, got ${describeValue(option)}`, option);
  const unknown = unknownOption('passivate', option, PASSIVATE_OPTIONS);
  if (unknown) throw new DefinitionError(unknown);
  const idleMs = option.idleMs;
  if (typeof idleMs !== 'number' || !(idleMs > 0) || !Number.isFinite(idleMs)) throw invalid(`passivate.idleMs must be a number of milliseconds above 0, got ${typeof idleMs === 'number' ? String(idleMs) : describeValue(idleMs)}`, idleMs);
  if (store === undefined) throw invalid('passivate needs a store to write idle agents to: createAgentSystem({ store: createSqliteStore({ path }), passivate })', option);
  if (typeof store.read !== 'function') throw invalid('passivate needs a store that reads one agent back synchronously (read(id)), as createSqliteStore makes', option);
  return idleMs;
}

/** What the sweep needs from its system. */
export interface PassivationHost {
  /** Sweeps made so far: a step records it, so a sweep knows how long ago an agent last worked. */
  sweeps: number;
  /** The agents in memory. */
  readonly agents: ReadonlyMap<string, AgentProcess<object>>;
  /** Ids of agents whose latest changes are not in the store yet (waiting or being written). */
  unwritten(): ReadonlySet<string>;
  /** Idle agents were found with unwritten changes: have them written, so the next sweep can take them. */
  writeSoon(): void;
  /** Drops the agent from memory; its snapshot is in the store. Returns the due time of its soonest scheduled signal, if any. */
  passivate(process: AgentProcess<object>): number | undefined;
  /** Wakes the passivated agent `id` (its scheduled signals are due); reports a failure. */
  wakeForTimer(id: string): void;
}

const stoppableCache = new WeakMap<Catalog, boolean>();

/** Whether every child the skills of a catalog run may be stopped and started again (remembered per catalog). */
function childrenStoppable(catalog: Catalog): boolean {
  let known = stoppableCache.get(catalog);
  if (known === undefined) {
    known = true;
    for (const active of catalog.skills.values()) {
      const children = active.spec.children?.(active.config) ?? [];
      if (children.some((child) => child.stoppable !== true)) known = false;
    }
    stoppableCache.set(catalog, known);
  }
  return known;
}

/** The passivation of one system: the sweep, and the agents it passivated. */
export class Passivation {
  /** Passivated agents by id: the refs users hold, which wake them on use. */
  readonly refs = new Map<string, ProcessRef<object>>();
  /** Work an extension holds for an agent (a model turn in flight) keeps it in memory. */
  keeps: (agent: Agent<object>) => boolean = () => false;
  /** The timer that wakes a passivated agent when its soonest scheduled signal is due, and that time. */
  private readonly timers = new Map<string, { timer: Timer; due: number }>();
  private sweeper: ReturnType<typeof setInterval> | undefined;
  /**
   * Sweeps an agent's last step must be behind for it to have been idle `idleMs`: one more than
   * the intervals `idleMs` spans, as the step may have come just before the next sweep.
   */
  private readonly idleSweeps: number;

  constructor(
    readonly idleMs: number,
    private readonly host: PassivationHost,
  ) {
    // Node runs an interval longer than it takes after 1 ms: a long idleMs sweeps more often instead.
    const interval = Math.min(MAX_TIMER_DELAY, Math.max(1, idleMs / 2));
    this.idleSweeps = Math.ceil(idleMs / interval) + 1;
    this.sweeper = setInterval(() => this.sweep(), interval);
    this.sweeper.unref();
  }

  /** Passivates every agent that has been idle for `idleMs` and rests; returns how many. */
  sweep(): number {
    const sweeps = ++this.host.sweeps;
    const now = Date.now();
    let unwritten: ReadonlySet<string> | undefined;
    let waiting = false;
    let passivated = 0;
    for (const process of this.host.agents.values()) {
      if (sweeps - process.lastActive < this.idleSweeps || !this.rests(process, now)) continue;
      unwritten ??= this.host.unwritten();
      if (unwritten.has(process.id)) {
        waiting = true;
        continue;
      }
      this.adopt(process.ref as ProcessRef<object>, this.host.passivate(process));
      passivated++;
    }
    if (waiting) this.host.writeSoon();
    return passivated;
  }

  /** Keeps the ref of an agent now passivated; `due`: when its soonest scheduled signal falls due, which wakes it (not once stopped). */
  adopt(ref: ProcessRef<object>, due: number | undefined): void {
    this.forget(ref.id);
    this.refs.set(ref.id, ref);
    if (due !== undefined && this.sweeper !== undefined) this.timers.set(ref.id, { timer: setTimer(() => this.host.wakeForTimer(ref.id), Math.max(0, due - Date.now())), due });
  }

  /** Whether the agent has nothing to do and nothing that would be lost if it left memory now. */
  private rests(process: AgentProcess<object>, now: number): boolean {
    if (!process.mailbox.quiet || process.starting || (process.childIds?.size ?? 0) > 0 || process.hasWaitingCallers) return false;
    let soonest: number | undefined;
    if (process.scheduled) for (const entry of process.scheduled.values()) soonest = Math.min(soonest ?? Infinity, Date.parse(entry.due));
    return this.restsAs(process.agent, soonest, now);
  }

  /**
   * Whether a stored agent may stay in the store as the system opens: what `rests` asks of an
   * agent in memory, as far as its snapshot tells (a stored agent has no mailbox and no caller).
   * `soonest`: the due time of its soonest scheduled signal.
   */
  restsStored(agent: Agent<object>, children: number, starting: boolean, soonest: number | undefined): boolean {
    return !starting && children === 0 && this.restsAs(agent, soonest, Date.now());
  }

  /** The checks on the agent value and its timers that `rests` and `restsStored` share. */
  private restsAs(agent: Agent<object>, soonest: number | undefined, now: number): boolean {
    if (soonest !== undefined && soonest - now < this.idleMs) return false;
    return childrenStoppable(catalogOf(agent)!) && !this.keeps(agent);
  }

  /** The passivated agent `id` is in memory again (or gone): forgets its ref and its timer; returns when that timer was due. */
  forget(id: string): number | undefined {
    this.refs.delete(id);
    const armed = this.timers.get(id);
    if (armed === undefined) return undefined;
    clearTimer(armed.timer);
    this.timers.delete(id);
    return armed.due;
  }

  /** Stops sweeping and cancels the timers; the passivated agents stay in the store. */
  stop(): void {
    if (this.sweeper !== undefined) clearInterval(this.sweeper);
    this.sweeper = undefined;
    for (const { timer } of this.timers.values()) clearTimer(timer);
    this.timers.clear();
  }
}
