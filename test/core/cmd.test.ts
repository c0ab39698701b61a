/**
 * `cmd(agent, instructions)`: runs instructions in order and never throws. Every failure — a
 * malformed instruction, an unknown action, invalid params, a throwing, rejecting or failing
 * action, an invalid output, state update or effect, a refused mount — becomes an `error` effect
 * naming the action and the reason, and the state stays exactly as it was before that
 * instruction.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createSignal,
  defineAction,
  defineAgent,
  defineSkill,
  Effects,
  fail,
  result,
  unmountSkill,
  type Agent,
  type CmdResult,
  type Instruction,
} from '../../src/index.js';
import { execute } from '../../src/core/cmd.js';
import { calculator, counter } from '../../skills/index.js';
import { auth, httpClient, search, viaJson } from './support.js';

const probeState = z.object({ n: z.number().int().default(0), note: z.string().default('') });

const bump = defineAction({
  name: 'bump',
  description: 'Add `by` (default 1) to n',
  input: z.object({ by: z.number().int().default(1) }),
  state: probeState,
  run: ({ by }, { skillState }) => result({ n: skillState.n + by }, { state: { n: skillState.n + by } }),
});

const probeActions = [
  bump,
  defineAction({ name: 'boom', description: 'Throws', input: z.object({}), run: () => { throw new Error('kaboom'); } }),
  defineAction({ name: 'reject', description: 'Rejects', input: z.object({}), run: async () => { throw new Error('later'); } }),
  defineAction({ name: 'refuse', description: 'Fails cleanly', input: z.object({}), run: () => fail('not_today', 'come back tomorrow', { retry: true }) }),
  defineAction({ name: 'bad_output', description: 'Wrong output', input: z.object({}), output: z.object({ ok: z.boolean() }), run: () => ({ ok: 'yes' }) }),
  defineAction({ name: 'bad_state', description: 'Wrong state type', input: z.object({}), run: () => result(null, { state: { n: 'many' } }) }),
  defineAction({ name: 'stray_state', description: 'Unknown state field', input: z.object({}), run: () => result(null, { state: { bogus: 1 } }) }),
  defineAction({ name: 'state_not_object', description: 'State is a number', input: z.object({}), run: () => result(null, { state: 5 as never }) }),
  defineAction({ name: 'bad_effect', description: 'Unknown effect', input: z.object({}), run: () => result(null, { effects: [{ type: 'teleport' } as never] }) }),
  defineAction({ name: 'effects_not_array', description: 'Effects not a list', input: z.object({}), run: () => result(null, { effects: 'emit' as never }) }),
  defineAction({
    name: 'announce',
    description: 'Emits a signal and replies',
    input: z.object({}),
    run: () => result('sent', { effects: [Effects.emit(createSignal('probe.done', undefined, { id: 'e1', time: '2025-01-01T00:00:00.000Z' })), Effects.reply(1, { skill: 'elsewhere' }), { type: 'stop' } as never] }),
  }),
  defineAction({
    name: 'slow',
    description: 'Async, then adds 100',
    input: z.object({}),
    state: probeState,
    run: async (_p, { skillState }) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return result('slow', { state: { n: skillState.n + 100 } });
    },
  }),
  defineAction({
    name: 'spy',
    description: 'Returns what it sees',
    input: z.object({}),
    run: (_p, ctx) => ({ agentId: ctx.agentId, skill: ctx.skill, config: ctx.config, skillState: ctx.skillState, signal: ctx.signal, stateKeys: Object.keys(ctx.state) }),
  }),
  defineAction({
    name: 'unprintable',
    description: 'Throws a value that cannot even be described',
    input: z.object({}),
    run: () => {
      throw { toJSON() { throw new Error('no json'); }, toString() { throw new Error('no string'); } };
    },
  }),
  defineAction({
    name: 'hostile_effect',
    description: 'Returns an effect whose type getter throws',
    input: z.object({}),
    run: () => result(null, { effects: [{ get type(): string { throw new Error('getter exploded'); }, meta: {} } as never] }),
  }),
  defineAction({
    name: 'hostile_then',
    description: 'Returns an object whose then getter throws',
    input: z.object({}),
    run: () => ({ get then(): unknown { throw new Error('then exploded'); } }),
  }),
];

const probe = defineSkill({
  name: 'probe',
  schema: probeState,
  configSchema: z.object({ label: z.string().default('plain') }),
  actions: probeActions,
});

const ownActions = [
  defineAction({
    name: 'set_mode',
    description: 'Set the agent mode',
    input: z.object({ mode: z.enum(['idle', 'busy']) }),
    run: ({ mode }) => result(mode, { state: { mode }, effects: [Effects.reply(mode)] }),
  }),
  defineAction({ name: 'hijack', description: 'Writes a skill slice', input: z.object({}), run: () => result(null, { state: { probe: { n: 999 } } }) }),
  defineAction({ name: 'own_bad', description: 'Invalid own field', input: z.object({}), run: () => result(null, { state: { mode: 'asleep' } }) }),
  defineAction({ name: 'own_stray', description: 'Unknown own field', input: z.object({}), run: () => result(null, { state: { colour: 'red' } }) }),
  defineAction({ name: 'install', description: 'Mounts counter', input: z.object({}), run: () => result('installed', { mount: [[counter, { initial: 10 }]] }) }),
  defineAction({
    name: 'install_search',
    description: 'Mounts search, whose requirements are missing',
    input: z.object({}),
    run: () => result('never', { mount: [search], effects: [Effects.reply('dropped')] }),
  }),
  defineAction({ name: 'install_stack', description: 'Mounts search with its requirements', input: z.object({}), run: () => result(null, { mount: [search, httpClient, auth] }) }),
  defineAction({ name: 'uninstall', description: 'Unmounts counter', input: z.object({}), run: () => result('removed', { unmount: ['counter'] }) }),
  defineAction({ name: 'uninstall_auth', description: 'Unmounts auth, which search requires', input: z.object({}), run: () => result(null, { unmount: [auth] }) }),
  defineAction({ name: 'swap', description: 'Unmounts counter and mounts it again with new config', input: z.object({}), run: () => result(null, { unmount: ['counter'], mount: [[counter, { initial: 1 }]] }) }),
];

const Lab = defineAgent({
  name: 'lab',
  schema: z.object({ mode: z.enum(['idle', 'busy']).default('idle') }),
  actions: ownActions,
  skills: [[probe, { label: 'x' }], calculator],
});

const newLab = () => Lab.new({ id: 'lab-1' });

function errorsOf(run: CmdResult<object>) {
  return run.effects.flatMap((effect) => (effect.type === 'error' ? [effect.error] : []));
}

describe('running instructions', () => {
  it('runs an action name, an action object and { action, params, skill } in order, with one result each', async () => {
    const agent = newLab();
    const run = await Lab.cmd(agent, ['bump', bump, { action: 'bump', params: { by: 5 } }, { action: 'add', params: { a: 1, b: 2 }, skill: 'calculator' }]);
    expect(run.results).toEqual([
      { ok: true, action: 'bump', skill: 'probe', output: { n: 1 } },
      { ok: true, action: 'bump', skill: 'probe', output: { n: 2 } },
      { ok: true, action: 'bump', skill: 'probe', output: { n: 7 } },
      { ok: true, action: 'add', skill: 'calculator', output: { result: 3 } },
    ]);
    expect(run.agent.state).toEqual({ mode: 'idle', probe: { n: 7, note: '' }, calculator: { precision: 2, last_result: 3 } });
    expect(run.effects).toEqual([]);
    expect(run.agent.id).toBe('lab-1');
  });

  it('accepts a single instruction as well as a list, and an empty list', async () => {
    const single = await Lab.cmd(newLab(), { action: 'bump', params: { by: 2 } });
    expect(single.results).toEqual([{ ok: true, action: 'bump', skill: 'probe', output: { n: 2 } }]);
    const none = await Lab.cmd(newLab(), []);
    expect(none.results).toEqual([]);
    expect(none.effects).toEqual([]);
  });

  it('never changes the agent it was given', async () => {
    const agent = newLab();
    const before = viaJson(agent);
    await Lab.cmd(agent, ['bump', 'install', 'set_mode']);
    expect(viaJson(agent)).toEqual(before);
  });

  it('gives the action its params (validated, defaults applied) and a context', async () => {
    const signal = createSignal('probe.spy', { x: 1 });
    const run = await Lab.cmd(newLab(), 'spy', { signal });
    expect(run.results[0]).toEqual({
      ok: true,
      action: 'spy',
      skill: 'probe',
      output: { agentId: 'lab-1', skill: 'probe', config: { label: 'x' }, skillState: { n: 0, note: '' }, signal, stateKeys: ['mode', 'probe', 'calculator'] },
    });
  });

  it('gives the action the time and new ids through its context', async () => {
    const stamp = defineAction({ name: 'stamp', description: 'Reads the clock and makes two ids', input: z.object({}), run: (_p, ctx) => ({ now: ctx.now(), ids: [ctx.newId(), ctx.newId()] }) });
    const Stamper = defineAgent({ name: 'stamper', actions: [stamp] });
    const before = Date.now();
    const run = await Stamper.cmd(Stamper.new({ id: 's-1' }), 'stamp');
    const { now, ids } = (run.results[0] as { output: { now: number; ids: string[] } }).output;
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
    expect(ids[0]).toMatch(/^[A-Za-z0-9_-]{21}$/);
    expect(ids[1]).not.toBe(ids[0]);
  });

  it('completes synchronously in execute() when every action is sync', () => {
    const outcome = execute(newLab(), ['bump', 'bump']);
    expect(outcome).not.toBeInstanceOf(Promise);
    expect((outcome as CmdResult<object>).results).toHaveLength(2);
  });

  it('awaits async actions and keeps the order of instructions', async () => {
    const run = await Lab.cmd(newLab(), ['bump', 'slow', { action: 'bump', params: { by: 10 } }]);
    expect(run.results.map((r) => r.ok && r.output)).toEqual([{ n: 1 }, 'slow', { n: 111 }]);
    expect((run.agent.state as { probe: { n: number } }).probe.n).toBe(111);
  });
});

describe('effects', () => {
  it('are stamped with the skill of the action that produced them (a skill already named is kept)', async () => {
    const run = await Lab.cmd(newLab(), 'announce');
    expect(run.effects).toEqual([
      { type: 'emit', signal: createSignal('probe.done', undefined, { id: 'e1', time: '2025-01-01T00:00:00.000Z' }), meta: { skill: 'probe' } },
      { type: 'reply', data: 1, meta: { skill: 'elsewhere' } },
      { type: 'stop', meta: { skill: 'probe' } },
    ]);
  });

  it('of the agent’s own actions carry an empty meta', async () => {
    const run = await Lab.cmd(newLab(), { action: 'set_mode', params: { mode: 'busy' } });
    expect(run.effects).toEqual([{ type: 'reply', data: 'busy', meta: {} }]);
  });

  it('accumulate across instructions in order', async () => {
    const run = await Lab.cmd(newLab(), ['announce', { action: 'set_mode', params: { mode: 'busy' } }]);
    expect(run.effects.map((e) => e.type)).toEqual(['emit', 'reply', 'stop', 'reply']);
  });
});

/** Each failing instruction: what the error must say. The state must be exactly as before. */
const FAILURES: [string, unknown, Record<string, unknown>, string][] = [
  ['a throwing action', 'boom', { code: 'action_failed', action: 'boom', skill: 'probe' }, "action 'boom' failed: kaboom"],
  ['a rejected promise', 'reject', { code: 'action_failed', action: 'reject', skill: 'probe' }, "action 'reject' failed: later"],
  ['fail()', 'refuse', { code: 'action_failed', action: 'refuse', skill: 'probe', details: { reason: 'not_today', details: { retry: true } } }, "action 'refuse' failed: come back tomorrow"],
  ['an invalid output', 'bad_output', { code: 'invalid_output', action: 'bad_output', skill: 'probe' }, "action 'bad_output' returned an invalid output: ok:"],
  ['a state update of the wrong type', 'bad_state', { code: 'invalid_state_update', action: 'bad_state', skill: 'probe' }, "action 'bad_state' returned an invalid state update: n:"],
  ['a state update with an unknown field', 'stray_state', { code: 'invalid_state_update', action: 'stray_state', skill: 'probe' }, "unknown field 'bogus'"],
  ['a state update that is not an object', 'state_not_object', { code: 'invalid_state_update', action: 'state_not_object' }, 'a state update must be a plain object'],
  ['an unknown effect', 'bad_effect', { code: 'invalid_effect', action: 'bad_effect', skill: 'probe' }, "action 'bad_effect' returned an invalid effect at index 0: unknown effect type 'teleport'"],
  ['effects that are not a list', 'effects_not_array', { code: 'invalid_effect', action: 'effects_not_array' }, "action 'effects_not_array' returned effects that are not an array"],
  ['invalid params', { action: 'bump', params: { by: 'two' } }, { code: 'invalid_params', action: 'bump', skill: 'probe' }, "invalid params for action 'bump': by:"],
  ['an own action writing a skill slice', 'hijack', { code: 'invalid_state_update', action: 'hijack' }, "'probe' is the state of skill 'probe'"],
  ['an own action with an invalid field', 'own_bad', { code: 'invalid_state_update', action: 'own_bad' }, "action 'own_bad' returned an invalid state update: mode:"],
  ['an own action with an unknown field', 'own_stray', { code: 'invalid_state_update', action: 'own_stray' }, "unknown field 'colour'"],
  ['a thrown value that cannot be described', 'unprintable', { code: 'action_failed', action: 'unprintable', skill: 'probe' }, "action 'unprintable' failed:"],
  ['an effect whose getter throws', 'hostile_effect', { code: 'action_failed', action: 'hostile_effect', skill: 'probe' }, 'getter exploded'],
  ['a return value whose then getter throws', 'hostile_then', { code: 'action_failed', action: 'hostile_then', skill: 'probe' }, 'then exploded'],
  ['a mount whose requirements are missing', 'install_search', { code: 'missing_dependency', action: 'install_search', skill: 'search' }, "action 'install_search' could not change its agent's skills: skill 'search' requires 'auth', 'http_client'"],
];

