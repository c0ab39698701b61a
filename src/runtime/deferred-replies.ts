/**
 * An agent's deferred replies: the callers whose answer comes after their own step. A step that
 * defers its answer (`defer_reply`) leaves its caller here, under the id of the signal it called
 * with, and a later step's `reply` effect naming that id in `to` answers it. A deferred answer
 * finds its caller by that id, so the ids of the calls not answered yet are kept too: one id
 * names one waiting caller at a time.
 */
import { diagnostic } from '../core/diagnostics.js';
import type { Effect } from '../core/effects.js';
import { errorInfo, toErrorInfo, type ErrorInfo } from '../core/errors.js';
import type { Signal, SignalLike } from '../core/signal.js';
import type { AgentItemEvent } from '../../machines/agent.js';
import { CALL_ABORTED_SIGNAL } from '../core/system-signals.js';
import { RuntimeError } from '../core/runtime-error.js';
import type { Mailbox, Ticket } from './mailbox.js';
import type { ProcessHost } from './process-host.js';

/** What deferred replies need from their agent. */
export interface ReplyOwner {
  readonly id: string;
  readonly mailbox: Mailbox;
  readonly system: ProcessHost;
  /** The agent as users reach it: a caller who gave up on a deferred answer is announced through it. */
  readonly ref: { send(signal: SignalLike): void };
  /** Answers a waiting caller with a step's answer (held until the step is durable where steps are). */
  answer(ticket: Ticket, error: unknown, value?: unknown): void;
}

/** Records in the trace an answer nobody receives any more (`late_result`): it is not delivered. */
export function lateResult(owner: Pick<ReplyOwner, 'id' | 'system'>, what: string, signalId?: string): void {
  owner.system.trace?.({
    kind: 'diagnostic',
    agent: owner.id,
    diagnostic: diagnostic('info', 'late_result', `agent '${owner.id}': ${what}`, signalId === undefined ? {} : { subject: signalId }),
  });
}

/** One agent's callers waiting for a deferred answer, and the ids of its calls not answered yet. */
export class DeferredReplies {
  /**
   * Callers whose answer a step deferred (`defer_reply`), by the id of the signal they called
   * with, each with the skill whose step deferred it when the effect names one: it alone answers them.
   */
  private deferred: Map<string, { ticket: Ticket; skill: string | undefined }> | undefined;
  /** Ids of the signals of calls not answered yet (made on the first call). */
  private calling: Set<string> | undefined;

  constructor(private readonly owner: ReplyOwner) {}

  /** Whether a call is not answered yet (its answer deferred, or held until its step is written). */
  get waiting(): boolean {
    return (this.calling?.size ?? 0) > 0;
  }

  /**
   * Counts a call under its signal's id, or returns the error for a call under the id of one not
   * answered yet: a deferred answer finds its caller by that id, so two callers under one id
   * would leave one of them unanswered.
   */
  called(signal: Signal): ErrorInfo | undefined {
    const id = signal.id;
    if (this.calling?.has(id)) {
      return errorInfo(
        'invalid_signal',
        `agent '${this.owner.id}' is still answering a call with signal id '${id}'; a call's signal id must be unique among the calls waiting for an answer (createSignal makes a new id each time)`,
        { subject: id, details: { reason: 'duplicate_call', signal: id, type: signal.type } },
      );
    }
    (this.calling ??= new Set()).add(id);
    return undefined;
  }

  /** The call under `signalId` is answered (with its answer, an error, a timeout, a cancellation or a stop). */
  answered(signalId: string): void {
    this.calling?.delete(signalId);
  }

  /**
   * Keeps the caller of a step that deferred its answer, and answers the callers that this step's
   * `reply` effects name in `to`. Returns true when the step's own caller now waits for later.
   */
  carryOut(event: AgentItemEvent, ticket: Ticket | undefined, effects: readonly Effect[]): boolean {
    let deferred = false;
    for (const effect of effects) {
      if (effect.type === 'defer_reply' && event.type === 'signal' && ticket !== undefined) {
        deferred = true;
        if (ticket.aborted) this.aborted(event.signal.id);
        else if (!ticket.settled) {
          this.deferred ??= new Map();
          // Callers that gave up (timed out) are forgotten here, so a skill that never answers leaks nothing.
          for (const [id, waiting] of this.deferred) if (waiting.ticket.settled) this.deferred.delete(id);
          this.deferred.set(event.signal.id, { ticket, skill: effect.meta?.skill });
        }
      } else if (effect.type === 'reply' && effect.to !== undefined) {
        const waiting = this.deferred?.get(effect.to)?.ticket;
        if (waiting !== undefined) this.deferred!.delete(effect.to);
        if (waiting === undefined || waiting.settled) {
          lateResult(this.owner, `the deferred answer to signal '${effect.to}' found no caller waiting for it (it timed out, was cancelled or answered, or never waited)`, effect.to);
        } else if (effect.error !== undefined) this.owner.answer(waiting, new RuntimeError(effect.error, this.owner.id));
        else this.owner.answer(waiting, undefined, effect.data);
      }
    }
    return deferred;
  }

  /**
   * A caller gave up (its `AbortSignal` fired). When its answer was deferred, the agent gets a
   * `skillstate.call.aborted` signal naming the call. `ticket` given: only if that is the caller
   * waiting under `signalId`; none: the caller is known to be the deferred one.
   */
  aborted(signalId: string, ticket?: Ticket): void {
    if (ticket !== undefined) {
      if (this.deferred?.get(signalId)?.ticket !== ticket) return;
      this.deferred!.delete(signalId);
    }
    const owner = this.owner;
    if (owner.mailbox.stopped) return;
    try {
      owner.ref.send({ type: CALL_ABORTED_SIGNAL, data: { signal: signalId } });
    } catch (error) {
      const info = toErrorInfo(error, 'signal_failed');
      owner.system.report(owner.id, info);
    }
  }

  /**
   * Skills left the agent (unmounted): the callers still waiting for an answer one of them
   * deferred get `cancelled` now, as no step of that skill can answer them any more (a model
   * turn's caller, and those of the messages queued behind it, when `conversation` is unmounted).
   */
  left(skills: readonly string[]): void {
    if (this.deferred === undefined) return;
    for (const [id, { ticket, skill }] of this.deferred) {
      if (skill === undefined || !skills.includes(skill)) continue;
      this.deferred.delete(id);
      if (ticket.settled) continue;
      const message = `agent '${this.owner.id}': skill '${skill}' was unmounted before it answered this call (signal '${id}')`;
      this.owner.answer(ticket, new RuntimeError(errorInfo('cancelled', message, { skill, subject: id, details: { reason: `skill '${skill}' was unmounted` } }), this.owner.id));
    }
  }

  /** The agent stopped: every caller still waiting for a deferred answer gets `error`. */
  stopped(error: () => RuntimeError): void {
    if (this.deferred) for (const { ticket } of this.deferred.values()) this.owner.mailbox.settle(ticket, error());
    this.deferred = undefined;
  }
}
