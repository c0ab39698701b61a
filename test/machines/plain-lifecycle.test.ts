/**
 * The lifecycle of a skill without children starts every actor from one shared initial snapshot.
 * These tests hold it to what XState itself would have worked out, and show that actors started
 * from it stay independent of each other.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createActor, createMachine, type AnyActorRef } from 'xstate';
import { lifecycleMachines, type LifecycleState } from '../../machines/skill-lifecycle.js';
import { withSharedInitialSnapshot } from '../../machines/xstate-internals.js';
import type { AgentSystem } from '../../src/index.js';
import { NotesAgent, quietSystem } from '../runtime/fixtures.js';

const starts: LifecycleState[] = ['active', 'inactive', 'failed'];

let system: AgentSystem | undefined;
afterEach(async () => {
  await system?.shutdown();
  system = undefined;
});

describe('the plain lifecycle machine', () => {
  it.each(starts)('starts %s with the snapshot XState works out for the same machine', (start) => {
    const shared = lifecycleMachines.plain[start];
    // The same configuration, as XState makes it: every actor computes its own initial snapshot.
    const computed = createMachine(shared.config);
    for (let round = 0; round < 3; round++) {
      const ours = createActor(shared).start();
      const theirs = createActor(computed).start();
      expect(ours.getSnapshot().value).toBe(start);
      expect(ours.getPersistedSnapshot()).toEqual(theirs.getPersistedSnapshot());
      expect([...ours.getSnapshot().tags]).toEqual([...theirs.getSnapshot().tags]);
      ours.stop();
      theirs.stop();
    }
  });

  it('gives each actor its own context and children, and moves each on its own', () => {
    const machine = lifecycleMachines.plain.active;
    const first = createActor(machine).start();
    const second = createActor(machine).start();
    expect(first.getSnapshot().context).not.toBe(second.getSnapshot().context);
    expect(first.getSnapshot().children).not.toBe(second.getSnapshot().children);

    first.send({ type: 'deactivate' });
    expect(first.getSnapshot().value).toBe('inactive');
    expect(second.getSnapshot().value).toBe('active');
    expect(second.getSnapshot().can({ type: 'deactivate' })).toBe(true);
    expect(second.getSnapshot().can({ type: 'activate' })).toBe(false);

    // A third actor started after the others moved starts where the machine starts.
    const third = createActor(machine).start();
    expect(third.getSnapshot().value).toBe('active');
    first.send({ type: 'activate' });
    second.send({ type: 'deactivate' });
    expect([first.getSnapshot().value, second.getSnapshot().value, third.getSnapshot().value]).toEqual(['active', 'inactive', 'active']);
    for (const actor of [first, second, third]) actor.stop();
  });

  it('shares only what no actor can change: the shared parts are frozen, the tags refuse changes', () => {
    const machine = lifecycleMachines.plain.inactive;
    const first = createActor(machine).start();
    const second = createActor(machine).start();
    const snapshot = first.getSnapshot();
    expect(() => {
      (snapshot.historyValue as Record<string, unknown>).x = [];
    }).toThrow(TypeError);
    expect(() => (snapshot as unknown as { _nodes: unknown[] })._nodes.push(undefined)).toThrow(TypeError);
    expect(() => snapshot.tags.add('busy' as never)).toThrow(TypeError);
    expect(() => snapshot.tags.clear()).toThrow(TypeError);
    expect(second.getSnapshot().hasTag('busy' as never)).toBe(false);
    expect(second.getPersistedSnapshot()).toEqual(createActor(createMachine(machine.config)).start().getPersistedSnapshot());
    first.stop();
    second.stop();
  });

  it('refuses a machine whose start could differ between actors', () => {
    const states = { idle: { on: { go: 'busy' } }, busy: {} };
    expect(() => withSharedInitialSnapshot(createMachine({ id: 'counted', context: { n: 0 }, initial: 'idle', states }))).toThrow(
      "machine 'counted' cannot share its initial snapshot: its start differs between actors",
    );
    expect(() => withSharedInitialSnapshot(createMachine({ id: 'greets', initial: 'idle', states: { ...states, idle: { entry: () => {}, on: { go: 'busy' } } } }))).toThrow(
      /cannot share its initial snapshot/,
    );
    expect(() => withSharedInitialSnapshot(createMachine({ id: 'moves', initial: 'idle', states: { ...states, idle: { always: 'busy' } } }))).toThrow(/cannot share/);
    expect(() => withSharedInitialSnapshot(createMachine({ id: 'plain', initial: 'idle', states }))).not.toThrow();
  });

  it('keeps the lifecycles of agents of one definition apart', async () => {
    system = quietSystem();
    const first = system.spawn(NotesAgent, { id: 'first' });
    const second = system.spawn(NotesAgent, { id: 'second' });
    const a: AnyActorRef = first.actor.system.get('first/skills/notebook');
    const b: AnyActorRef = second.actor.system.get('second/skills/notebook');
    expect(a).not.toBe(b);
    expect(a.getSnapshot().value).toBe('active');

    await first.unmount('notebook');
    expect(a.getSnapshot().value).toBe('inactive');
    expect(b.getSnapshot().value).toBe('active');
    expect(first.getSnapshot().lifecycles).toEqual({ notebook: 'inactive' });
    expect(second.getSnapshot().lifecycles).toEqual({ notebook: 'active' });

    await first.mount('notebook');
    expect([a.getSnapshot().value, b.getSnapshot().value]).toEqual(['active', 'active']);
  });
});
