/**
 * Extensions of the runtime's system (the model loop is one): started with the system's services,
 * told of every agent restored from a snapshot, and stopped first when the system shuts down,
 * while its agents still run.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SystemExtension, SystemServices } from '../../src/runtime/extension.js';
import { createRuntimeSystem, type AgentSystem } from '../../src/runtime/system.js';
import { createSignal, NotesAgent } from './fixtures.js';

const systems: AgentSystem[] = [];
afterEach(async () => {
  for (const system of systems.splice(0)) await system.shutdown();
});

/** A system with one extension that records what it hears. */
function recordedSystem() {
  const heard: string[] = [];
  let services: SystemServices | undefined;
  const extension: SystemExtension = {
    restored: (ref) => heard.push(`restored ${ref.id}`),
    stop: () => heard.push(`stop; running: ${['a', 'b'].filter((id) => services!.get(id) !== undefined).join(', ')}`),
  };
  const system = createRuntimeSystem({ onUnhandledError: () => {}, onUnhandledDiagnostic: () => {} }, [
    (given) => {
      services = given;
      return extension;
    },
  ]);
  systems.push(system);
  return { system, heard, services: () => services! };
}

describe('extensions of the runtime system', () => {
  it('get the system’s services: its agents, their values, and the signals they emit', async () => {
    const { system, services } = recordedSystem();
    const agent = system.spawn(NotesAgent, { id: 'a' });
    const seen: string[] = [];
    services().subscribe('seen.*', (signal) => seen.push(signal.type));
    await agent.call(createSignal('notes.add', { item: 'milk' }));
    expect(services().get('a')).toBe(agent);
    expect(services().agent('a')?.state).toEqual(agent.getSnapshot().state);
    expect(services().listening('seen.milk')).toBe(true);
    expect(services().listening('unheard.milk')).toBe(false);
    services().publish(createSignal('seen.milk'), 'a');
    expect(seen).toEqual(['seen.milk']);
    await system.stop('a');
    expect(services().agent('a')).toBeUndefined();
  });

  it('hear of each agent restored, by restore, loadAndRestore and restoreAll, and not of agents spawned', async () => {
    const { system, heard } = recordedSystem();
    const a = system.spawn(NotesAgent, { id: 'a' });
    const b = system.spawn(NotesAgent, { id: 'b', parent: 'a' });
    const [snapshotA, snapshotB] = [a.persist(), b.persist()];
    expect(heard).toEqual([]);

    await system.stop('a');
    system.restore(snapshotA);
    await system.stop('a');
    await system.loadAndRestore(snapshotA);
    await system.stop('a');
    system.restoreAll([snapshotB, snapshotA]);
    expect(heard).toEqual(['restored a', 'restored a', 'restored a', 'restored b']);
  });

  it('are stopped when the system shuts down, before its agents stop', async () => {
    const { system, heard } = recordedSystem();
    system.spawn(NotesAgent, { id: 'a' });
    system.spawn(NotesAgent, { id: 'b' });
    await system.shutdown();
    expect(heard).toEqual(['stop; running: a, b']);
  });
});
