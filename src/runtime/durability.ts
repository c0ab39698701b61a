/**
 * Keeping a system's agents durable in a store: which agents changed since the last write, which
 * were stopped, and, in `'step'` mode, the answers held back until the steps that made them are
 * written.
 *
 * Writes are grouped: every agent that changed during one turn of the event loop is written in
 * one transaction (`setImmediate`, after the microtasks of the turn, so callers answered by one
 * write that call again land in the next). One batch is written at a time: while a store writes
 * one (in its own thread), the agents go on and the next batch gathers what they change. A store
 * that writes in order (`DurableStore.inOrder`) is handed that next batch before the one it
 * writes is done, so it starts it as soon as it commits rather than once this thread has heard of
 * the commit and taken the steps it answered. When many agents take steps in one turn (a batch's
 * answers let their callers go on at once), once `EARLY_BATCH` of them have changed and the store
 * can take a batch, they are written without waiting for the turn to end, so the database writes
 * them while the others take their steps: writing and stepping overlap. In
 * `'step'` mode a step's answer (a call's result or error, a deferred reply) is given only once
 * the batch holding the step has committed; a write that fails fails those answers with its
 * `store_failed` error. In `'interval'` mode changes are written at most `intervalMs` after they
 * happen and answers are not held: a crash loses what was not written yet. In `'manual'` mode
 * nothing is written until `flush()`.
 */
import { errorInfo, type ErrorInfo } from '../core/errors.js';
import { RuntimeError } from '../core/runtime-error.js';
import { HEAR_COMMITS, storedRow, type DurableStore, type SnapshotSource, type StoredAgent } from './persistence.js';
import { MAX_TIMER_DELAY } from './timers.js';

/**
 * How many changed agents make a batch worth writing before the turn ends (see `stepsOver`): fewer
 * are written at the end of the turn, in one transaction, as all are when the database is busy.
 */
const EARLY_BATCH = 32;

/**
 * How many batches a store that writes in order (`DurableStore.inOrder`) is given at once, in
 * `'step'` mode: the next batch waits in the store while one is written, so the store starts it
 * as soon as that one commits, without waiting for this thread to hear of it.
 */
const IN_ORDER_DEPTH = 2;

/** When a durable system writes its agents: see `Durability`. */
export type DurabilityMode = 'step' | 'interval' | 'manual';

/**
 * An answer held until the step that made it is durable: `settle` gives it, or the write's error.
 * One object a step (the answer itself, with its method on a prototype): a held answer is made at
 * every step of a `'step'` system, so it is not a closure and a record around it.
 */
export interface HeldAnswer {
  readonly agentId: string;
  settle(failure: RuntimeError | undefined): void;
  /** True while a caller waits for this answer: what `settle` gives, it receives. */
  awaited(): boolean;
}

/** A batch given to the store: what it writes, and the answers it holds until it is written. */
interface Batch {
  agents: readonly StoredAgent[];
  deletes: readonly string[];
  held: readonly HeldAnswer[];
  /** The agents whose steps failed, with the error their answers get. */
  failed: Map<string, RuntimeError>;
  /** Failed with an earlier batch, before the store refused it: its answers are given. */
  refused: boolean;
  /** Settles once the store is done with it. */
  written: Promise<void>;
}

/** Gives the answers `batch` held: each its agent's failure, if any. */
function settle(batch: Batch): void {
  for (const answer of batch.held) answer.settle(batch.failed.get(answer.agentId));
}

/** What a failed write needs from the system. */
export interface DurabilityHost {
  /** `answered`: a caller receives this very error (its promise rejected with it). */
  report(agentId: string | undefined, error: ErrorInfo, answered?: boolean): void;
  /** These agents and their descendants: restoring an agent from the store restores its child agents with it. */
  withDescendants(agentIds: readonly string[]): string[];
  /** A write of these agents failed (`why` says how, `failure` is the error): bring each back to its last durable state. */
  reverted(agentIds: readonly string[], why: string, failure: ErrorInfo): void;
}

/**
 * The stores a running system writes to. A store has one writer: a second system on the same
 * store object would restore the same agents and write over the first's rows.
 */
const storesInUse = new WeakSet<DurableStore>();

/**
 * Closes `store`, given to a system refused before it started (bad options), unless a running
 * system writes to it: the database's lock goes with it, so the file can be opened again at once.
 */
export function closeRefusedStore(store: unknown): void {
  if (typeof store !== 'object' || store === null) return;
  const durable = store as Partial<DurableStore>;
  if (typeof durable.commit !== 'function' || typeof durable.close !== 'function' || storesInUse.has(durable as DurableStore)) return;
  durable.close();
}

/** The durable side of one system: its store, its mode, what changed since the last write. */
export class Durability {
  /** True while a system that has not shut down writes to `store`. */
  static inUse(store: DurableStore): boolean {
    return storesInUse.has(store);
  }