describe('a failing instruction yields an error effect naming the action and reason, and the state exactly as before', () => {
  it.each(FAILURES)('%s', async (_label, instruction, error, message) => {
    const agent = (await Lab.cmd(newLab(), 'bump')).agent; // a state that differs from the defaults
    const before = viaJson(agent.state);
    const run = await Lab.cmd(agent, instruction as Instruction);
    expect(run.agent.state).toBe(agent.state);
    expect(viaJson(run.agent.state)).toEqual(before);
    expect(run.agent.mounted).toEqual(agent.mounted);
    expect(run.effects).toHaveLength(1);
    expect(run.effects[0]).toMatchObject({ type: 'error', error });
    const reported = errorsOf(run)[0]!;
    expect(reported.message).toContain(message);
    expect(reported.message).toContain(`'${String(error.action)}'`);
    expect(run.results).toEqual([{ ok: false, action: reported.action, skill: reported.skill, error: reported }]);
  });

  it('a state update from a skill defined without a schema says where the field should have been declared', async () => {
    const stateless = defineSkill({ name: 'stateless', actions: [defineAction({ name: 'remember', description: 'Remember x', input: z.object({}), run: () => result(1, { state: { x: 1 } }) })] });
    const Agent = defineAgent({ name: 'forgetful', skills: [stateless] });
    const run = await Agent.cmd(Agent.new({ id: 'f-1' }), 'remember');
    expect(errorsOf(run)[0]).toMatchObject({
      code: 'invalid_state_update',
      message: "action 'remember' returned an invalid state update: x: unknown field 'x'; skill 'stateless' has no state schema: give defineSkill a schema with the fields its actions update",
    });
  });

  it('a __proto__ key in params is data, never taken for params, and pollutes nothing', async () => {
    const run = await Lab.cmd(newLab(), { action: 'bump', params: JSON.parse('{"__proto__": {"by": 50}}') });
    expect(run.results[0]).toEqual({ ok: true, action: 'bump', skill: 'probe', output: { n: 1 } });
    expect(({} as Record<string, unknown>).by).toBeUndefined();
  });

  it('a huge action name is just an unknown action', async () => {
    const run = await Lab.cmd(newLab(), 'x'.repeat(1_000_000));
    expect(errorsOf(run).map((e) => e.code)).toEqual(['unknown_action']);
  });

  it('invalid params carry zod issues with their paths', async () => {
    const run = await Lab.cmd(newLab(), { action: 'add', params: { a: 'one' } });
    const error = errorsOf(run)[0]!;
    expect(error.code).toBe('invalid_params');
    expect(error.issues?.map((issue) => [issue.path, issue.code])).toEqual([
      [['a'], 'invalid_type'],
      [['b'], 'invalid_type'],
    ]);
  });

  it('error effects record the failing skill in their meta', async () => {
    const run = await Lab.cmd(newLab(), 'boom');
    expect(run.effects[0]!.meta).toEqual({ skill: 'probe' });
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['a number', 42],
    ['true', true],
    ['an array', ['bump']],
    ['an object without action', { params: {} }],
    ['an action that is a number', { action: 5 }],
    ['params that are not an object', { action: 'bump', params: 3 }],
    ['params that are an array', { action: 'bump', params: [1] }],
    ['a skill that is not a string', { action: 'bump', skill: 1 }],
    ['a class instance', new Date()],
  ])('a malformed instruction (%s) → invalid_instruction', async (_label, instruction) => {
    const agent = newLab();
    const run = await Lab.cmd(agent, [instruction as Instruction]);
    expect(errorsOf(run).map((e) => e.code)).toEqual(['invalid_instruction']);
    expect(run.agent.state).toBe(agent.state);
  });
});

