/**
 * Options are checked where they are given: a call timeout is a number of milliseconds above 0
 * (or Infinity), and an agent id has no '/' — the character that separates the ids of an
 * agent's skill lifecycles (`<agent>/skills/<skill>`) in XState's system.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentSystem } from '../../src/index.js';
import { RuntimeError } from '../../src/index.js';
import { createSignal, itemsOf, NotesAgent, quietSystem, thrown } from './fixtures.js';

let system: AgentSystem | undefined;
afterEach(async () => {
  await system?.shutdown();
  system = undefined;
});

describe('a call timeout must be a number of milliseconds above 0, or Infinity', () => {
  const BAD: [string, unknown, string][] = [
    ['0', 0, 'got 0'],
    ['-1', -1, 'got -1'],
    ['NaN', Number.NaN, 'got NaN'],
    ['-Infinity', -Infinity, 'got -Infinity'],
    ['a string', '100', 'got string'],
    ['null', null, 'got object'],
  ];
  const ENTRIES: [string, (agent: ReturnType<AgentSystem['spawn']>, timeout: unknown) => Promise<unknown>][] = [
    ['call', (agent, timeout) => agent.call(createSignal('notes.add_now', { item: 'x' }), { timeout: timeout as number })],
    ['run', (agent, timeout) => agent.run({ action: 'append_now', params: { item: 'x' } }, { timeout: timeout as number })],
    ['callTool', (agent, timeout) => agent.callTool('append_now', { item: 'x' }, { timeout: timeout as number })],
  ];
  for (const [entry, use] of ENTRIES) {
    it.each(BAD)(`${entry} with timeout %s is refused with invalid_options, and nothing runs`, async (_name, timeout, got) => {
      system = quietSystem();
      const agent = system.spawn(NotesAgent, { id: 'n' });
      const error = await use(agent, timeout).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(RuntimeError);
      expect(error).toMatchObject({ code: 'invalid_options', subject: 'timeout', message: expect.stringContaining(`timeout must be a number of milliseconds above 0, or Infinity for none; ${got}`) });
      expect(itemsOf(agent)).toEqual([]);
      await expect(agent.call(createSignal('notes.list'))).resolves.toEqual({ items: [] });
    });
  }

  it.each([
    ['1', 1],
    ['0.5', 0.5],
    ['Infinity', Infinity],
  ])('timeout %s is accepted', async (_name, timeout) => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    await expect(agent.call(createSignal('notes.add_now', { item: 'x' }), { timeout })).resolves.toEqual({ count: 1 });
  });

  it.each([
    ['0', 0],
    ['NaN', Number.NaN],
  ])('a system callTimeout of %s is refused when the system is made', (_name, callTimeout) => {
    expect(thrown(() => quietSystem({ callTimeout }))).toMatchObject({ code: 'invalid_options', message: expect.stringContaining('callTimeout must be a number of milliseconds above 0') });
  });
});

describe("an agent id must not contain '/'", () => {
  it.each(['desk/skills/notebook', 'a/b', '/', 'desk/'])("spawn with id '%s' is refused with invalid_agent, naming it", (id) => {
    system = quietSystem();
    const error = thrown(() => system!.spawn(NotesAgent, { id }));
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({ code: 'invalid_agent', subject: id, message: expect.stringContaining(`agent id '${id}' contains '/'`) });
    expect(system.list()).toEqual([]);
  });

  it.each([
    ['U+0000', 'nul\0x', 'U+0000'],
    ['a lone high surrogate', 'a\uD83Db', 'lone surrogate'],
    ['a lone low surrogate', 'a\uDE00', 'lone surrogate'],
  ])('spawn with an id holding %s is refused with invalid_agent (a store would bring it back under another id)', (_what, id, said) => {
    system = quietSystem();
    expect(thrown(() => system!.spawn(NotesAgent, { id }))).toMatchObject({ code: 'invalid_agent', subject: id, message: expect.stringContaining(said) });
    expect(system.list()).toEqual([]);
    expect(system.spawn(NotesAgent, { id: 'emoji-\uD83D\uDE00' }).id).toBe('emoji-😀');
  });

  it("the id of a skill lifecycle cannot be taken by an agent: system.get finds the agent, never a lifecycle", () => {
    system = quietSystem();
    system.spawn(NotesAgent, { id: 'desk' });
    expect(thrown(() => system!.spawn(NotesAgent, { id: 'desk/skills/notebook' }))).toMatchObject({ code: 'invalid_agent' });
    expect(system.get('desk/skills/notebook')).toBeUndefined();
    expect(system.get('desk')?.id).toBe('desk');
  });

  it("restore of a snapshot whose id contains '/' is refused with invalid_snapshot", () => {
    system = quietSystem({ definitions: [NotesAgent] });
    const snapshot = system.spawn(NotesAgent, { id: 'desk' }).persist();
    const forged = { ...snapshot, id: 'desk/skills/x', agent: { ...snapshot.agent, id: 'desk/skills/x' } };
    expect(thrown(() => system!.restore(forged))).toMatchObject({ code: 'invalid_snapshot', message: expect.stringContaining("contains '/'") });
  });

  it.each(['desk-1', 'desk:1', 'desk.skills.x', 'a b'])("id '%s' is fine", (id) => {
    system = quietSystem();
    expect(system.spawn(NotesAgent, { id }).id).toBe(id);
  });
});