  private dirty = new Map<string, SnapshotSource>();
  private deleted = new Set<string>();
  private held: HeldAnswer[] = [];
  private pending: ReturnType<typeof setImmediate> | ReturnType<typeof setTimeout> | undefined;
  /** In `'interval'` mode, when the oldest change not handed to the store yet was made. */
  private oldestChange: number | undefined;
  /** The batches given to the store and not written yet, oldest first. */
  private writes: Batch[] = [];
  /** How many batches the store may hold at once: see `DurableStore.inOrder`. */
  private readonly depth: number;
  private closed = false;
  /** The store's way to answer written commits between steps, if it has one. */
  private readonly hearCommits: (() => void) | undefined;

  constructor(
    readonly store: DurableStore,
    readonly mode: DurabilityMode,
    private readonly intervalMs: number,
    private readonly host: DurabilityHost,
  ) {
    storesInUse.add(store);
    this.depth = mode === 'step' && store.inOrder === true ? IN_ORDER_DEPTH : 1;
    this.hearCommits = (store as { [HEAR_COMMITS]?: () => void })[HEAR_COMMITS];
  }

  /** The agent changed (a step, a lifecycle, a spawn, a restore): it is written with the next batch. */
  changed(source: SnapshotSource): void {
    if (this.closed) return;
    this.dirty.set(source.id, source);
    if (this.deleted.size > 0) this.deleted.delete(source.id);
    this.schedule();
  }

  /** The agent stopped: its row is deleted with the next batch. */
  removed(agentId: string): void {
    if (this.closed) return;
    this.dirty.delete(agentId);
    this.deleted.add(agentId);
    this.schedule();
  }

  /**
   * In `'step'` mode, keeps `answer` until its step is written and returns true; otherwise returns
   * false and the caller answers at once.
   */
  hold(answer: HeldAnswer): boolean {
    if (this.mode !== 'step' || this.closed) return false;
    this.held.push(answer);
    this.schedule();
    return true;
  }

  /**
   * The steps on the stack are over (each step's state, effects and held answer are in place): in
   * `'step'` mode, the batches the store has written since are answered (when it can say so between
   * steps), and when the store can take a batch and enough agents changed, their batch is written
   * now rather than at the end of the turn, so the database writes it while the agents take the
   * turn's other steps, which gather for the next batch.
   */
  stepsOver(): void {
    if (this.mode !== 'step' || this.closed) return;
    // A batch the store has written is answered now, not at the next turn of the event loop: the
    // agents waiting on it take their next steps in this turn (its answers are given by the
    // microtasks that follow), and the next batch can be handed over sooner.
    if (this.writes.length > 0) this.hearCommits?.();
    if (this.writes.length >= this.depth || this.dirty.size < EARLY_BATCH) return;
    this.unschedule();
    void this.write();
  }

  /** Ids of the agents whose latest changes are not in the store yet: waiting for a batch, or in the one being written. */
  unwritten(): Set<string> {
    const ids = new Set(this.dirty.keys());
    for (const batch of this.writes) for (const agent of batch.agents) ids.add(agent.id);
    return ids;
  }

  private get idle(): boolean {
    return this.dirty.size === 0 && this.deleted.size === 0 && this.held.length === 0;
  }

  private schedule(): void {
    if (this.mode === 'interval') this.oldestChange ??= Date.now();
    // As many batches given as the store holds: the next one is given when one is written.
    if (this.pending !== undefined || this.writes.length >= this.depth || this.mode === 'manual') return;
    if (this.mode === 'step') this.pending = setImmediate(() => void this.write());
    else {
      // From the oldest change waiting, which may have been made while the last batch was written.
      // Node fires a longer timeout than it takes after 1 ms: such an interval writes every 24.8 days.
      const delay = Math.min(MAX_TIMER_DELAY, Math.max(0, this.oldestChange! + this.intervalMs - Date.now()));
      this.pending = setTimeout(() => void this.write(), delay);
      this.pending.unref();
    }
  }

  private unschedule(): void {
    if (this.pending === undefined) return;
    clearTimeout(this.pending as ReturnType<typeof setTimeout>);
    clearImmediate(this.pending as ReturnType<typeof setImmediate>);
    this.pending = undefined;
  }

  /** Writes everything that changed, now, and resolves once it is written (failures are reported, not thrown). */
  async flush(): Promise<void> {
    while (this.writes.length > 0) await this.writes[this.writes.length - 1]!.written;
    this.unschedule();
    await this.write();
  }

