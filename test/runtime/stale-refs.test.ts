/**
 * A ref belongs to one incarnation of an agent, not to its id: after `stop()`, a new agent
 * spawned (or restored) with the same id is out of the old ref's reach. Every use of the old
 * ref is `agent_stopped`, and its `stop()` leaves the new agent running.
 */
import { describe, expect, it } from 'vitest';
import type { AgentRef, AgentSystem } from '../../src/index.js';
import { createSignal, itemsOf, NotesAgent, notebook, systemPerTest, thrown } from './fixtures.js';

const systems = systemPerTest();
let system: AgentSystem | undefined;

/** Every way to use a ref, as a promise (send's throw included). */
const USES: [string, (ref: AgentRef<object>) => Promise<unknown>][] = [
  ['send', async (ref) => ref.send(createSignal('notes.add_now', { item: 'old' }))],
  ['call', (ref) => ref.call(createSignal('notes.add_now', { item: 'old' }))],
  ['run', (ref) => ref.run({ action: 'append_now', params: { item: 'old' } })],
  ['callTool', (ref) => ref.callTool('append_now', { item: 'old' })],
  ['mount', (ref) => ref.mount(notebook)],
  ['unmount', (ref) => ref.unmount('notebook')],
  ['stop', (ref) => ref.stop()],
];

describe('a stale ref stays dead when its id is reused', () => {
  const reuses: [string, (system: AgentSystem, old: AgentRef<object>) => AgentRef<object>][] = [
    ['spawned again', (sys) => sys.spawn(NotesAgent, { id: 'desk' })],
    ['restored from its own snapshot', (sys, old) => sys.restore(old.persist())],
  ];
  for (const [how, reuse] of reuses) {
    it.each(USES)(`${how}: %s on the old ref is agent_stopped and leaves the new agent alone`, async (_use, use) => {
      system = systems.start({ definitions: [NotesAgent] });
      const old = system.spawn(NotesAgent, { id: 'desk' });
      await old.call(createSignal('notes.add_now', { item: 'first' }));
      const snapshot = old.persist();
      await old.stop();
      const fresh = how === 'spawned again' ? reuse(system, old) : system.restore(snapshot);
      await expect(use(old)).rejects.toMatchObject({ code: 'agent_stopped', message: expect.stringContaining("agent 'desk' is stopped") });
      expect(fresh.getSnapshot().status).toBe('idle');
      expect(system.get('desk')).toBe(fresh);
      await expect(fresh.call(createSignal('notes.add_now', { item: 'new' }))).resolves.toMatchObject({ count: expect.any(Number) });
      expect(itemsOf(fresh).at(-1)).toBe('new');
      expect(itemsOf(fresh)).not.toContain('old');
    });
  }

  it('the old ref throws agent_stopped from send synchronously, as for any stopped agent', async () => {
    system = systems.start();
    const old = system.spawn(NotesAgent, { id: 'desk' });
    await old.stop();
    system.spawn(NotesAgent, { id: 'desk' });
    expect(thrown(() => old.send(createSignal('notes.list')))).toMatchObject({ code: 'agent_stopped' });
  });

  it("the old ref's view stays the stopped agent's, not the new one's", async () => {
    system = systems.start();
    const old = system.spawn(NotesAgent, { id: 'desk' });
    await old.call(createSignal('notes.add_now', { item: 'kept' }));
    await old.stop();
    const fresh = system.spawn(NotesAgent, { id: 'desk' });
    expect(old.getSnapshot().status).toBe('stopped');
    expect(itemsOf(old)).toEqual(['kept']);
    expect(itemsOf(fresh)).toEqual([]);
  });

  it('stopping through the system by id stops the agent that holds the id now', async () => {
    system = systems.start();
    const old = system.spawn(NotesAgent, { id: 'desk' });
    await old.stop();
    const fresh = system.spawn(NotesAgent, { id: 'desk' });
    await system.stop('desk');
    expect(fresh.getSnapshot().status).toBe('stopped');
  });
});
