/**
 * Who is told that the process behind an agent's ref changed without a step of it to show it: an
 * agent started (spawned, restored, woken from passivation, reverted to its last durable state),
 * or a passivated one left for good without waking (its system shut down, or it could not be
 * woken to stop). A listener reads what it needs from the ref (`status`, `actor`).
 *
 * Internal, not exported from the package: what follows a running agent from outside its system
 * (the MCP server) listens here, where reading the ref's status from time to time would miss an
 * agent woken by something else (a signal, a timer), changed, and passivated again in between.
 * The runtime imports nothing of its listeners.
 *
 * Free when nobody listens: `refChanged` reads one counter and returns, allocating nothing.
 */

/** Told of a ref whose process changed (see above). */
export type RefChangeListener = (ref: object) => void;

const listeners = new WeakMap<object, Set<RefChangeListener>>();
/** Listeners registered, on any key: none, and the runtime's calls return at once. */
let listening = 0;

/**
 * Calls `listener` whenever the process behind `key` changes: `key` is a ref (its own agent), or
 * a system's supervising actor (`system.actor`: any agent of that system). Returns the function
 * that stops it.
 */
export function onRefChange(key: object, listener: RefChangeListener): () => void {
  let set = listeners.get(key);
  if (!set) listeners.set(key, (set = new Set()));
  set.add(listener);
  listening++;
  let on = true;
  return () => {
    if (!on) return;
    on = false;
    listening--;
    set.delete(listener);
    if (set.size === 0 && listeners.get(key) === set) listeners.delete(key);
  };
}

/** Whether anything listens at all (a caller that would walk many refs asks first). */
export function refChangesHeard(): boolean {
  return listening > 0;
}

/** Called by the runtime: the process behind `ref`, an agent of the system whose actor is `system`, changed. */
export function refChanged(system: object, ref: object): void {
  if (listening === 0) return;
  tell(listeners.get(ref), ref);
  tell(listeners.get(system), ref);
}

function tell(set: Set<RefChangeListener> | undefined, ref: object): void {
  if (set === undefined) return;
  // A listener may stop listening (or another start) as it is told.
  for (const listener of [...set]) listener(ref);
}
