/**
 * Where a system's signals, errors and diagnostics go: subscribers to emitted signals (by
 * pattern, the one matcher), error listeners, diagnostic listeners, and — when nobody listens —
 * the unhandled handlers, which by default write to stderr. Errors and diagnostics are also
 * published as `skillstate.error` / `skillstate.diagnostic` signals.
 *
 * Listeners observe; they do not answer. Each report is frozen before anyone sees it, so no
 * listener can change what a caller receives or what the next listener sees. A listener that
 * throws never keeps a report from the others and never throws into the caller (reports are made
 * from inside actors' actions, where a throw would stop the actor): its failure is reported in
 * turn as a `listener_failed` diagnostic, and a failure while reporting a failure goes to stderr,
 * so a broken listener can neither loop nor go unnoticed.
 */
import { nanoid } from 'nanoid';
import { diagnostic as makeDiagnostic, type Diagnostic } from '../core/diagnostics.js';
import { describeThrown, errorInfo, RouteError, type ErrorInfo } from '../core/errors.js';
import { patternProblem } from '../core/pattern.js';
import { deepFreeze, describeValue } from '../core/plain.js';
import { RuntimeError } from '../core/runtime-error.js';
import type { Signal } from '../core/signal.js';
import { DIAGNOSTIC_SIGNAL, ERROR_SIGNAL } from '../core/system-signals.js';
import { PatternIndex } from './pattern-index.js';
import type { Tracer } from './trace.js';

export type Listener<T> = (value: T) => void;
type Reported<T> = (value: T, agentId: string | undefined) => void;

export interface UnhandledHandlers {
  onUnhandledError?: Reported<ErrorInfo> | undefined;
  onUnhandledDiagnostic?: Reported<Diagnostic> | undefined;
}

/** Which kind of listener threw, as a `listener_failed` diagnostic names it. */
type ListenerKind = 'onError' | 'onDiagnostic' | 'subscriber';

/** A listener that threw while it was told of something. */
interface ListenerFailure {
  kind: ListenerKind;
  listener: unknown;
  thrown: unknown;
  /** For a subscriber: the type of the signal it was given. */
  signalType?: string;
}

/** What telling a set of listeners came to: whether any of them took it without throwing, and who threw. */
interface Told {
  heard: boolean;
  failures: ListenerFailure[];
}

const NO_FAILURES: ListenerFailure[] = [];
const NOBODY: ReadonlySet<unknown> = new Set();

/** Calls every listener but those in `skip`, shielding each from the others' failures. */
function notify<T>(kind: ListenerKind, listeners: ReadonlySet<Reported<T>>, value: T, agentId: string | undefined, skip: ReadonlySet<unknown>): Told {
  let heard = false;
  let failures: ListenerFailure[] | undefined;
  for (const listener of listeners) {
    if (skip.has(listener)) continue;
    try {
      listener(value, agentId);
      heard = true;
    } catch (thrown) {
      (failures ??= []).push({ kind, listener, thrown });
    }
  }
  return { heard, failures: failures ?? NO_FAILURES };
}

/** The diagnostic saying a listener threw while it was told of `about` (an error's or a diagnostic's code, or a signal's type). */
function listenerFailed(failure: ListenerFailure, about: string): Diagnostic {
  const thrown = describeThrown(failure.thrown);
  const message =
    failure.kind === 'subscriber'
      ? `a subscriber to '${failure.signalType}' threw: ${thrown}`
      : `an ${failure.kind} listener threw while receiving ${failure.kind === 'onError' ? 'error' : 'diagnostic'} '${about}': ${thrown}`;
  return makeDiagnostic('warning', 'listener_failed', message, {
    subject: failure.kind === 'subscriber' ? failure.signalType : failure.kind,
    details: { listener: failure.kind, about },
  });
}

/**
 * Refuses a listener that is not a function when it is given: taken, it would fail on every report
 * it was told of, far from the line that registered it.
 */
function checkListener(method: string, listener: unknown, shape: string): void {
  if (typeof listener === 'function') return;
  throw new RuntimeError(
    errorInfo('invalid_options', `${method} needs a listener function, ${shape}; got ${describeValue(listener)}`, { subject: 'listener', details: { option: 'listener', value: describeValue(listener) } }),
  );
}

export class Broadcaster {
  private readonly subscriptions = new PatternIndex<Listener<Signal>>();
  private readonly errorListeners = new Set<Reported<ErrorInfo>>();
  private readonly diagnosticListeners = new Set<Reported<Diagnostic>>();

  constructor(
    private readonly unhandled: UnhandledHandlers,
    private readonly trace: Tracer | undefined,
  ) {}

  /** Throws `invalid_pattern` for a pattern no signal type could match, `invalid_options` for a listener that is not a function. */
  subscribe(pattern: string, listener: Listener<Signal>): () => void {
    const problem = patternProblem(pattern);
    if (problem) throw new RouteError({ code: 'invalid_pattern', message: `cannot subscribe to '${String(pattern)}': ${problem}`, subject: String(pattern) });
    checkListener('subscribe', listener, '(signal) => void');
    // Each subscription is its own entry, so ending one never ends another of the same function.
    const subscription: Listener<Signal> = (signal) => listener(signal);
    this.subscriptions.add(pattern, subscription);
    return () => this.subscriptions.delete(pattern, subscription);
  }