describe('changes returned without result()', () => {
  const door = z.object({ open: z.boolean().default(false), n: z.number().int().default(0) });
  const Door = defineAgent({
    name: 'door',
    skills: [
      defineSkill({
        name: 'door',
        schema: door,
        actions: [
          defineAction({ name: 'open_forgetting_result', description: 'Opens, forgetting result()', input: z.object({}), state: door, run: () => ({ state: { open: true } }) as never }),
          defineAction({ name: 'open_with_output', description: 'Opens, with an output too', input: z.object({}), state: door, run: () => ({ output: 'opened', state: { open: true }, effects: [] }) as never }),
          defineAction({ name: 'describe', description: "Says the door's state", input: z.object({}), state: door, run: () => ({ state: 'open', since: 3 }) }),
          defineAction({ name: 'status', description: 'An output with a state object, wrapped', input: z.object({}), state: door, run: () => result({ state: { open: true } }) }),
        ],
      }),
      defineSkill({
        name: 'report',
        actions: [defineAction({ name: 'report', description: 'An output shaped like changes, from an action with no state', input: z.object({}), run: () => ({ state: { open: true } }) })],
      }),
    ],
  });

  it('refuses { state: {…} } returned as a plain object by an action that declares state, saying to use result(), and changes nothing', async () => {
    for (const action of ['open_forgetting_result', 'open_with_output']) {
      const agent = Door.new({ id: 'door-1' });
      const run = await Door.cmd(agent, action);
      expect(errorsOf(run)).toEqual([
        {
          code: 'invalid_output',
          message: `action '${action}' returned { state: {…} } as a plain object, which is its output and changes no state: return result(output, { state: {…} }) to update the state (or result({ state: … }) for an output that has a 'state' field)`,
          action,
          skill: 'door',
        },
      ]);
      expect(run.agent.state).toBe(agent.state);
    }
  });

  it("keeps as output an object with a 'state' field that is no update, one given through result(), and one from an action that declares no state", async () => {
    const agent = Door.new({ id: 'door-1' });
    const run = await Door.cmd(agent, ['describe', 'status', 'report']);
    expect(errorsOf(run)).toEqual([]);
    expect(run.results.map((r) => (r.ok ? r.output : r.error.code))).toEqual([{ state: 'open', since: 3 }, { state: { open: true } }, { state: { open: true } }]);
    expect(run.agent.state).toEqual(agent.state);
  });
});

