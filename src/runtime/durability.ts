/**
 * Keeping a system's agents durable in a store: which agents changed since the last write, which
 * were stopped, and, in `'step'` mode, the answers held back until the steps that made them are
 * written.
 *
 * Writes are grouped: every agent that changed during one turn of the event loop is written in
 * one transaction (`setImmediate`, after the microtasks of the turn, so callers answered by one
 * write that call again land in the next). In `'step'` mode a step's answer (a call's result or
 * error, a deferred reply) is given only once the write holding the step has committed; a write
 * that fails fails those answers with its `store_failed` error. In `'interval'` mode changes are
 * written at most `intervalMs` after they happen and answers are not held: a crash loses what
 * was not written yet. In `'manual'` mode nothing is written until `flush()`.
 */
import { errorInfo, type ErrorInfo } from '../core/errors.js';
import { RuntimeError } from '../core/runtime-error.js';
import { takeSnapshot, type DurableStore, type SnapshotSource, type StoredAgent } from './persistence.js';

/** When a durable system writes its agents: see `Durability`. */
export type DurabilityMode = 'step' | 'interval' | 'manual';

/** An answer held until the step that made it is durable: `settle` gives it, or the write's error. */
interface HeldAnswer {
  agentId: string;
  settle(failure: RuntimeError | undefined): void;
}

/** What a failed write needs from the system. */
export interface DurabilityHost {
  report(agentId: string | undefined, error: ErrorInfo): void;
  /** A write of these agents failed: bring each back to its last durable state. */
  reverted(agentIds: readonly string[]): void;
}

/** The durable side of one system: its store, its mode, what changed since the last write. */
export class Durability {
  private dirty = new Map<string, SnapshotSource>();
  private deleted = new Set<string>();
  private held: HeldAnswer[] = [];
  private pending: ReturnType<typeof setImmediate> | ReturnType<typeof setTimeout> | undefined;
  private closed = false;

  constructor(
    readonly store: DurableStore,
    readonly mode: DurabilityMode,
    private readonly intervalMs: number,
    private readonly host: DurabilityHost,
  ) {}

  /** The agent changed (a step, a lifecycle, a spawn, a restore): it is written with the next batch. */
  changed(source: SnapshotSource): void {
    if (this.closed) return;
    this.dirty.set(source.id, source);
    this.deleted.delete(source.id);
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
   * In `'step'` mode, keeps an answer of agent `agentId` until its step is written and returns
   * true; otherwise returns false and the caller answers at once.
   */
  hold(agentId: string, settle: (failure: RuntimeError | undefined) => void): boolean {
    if (this.mode !== 'step' || this.closed) return false;
    this.held.push({ agentId, settle });
    this.schedule();
    return true;
  }

  private schedule(): void {
    if (this.pending !== undefined || this.mode === 'manual') return;
    if (this.mode === 'step') this.pending = setImmediate(() => this.write());
    else {
      this.pending = setTimeout(() => this.write(), this.intervalMs);
      this.pending.unref();
    }
  }

  /** Writes what changed now, in one transaction, and gives the answers it held. */
  flush(): void {
    if (this.pending !== undefined) {
      clearTimeout(this.pending as ReturnType<typeof setTimeout>);
      clearImmediate(this.pending as ReturnType<typeof setImmediate>);
    }
    this.write();
  }

  private write(): void {
    this.pending = undefined;
    const sources = [...this.dirty.values()];
    const deletes = [...this.deleted];
    const held = this.held;
    this.dirty = new Map();
    this.deleted = new Set();
    this.held = [];
    const failed = new Map<string, RuntimeError>();
    const snapshots: StoredAgent[] = [];
    for (const source of sources) {
      try {
        // A snapshot taken is a checked JSON copy already: it is written as JSON.stringify gives it.
        const snapshot = takeSnapshot(source);
        snapshots.push({ id: snapshot.id, parent: snapshot.parent, definition: snapshot.definition, snapshot: JSON.stringify(snapshot) });
      } catch (error) {
        // State JSON cannot hold: this agent is not written; its answers get the error.
        const failure = error instanceof RuntimeError ? error : new RuntimeError(errorInfo('invalid_state', String(error)), source.id);
        failed.set(source.id, failure);
        this.host.report(source.id, failure.toInfo());
      }
    }
    if (snapshots.length > 0 || deletes.length > 0) {
      try {
        this.store.commit({ save: snapshots, delete: deletes });
      } catch (error) {
        const failure = error instanceof RuntimeError ? error : new RuntimeError(errorInfo('store_failed', `writing agents failed: ${String(error)}`, { details: { reason: 'write_failed', path: '' } }));
        this.host.report(undefined, failure.toInfo());
        for (const snapshot of snapshots) failed.set(snapshot.id, new RuntimeError(failure.toInfo(), snapshot.id));
        // The stops are written with the next batch.
        for (const id of deletes) this.deleted.add(id);
        this.host.reverted(snapshots.map((snapshot) => snapshot.id));
      }
    }
    for (const answer of held) answer.settle(failed.get(answer.agentId));
  }

  /** Writes what is left and closes the store. */
  close(): void {
    if (this.closed) return;
    try {
      this.flush();
    } finally {
      this.closed = true;
      this.store.close();
    }
  }
}