  /** Writes one batch of what changed, in one transaction, and then gives the answers it held. */
  private write(): Promise<void> {
    this.pending = undefined;
    if (this.idle) return Promise.resolve();
    const sources = [...this.dirty.values()];
    const deletes = [...this.deleted];
    const held = this.held;
    this.dirty = new Map();
    this.deleted = new Set();
    this.held = [];
    this.oldestChange = undefined;
    const failed = new Map<string, RuntimeError>();
    const snapshots: StoredAgent[] = [];
    for (const source of sources) {
      try {
        snapshots.push(storedRow(source));
      } catch (error) {
        // State JSON cannot hold: this agent is not written; its answers get the error.
        const failure = error instanceof RuntimeError ? error : new RuntimeError(errorInfo('invalid_state', String(error)), source.id);
        failed.set(source.id, failure);
        this.host.report(source.id, failure.toInfo(), held.some((answer) => answer.agentId === source.id && answer.awaited()));
      }
    }
    // What runs is what is stored: an agent left holding such state would fail every step after.
    for (const [id, failure] of failed) this.host.reverted([id], 'its state could not be written (JSON cannot hold it)', failure.toInfo());
    const batch: Batch = { agents: snapshots, deletes, held, failed, refused: false, written: Promise.resolve() };
    if (snapshots.length === 0 && deletes.length === 0) {
      settle(batch);
      return Promise.resolve();
    }
    let committed: void | Promise<void>;
    try {
      committed = this.store.commit({ save: snapshots, delete: deletes });
    } catch (error) {
      this.fail(batch, error);
      settle(batch);
      return Promise.resolve();
    }
    if (!(committed instanceof Promise)) {
      settle(batch);
      return Promise.resolve();
    }
    this.writes.push(batch);
    // Done writing before the answers are given: the steps their callers take next may start the next batch.
    const finish = (failedWrite: boolean, error?: unknown) => {
      // A batch refused because an earlier one failed: its answers failed with that one.
      if (!batch.refused && failedWrite) this.fail(batch, error);
      this.writes.splice(this.writes.indexOf(batch), 1);
      if (!batch.refused) settle(batch);
      if (!this.idle && !this.closed) this.schedule();
    };
    batch.written = committed.then(
      () => finish(false),
      (error: unknown) => finish(true, error),
    );
    return batch.written;
  }

  /**
   * The write of `batch` failed: reports it and brings its agents back to their last durable
   * state, their child agents with them. The batches given to the store after it (which the store
   * refuses: it writes in order) fail with it, and so do the steps these agents took since.
   */
  private fail(batch: Batch, error: unknown): void {
    const failure = error instanceof RuntimeError ? error : this.writeFailed(batch, error);
    this.host.report(undefined, failure.toInfo());
    const given = this.writes.indexOf(batch);
    const later = given < 0 ? [] : this.writes.slice(given + 1).filter((next) => !next.refused);
    const unwritten = batch.agents.map((agent) => agent.id);
    for (const next of later) for (const agent of next.agents) unwritten.push(agent.id);
    // Child agents go back with their parents, and so do the answers of their steps since.
    const back = this.host.withDescendants(unwritten);
    const failed = batch.failed;
    for (const id of back) failed.set(id, new RuntimeError(failure.toInfo(), id));
    const stops = [...batch.deletes];
    for (const next of later) {
      next.refused = true;
      stops.push(...next.deletes);
      for (const answer of next.held) answer.settle(next.failed.get(answer.agentId) ?? failed.get(answer.agentId));
    }
    // The stops are written with the next batch.
    for (const id of stops) if (!this.dirty.has(id)) this.deleted.add(id);
    // Steps these agents took since (gathered for the next batch) went back with them: their
    // answers fail too, and the agents they were taken on are not written.
    this.held = this.held.filter((answer) => {
      const error = failed.get(answer.agentId);
      if (error === undefined) return true;
      answer.settle(error);
      return false;
    });
    for (const id of back) this.dirty.delete(id);
    this.host.reverted(back, 'its last write failed', failure.toInfo());
  }

  /**
   * The `store_failed` error of a batch whose store failed with something else than a
   * `RuntimeError` (a store of the user's own): the store's words, and its file when it has one.
   */
  private writeFailed(batch: Batch, error: unknown): RuntimeError {
    const path = (this.store as { path?: unknown }).path;
    const file = typeof path === 'string' && path !== '' ? path : undefined;
    const words = error instanceof Error ? error.message : String(error);
    return new RuntimeError(
      errorInfo('store_failed', `writing ${batch.agents.length + batch.deletes.length} agent(s)${file === undefined ? '' : ` to ${file}`} failed: ${words}`, {
        details: file === undefined ? { reason: 'write_failed' } : { reason: 'write_failed', path: file },
      }),
    );
  }

  /**
   * Closes the store at once, for a system that could not start: its database's lock goes with
   * it, so the file can be opened again before this system's shutdown has run.
   */
  release(): void {
    this.closed = true;
    this.unschedule();
    storesInUse.delete(this.store);
    this.store.close();
  }

  /**
   * Writes what is left and closes the store. Steps taken while the last batch was being written
   * are written too; an answer still held after that (a step taken during that write) fails with
   * `agent_stopped`, its step unwritten, rather than never coming.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.flush();
      if (!this.idle) await this.flush();
    } finally {
      this.closed = true;
      this.unschedule();
      storesInUse.delete(this.store);
      const left = this.held;
      this.held = [];
      for (const answer of left) answer.settle(new RuntimeError(errorInfo('agent_stopped', `agent '${answer.agentId}': the system shut down before this step was written`), answer.agentId));
      this.store.close();
    }
  }
}
