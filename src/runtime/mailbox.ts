/**
 * An agent's mailbox discipline: one item at a time, in arrival order. An item goes straight to
 * the actor when the agent is idle and nothing waits (the sync fast path: no queue, no promise);
 * otherwise it waits, bounded by the capacity, and overflow is an error to the sender. Callers
 * waiting on an item hold a ticket, settled once: with the answer, an error, a timeout, or
 * `agent_stopped` when the agent stops first.
 *
 * The mailbox knows nothing of steps: it hands items to `deliver` and is told when the current
 * one is finished. It tells its owner when the item under way stops being wanted while its step
 * runs (its caller cancelled or timed out, or an item arrived that interrupts it), so the owner
 * can abort the step's `ctx.abortSignal`.
 */
import { errorInfo, reworded, type ErrorInfo } from '../core/errors.js';
import type { AnySkill } from '../core/skill.js';
import type { AgentItemEvent } from '../../machines/agent.js';
import { noAnswerError, RuntimeError } from '../core/runtime-error.js';
import { BoundedQueue } from './queue.js';
import { clearTimer, setTimer, type Timer } from './timers.js';
import { observing } from '../telemetry/otel.js';
import { sentIn, type SentIn } from '../telemetry/step-span.js';

/** A caller waiting for the answer to an item. */
export interface Ticket {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  timer: Timer | undefined;
  settled: boolean;
  /** The caller's `AbortSignal` fired: it got `cancelled`. */
  aborted?: boolean;
  /** The error the caller got when it stopped waiting (its cancellation or its time-out), once it did. */
  abandoned?: unknown;
  /** Called once the ticket is settled, however (answer, error, timeout, cancellation, stop). */
  onSettled?: (() => void) | undefined;
}

/** How a caller waits for the item it submits. */
export interface Submission {
  /** A call: the step's reply is the answer (so `transformResult` runs). */
  call: boolean;
  /** Milliseconds to wait; undefined or Infinity for no limit. */
  timeout?: number | undefined;
  /** Names the item in a timeout or cancellation error (a function is called only then). */
  what: string | (() => string);
  /** The skill given to `mount` by value. */
  skill?: AnySkill | undefined;
  /** Cancels the wait: the caller gets `cancelled`. The listener is removed once the ticket settles. */
  abort?: AbortSignal | undefined;
  /** Told after the caller was cancelled by `abort`, with its ticket. */
  onCancelled?: ((ticket: Ticket) => void) | undefined;
  /** Called once the ticket is settled, however. */
  onSettled?: (() => void) | undefined;
  /** Which items arriving while this one's step runs make that step's work unwanted. */
  interrupt?: StepInterrupt | undefined;
}

/**
 * Whether an item arriving while a step runs makes that step's work unwanted: why, in words, or
 * undefined. A model turn's tool call is interrupted by what cancels its turn (`chat.cancel`, its
 * caller giving up): the item waits behind the step, but the step need not run to its end first.
 */
export type StepInterrupt = (event: AgentItemEvent) => string | undefined;

/** An item and who waits for it. */
export interface MailboxItem {
  event: AgentItemEvent;
  ticket: Ticket | undefined;
  /** A call: the step's reply is the answer (so `transformResult` runs). */
  call: boolean;
  /** The skill given to `mount` by value: it travels with its own item, never found by name. */
  skill?: AnySkill;
  /** The trace context it was sent in, kept while tracing: the parent of its step's span. */
  sentIn?: SentIn | undefined;
  /** Which items arriving while its step runs make that step's work unwanted (cleared once one did). */
  interrupt?: StepInterrupt | undefined;
  /** The event of the item under way when this one was queued: a wait that ends still behind it was spent on that one step. */
  behind?: AgentItemEvent | undefined;
}

/** An item as a message names it: `signal 'x'`, `mount of skill 'y'`, `its mount hooks`. */
export function itemName(event: AgentItemEvent): string {
  return event.type === 'signal' ? `signal '${event.signal.type}'` : event.type === 'run' ? 'a run of instructions' : event.type === 'start' ? 'its mount hooks' : `${event.type} of skill '${event.skill}'`;
}

/** An abort reason as text, for the error's details. */
function describeReason(reason: unknown): string {
  if (reason instanceof Error) return reason.message;
  return typeof reason === 'string' ? reason : 'aborted';
}

/** idle: nothing running; processing: a sync step on the stack; working: an async step pending. */
export type MailboxPhase = 'idle' | 'processing' | 'working';

