/**
 * Following a served agent for as long as it runs, through passivation: `watchAgent(ref, on)`
 * calls `on.step` after each of its steps and `on.stopped` once, when it has stopped.
 *
 * A passivated agent (written to its system's store, out of memory until its next use) is not
 * stopped: its actor completes as a stopped one's does, so which of the two it was is read from
 * the ref once the passivation is over. The actor of the agent woken later is a new one, which
 * the watch cannot reach without waking the agent itself: while the agent is passivated the ref's
 * status is looked at every `PASSIVATED_POLL_MS` and whenever the agent is used through the watch's
 * owner (`used()`), and once it is back, its new actor is followed (and `on.step` called, for
 * what changed meanwhile).
 */
import type { Subscription } from 'xstate';
import type { AgentRef } from '../index.js';

/** How often the status of a passivated agent is looked at, in milliseconds (reading it never wakes the agent). */
const PASSIVATED_POLL_MS = 200;

/** What a watch of an agent is told. */
export interface AgentWatchListener {
  /** A step of the agent ended (or the agent woke and may have changed meanwhile). */
  step?(): void;
  /** The agent has stopped; called once, and nothing after it. */
  stopped(): void;
}

/** A watch of an agent: `close()` ends it. */
export interface AgentWatch {
  /** The agent was used (a request served): when it was passivated and is woken now, its actor is followed at once. */
  used(): void;
  close(): void;
}

/** Follows `ref`'s agent through passivation until it stops or the watch is closed. */
export function watchAgent(ref: AgentRef<object>, on: AgentWatchListener): AgentWatch {
  let subscription: Subscription | undefined;
  let poll: ReturnType<typeof setInterval> | undefined;
  let ended = false;
  const end = (stopped: boolean) => {
    if (ended) return;
    ended = true;
    subscription?.unsubscribe();
    subscription = undefined;
    if (poll !== undefined) clearInterval(poll);
    poll = undefined;
    if (stopped) on.stopped();
  };
  const follow = (woke: boolean) => {
    if (ended || subscription !== undefined) return;
    const status = ref.status;
    if (status === 'stopped') return end(true);
    if (status === 'passivated') {
      poll ??= setInterval(() => follow(true), PASSIVATED_POLL_MS);
      poll.unref();
      return;
    }
    if (poll !== undefined) clearInterval(poll);
    poll = undefined;
    subscription = ref.actor.subscribe({
      next: () => on.step?.(),
      error: () => {},
      // A stop and a passivation both complete the actor; the ref tells them apart once the
      // passivation is carried out, right after.
      complete: () => {
        subscription = undefined;
        queueMicrotask(() => follow(true));
      },
    });
    if (woke) on.step?.();
  };
  follow(false);
  return { used: () => follow(true), close: () => end(false) };
}
