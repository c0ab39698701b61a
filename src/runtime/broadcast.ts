/**
 * Where a system's signals, errors and diagnostics go: subscribers to emitted signals (by
 * pattern, the one matcher), error listeners, diagnostic listeners, and — when nobody listens —
 * the unhandled handlers, which by default write to stderr. Errors and diagnostics are also
 * published as `skillstate.error` / `skillstate.diagnostic` signals. A listener that throws never
 * keeps a report from the others, and no listener or handler ever throws into the caller: reports
 * are made from inside actors' actions, where a throw would stop the actor.
 */
import { nanoid } from 'nanoid';
import { diagnostic as makeDiagnostic, type Diagnostic } from '../core/diagnostics.js';
import { describeThrown, type ErrorInfo } from '../core/errors.js';
import type { Signal } from '../core/signal.js';
import { PatternIndex } from './pattern-index.js';
import type { Tracer } from './trace.js';

/** Emitted when an error is reported: data `{ agent, error }`. */
export const ERROR_SIGNAL = 'skillstate.error';
/** Emitted for each diagnostic: data `{ agent, diagnostic }`. */
export const DIAGNOSTIC_SIGNAL = 'skillstate.diagnostic';
/**
 * Sent to an agent when the caller of a call whose answer it deferred (`defer_reply`) aborted:
 * data `{ signal }`, the id of the called signal. The skill doing the work routes it to stop.
 */
export const CALL_ABORTED_SIGNAL = 'skillstate.call.aborted';

export type Listener<T> = (value: T) => void;
type Reported<T> = (value: T, agentId: string | undefined) => void;

export interface UnhandledHandlers {
  onUnhandledError?: Reported<ErrorInfo> | undefined;
  onUnhandledDiagnostic?: Reported<Diagnostic> | undefined;
}

/** Calls every listener, shielding each from the others' failures; returns whether there was one. */
function notify<T>(listeners: ReadonlySet<Reported<T>>, value: T, agentId: string | undefined): boolean {
  for (const listener of listeners) {
    try {
      listener(value, agentId);
    } catch {
      // A failing listener must not keep the report from the others.
    }
  }
  return listeners.size > 0;
}

export class Broadcaster {
  private readonly subscriptions = new PatternIndex<Listener<Signal>>();
  private readonly errorListeners = new Set<Reported<ErrorInfo>>();
  private readonly diagnosticListeners = new Set<Reported<Diagnostic>>();

  constructor(
    private readonly unhandled: UnhandledHandlers,
    private readonly trace: Tracer | undefined,
  ) {}

  subscribe(pattern: string, listener: Listener<Signal>): () => void {
    this.subscriptions.add(pattern, listener);
    return () => this.subscriptions.delete(pattern, listener);
  }

  onError(listener: Reported<ErrorInfo>): () => void {
    this.errorListeners.add(listener);
    return () => this.errorListeners.delete(listener);
  }

  onDiagnostic(listener: Reported<Diagnostic>): () => void {
    this.diagnosticListeners.add(listener);
    return () => this.diagnosticListeners.delete(listener);
  }

  /** Hands a signal to the subscribers whose pattern matches; returns how many there were. */
  /** Whether any subscriber listens to signals of `type`. */
  hasSubscribers(type: string): boolean {
    return this.subscriptions.lookup(type).size > 0;
  }

  toSubscribers(signal: Signal, from: string | undefined): number {
    const listeners = this.subscriptions.lookup(signal.type);
    for (const listener of listeners) {
      try {
        listener(signal);
      } catch (error) {
        this.diagnose(from, makeDiagnostic('warning', 'listener_failed', `a subscriber to '${signal.type}' threw: ${describeThrown(error)}`, { subject: signal.type }));
      }
    }
    return listeners.size;
  }

  /**
   * Reports an error. `onError` listeners and `skillstate.error` subscribers observe every error,
   * including one a waiting caller received (`answered`); the unhandled handler (stderr by
   * default) gets only what nobody received, so no error is written out twice or lost.
   */
  report(agentId: string | undefined, error: ErrorInfo, answered = false): void {
    const heard = notify(this.errorListeners, error, agentId);
    if (this.quietly(ERROR_SIGNAL, { agent: agentId, error }) || heard || answered) return;
    if (this.unhandled.onUnhandledError && this.safely(this.unhandled.onUnhandledError, error, agentId)) return;
    process.stderr.write(`[skillstate] ${agentId ? `agent '${agentId}': ` : ''}${error.code}: ${error.message}\n`);
  }

  /** Reports a diagnostic: the trace, listeners, `skillstate.diagnostic` subscribers, else the unhandled handler. */
  diagnose(agentId: string | undefined, diagnostic: Diagnostic): void {
    this.trace?.(agentId === undefined ? { kind: 'diagnostic', diagnostic } : { kind: 'diagnostic', agent: agentId, diagnostic });
    const heard = notify(this.diagnosticListeners, diagnostic, agentId);
    if (this.quietly(DIAGNOSTIC_SIGNAL, { agent: agentId, diagnostic }) || heard || this.trace) return;
    if (this.unhandled.onUnhandledDiagnostic && this.safely(this.unhandled.onUnhandledDiagnostic, diagnostic, agentId)) return;
    if (diagnostic.level !== 'info') process.stderr.write(`[skillstate] ${diagnostic.level}: ${diagnostic.message}\n`);
  }

  /** Calls an unhandled handler; false when it threw (the report then goes to stderr, with why). */
  private safely<T>(handler: Reported<T>, value: T, agentId: string | undefined): boolean {
    try {
      handler(value, agentId);
      return true;
    } catch (error) {
      process.stderr.write(`[skillstate] an unhandled-report handler threw: ${describeThrown(error)}\n`);
      return false;
    }
  }

  /** Publishes a system signal to subscribers only; returns whether anyone heard it. */
  private quietly(type: string, data: Record<string, unknown>): boolean {
    const listeners = this.subscriptions.lookup(type);
    if (listeners.size === 0) return false;
    const signal: Signal = { specversion: '1.0', id: nanoid(), source: 'skillstate', type, time: new Date().toISOString(), data };
    for (const listener of listeners) {
      try {
        listener(signal);
      } catch {
        // A failing listener must not keep the report from the others.
      }
    }
    return true;
  }

  clear(): void {
    this.subscriptions.clear();
    this.errorListeners.clear();
    this.diagnosticListeners.clear();
  }
}