/** What the mailbox needs from its agent. */
export interface MailboxOwner {
  readonly id: string;
  /** Hands an item to the actor. */
  deliver(item: MailboxItem): void;
  /** The error for an item sent once the agent is stopped. */
  deadRef(): unknown;
  /** Whether any agent step of the system is on the stack (an item then waits for it to unwind). */
  busyElsewhere(): boolean;
  /**
   * The item under way is no longer wanted (its caller cancelled or timed out, or an item that
   * interrupts it arrived): `reason` is why, as an error. Its step still runs to its end.
   */
  unwanted(reason: RuntimeError): void;
}

/** One agent's mailbox. */
export class Mailbox {
  /** Items waiting; made on the first that has to wait (most agents never queue anything). */
  private queue: BoundedQueue<MailboxItem> | undefined;
  phase: MailboxPhase = 'idle';
  /** The item being processed. */
  current: MailboxItem | undefined;
  /** Stopped: takes nothing, ever again. */
  stopped = false;
  /** Why the agent takes no more items, once it asked to stop itself and until it is stopped. */
  private closing: string | undefined;
  private drainScheduled = false;

  constructor(
    private readonly owner: MailboxOwner,
    private readonly capacity: number,
  ) {}

  /** Nothing under way, waiting or about to be delivered, and not stopping: the agent has nothing to do. */
  get quiet(): boolean {
    return this.phase === 'idle' && this.current === undefined && (this.queue?.size ?? 0) === 0 && !this.stopped && this.closing === undefined && !this.drainScheduled;
  }

  /** Items waiting. */
  get size(): number {
    return this.queue?.size ?? 0;
  }

