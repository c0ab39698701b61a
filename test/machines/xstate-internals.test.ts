/**
 * What skillstate relies on in XState beyond its documented API (`machines/xstate-internals.ts`),
 * checked against the installed XState. Each test names its reliance: when an upgrade breaks
 * one, the failure says which, and which helper to rework.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assign, createActor, createMachine, fromCallback, setup, type AnyActorRef, type InspectionEvent } from 'xstate';
import { actionHandoff, FailureObserver, grandparentOf, MACHINE_SNAPSHOT_KEYS, persistedWithout, stopActor, unguardedTransition, withDirectTransitions, withSharedInitialSnapshot, XSTATE_CHECKED_VERSION } from '../../machines/xstate-internals.js';

/** The version of the xstate package this project resolves. */
function installedXStateVersion(): string {
  const entry = createRequire(import.meta.url).resolve('xstate');
  let dir = dirname(entry);
  while (!dir.endsWith('node_modules/xstate')) dir = dirname(dir);
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The message of a broken reliance: what no longer holds, and where to look. */
function broken(reliance: string, helper: string): string {
  return `XState ${installedXStateVersion()} no longer ${reliance}; rework ${helper} in machines/xstate-internals.ts`;
}

describe('the XState skillstate was checked against', () => {
  it('is the installed one', () => {
    expect(
      installedXStateVersion(),
      `machines/xstate-internals.ts was checked against xstate ${XSTATE_CHECKED_VERSION}: read each reliance it names against the installed release, then update XSTATE_CHECKED_VERSION`,
    ).toBe(XSTATE_CHECKED_VERSION);
  });
});

describe('actionHandoff', () => {
  it('an assign runs once per transition, and an event it sends its own actor is taken after that transition', () => {
    const handoff = actionHandoff<object, string>();
    const key = {};
    const seen: string[] = [];
    let assigns = 0;
    const machine = setup({ types: {} as { context: { n: number }; events: { type: 'go' } | { type: 'next' } } }).createMachine({
      context: { n: 0 },
      on: {
        go: {
          actions: [
            assign(({ context, self }) => {
              assigns++;
              handoff.put(key, `left by step ${context.n + 1}`);
              self.send({ type: 'next' });
              return { n: context.n + 1 };
            }),
            () => seen.push('after the assign, same transition'),
          ],
        },
        next: { actions: ({ context }) => seen.push(`next sees n=${context.n}, ${handoff.has(key) ? handoff.take(key)! : 'nothing'}`) },
      },
    });
    const actor = createActor(machine, { inspect: () => {} }).start();
    actor.send({ type: 'go' });
    expect(assigns, broken("runs an assign's function exactly once per transition", 'actionHandoff')).toBe(1);
    expect(seen, broken('takes an event an actor sends itself from an assign after the transition that sent it', 'actionHandoff')).toEqual([
      'after the assign, same transition',
      'next sees n=1, left by step 1',
    ]);
    expect(handoff.take(key)).toBeUndefined();
    expect(handoff.has(key)).toBe(false);
    actor.stop();
  });
});

describe('persistedWithout', () => {
  it("leaves the key out of the context of an actor's persisted snapshot, and keeps the rest", () => {
    const host = { toJSON: () => 'the host' };
    const machine = persistedWithout(
      createMachine({ types: {} as { context: { host: object; n: number } }, context: { host, n: 3 }, initial: 'idle', states: { idle: {} } }),
      'host',
    );
    const actor = createActor(machine).start();
    const persisted = actor.getPersistedSnapshot() as unknown as { context: Record<string, unknown>; value: unknown };
    expect(persisted.context, broken("calls the getPersistedSnapshot of the machine object an actor was made from, or keeps a snapshot's context under `context`", 'persistedWithout')).toEqual({ n: 3 });
    expect(persisted.value).toBe('idle');
    expect(actor.getSnapshot().context.host).toBe(host);
    actor.stop();
  });
});

describe('withSharedInitialSnapshot', () => {
  const config = {
    initial: 'idle',
    states: { idle: { tags: ['resting'], on: { go: 'busy' } }, busy: { on: { back: 'idle' } } },
  } as const;

  it('reads the state node fields it checks the machine by', () => {
    const machine = createMachine(config);
    const start = machine.root.initial.target[0];
    const shape = { start: start?.key, rootEntry: Array.isArray(machine.root.entry), startEntry: Array.isArray(start?.entry), context: machine.config.context };
    expect(shape, broken('has root.initial.target, entry lists on state nodes and config.context as read', 'withSharedInitialSnapshot')).toEqual({
      start: 'idle',
      rootEntry: true,
      startEntry: true,
      context: undefined,
    });
    const moving = createMachine({ initial: 'idle', states: { idle: { always: 'busy' }, busy: {} } });
    expect(moving.root.initial.target[0]?.always?.length, broken('lists eventless transitions in `always`', 'withSharedInitialSnapshot')).toBe(1);
  });

  it('is asked for once per actor, and actors started from one shared snapshot move each on their own', () => {
    const machine = withSharedInitialSnapshot(createMachine(config));
    let asked = 0;
    const shared = machine.getInitialSnapshot.bind(machine);
    machine.getInitialSnapshot = (scope, input) => {
      asked++;
      return shared(scope, input);
    };
    const first = createActor(machine).start();
    const second = createActor(machine).start();
    expect(asked, broken("makes each actor's initial snapshot with the machine object's getInitialSnapshot, once", 'withSharedInitialSnapshot')).toBe(2);
    type Internals = { _nodes: unknown; historyValue: unknown; tags: Set<string> };
    const a = first.getSnapshot() as unknown as Internals;
    const b = second.getSnapshot() as unknown as Internals;
    expect(a._nodes, broken('keeps the active state nodes in `_nodes`', 'withSharedInitialSnapshot')).toBeInstanceOf(Array);
    expect(a.historyValue, broken('keeps the history in `historyValue`', 'withSharedInitialSnapshot')).toBeTypeOf('object');
    expect(a.tags, broken("keeps a snapshot's tags in a Set", 'withSharedInitialSnapshot')).toBeInstanceOf(Set);
    expect(a._nodes).toBe(b._nodes);
    expect(first.getSnapshot().hasTag('resting'), broken("gives a snapshot its methods as own properties (a spread copy keeps them)", 'withSharedInitialSnapshot')).toBe(true);
    expect(first.getSnapshot().matches('idle')).toBe(true);

    // The shared parts are frozen: a transition that wrote into them would throw here.
    expect(() => first.send({ type: 'go' }), broken('leaves a snapshot unchanged when it transitions (it makes a new one)', 'withSharedInitialSnapshot')).not.toThrow();
    expect(first.getSnapshot().status).toBe('active');
    expect([first.getSnapshot().value, second.getSnapshot().value]).toEqual(['busy', 'idle']);
    first.send({ type: 'back' });
    second.send({ type: 'go' });
    expect([first.getSnapshot().value, second.getSnapshot().value, createActor(machine).start().getSnapshot().value]).toEqual(['idle', 'busy', 'idle']);
    first.stop();
    second.stop();
  });
});

describe('withDirectTransitions', () => {
  type Context = { count: number; log: string[] };
  type Event = { type: 'add'; by: number } | { type: 'go' } | { type: 'back' };
  /** A machine whose `add` is a targetless assign behind a guard that never passes, as the agent machine's items are. */
  const counter = () =>
    setup({ types: {} as { context: Context; events: Event }, guards: { never: () => false } }).createMachine({
      context: { count: 0, log: [] },
      initial: 'idle',
      states: {
        idle: {
          tags: ['resting'],
          on: {
            add: [{ guard: 'never', actions: assign({ log: ({ context }) => [...context.log, 'refused'] }) }, { actions: assign(({ context, event }) => ({ count: context.count + (event as { by: number }).by })) }],
            go: 'busy',
          },
        },
        busy: { on: { add: { actions: assign(({ context, event }) => ({ count: context.count + 10 * (event as { by: number }).by })) }, back: 'idle' } },
      },
    });

  /** What an actor and its inspectors show, step by step, for `events`. */
  function run(machine: ReturnType<typeof counter>, events: Event[]) {
    const seen: unknown[] = [];
    const inspect = (event: InspectionEvent) => {
      if (event.type !== '@xstate.microstep' && event.type !== '@xstate.snapshot') return;
      const snapshot = event.snapshot as unknown as { value: unknown; context: unknown };
      const transitions = (event as { _transitions?: Array<{ eventType: string; source: { key: string } }> })._transitions?.map((t) => `${t.source.key}:${t.eventType}`);
      seen.push({ type: event.type, event: event.event.type, value: snapshot.value, context: snapshot.context, transitions });
    };
    const actor = createActor(machine, { inspect }).start();
    const snapshots: unknown[] = [];
    const keys: string[][] = [];
    for (const event of events) {
      actor.send(event);
      keys.push(Object.keys(actor.getSnapshot()));
      const snapshot = actor.getSnapshot() as unknown as { _nodes: Array<{ id: string }>; historyValue: unknown; tags: Set<string>; children: unknown };
      snapshots.push({
        value: actor.getSnapshot().value,
        context: actor.getSnapshot().context,
        status: actor.getSnapshot().status,
        nodes: snapshot._nodes.map((node) => node.id),
        history: snapshot.historyValue,
        tags: [...snapshot.tags],
        children: snapshot.children,
        resting: actor.getSnapshot().hasTag('resting'),
        matches: actor.getSnapshot().matches('idle'),
        canGo: actor.getSnapshot().can({ type: 'go' }),
        persisted: actor.getPersistedSnapshot(),
      });
    }
    return { snapshots, seen, keys };
  }

  const events: Event[] = [{ type: 'add', by: 1 }, { type: 'add', by: 2 }, { type: 'go' }, { type: 'add', by: 3 }, { type: 'back' }, { type: 'add', by: 4 }];

  it("gives the snapshots and inspection events XState's own transitions give", () => {
    const plain = run(counter(), events);
    let taken = 0;
    const machine = counter();
    const add = unguardedTransition(machine, 'idle', 'add');
    const direct = run(
      withDirectTransitions(machine, (snapshot, event) => {
        if (snapshot.value !== 'idle' || event.type !== 'add') return undefined;
        taken++;
        return { context: { ...snapshot.context, count: snapshot.context.count + event.by }, transition: add };
      }),
      events,
    );
    expect(taken).toBe(3);
    expect(direct.keys, broken('makes its snapshots with the same fields in the same order at every step', 'withDirectTransitions')).toEqual(plain.keys);
    expect(direct.snapshots, broken('makes, for a targetless assign, the current snapshot with the new context (same nodes, value, tags, children, history; methods as own properties)', 'withDirectTransitions')).toEqual(plain.snapshots);
    expect(direct.seen, broken('reports a targetless transition as one @xstate.microstep naming the event, the snapshot and the transition, then @xstate.snapshot', 'withDirectTransitions')).toEqual(plain.seen);
  });

  it('makes machine snapshots with the fields it copies, in their order', () => {
    const snapshot = createActor(counter()).start().getSnapshot();
    expect(Object.keys(snapshot), broken(`makes a machine snapshot of exactly ${MACHINE_SNAPSHOT_KEYS.join(', ')}, in that order`, 'MACHINE_SNAPSHOT_KEYS and withContext')).toEqual([...MACHINE_SNAPSHOT_KEYS]);
  });

  it('keeps every field of a snapshot with fields it does not know (another XState release)', () => {
    const machine = counter();
    const add = unguardedTransition(machine, 'idle', 'add');
    withDirectTransitions(machine, (snapshot) => ({ context: { ...snapshot.context, count: snapshot.context.count + 1 }, transition: add }));
    const actor = createActor(machine).start();
    const unknown = { ...actor.getSnapshot(), fromANewerRelease: 'kept' };
    const scope = { self: actor, system: { _sendInspectionEvent: () => {} } } as unknown as Parameters<typeof machine.transition>[2];
    const next = machine.transition(unknown, { type: 'add', by: 1 }, scope) as unknown as Record<string, unknown>;
    expect(next.fromANewerRelease).toBe('kept');
    expect((next.context as Context).count).toBe(1);
    expect(Object.keys(next)).toEqual(Object.keys(unknown));
  });

  it('leaves to XState every event it is not given a context for', () => {
    const machine = counter();
    let asked = 0;
    const direct = run(
      withDirectTransitions(machine, () => {
        asked++;
        return undefined;
      }),
      events,
    );
    expect(asked, broken("takes each event through the machine object's transition", 'withDirectTransitions')).toBe(events.length);
    expect(direct).toEqual(run(counter(), events));
  });

  it('refuses a machine with eventless transitions, and a state whose last candidate has a guard', () => {
    const moving = createMachine({ initial: 'a', states: { a: { always: { target: 'b', guard: () => false } }, b: {} } });
    expect(() => withDirectTransitions(moving, () => undefined)).toThrow("state 'a' has eventless transitions");
    const nested = createMachine({ initial: 'a', states: { a: { initial: 'x', states: { x: { always: { target: 'y', guard: () => false } }, y: {} } } } });
    expect(() => withDirectTransitions(nested, () => undefined)).toThrow("state 'x' has eventless transitions");
    const guarded = setup({ guards: { g: () => true } }).createMachine({ initial: 'a', states: { a: { on: { e: { guard: 'g', actions: () => {} } } } } });
    expect(() => unguardedTransition(guarded, 'a', 'e')).toThrow("state 'a' has no unguarded transition for 'e'");
  });
});

describe('stopActor', () => {
  /** A root machine with a child machine, that fails on `fail`. */
  function parentWithChild() {
    const child = createMachine({ initial: 'running', states: { running: {} } });
    return setup({ actors: { child } }).createMachine({
      invoke: { src: 'child', id: 'kid' },
      on: {
        fail: {
          actions: () => {
            throw new Error('the parent fails');
          },
        },
      },
    });
  }

  it("stops the children a failed actor leaves running, through each child's _stop", () => {
    const parent = createActor(parentWithChild());
    parent.subscribe({ error: () => {} });
    parent.start();
    const kid = parent.getSnapshot().children.kid as AnyActorRef;
    parent.send({ type: 'fail' });
    expect(parent.getSnapshot().status).toBe('error');
    expect(parent.getSnapshot().children.kid, broken("lists a failed actor's children in its last snapshot", 'stopActor')).toBe(kid);
    expect(
      kid.getSnapshot().status,
      `XState ${installedXStateVersion()} now stops the children of a failed actor itself: stopActor in machines/xstate-internals.ts can leave them to it`,
    ).toBe('active');
    expect(typeof (kid as unknown as { _stop?: unknown })._stop, broken('gives every actor a `_stop` method', 'stopActor')).toBe('function');
    stopActor(parent);
    expect(kid.getSnapshot().status, broken("stops a child with its `_stop` method", 'stopActor')).toBe('stopped');
  });

  it('stops an actor that has not failed, and its children with it', () => {
    const parent = createActor(parentWithChild()).start();
    const kid = parent.getSnapshot().children.kid as AnyActorRef;
    stopActor(parent);
    expect([parent.getSnapshot().status, kid.getSnapshot().status]).toEqual(['stopped', 'stopped']);
  });
});

describe('FailureObserver', () => {
  it('is told of the failure with its own fields in reach', () => {
    const failures: Array<[string, string]> = [];
    const host = { actorFailed: (subject: string, error: unknown) => failures.push([subject, (error as Error).message]) };
    const actor = createActor(createMachine({ on: { fail: { actions: () => { throw new Error('boom'); } } } }));
    actor.subscribe(new FailureObserver(host, 'agent-1'));
    actor.start();
    expect(() => actor.send({ type: 'fail' }), broken("calls an observer object's error with the object as `this`", 'FailureObserver')).not.toThrow();
    expect(failures).toEqual([['agent-1', 'boom']]);
  });
});

describe('grandparentOf', () => {
  it("reaches the actor two levels up from a child's self", () => {
    let reached: AnyActorRef | undefined;
    const grandchild = fromCallback(({ self }) => {
      reached = grandparentOf(self);
    });
    const middle = setup({ actors: { grandchild } }).createMachine({ invoke: { src: 'grandchild' } });
    const root = createActor(setup({ actors: { middle } }).createMachine({ invoke: { src: 'middle' } })).start();
    expect(reached, broken('keeps an actor\'s parent in `_parent`', 'grandparentOf')).toBe(root);
    root.stop();
  });
});