  onError(listener: Reported<ErrorInfo>): () => void {
    checkListener('onError', listener, '(error, agentId) => void');
    const subscription: Reported<ErrorInfo> = (error, agentId) => listener(error, agentId);
    this.errorListeners.add(subscription);
    return () => this.errorListeners.delete(subscription);
  }

  onDiagnostic(listener: Reported<Diagnostic>): () => void {
    checkListener('onDiagnostic', listener, '(diagnostic, agentId) => void');
    const subscription: Reported<Diagnostic> = (diagnostic, agentId) => listener(diagnostic, agentId);
    this.diagnosticListeners.add(subscription);
    return () => this.diagnosticListeners.delete(subscription);
  }

  /** Whether any subscriber listens to signals of `type`. */
  hasSubscribers(type: string): boolean {
    return this.subscriptions.lookup(type).size > 0;
  }

  /** Hands a signal to the subscribers whose pattern matches; returns how many there were. */
  toSubscribers(signal: Signal, from: string | undefined): number {
    const listeners = this.subscriptions.lookup(signal.type);
    for (const listener of listeners) {
      try {
        listener(signal);
      } catch (thrown) {
        this.diagnose(from, listenerFailed({ kind: 'subscriber', listener, thrown, signalType: signal.type }, signal.type));
      }
    }
    return listeners.size;
  }

  /**
   * Reports an error. `onError` listeners and `skillstate.error` subscribers observe every error,
   * including one a waiting caller received (`answered`), frozen; the unhandled handler (stderr
   * by default) gets only what nobody received (a listener that threw did not receive it), so no
   * error is written out twice or lost. A listener that throws is a `listener_failed` diagnostic.
   */
  report(agentId: string | undefined, error: ErrorInfo, answered = false): void {
    deepFreeze(error);
    const listened = notify('onError', this.errorListeners, error, agentId, NOBODY);
    const subscribed = this.publishReport(ERROR_SIGNAL, { agent: agentId, error }, NOBODY);
    for (const failure of listened.failures) this.diagnose(agentId, listenerFailed(failure, error.code));
    for (const failure of subscribed.failures) this.diagnose(agentId, listenerFailed(failure, error.code));
    if (listened.heard || subscribed.heard || answered) return;
    if (this.unhandled.onUnhandledError && this.safely(this.unhandled.onUnhandledError, error, agentId)) return;
    process.stderr.write(`[skillstate] ${agentId ? `agent '${agentId}': ` : ''}${error.code}: ${error.message}\n`);
  }

  /**
   * Reports a diagnostic, frozen: the trace, listeners, `skillstate.diagnostic` subscribers, else
   * the unhandled handler. A diagnostic listener or subscriber that throws is a `listener_failed`
   * diagnostic, told once to every channel but the ones that threw; one that throws on that is
   * written to stderr, so a failing listener can never make reports loop.
   */
  diagnose(agentId: string | undefined, diagnostic: Diagnostic): void {
    this.tell(agentId, diagnostic, NOBODY);
  }

  /** `diagnose`, telling no listener or subscriber in `skip`: those whose failure this diagnostic reports. */
  private tell(agentId: string | undefined, diagnostic: Diagnostic, skip: ReadonlySet<unknown>): void {
    deepFreeze(diagnostic);
    this.trace?.(agentId === undefined ? { kind: 'diagnostic', diagnostic } : { kind: 'diagnostic', agent: agentId, diagnostic });
    const listened = notify('onDiagnostic', this.diagnosticListeners, diagnostic, agentId, skip);
    const subscribed = this.publishReport(DIAGNOSTIC_SIGNAL, { agent: agentId, diagnostic }, skip);
    const failures = listened.failures.length || subscribed.failures.length ? [...listened.failures, ...subscribed.failures] : NO_FAILURES;
    if (failures.length && skip === NOBODY) {
      const failed = new Set(failures.map((failure) => failure.listener));
      for (const failure of failures) this.tell(agentId, listenerFailed(failure, diagnostic.code), failed);
    } else {
      for (const failure of failures) process.stderr.write(`[skillstate] ${listenerFailed(failure, diagnostic.code).message}\n`);
    }
    if (listened.heard || subscribed.heard || this.trace) return;
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

  /** Publishes a system signal, frozen, to its subscribers (but those in `skip`) only. */
  private publishReport(type: string, data: Record<string, unknown>, skip: ReadonlySet<unknown>): Told {
    const listeners = this.subscriptions.lookup(type);
    if (listeners.size === 0) return { heard: false, failures: NO_FAILURES };
    const signal: Signal = deepFreeze({ specversion: '1.0', id: nanoid(), source: 'skillstate', type, time: new Date().toISOString(), data });
    let heard = false;
    let failures: ListenerFailure[] | undefined;
    for (const listener of listeners) {
      if (skip.has(listener)) continue;
      try {
        listener(signal);
        heard = true;
      } catch (thrown) {
        (failures ??= []).push({ kind: 'subscriber', listener, thrown, signalType: type });
      }
    }
    return { heard, failures: failures ?? NO_FAILURES };
  }

  clear(): void {
    this.subscriptions.clear();
    this.errorListeners.clear();
    this.diagnosticListeners.clear();
  }
}
