/**
 * Mounting and unmounting never do nothing silently: unmounting a skill that is not mounted
 * changes nothing and says so (`not_mounted`), and mounting a mounted skill with another config
 * is refused (`already_mounted`) with words that say how to reconfigure it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentSystem, Diagnostic } from '../../src/index.js';
import { mountSkill, unmountSkill } from '../../src/index.js';
import { defineAgent, defineAction, defineSkill, NotesAgent, notebook, quietSystem, result, z } from './fixtures.js';

let system: AgentSystem | undefined;
afterEach(async () => {
  await system?.shutdown();
  system = undefined;
});

const limits = defineSkill({ name: 'limits', configSchema: z.object({ max: z.number().default(3), tags: z.array(z.string()).default([]) }), schema: z.object({ used: z.number().default(0) }) });

describe('unmounting a skill that is not mounted says so', () => {
  const CASES: [string, string, string][] = [
    ['a name nobody knows', 'ghost', "unmount of skill 'ghost' changed nothing: no skill of that name is mounted or known to its definition"],
    ["a skill of the agent's definition, already unmounted", 'notebook', "unmount of skill 'notebook' changed nothing: it is not mounted"],
  ];
  it.each(CASES)('%s: changed false, a not_mounted warning in the report and to onDiagnostic', async (_name, skill, message) => {
    system = quietSystem();
    const heard: Diagnostic[] = [];
    system.onDiagnostic((diagnostic) => heard.push(diagnostic));
    const agent = system.spawn(NotesAgent, { id: 'n' });
    if (skill === 'notebook') await agent.unmount('notebook');
    heard.length = 0;
    const report = await agent.unmount(skill);
    const expected = { level: 'warning', code: 'not_mounted', skill, message: `agent 'n': ${message}` };
    expect(report).toEqual({ skill, changed: false, effects: [], diagnostics: [expected] });
    expect(heard).toEqual([expected]);
  });

  it('unmounting a mounted skill reports no diagnostic', async () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    await expect(agent.unmount('notebook')).resolves.toMatchObject({ changed: true, diagnostics: [] });
  });
});

describe('mounting a mounted skill with another config is refused; the same config, or none, changes nothing', () => {
  const CASES: [string, Record<string, unknown> | undefined, 'same' | 'refused'][] = [
    ['no config', undefined, 'same'],
    ['the same config', { max: 5 }, 'same'],
    ['the same config, defaults spelt out', { max: 5, tags: [] }, 'same'],
    ['a different value', { max: 6 }, 'refused'],
    ['a field back to its default', {}, 'refused'],
    ['a different array', { max: 5, tags: ['x'] }, 'refused'],
    ['a config the schema refuses', { max: 'many' }, 'refused'],
  ];
  it.each(CASES)('%s', async (_name, config, outcome) => {
    system = quietSystem();
    const agent = system.spawn(defineAgent({ name: 'holder' }), { id: 'h' });
    await agent.mount(limits, { max: 5 });
    const mounting = config === undefined ? agent.mount(limits) : agent.mount(limits, config as never);
    if (outcome === 'same') await expect(mounting).resolves.toMatchObject({ changed: false });
    else {
      await expect(mounting).rejects.toMatchObject({
        code: 'already_mounted',
        skill: 'limits',
        message: expect.stringContaining("skill 'limits' is already mounted on agent 'h'") as unknown,
      });
      await mounting.catch((error: Error) => expect(error.message).toContain('unmount it and mount it again to change it'));
    }
    expect(agent.getSnapshot().mounted).toEqual([{ name: 'limits', stateKey: 'limits', config: { max: 5, tags: [] } }]);
  });

  it('the pure mountSkill refuses the same way; the agent value is unchanged', () => {
    const Holder = defineAgent({ name: 'holder', skills: [[limits, { max: 5 }]] });
    const agent = Holder.new();
    expect(mountSkill(agent, limits, { max: 6 })).toMatchObject({ ok: false, error: { code: 'already_mounted', skill: 'limits' } });
    expect(mountSkill(agent, limits, { max: 5 })).toMatchObject({ ok: true, agent });
    expect(unmountSkill(agent, 'ghost')).toMatchObject({ ok: true, agent });
  });

  it("an action's result that mounts a mounted skill with another config fails the step", async () => {
    const remount = defineAction({ name: 'remount', description: 'mounts limits again', input: z.object({}), run: () => result('ok', { mount: [[limits, { max: 9 }]] }) });
    system = quietSystem();
    const agent = system.spawn(defineAgent({ name: 'holder', actions: [remount], skills: [[limits, { max: 5 }]] }));
    await expect(agent.run({ action: 'remount', params: {} })).rejects.toMatchObject({ code: 'already_mounted' });
    expect(agent.getSnapshot().mounted[0]!.config).toEqual({ max: 5, tags: [] });
  });

  it('a mounted notebook mounted again by value, without config, still changes nothing', async () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    await expect(agent.mount(notebook)).resolves.toMatchObject({ changed: false, effects: [], diagnostics: [] });
  });
});
