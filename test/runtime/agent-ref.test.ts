/**
 * An agent has one ref for its whole run: `spawn`, `get`, `list`, `restore` and `restoreAll`
 * hand out the same object, and what it shows is read from the running agent each time.
 */
import { describe, expect, it } from 'vitest';
import { createSignal, itemsOf, NotesAgent, systemPerTest } from './fixtures.js';

const systems = systemPerTest();

describe('the ref users hold', () => {
  it('is one object per agent, whichever way it is reached', () => {
    const system = systems.start();
    const ref = system.spawn(NotesAgent, { id: 'desk' });
    const other = system.spawn(NotesAgent, { id: 'shelf', parent: ref });
    expect(system.get('desk')).toBe(ref);
    expect(system.get('desk')).toBe(system.get('desk'));
    expect(system.list()).toEqual([ref, other]);
    expect(system.list()[0]).toBe(ref);
    expect(JSON.stringify(ref)).toBe('{"agent":"desk"}');
  });

  it('restored agents are reached by the refs restore and restoreAll return', async () => {
    const system = systems.start({ definitions: [NotesAgent] });
    const parent = system.spawn(NotesAgent, { id: 'parent' });
    const child = system.spawn(NotesAgent, { id: 'child', parent });
    await child.call(createSignal('notes.add_now', { item: 'kept' }));
    const snapshots = system.persistAll();
    await parent.stop();
    // Children listed first: restoreAll restores parents first and returns them in that order.
    const restored = system.restoreAll([...snapshots].reverse());
    expect(restored.map((ref) => ref.id)).toEqual(['parent', 'child']);
    expect(system.get('parent')).toBe(restored[0]);
    expect(system.get('child')).toBe(restored[1]);
    expect(itemsOf(restored[1]!)).toEqual(['kept']);
    await restored[0]!.stop();
    const alone = system.restore(snapshots[0]!);
    expect(system.get('parent')).toBe(alone);
  });

  it('shows the agent as of its last finished step, read from the running agent each time', async () => {
    const system = systems.start();
    const ref = system.spawn(NotesAgent, { id: 'desk' });
    const before = ref.getSnapshot();
    await ref.call(createSignal('notes.add_now', { item: 'one' }));
    expect(before.state).toEqual({ notebook: { items: [] } });
    expect(ref.getSnapshot().state).toEqual({ notebook: { items: ['one'] } });
    expect(ref.persist().agent.state).toEqual({ notebook: { items: ['one'] } });
    expect(ref.toolset().tools.length).toBeGreaterThan(0);
    await ref.unmount('notebook');
    expect(ref.toolset().tools).toEqual([]);
    expect(ref.getSnapshot().mounted).toEqual([]);
  });
});