  /**
   * Queues an item whose caller waits for the answer (see `Submission`). When `abort` fires
   * first, the caller gets `cancelled`; the item, already on its way, still runs. Nothing is left
   * attached to `abort` once the caller is answered.
   */
  submit(event: AgentItemEvent, how: Submission): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const ticket: Ticket = { resolve, reject, timer: undefined, settled: false, onSettled: how.onSettled };
      const { abort, what } = how;
      if (abort !== undefined) {
        const onAbort = () => {
          if (ticket.settled) return;
          ticket.aborted = true;
          this.abandon(ticket, new RuntimeError(errorInfo('cancelled', `${typeof what === 'string' ? what : what()} to agent '${this.owner.id}' was cancelled by its caller`, { details: { reason: describeReason(abort.reason) } }), this.owner.id));
          how.onCancelled?.(ticket);
        };
        if (abort.aborted) {
          onAbort();
          return;
        }
        abort.addEventListener('abort', onAbort, { once: true });
        const settled = how.onSettled;
        ticket.onSettled = () => {
          abort.removeEventListener('abort', onAbort);
          settled?.();
        };
      }
      const { call, skill, interrupt } = how;
      const item: MailboxItem = skill === undefined ? { event, ticket, call } : { event, ticket, call, skill };
      if (interrupt !== undefined) item.interrupt = interrupt;
      if (how.timeout !== undefined && how.timeout !== Infinity) {
        const ms = how.timeout;
        ticket.timer = setTimer(() => {
          const named = typeof what === 'string' ? what : what();
          this.abandon(ticket, new RuntimeError(this.noAnswer(named, ms, item), this.owner.id));
        }, ms);
      }
      try {
        this.enqueue(item);
      } catch (error) {
        this.settle(ticket, error);
      }
    });
  }

  /**
   * The error of a caller whose wait for `item` ended. When the whole wait was spent behind one
   * step, under way when the item was sent, it says so: most often that step is the caller,
   * awaiting its own agent, which cannot answer before the step ends.
   */
  private noAnswer(what: string, ms: number, item: MailboxItem): ErrorInfo<'timeout'> {
    const info = noAnswerError(what, this.owner.id, ms);
    const behind = item.behind;
    if (behind === undefined || this.current?.event !== behind) return info;
    return reworded(info, {
      message: `${info.message}: it waited all along behind the step for ${itemName(behind)}, under way when it was sent. A step that awaits its own agent waits for itself: from inside a step, return result(output, { mount, unmount }) or a run effect, or send without awaiting`,
    });
  }

  /** Queues an item, or delivers it at once when the agent is idle; throws when stopped or full. */
  enqueue(item: MailboxItem): void {
    if (this.stopped) throw this.owner.deadRef();
    if (observing()) item.sentIn = sentIn();
    if (this.closing !== undefined) throw new RuntimeError(errorInfo('agent_stopped', `agent '${this.owner.id}' is stopping (${this.closing})`), this.owner.id);
    if (this.phase === 'idle' && this.size === 0 && !this.owner.busyElsewhere()) {
      this.dispatch(item);
      return;
    }
    if (this.current !== undefined) item.behind = this.current.event;
    if (!(this.queue ??= new BoundedQueue(this.capacity)).push(item)) {
      throw new RuntimeError(
        errorInfo('mailbox_full', `agent '${this.owner.id}' has ${this.capacity} items waiting; its mailbox is full`, {
          details: { capacity: this.capacity },
        }),
        this.owner.id,
      );
    }
    // Sent from inside another agent's step (an emit, a listener): run it once that step is over.
    if (this.phase === 'idle') this.scheduleDrain();
    else if (this.current?.interrupt !== undefined) this.interrupts(this.current, item.event);
  }

  /** An item arrived behind `current`: when it makes `current`'s work unwanted, the owner is told (once). */
  private interrupts(current: MailboxItem, event: AgentItemEvent): void {
    const why = current.interrupt!(event);
    if (why === undefined) return;
    current.interrupt = undefined;
    this.owner.unwanted(new RuntimeError(errorInfo('cancelled', `agent '${this.owner.id}': the step under way was interrupted: ${why}`, { details: { reason: why } }), this.owner.id));
  }

  /** A caller stopped waiting (cancelled, timed out): it gets `error`, and the step working for it, if under way, is no longer wanted. */
  private abandon(ticket: Ticket, error: RuntimeError): void {
    if (ticket.settled) return;
    ticket.abandoned = error;
    this.settle(ticket, error);
    if (this.current?.ticket === ticket) this.owner.unwanted(error);
  }

  /** Whether `event` is the item handed to the actor. */
  owns(event: AgentItemEvent): boolean {
    return this.current?.event === event;
  }

  /** The step went async: items arriving meanwhile wait. */
  began(): void {
    this.phase = 'working';
  }

  /** The step for `event` is over; returns its item when it was the current one (the mailbox is idle again). */
  finished(event: AgentItemEvent): MailboxItem | undefined {
    const item = this.current;
    if (item === undefined || item.event !== event) return undefined;
    this.current = undefined;
    this.phase = 'idle';
    return item;
  }

  /** Hands waiting items to the actor, one at a time, while the agent is idle. */
  drain(): void {
    while (this.phase === 'idle' && !this.stopped && this.closing === undefined) {
      const next = this.queue?.shift();
      if (next === undefined) return;
      this.dispatch(next);
    }
  }

  /** Answers a waiting caller, once. */
  settle(ticket: Ticket, error: unknown, value?: unknown): void {
    if (ticket.settled) return;
    ticket.settled = true;
    if (ticket.timer !== undefined) clearTimer(ticket.timer);
    ticket.onSettled?.();
    if (error !== undefined) ticket.reject(error);
    else ticket.resolve(value);
  }

  /** Takes no more items; what waits gets `stoppedError(reason)`. */
  close(reason: string, stoppedError: (reason: string) => unknown): void {
    if (this.stopped || this.closing !== undefined) return;
    this.closing = reason;
    for (const item of this.queue?.drain() ?? []) if (item.ticket) this.settle(item.ticket, stoppedError(reason));
  }

  /** Stopped for good: the current caller and everything waiting get `stoppedError()` (made only when someone waits). */
  stop(stoppedError: () => unknown): void {
    this.stopped = true;
    if (this.current?.ticket) this.settle(this.current.ticket, stoppedError());
    for (const item of this.queue?.drain() ?? []) if (item.ticket) this.settle(item.ticket, stoppedError());
    this.current = undefined;
    this.phase = 'idle';
  }

  private scheduleDrain(): void {
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    queueMicrotask(() => {
      this.drainScheduled = false;
      this.drain();
    });
  }

  private dispatch(item: MailboxItem): void {
    this.phase = 'processing';
    this.current = item;
    if (item.interrupt !== undefined && this.queue !== undefined && this.queue.size > 0) this.interruptedAhead(item);
    this.owner.deliver(item);
  }

  /**
   * An item that can be interrupted begins while items wait behind it: one of those that arrived
   * while it waited may already have made its work unwanted (a `chat.cancel` sent while the agent
   * was busy with something else), and its step is told so from the start (once).
   */
  private interruptedAhead(item: MailboxItem): void {
    for (const waiting of this.queue!) {
      if (item.interrupt === undefined) return;
      this.interrupts(item, waiting.event);
    }
  }
}
