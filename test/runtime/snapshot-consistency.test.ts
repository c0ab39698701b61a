/**
 * A snapshot is consistent or refused: every key of its state is a field of the agent's schema
 * or the slice of a skill in its mounted list. A slice whose skill is not mounted (the list was
 * edited or emptied while the slices hold data) and a key nothing owns are refused with
 * `invalid_snapshot` naming the key — never dropped without a word.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentSnapshot, AgentSystem } from '../../src/index.js';
import { RuntimeError } from '../../src/index.js';
import { createSignal, defineAgent, defineSkill, NotesAgent, quietSystem, thrown, z } from './fixtures.js';

let system: AgentSystem | undefined;
afterEach(async () => {
  await system?.shutdown();
  system = undefined;
});

const tally = defineSkill({ name: 'tally', schema: z.object({ n: z.number().default(0) }) });
const keyed = defineSkill({ name: 'keyed', stateKey: 'k_slot', schema: z.object({ v: z.string().default('') }) });

/** A snapshot of a notes agent holding data, with `tally` and `keyed` mounted at run time. */
async function saved(): Promise<AgentSnapshot> {
  const source = quietSystem({ skills: [tally, keyed] });
  const agent = source.spawn(NotesAgent, { id: 'n' });
  await agent.call(createSignal('notes.add_now', { item: 'kept' }));
  await agent.mount(tally);
  await agent.mount(keyed);
  const snapshot = agent.persist();
  await source.shutdown();
  return snapshot;
}

function edited(snapshot: AgentSnapshot, edit: (agent: AgentSnapshot['agent']) => void): AgentSnapshot {
  const copy = structuredClone(snapshot);
  edit(copy.agent);
  return copy;
}

describe('an inconsistent snapshot is refused with invalid_snapshot naming the key', () => {
  const CASES: [string, (agent: AgentSnapshot['agent']) => void, { subject: string; skill?: string }][] = [
    ['the mounted list emptied while the slices hold data', (agent) => (agent.mounted = []), { subject: 'notebook', skill: 'notebook' }],
    ["a run-time skill's record removed, its slice kept", (agent) => (agent.mounted = agent.mounted.filter((record) => record.name !== 'tally')), { subject: 'tally', skill: 'tally' }],
    ['a skill with its own state key removed from the list', (agent) => (agent.mounted = agent.mounted.filter((record) => record.name !== 'keyed')), { subject: 'k_slot' }],
    ['a key no field and no skill owns', (agent) => (agent.state.ghost = { x: 1 }), { subject: 'ghost' }],
  ];
  it.each(CASES)('%s', async (_name, edit, named) => {
    const snapshot = edited(await saved(), edit);
    system = quietSystem({ definitions: [NotesAgent], skills: [tally, keyed] });
    const error = thrown(() => system!.restore(snapshot));
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({ code: 'invalid_snapshot', ...named, message: expect.stringContaining(`'${named.subject}'`) });
    expect(system.list()).toEqual([]);
  });

  it('the pure restore refuses the same, with the same code', async () => {
    const snapshot = edited(await saved(), (agent) => (agent.mounted = []));
    expect(NotesAgent.restore(snapshot.agent)).toMatchObject({ ok: false, error: { code: 'invalid_snapshot', subject: 'notebook', skill: 'notebook' } });
  });

  it('a consistent snapshot restores whole', async () => {
    system = quietSystem({ definitions: [NotesAgent], skills: [tally, keyed] });
    const agent = system.restore(await saved());
    expect(agent.getSnapshot().state).toEqual({ notebook: { items: ['kept'] }, tally: { n: 0 }, k_slot: { v: '' } });
  });

  it('a mounted skill whose slice is missing gets its defaults: nothing is dropped', async () => {
    const snapshot = edited(await saved(), (agent) => delete agent.state.tally);
    system = quietSystem({ definitions: [NotesAgent], skills: [tally, keyed] });
    expect(system.restore(snapshot).getSnapshot().state).toMatchObject({ tally: { n: 0 } });
  });

  it("the agent's own fields restore; the slice of one of its definition's skills that is not mounted is refused, naming the skill", () => {
    const Desk = defineAgent({ name: 'desk_agent', schema: z.object({ title: z.string().default('') }), skills: [tally] });
    system = quietSystem({ definitions: [Desk] });
    const snapshot = system.spawn(Desk, { id: 'o' }).persist();
    const titled = { ...snapshot, id: 'o2', agent: { ...snapshot.agent, id: 'o2', state: { ...snapshot.agent.state, title: 'kept' } } };
    expect(system.restore(titled).getSnapshot().state).toEqual({ title: 'kept', tally: { n: 0 } });
    const orphan = { ...snapshot, id: 'o3', agent: { ...snapshot.agent, id: 'o3', mounted: [] } };
    expect(thrown(() => system!.restore(orphan))).toMatchObject({ code: 'invalid_snapshot', subject: 'tally', skill: 'tally' });
  });
});