describe('actions the agent does not have', () => {
  it('an action no active skill provides → unknown_action naming it', async () => {
    const run = await Lab.cmd(newLab(), 'teleport');
    expect(errorsOf(run)).toEqual([
      { code: 'unknown_action', message: "action 'teleport' is not registered on agent 'lab-1': no active skill provides it", action: 'teleport' },
    ]);
  });

  it('a misspelled action → unknown_action naming the registered action it was likely meant for', async () => {
    const run = await Lab.cmd(newLab(), 'bmup');
    expect(errorsOf(run)).toEqual([
      { code: 'unknown_action', message: "action 'bmup' is not registered on agent 'lab-1': no active skill provides it; did you mean 'bump'?", action: 'bmup' },
    ]);
  });

  it('hints at the definition skill that provides it when that skill is unmounted', async () => {
    const unmounted = unmountSkill(newLab(), 'calculator');
    if (!unmounted.ok) throw new Error(unmounted.error.message);
    const run = await Lab.cmd(unmounted.agent, { action: 'add', params: { a: 1, b: 1 } });
    expect(errorsOf(run)[0]).toMatchObject({ code: 'unknown_action', action: 'add' });
    expect(errorsOf(run)[0]!.message).toBe(
      "action 'add' is not registered on agent 'lab-1': no active skill provides it (skill 'calculator' does, but it is not mounted)",
    );
  });

  it('an action named with a skill that is not mounted → unknown_action saying so', async () => {
    const run = await Lab.cmd(newLab(), { action: 'add', skill: 'arithmetic', params: { a: 1, b: 1 } });
    expect(errorsOf(run)[0]).toEqual({
      code: 'unknown_action',
      message: "action 'add' is not registered on agent 'lab-1': skill 'arithmetic' is not mounted",
      action: 'add',
      skill: 'arithmetic',
    });
  });

  it('an action named with a mounted skill that lacks it → unknown_action saying so', async () => {
    const run = await Lab.cmd(newLab(), { action: 'add', skill: 'probe', params: { a: 1, b: 1 } });
    expect(errorsOf(run)[0]!.message).toBe("action 'add' is not registered on agent 'lab-1': skill 'probe' has no action 'add'");
  });

  it('an action object that no active skill provides, even under a registered name → unknown_action', async () => {
    const impostor = defineAction({ name: 'bump', description: 'Not the real bump', input: z.object({}), run: () => 'impostor' });
    const run = await Lab.cmd(newLab(), impostor);
    expect(errorsOf(run)[0]).toMatchObject({ code: 'unknown_action', action: 'bump' });
    expect(errorsOf(run)[0]!.message).toContain('not this action object');
  });

  it('an agent that is plain data (lost its definition) → unlinked_agent', async () => {
    const data = viaJson(newLab()) as unknown as Agent<object>;
    const run = await Lab.cmd(data as never, 'bump');
    expect(run.agent).toBe(data);
    expect(run.results).toEqual([{ ok: false, action: undefined, skill: undefined, error: expect.objectContaining({ code: 'unlinked_agent' }) }]);
    expect(run.effects).toEqual([{ type: 'error', error: expect.objectContaining({ code: 'unlinked_agent' }), meta: {} }]);
    expect(errorsOf(run)[0]!.message).toContain("agent 'lab-1' is plain data");
  });
});

