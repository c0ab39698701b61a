/** allowed-tools: while a document skill that lists them is active, only those of the agent's tools run. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cmd, createSkillTools, defineAction, defineAgent, discoverSkills, toolsForAgent, unmountSkill } from '../../src/index.js';
import { simpleSkill, tree } from './tree.js';

const add = defineAction({ name: 'add', description: 'Adds', input: z.object({ a: z.number(), b: z.number() }), run: ({ a, b }) => a + b });
const wipe = defineAction({ name: 'wipe_disk', description: 'Deletes everything', input: z.object({}), run: () => 'wiped' });
const gitLog = defineAction({ name: 'git_log', description: 'Shows history', input: z.object({}), run: () => 'log' });

async function agentWith(allowed: string) {
  const root = await tree({ 'careful/SKILL.md': simpleSkill('careful', `allowed-tools: ${allowed}`), 'free/SKILL.md': simpleSkill('free') });
  const registry = await discoverSkills({ extra: [root] });
  const Agent = defineAgent({ name: 'worker', actions: [add, wipe, gitLog], skills: [createSkillTools(registry)], registry });
  return Agent.new({ id: 'w1' });
}

const ok = (outcome: Awaited<ReturnType<typeof cmd>>) => outcome.results[0]!;

describe('allowed-tools', () => {
  it("restricts the agent's actions and offered tools while the skill is active, and lifts it when unmounted", async () => {
    const agent = await agentWith('add Bash(git:*) git_*');
    expect(ok(await cmd(agent, { action: 'wipe_disk' }))).toMatchObject({ ok: true, output: 'wiped' });
    const loaded = (await cmd(agent, { action: 'load_skill', params: { name: 'careful' } })).agent;
    const refused = ok(await cmd(loaded, { action: 'wipe_disk' }));
    expect(refused).toMatchObject({ ok: false, error: { code: 'action_not_allowed', details: { restrictedBy: ['careful'] } } });
    expect(!refused.ok && refused.error.message).toBe("action 'wipe_disk' may not run on agent 'w1' while skill 'careful' is active: its allowed tools leave it out");
    expect(ok(await cmd(loaded, { action: 'add', params: { a: 1, b: 2 } }))).toMatchObject({ ok: true, output: 3 });
    expect(ok(await cmd(loaded, { action: 'git_log' }))).toMatchObject({ ok: true, output: 'log' });
    expect(ok(await cmd(loaded, { action: 'list_skills' })).ok).toBe(true);
    expect(toolsForAgent(loaded).map((tool) => tool.function.name).sort()).toEqual(['add', 'git_log', 'list_skills', 'load_skill', 'read_skill_resource']);
    const unmounted = unmountSkill(loaded, 'careful');
    if (!unmounted.ok) throw new Error(unmounted.error.message);
    expect(ok(await cmd(unmounted.agent, { action: 'wipe_disk' })).ok).toBe(true);
  });

  it('a skill without allowed-tools restricts nothing; comma-separated lists are read', async () => {
    const agent = await agentWith('"add, git_log"');
    const free = (await cmd(agent, { action: 'load_skill', params: { name: 'free' } })).agent;
    expect(ok(await cmd(free, { action: 'wipe_disk' })).ok).toBe(true);
    const careful = (await cmd(free, { action: 'load_skill', params: { name: 'careful' } })).agent;
    expect(ok(await cmd(careful, { action: 'wipe_disk' }))).toMatchObject({ ok: false, error: { code: 'action_not_allowed' } });
    expect(ok(await cmd(careful, { action: 'git_log' })).ok).toBe(true);
  });
});
