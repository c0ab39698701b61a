/**
 * Every reliance of skillstate on XState behaviour that is not its documented API, in one place.
 * Each helper says what it relies on; `test/machines/xstate-internals.test.ts` checks each one
 * against the installed XState, and names the reliance that broke when an upgrade changes it.
 *
 * Nothing else in the package reads a `_`-prefixed field of an actor or a snapshot, replaces a
 * method of a machine, or counts on when XState runs an action: code that needs one of these
 * goes through a helper here.
 */
import type { AnyActorRef, AnyStateMachine, AnyStateNode, AnyTransitionDefinition, EventFromLogic, SnapshotFrom } from 'xstate';

/** The snapshot type of a machine's actors. */
type MachineSnapshotOf<TMachine extends AnyStateMachine> = SnapshotFrom<TMachine>;

/** The XState release the reliances below were last checked against (the test pins it). */
export const XSTATE_CHECKED_VERSION = '5.33.3';

// ── Handing data from one transition to the next ─────────────────────────────────────────────

/** A value handed from an action to the action of a later transition of the same actor. */
export interface ActionHandoff<TKey extends object, TValue> {
  put(key: TKey, value: TValue): void;
  /** Whether a value is put under `key` and not taken yet. */
  has(key: TKey): boolean;
  /** The value put under `key`, removed: taken once. */
  take(key: TKey): TValue | undefined;
}

/**
 * A value an `assign` leaves for the action of the event it sends its own actor (`self.send`),
 * kept beside the actor rather than in the event: an event can be sent to an actor by anyone,
 * so what travels in it could be forged, and an item's outcome is no data for the inspector.
 *
 * Relies on: an `assign`'s function runs once, while XState takes its transition (it may
 * therefore have side effects), and an event an actor sends itself from inside it is taken
 * after that transition, by the same actor. Keyed by an object of the actor's context, so
 * nothing outlives the actor.
 */
export function actionHandoff<TKey extends object, TValue>(): ActionHandoff<TKey, TValue> {
  const values = new WeakMap<TKey, TValue>();
  return {
    put: (key, value) => void values.set(key, value),
    has: (key) => values.has(key),
    take: (key) => {
      const value = values.get(key);
      if (value !== undefined) values.delete(key);
      return value;
    },
  };
}

// ── Persisted snapshots ─────────────────────────────────────────────────────────────────────

/**
 * Makes XState's persisted snapshot of `machine`'s actors (`actor.getPersistedSnapshot()`) leave
 * `key` out of their context: a host object the runtime put there is not data, and it leads
 * back to the actor.
 *
 * Relies on: `actor.getPersistedSnapshot()` calls `getPersistedSnapshot(snapshot, options)` of
 * the machine object the actor was made from (so replacing it on that object takes effect), and a
 * machine snapshot keeps the context under `context`.
 */
export function persistedWithout<TMachine extends AnyStateMachine>(machine: TMachine, key: string): TMachine {
  const persist: AnyStateMachine['getPersistedSnapshot'] = machine.getPersistedSnapshot.bind(machine);
  (machine as AnyStateMachine).getPersistedSnapshot = (snapshot, options) => {
    const { [key]: _left, ...context } = (snapshot as { context: Record<string, unknown> }).context;
    return persist({ ...snapshot, context } as typeof snapshot, options);
  };
  return machine;
}

// ── Transitions that only change the context ───────────────────────────────────────────────

/** The next context of a transition taken directly, and the transition XState would have taken. */
export interface DirectTransition {
  context: object;
  /** The transition XState would have selected (inspectors are told of it, as XState tells them). */
  transition: AnyTransitionDefinition;
}

/**
 * Makes `machine` take some events without running XState's statechart algorithm: `direct` is
 * asked first, with the snapshot and the event, and when it returns the next context (having done
 * what the transition's `assign` would), the next snapshot is the current one with that context.
 * When it returns undefined, XState takes the event as usual. For a machine whose hottest events
 * leave it in the state it is in (an item handled by one `assign`), this is most of what XState
 * costs an event: selecting transitions, computing the exit and entry sets, and making the
 * snapshot's value and tags again. Only for a machine without eventless transitions, which is
 * checked here.
 *
 * Relies on: an actor calls `machine.transition(snapshot, event, actorScope)` for each event (so
 * replacing it on the machine object takes effect); for a targetless transition whose only action
 * is an `assign` (which raises no event and spawns nothing), in a machine with no eventless
 * transitions, XState makes one microstep whose snapshot is the current one with the assigned
 * context: the same `_nodes`, `value`, `tags`, `children` and history (its methods are own
 * properties, so a copy keeps them; `withContext` names the fields); and it reports that
 * microstep to inspectors as `@xstate.microstep`, naming the event, the snapshot and the
 * transitions taken.
 */