describe('after a failure', () => {
  it('stops by default: later instructions are not run, and the message says so', async () => {
    const run = await Lab.cmd(newLab(), ['bump', 'boom', 'bump', 'bump']);
    expect(run.results.map((r) => r.ok)).toEqual([true, false]);
    expect(errorsOf(run)[0]!.message).toBe("action 'boom' failed: kaboom (2 later instructions were not run)");
    expect((run.agent.state as { probe: { n: number } }).probe.n).toBe(1);
  });

  it('says "1 later instruction was not run" in the singular', async () => {
    const run = await Lab.cmd(newLab(), ['boom', 'bump']);
    expect(errorsOf(run)[0]!.message).toBe("action 'boom' failed: kaboom (1 later instruction was not run)");
  });

  it("with onError: 'continue', runs the rest, keeping the state of the instructions that succeeded", async () => {
    const run = await Lab.cmd(newLab(), ['bump', 'boom', 'reject', { action: 'bump', params: { by: 10 } }], { onError: 'continue' });
    expect(run.results.map((r) => r.ok)).toEqual([true, false, false, true]);
    expect(errorsOf(run).map((e) => e.message)).toEqual(["action 'boom' failed: kaboom", "action 'reject' failed: later"]);
    expect((run.agent.state as { probe: { n: number } }).probe.n).toBe(11);
  });

  it('stops after an async failure too', async () => {
    const run = await Lab.cmd(newLab(), ['slow', 'reject', 'bump']);
    expect(run.results.map((r) => r.ok)).toEqual([true, false]);
    expect((run.agent.state as { probe: { n: number } }).probe.n).toBe(100);
  });
});

