/**
 * A skill's `unmount` hook: called once the skill has left its agent — unmounted by `unmount`,
 * by an action's result, or with its agent stopped (by `stop`, its parent, `shutdown`) — with
 * its slice as it last was. A hook that throws or rejects is reported as `hook_failed` naming the
 * skill, and never blocks the unmount, the stop or the other hooks.
 */
import { describe, expect, it } from 'vitest';
import type { AgentSystem, ErrorInfo } from '../../src/index.js';
import { defineAction, defineAgent, defineSkill, systemPerTest, result, settleDown, z } from './fixtures.js';

const systems = systemPerTest();
let system: AgentSystem | undefined;

interface Call {
  skill: string;
  agentId: string;
  state: unknown;
  config: unknown;
}

/** A skill whose unmount hook records its calls in `calls`, then does `then` (nothing, throw, reject). */
function tracked(name: string, calls: Call[], then: 'nothing' | 'throws' | 'rejects' = 'nothing', requires: string[] = []) {
  const bump = defineAction({
    name: `bump_${name}`,
    description: 'counts',
    input: z.object({}),
    state: z.object({ n: z.number().default(0) }),
    run: (_params, { skillState }) => result(skillState.n + 1, { state: { n: skillState.n + 1 } }),
  });
  return defineSkill({
    name,
    requires,
    schema: z.object({ n: z.number().default(0) }),
    configSchema: z.object({ label: z.string().default(name) }),
    actions: [bump],
    unmount: (ctx) => {
      calls.push({ skill: ctx.skill, agentId: ctx.agentId, state: ctx.state, config: ctx.config });
      if (then === 'throws') throw new Error(`${name} cleanup failed`);
      if (then === 'rejects') return Promise.reject(new Error(`${name} cleanup rejected`));
      return undefined;
    },
  });
}

describe('the unmount hook is called when the skill leaves its agent', () => {
  it('on unmount: once, with the slice as it last was and the config', async () => {
    const calls: Call[] = [];
    const cache = tracked('cache', calls);
    system = systems.start();
    const agent = system.spawn(defineAgent({ name: 'host' }), { id: 'h' });
    await agent.mount(cache, { label: 'L' });
    await agent.run({ action: 'bump_cache', params: {} });
    expect(calls).toEqual([]);
    await agent.unmount('cache');
    expect(calls).toEqual([{ skill: 'cache', agentId: 'h', state: { n: 1 }, config: { label: 'L' } }]);
    await agent.unmount('cache');
    expect(calls).toHaveLength(1);
  });

  it("on an action's result that unmounts it", async () => {
    const calls: Call[] = [];
    const cache = tracked('cache', calls);
    const drop = defineAction({ name: 'drop', description: 'unmounts cache', input: z.object({}), run: () => result('dropped', { unmount: ['cache'] }) });
    system = systems.start();
    const agent = system.spawn(defineAgent({ name: 'host', actions: [drop], skills: [cache] }), { id: 'h' });
    await agent.run({ action: 'drop', params: {} });
    expect(calls.map((call) => call.skill)).toEqual(['cache']);
  });

  const STOPS: [string, (system: AgentSystem, agentId: string) => Promise<void>][] = [
    ['stop()', (sys, id) => sys.get(id)!.stop()],
    ['system.stop(id)', (sys, id) => sys.stop(id)],
    ['shutdown()', (sys) => sys.shutdown()],
  ];
  it.each(STOPS)('when its agent stops by %s: every skill, last mounted first', async (_name, stop) => {
    const calls: Call[] = [];
    const base = tracked('base', calls);
    const top = tracked('top', calls, 'nothing', ['base']);
    system = systems.start();
    const agent = system.spawn(defineAgent({ name: 'host', skills: [base, top] }), { id: 'h' });
    await agent.run({ action: 'bump_top', params: {} });
    await stop(system, 'h');
    expect(calls).toEqual([
      { skill: 'top', agentId: 'h', state: { n: 1 }, config: { label: 'top' } },
      { skill: 'base', agentId: 'h', state: { n: 0 }, config: { label: 'base' } },
    ]);
  });

  it('when its agent stops because its parent stopped', async () => {
    const calls: Call[] = [];
    system = systems.start();
    const parent = system.spawn(defineAgent({ name: 'parent' }), { id: 'p' });
    system.spawn(defineAgent({ name: 'child', skills: [tracked('cache', calls)] }), { id: 'c', parent });
    await parent.stop();
    expect(calls.map((call) => `${call.agentId}:${call.skill}`)).toEqual(['c:cache']);
  });

  it('a skill unmounted before its agent stops is not called again at the stop', async () => {
    const calls: Call[] = [];
    system = systems.start();
    const agent = system.spawn(defineAgent({ name: 'host', skills: [tracked('cache', calls)] }));
    await agent.unmount('cache');
    await agent.stop();
    expect(calls).toHaveLength(1);
  });
});

describe('a failing unmount hook is reported and blocks nothing', () => {
  it.each(['throws', 'rejects'] as const)('a hook that %s: hook_failed naming the skill; the unmount is done and the agent answers', async (how) => {
    const calls: Call[] = [];
    const errors: ErrorInfo[] = [];
    system = systems.start();
    system.onError((error) => errors.push(error));
    const agent = system.spawn(defineAgent({ name: 'host', skills: [tracked('cache', calls, how), tracked('other', calls)] }));
    await expect(agent.unmount('cache')).resolves.toMatchObject({ changed: true });
    await settleDown();
    expect(agent.getSnapshot().mounted.map((record) => record.name)).toEqual(['other']);
    expect(errors).toEqual([
      expect.objectContaining({ code: 'hook_failed', skill: 'cache', message: `unmount hook of skill 'cache' failed: cache cleanup ${how === 'throws' ? 'failed' : 'rejected'}` }),
    ]);
    expect(errors[0]!.cause).toBeInstanceOf(Error);
    await expect(agent.run({ action: 'bump_other', params: {} })).resolves.toBe(1);
  });

  it('at a stop, one failing hook does not keep the others from running, nor the agent from stopping', async () => {
    const calls: Call[] = [];
    const errors: string[] = [];
    system = systems.start();
    system.onError((error) => errors.push(`${error.code}:${error.skill}`));
    const agent = system.spawn(defineAgent({ name: 'host', skills: [tracked('first', calls), tracked('second', calls, 'throws')] }));
    await agent.stop();
    expect(calls.map((call) => call.skill)).toEqual(['second', 'first']);
    expect(errors).toEqual(['hook_failed:second']);
    expect(agent.getSnapshot().status).toBe('stopped');
  });

  it('the hook sees the frozen last slice: writing into it is a reported failure, not a change', async () => {
    const errors: string[] = [];
    const writer = defineSkill({
      name: 'writer',
      schema: z.object({ n: z.number().default(0) }),
      unmount: (ctx) => {
        (ctx.state as { n: number }).n = 5;
      },
    });
    system = systems.start();
    system.onError((error) => errors.push(error.code));
    const agent = system.spawn(defineAgent({ name: 'host', skills: [writer] }));
    const before = agent.getSnapshot().state;
    await agent.unmount('writer');
    expect(errors).toEqual(['hook_failed']);
    expect(before).toEqual({ writer: { n: 0 } });
  });

  it('defineSkill refuses an unmount hook that is not a function', () => {
    expect(() => defineSkill({ name: 'bad', unmount: 5 as never })).toThrow(expect.objectContaining({ code: 'invalid_skill', message: expect.stringContaining('unmount') }));
  });
});

