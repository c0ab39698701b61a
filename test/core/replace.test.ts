/**
 * Replacing a mounted skill by a new version of it (what a reloaded document skill goes
 * through), as a pure operation: the slice kept when the new schema accepts it, refused — the old
 * version kept — when it does not; and through an action's `result(..., { replace })` in `cmd`.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cmd, defineAction, defineAgent, defineSkill, mountSkill, result } from '../../src/index.js';
import { replaceSkill } from '../../src/core/mount.js';

const bump = defineAction({ name: 'bump', description: 'Adds one', input: z.object({}), run: (_, ctx) => result({}, { state: { count: (ctx.skillState as { count: number }).count + 1 } }) });
const reset = defineAction({ name: 'reset', description: 'Back to zero', input: z.object({}), run: () => result({}, { state: { count: 0 } }) });
const v1 = defineSkill({ name: 'tally', actions: [bump], schema: z.object({ count: z.number().default(0) }) });
const v2 = defineSkill({ name: 'tally', actions: [bump, reset], schema: z.object({ count: z.number().default(0), label: z.string().default('tally') }), instructions: 'v2' });
const strict = defineSkill({ name: 'tally', actions: [bump], schema: z.object({ count: z.string() }) });
const Agent = defineAgent({ name: 'holder' });

async function counted() {
  const mounted = mountSkill(Agent.new({ id: 'h1' }), v1);
  if (!mounted.ok) throw new Error(mounted.error.message);
  const bumped = await cmd(mounted.agent, [{ action: 'bump' }, { action: 'bump' }]);
  return bumped.agent;
}

describe('replaceSkill', () => {
  it('puts the new version in place: slice kept (and completed by the new defaults), actions swapped', async () => {
    const agent = await counted();
    const replaced = replaceSkill(agent, v2);
    if (!replaced.ok) throw new Error(replaced.error.message);
    expect(replaced.agent.state).toEqual({ tally: { count: 2, label: 'tally' } });
    expect(replaced.effects.map((effect) => `${effect.type} ${'action' in effect ? effect.action : ''}`)).toEqual(['deregister_action bump', 'register_action bump', 'register_action reset']);
    expect(replaced.agent.mounted).toEqual([{ name: 'tally', stateKey: 'tally', config: {} }]);
    const after = await cmd(replaced.agent, { action: 'reset' });
    expect(after.agent.state).toEqual({ tally: { count: 0, label: 'tally' } });
  });

  it('refuses a version whose schema no longer accepts the slice, naming the field; the agent is unchanged', async () => {
    const agent = await counted();
    const refused = replaceSkill(agent, strict);
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.error).toMatchObject({ code: 'invalid_state', skill: 'tally' });
    expect(refused.error.message).toMatch(/^skill 'tally' cannot be replaced on agent 'h1' by its new version: its state no longer fits the new schema \(count: .+\); the old version stays$/);
    expect(agent.state).toEqual({ tally: { count: 2 } });
  });

  it('the same version is a no-op; a skill not mounted is mounted', async () => {
    const agent = await counted();
    expect(replaceSkill(agent, v1)).toMatchObject({ ok: true, agent, effects: [] });
    const fresh = replaceSkill(Agent.new(), v2);
    expect(fresh.ok && fresh.agent.state).toEqual({ tally: { count: 0, label: 'tally' } });
  });

  it('refuses a changed state key and skills with children or mount hooks', async () => {
    const agent = await counted();
    const moved = defineSkill({ name: 'tally', stateKey: 'elsewhere', actions: [bump], schema: z.object({ count: z.number().default(0) }) });
    expect(replaceSkill(agent, moved)).toMatchObject({ ok: false, error: { code: 'skill_conflict' } });
    const hooked = defineSkill({ name: 'tally', actions: [bump], schema: z.object({ count: z.number().default(0) }), mount: () => undefined });
    expect(replaceSkill(agent, hooked)).toMatchObject({ ok: false, error: { code: 'skill_conflict' } });
  });

  it("an action's result(..., { replace }) applies it in cmd, all or nothing", async () => {
    const agent = await counted();
    const upgrade = defineAction({ name: 'upgrade', description: 'Swap tally', input: z.object({ to: z.enum(['v2', 'strict']) }), run: ({ to }) => result(to, { replace: [to === 'v2' ? v2 : strict] }) });
    const Host = defineAgent({ name: 'host', skills: [defineSkill({ name: 'updater', actions: [upgrade] })] });
    const host = mountSkill(Host.new({ id: 'h2', state: {} }), v1);
    if (!host.ok) throw new Error(host.error.message);
    const refused = await cmd(host.agent, { action: 'upgrade', params: { to: 'strict' } });
    expect(refused.effects[0]).toMatchObject({ type: 'error', error: { code: 'invalid_state' } });
    expect(refused.agent).toBe(host.agent);
    const done = await cmd(host.agent, { action: 'upgrade', params: { to: 'v2' } });
    expect(done.agent.state).toMatchObject({ tally: { count: 0, label: 'tally' } });
    expect(done.effects.filter((effect) => effect.type === 'register_action').map((effect) => effect.action)).toEqual(['bump', 'reset']);
    expect(agent.state).toEqual({ tally: { count: 2 } });
  });
});