describe("the agent's own actions", () => {
  it('update root fields only', async () => {
    const run = await Lab.cmd(newLab(), { action: 'set_mode', params: { mode: 'busy' } });
    expect(run.results[0]).toEqual({ ok: true, action: 'set_mode', skill: undefined, output: 'busy' });
    expect(run.agent.state).toEqual({ mode: 'busy', probe: { n: 0, note: '' }, calculator: { precision: 2, last_result: 0 } });
  });

  it('cannot write a skill’s slice (the error names the skill)', async () => {
    const run = await Lab.cmd(newLab(), 'hijack');
    expect(errorsOf(run)[0]).toMatchObject({ code: 'invalid_state_update', action: 'hijack' });
    expect(errorsOf(run)[0]!.message).toBe("action 'hijack' returned an invalid state update: 'probe' is the state of skill 'probe'");
  });
});

describe('mounting and unmounting from an action', () => {
  it('result(out, { mount }) mounts through the pure operation, with its register effects', async () => {
    const run = await Lab.cmd(newLab(), 'install');
    expect(run.results).toEqual([{ ok: true, action: 'install', skill: undefined, output: 'installed' }]);
    expect((run.agent.state as Record<string, unknown>).counter).toEqual({ count: 10, step: 1 });
    expect(run.agent.mounted.map((m) => m.name)).toEqual(['probe', 'calculator', 'counter']);
    expect(run.effects).toEqual(
      ['increment', 'decrement', 'reset', 'get_count'].map((action) => ({ type: 'register_action', action, meta: { skill: 'counter', tags: ['skill'] } })),
    );
  });

  it('the next instruction of the same cmd can use a skill mounted by an earlier one', async () => {
    const run = await Lab.cmd(newLab(), ['install', 'increment', 'get_count']);
    expect(run.results.map((r) => r.ok && r.output)).toEqual(['installed', { count: 11 }, { count: 11 }]);
    const later = await Lab.cmd(run.agent, ['increment', 'uninstall']);
    expect(later.results.map((r) => r.ok)).toEqual([true, true]);
  });

  it('an agent returned after a mount keeps the mounted skill for later cmd calls', async () => {
    const first = await Lab.cmd(newLab(), ['install', 'bump']);
    const second = await Lab.cmd(first.agent, 'increment');
    expect(second.results).toEqual([{ ok: true, action: 'increment', skill: 'counter', output: { count: 11 } }]);
  });

  it('result(out, { unmount }) unmounts, with deregister effects, and later instructions no longer see the skill', async () => {
    const installed = (await Lab.cmd(newLab(), 'install')).agent;
    const run = await Lab.cmd(installed, ['uninstall', 'increment']);
    expect(run.results[0]).toEqual({ ok: true, action: 'uninstall', skill: undefined, output: 'removed' });
    expect(run.results[1]).toMatchObject({ ok: false, error: { code: 'unknown_action', action: 'increment' } });
    expect(run.effects[0]).toEqual({ type: 'deregister_action', action: 'increment', meta: { skill: 'counter', tags: ['skill'] } });
    expect(run.agent.state).not.toHaveProperty('counter');
    expect(run.agent.mounted.map((m) => m.name)).toEqual(['probe', 'calculator']);
  });

  it('unmounts before it mounts, so a skill can be swapped for a new config', async () => {
    const installed = (await Lab.cmd(newLab(), 'install')).agent;
    const run = await Lab.cmd(installed, 'swap');
    expect((run.agent.state as Record<string, unknown>).counter).toEqual({ count: 1, step: 1 });
    expect(run.effects.map((e) => e.type)).toEqual([...Array(4).fill('deregister_action'), ...Array(4).fill('register_action')]);
  });

  it('mounts requirements first, whatever the order given', async () => {
    const run = await Lab.cmd(newLab(), 'install_stack');
    expect(run.agent.mounted.map((m) => m.name)).toEqual(['probe', 'calculator', 'auth', 'http_client', 'search']);
  });

  it('a refused unmount fails the whole instruction with the state unchanged', async () => {
    const stacked = (await Lab.cmd(newLab(), 'install_stack')).agent;
    const run = await Lab.cmd(stacked, 'uninstall_auth');
    expect(errorsOf(run)[0]).toMatchObject({ code: 'required_by', action: 'uninstall_auth', skill: 'auth', details: { requiredBy: ['search'] } });
    expect(run.agent.state).toBe(stacked.state);
    expect(run.agent.mounted).toEqual(stacked.mounted);
  });

  it('a refused mount drops the instruction’s other effects too', async () => {
    const run = await Lab.cmd(newLab(), 'install_search');
    expect(run.effects.map((e) => e.type)).toEqual(['error']);
    expect(run.results[0]!.ok).toBe(false);
  });
});