export function withDirectTransitions<TMachine extends AnyStateMachine>(machine: TMachine, direct: (snapshot: MachineSnapshotOf<TMachine>, event: EventFromLogic<TMachine>) => DirectTransition | undefined): TMachine {
  const eventless = withEventless(machine.root);
  if (eventless !== undefined) throw new Error(`machine '${machine.id}' cannot take transitions directly: state '${eventless.key}' has eventless transitions`);
  const transition: AnyStateMachine['transition'] = machine.transition.bind(machine);
  /** Whether this machine's snapshots have exactly `MACHINE_SNAPSHOT_KEYS`, in order: found at its first direct transition. */
  let known: boolean | undefined;
  (machine as AnyStateMachine).transition = (snapshot, event, actorScope) => {
    const taken = direct(snapshot as MachineSnapshotOf<TMachine>, event as EventFromLogic<TMachine>);
    if (taken === undefined) return transition(snapshot, event, actorScope);
    known ??= sameKeys(snapshot);
    const next = (known ? withContext(snapshot as unknown as MachineSnapshotFields, taken.context) : { ...snapshot, context: taken.context }) as typeof snapshot;
    (actorScope.system as unknown as InspectionSink)._sendInspectionEvent({ type: '@xstate.microstep', actorRef: actorScope.self, event, snapshot: next, _transitions: [taken.transition] });
    return next;
  };
  return machine;
}

/** The fields of a machine snapshot, as XState makes it (`createMachineSnapshot`), in its order. */
export const MACHINE_SNAPSHOT_KEYS = ['status', 'output', 'error', 'machine', 'context', '_nodes', 'value', 'tags', 'children', 'historyValue', 'matches', 'hasTag', 'can', 'getMeta', 'toJSON'] as const;

type MachineSnapshotFields = Record<(typeof MACHINE_SNAPSHOT_KEYS)[number], unknown>;

/**
 * `snapshot`, which has exactly `MACHINE_SNAPSHOT_KEYS` in order, with `context` in place of its own:
 * an object literal of those fields in that order, so it has the hidden class of the snapshots XState
 * makes and the code that reads snapshots stays monomorphic (a spread copy, whose class differs, cost
 * a fifth of an in-memory step). A machine whose snapshots have other fields (another XState release)
 * has them copied with a spread instead, which keeps them all.
 */
function withContext(snapshot: MachineSnapshotFields, context: object): object {
  return {
    status: snapshot.status,
    output: snapshot.output,
    error: snapshot.error,
    machine: snapshot.machine,
    context,
    _nodes: snapshot._nodes,
    value: snapshot.value,
    tags: snapshot.tags,
    children: snapshot.children,
    historyValue: snapshot.historyValue,
    matches: snapshot.matches,
    hasTag: snapshot.hasTag,
    can: snapshot.can,
    getMeta: snapshot.getMeta,
    toJSON: snapshot.toJSON,
  };
}

/** Whether `snapshot`'s own keys are `MACHINE_SNAPSHOT_KEYS`, in order. */
function sameKeys(snapshot: object): boolean {
  const keys = Object.keys(snapshot);
  return keys.length === MACHINE_SNAPSHOT_KEYS.length && keys.every((key, i) => key === MACHINE_SNAPSHOT_KEYS[i]);
}

