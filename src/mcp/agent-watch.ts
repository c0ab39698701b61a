/**
 * Following a served agent for as long as it runs, through passivation: `watchAgent(ref, on)`
 * calls `on.step` after each of its steps and `on.stopped` once, when it has stopped;
 * `watchAgentId({ system, id }, on)` follows whichever agent runs under an id, one after another.
 *
 * A passivated agent (written to its system's store, out of memory until its next use) is not
 * stopped: its actor completes as a stopped one's does, so which of the two it was is read from
 * the ref once the passivation is over. The actor of the agent woken later is a new one: the
 * runtime says when it starts (`ref-changes.ts`), whatever woke it (a request served here, a
 * signal, a call from the application, a timer), and the watch follows it from then on (and
 * calls `on.step`, for what changed meanwhile). Nothing is read on a timer: an agent woken,
 * changed and passivated again is seen however quickly that happens.
 */
import type { Subscription } from 'xstate';
import type { AgentRef, AgentSystem } from '../index.js';
import { onRefChange } from '../runtime/ref-changes.js';

/** What a watch of an agent is told. */
export interface AgentWatchListener {
  /** A step of the agent ended (or the agent woke, or another took its id, and may differ). */
  step?(): void;
  /** The agent has stopped. Once for `watchAgent`; for `watchAgentId`, once per agent of the id. */
  stopped(): void;
}

/** A watch of an agent: `close()` ends it. */
export interface AgentWatch {
  close(): void;
}

/** Follows `ref`'s agent through passivation until it stops or the watch is closed. */
export function watchAgent(ref: AgentRef<object>, on: AgentWatchListener): AgentWatch {
  let subscription: Subscription | undefined;
  let ended = false;
  const end = (stopped: boolean) => {
    if (ended) return;
    ended = true;
    unheard();
    subscription?.unsubscribe();
    subscription = undefined;
    if (stopped) on.stopped();
  };
  const follow = (woke: boolean) => {
    if (ended || subscription !== undefined) return;
    const status = ref.status;
    if (status === 'stopped') return end(true);
    // Out of memory: the runtime says when it is back (or dropped for good).
    if (status === 'passivated') return;
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
  const unheard = onRefChange(ref, () => follow(true));
  follow(false);
  return { close: () => end(false) };
}

/** An agent of `system` named by its id, whichever agent runs under it. */
export interface AgentById {
  system: AgentSystem;
  id: string;
}

/**
 * Follows the agent running under `target.id`, then, once it stops, the next agent spawned (or
 * restored) under that id, and so on until the watch is closed: `on.stopped` each time one stops,
 * `on.step` as soon as the next one runs. `current()` is the ref of the agent followed: the one
 * running, else the last one that did.
 */
export function watchAgentId(target: AgentById, first: AgentRef<object>, on: AgentWatchListener): AgentWatch & { current(): AgentRef<object> } {
  let ref = first;
  /** The watch of `ref` while its agent runs. */
  let watch: AgentWatch | undefined;
  let closed = false;
  const followRef = (next: AgentRef<object>, changed: boolean) => {
    ref = next;
    // Told before the watch starts, which may find it stopped already; a passivated one is told as it wakes.
    if (changed && next.status !== 'passivated') on.step?.();
    let running = true;
    const watching = watchAgent(next, {
      step: () => on.step?.(),
      stopped: () => {
        running = false;
        watch = undefined;
        on.stopped();
        // Spawned again before the stop was heard: followed at once.
        const again = target.system.get(target.id) as AgentRef<object> | undefined;
        if (again && again !== ref && again.status !== 'stopped' && !closed) followRef(again, true);
      },
    });
    if (running) watch = watching;
  };
  // Any agent of the system starting: one under this id, while none is followed, is the next.
  const unheard = onRefChange(target.system.actor, (started) => {
    const next = started as AgentRef<object>;
    if (closed || watch !== undefined || next.id !== target.id || next === ref || next.status === 'stopped') return;
    followRef(next, true);
  });
  followRef(first, false);
  return {
    current: () => ref,
    close: () => {
      closed = true;
      unheard();
      watch?.close();
    },
  };
}