const ACTION_NAMES = [...probeActions, ...ownActions, ...calculator.actions].map((a) => a.name);

describe('cmd never throws and a failure never changes the state (properties)', () => {
  it('never throws or rejects, whatever the instructions', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.anything(), fc.array(fc.anything(), { maxLength: 4 })), async (instructions) => {
        const agent = newLab();
        const run = await Lab.cmd(agent, instructions as Instruction[]);
        expect(Array.isArray(run.effects)).toBe(true);
        if (run.results.every((r) => !r.ok)) expect(run.agent.state).toBe(agent.state);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws or rejects, whatever the params of whichever action', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ACTION_NAMES), fc.anything(), async (action, params) => {
        const run = await Lab.cmd(newLab(), { action, params: params as Record<string, unknown> });
        expect(run.results).toHaveLength(1);
      }),
      { numRuns: 300 },
    );
  });

  it('a failed instruction leaves the state exactly as it was before it', async () => {
    const instruction = fc.oneof(
      fc.constantFrom<unknown>(...ACTION_NAMES),
      fc.record({ action: fc.constantFrom(...ACTION_NAMES), params: fc.dictionary(fc.constantFrom('a', 'b', 'by', 'mode', 'to'), fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(null))) }),
      fc.anything(),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(instruction, { minLength: 1, maxLength: 8 }), async (instructions) => {
        let agent = newLab();
        for (const step of instructions) {
          const before = viaJson(agent);
          const run = await Lab.cmd(agent, [step as Instruction]);
          if (!run.results[0]!.ok) {
            expect(run.agent.state).toBe(agent.state);
            expect(viaJson(run.agent)).toEqual(before);
            expect(run.effects.map((e) => e.type)).toEqual(['error']);
          }
          agent = run.agent;
        }
      }),
      { numRuns: 200 },
    );
  });
});