/** The first of `state` and the states below it, at any depth, that has eventless transitions. */
function withEventless(state: AnyStateNode): AnyStateNode | undefined {
  if ((state.always?.length ?? 0) > 0) return state;
  for (const child of Object.values(state.states)) {
    const found = withEventless(child);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The internal method XState's own system reports inspection events through. */
interface InspectionSink {
  _sendInspectionEvent(event: { type: '@xstate.microstep'; actorRef: AnyActorRef; event: unknown; snapshot: unknown; _transitions: unknown[] }): void;
}

/**
 * The transition a state of `machine` takes for `eventType` when no guard stops it: the last of
 * its candidates for that event, which must have no guard (checked here).
 */
export function unguardedTransition(machine: AnyStateMachine, state: string, eventType: string): AnyTransitionDefinition {
  const candidates = machine.root.states[state]?.transitions.get(eventType);
  const last = candidates?.at(-1);
  if (last === undefined || last.guard !== undefined) throw new Error(`machine '${machine.id}': state '${state}' has no unguarded transition for '${eventType}'`);
  return last;
}

// ── One initial snapshot shared by every actor of a machine ─────────────────────────────────

function sharedTagsChanged(): never {
  throw new TypeError("a lifecycle's initial snapshot is shared by its actors: its tags cannot change");
}

/** The tags of a shared initial snapshot: a set that refuses changes, as the rest of it is frozen. */
class ReadonlyTags extends Set<string> {
  override add = sharedTagsChanged;
  override delete = sharedTagsChanged;
  override clear = sharedTagsChanged;
}

/**
 * Makes every actor of `machine` start from one initial snapshot, worked out by its first actor,
 * instead of working it out again for each (entering the initial state is most of what creating
 * a small machine's actor costs). Only for a machine whose initial snapshot cannot differ between
 * actors — no context, no entry actions, no eventless transition out of its initial state —
 * which is checked here. The shared snapshot is frozen, its tags are a set that refuses changes,
 * and each actor gets a `context` and `children` object of its own.
 *
 * Relies on: `machine.getInitialSnapshot(actorScope, input)` is what `createActor` calls, once
 * per actor, and replacing it on the machine object takes effect; the state node fields read
 * here (`root.initial.target`, `entry`, `always`, `config.context`); a machine snapshot's own
 * fields (`_nodes`, `historyValue`, `tags` as a `Set`, its methods as own properties, so a
 * spread copy keeps them); and XState never changing a snapshot in place (a transition makes a
 * new one, and copies the history before writing it).
 */
export function withSharedInitialSnapshot<TMachine extends AnyStateMachine>(machine: TMachine): TMachine {
  const { root } = machine;
  const start = root.initial.target[0]!;
  if (machine.config.context !== undefined || root.entry.length > 0 || start.entry.length > 0 || (start.always?.length ?? 0) > 0) {
    throw new Error(`machine '${machine.id}' cannot share its initial snapshot: its start differs between actors`);
  }
  const compute: AnyStateMachine['getInitialSnapshot'] = machine.getInitialSnapshot.bind(machine);
  let initial: ReturnType<AnyStateMachine['getInitialSnapshot']> | undefined;
  (machine as AnyStateMachine).getInitialSnapshot = (actorScope, input) => {
    if (!initial) {
      const first = compute(actorScope, input);
      Object.freeze(first._nodes);
      Object.freeze(first.historyValue);
      const tags = new ReadonlyTags();
      for (const tag of first.tags) Set.prototype.add.call(tags, tag);
      initial = Object.freeze({ ...first, tags });
    }
    return { ...initial, context: {}, children: {} };
  };
  return machine;
}

// ── Stopping and watching actors ────────────────────────────────────────────────────────────

/** The internal stop every actor has: the call XState's own `stopChild` makes. */
interface Stoppable {
  _stop(): void;
}

/**
 * Stops a root actor. One that failed has stopped already, but XState leaves the children of a
 * failed actor running: they are stopped here instead, through `_stop`, the call XState's own
 * `stopChild` makes (the public `stop()` is for root actors only).
 *
 * Relies on: a failed actor's children are still running and listed in its last snapshot's
 * `children`, and each child actor has `_stop()`, which stops it (and its own children).
 */
export function stopActor(actor: AnyActorRef): void {
  const snapshot = actor.getSnapshot() as { status: string; children?: Record<string, unknown> };
  if (snapshot.status !== 'error') {
    actor.stop();
    return;
  }
  for (const child of Object.values(snapshot.children ?? {})) (child as Stoppable | undefined)?._stop();
}

/**
 * An observer that tells `host` when the actor it watches fails, naming `subject`: an object with
 * a method rather than a closure, so an actor watched for its whole life keeps one small object.
 *
 * Relies on: XState binds the methods of an observer object to it when it subscribes the object
 * (it calls them later as plain functions).
 */
export class FailureObserver<TSubject> {
  constructor(
    private readonly host: { actorFailed(subject: TSubject, error: unknown): void },
    private readonly subject: TSubject,
  ) {}

  error(error: unknown): void {
    this.host.actorFailed(this.subject, error);
  }
}

/**
 * The actor two levels above `self` (a skill child's agent: child → lifecycle → agent), which XState
 * gives no public way to reach.
 *
 * Relies on: every actor keeps its parent in `_parent`.
 */
export function grandparentOf(self: unknown): AnyActorRef | undefined {
  return (self as { _parent?: { _parent?: AnyActorRef } } | undefined)?._parent?._parent;
}
