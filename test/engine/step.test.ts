/**
 * The step engine's contract, checked without any runtime around it: one agent value and one
 * mailbox item in, a plain outcome out — atomic, total, sync unless user code is async, and
 * every call of user code made through the host's `invoke` when it gives one.
 */
import { describe, expect, it } from 'vitest';
import { isThenable } from '../../src/core/maybe-async.js';
import type { UserCodeCall } from '../../src/core/invoke.js';
import { failedOutcome, MAX_RUN_DEPTH, stepAgent, unknownSkillOutcome, type StepOutcome } from '../../src/engine/index.js';
import { fail } from '../../src/index.js';
import { Decision, Effects, createSignal, defineAction, defineAgent, defineSkill, notebook, result, z } from '../runtime/fixtures.js';

const tallyState = z.object({ n: z.number().default(0) });

const counter = defineSkill({
  name: 'tally',
  schema: tallyState,
  signalPatterns: ['tally.**'],
  actions: [
    defineAction({
      name: 'bump',
      description: 'Adds one',
      input: z.object({}),
      state: tallyState,
      run: (_params, ctx) => result(ctx.skillState.n + 1, { state: { n: ctx.skillState.n + 1 }, effects: [Effects.emit(createSignal('tally.bumped'))] }),
    }),
    defineAction({ name: 'bump_later', description: 'Adds one, async', input: z.object({}), run: async () => result('later', { state: { n: 100 } }) }),
    defineAction({ name: 'explode', description: 'Throws', input: z.object({}), run: () => { throw new Error('boom'); } }),
    defineAction({ name: 'loop', description: 'Runs itself', input: z.object({}), run: () => result(null, { effects: [Effects.run('loop', {})] }) }),
  ],
  routes: [
    { path: 'tally.bump', target: { action: 'bump' } },
    { path: 'tally.later', target: { action: 'bump_later' } },
    { path: 'tally.explode', target: { action: 'explode' } },
    { path: 'tally.loop', target: { action: 'loop' } },
  ],
  handleSignal: (signal) => (signal.type === 'tally.garbage' ? (42 as never) : undefined),
  transformResult: (_signal, value) => ({ transformed: value }),
});

const Tally = defineAgent({ name: 'tally_agent', skills: [counter] });

function sync(outcome: StepOutcome | Promise<StepOutcome>): StepOutcome {
  expect(isThenable(outcome)).toBe(false);
  return outcome as StepOutcome;
}

describe('stepAgent', () => {
  it('routes a signal to its action and returns the new agent, its effects and the transformed reply', () => {
    const agent = Tally.new({ id: 't1' });
    const outcome = sync(stepAgent(agent, { kind: 'signal', signal: createSignal('tally.bump'), call: true }));
    expect(outcome.error).toBeUndefined();
    expect(outcome.agent.state).toEqual({ tally: { n: 1 } });
    expect(outcome.effects.map((effect) => effect.type)).toEqual(['emit']);
    expect(outcome.effects[0]!.meta.skill).toBe('tally');
    expect(outcome.result).toEqual({ transformed: 1 });
    expect(outcome.signal?.type).toBe('tally.bump');
    // The agent given is a value: the step never changes it.
    expect(agent.state).toEqual({ tally: { n: 0 } });
  });

  it('is atomic: a failed step returns the agent it was given and one error effect', () => {
    const agent = Tally.new({ id: 't2' });
    const outcome = sync(stepAgent(agent, { kind: 'signal', signal: createSignal('tally.explode'), call: false }));
    expect(outcome.agent).toBe(agent);
    expect(outcome.error).toMatchObject({ code: 'action_failed', action: 'explode', skill: 'tally' });
    expect(outcome.effects).toEqual([{ type: 'error', error: outcome.error, meta: { skill: 'tally' } }]);
  });

  it('is total: a hook returning garbage and a run loop become typed errors, never throws', () => {
    const agent = Tally.new({ id: 't3' });
    const garbage = sync(stepAgent(agent, { kind: 'signal', signal: createSignal('tally.garbage'), call: false }));
    expect(garbage.error).toMatchObject({ code: 'hook_failed', skill: 'tally' });
    const loop = sync(stepAgent(agent, { kind: 'signal', signal: createSignal('tally.loop'), call: false }));
    expect(loop.error?.code).toBe('effect_loop');
    expect(loop.error?.message).toContain(`${MAX_RUN_DEPTH} deep`);
    expect(loop.agent).toBe(agent);
  });

  it('returns a promise only when user code is async', async () => {
    const agent = Tally.new({ id: 't4' });
    const pending = stepAgent(agent, { kind: 'signal', signal: createSignal('tally.later'), call: true });
    expect(isThenable(pending)).toBe(true);
    const outcome = await pending;
    expect(outcome.agent.state).toEqual({ tally: { n: 100 } });
    expect(outcome.result).toEqual({ transformed: 'later' });
  });

  it('runs instructions directly, as a model’s tool calls', () => {
    const outcome = sync(stepAgent(Tally.new({ id: 't5' }), { kind: 'instructions', instructions: [{ action: 'bump', params: {} }, { action: 'bump', params: {} }] }));
    expect(outcome.agent.state).toEqual({ tally: { n: 2 } });
    expect(outcome.result).toBe(2);
  });

  it('runs a record after instructions in the same step, given their output: both commit or neither, and the reply is theirs', async () => {
    const logState = z.object({ seen: z.array(z.unknown()).default([]) });
    const log = defineSkill({
      name: 'log',
      schema: logState,
      actions: [
        defineAction({
          name: 'note',
          description: 'Notes an output, unless told to refuse',
          input: z.object({ output: z.unknown(), refuse: z.boolean().optional() }),
          state: logState,
          run: ({ output, refuse }, ctx) => (refuse ? fail('refused', 'not noted') : result('noted', { state: { seen: [...ctx.skillState.seen, output] } })),
        }),
      ],
    });
    const Logged = defineAgent({ name: 'logged', skills: [counter, log] });
    const agent = Logged.new({ id: 't5r' });
    const both = sync(stepAgent(agent, { kind: 'instructions', instructions: [{ action: 'bump', params: {} }], record: { action: 'note', skill: 'log', params: {} } }));
    expect(both.agent.state).toEqual({ tally: { n: 1 }, log: { seen: [1] } });
    expect(both.result).toBe(1);
    const refused = sync(stepAgent(agent, { kind: 'instructions', instructions: [{ action: 'bump', params: {} }], record: { action: 'note', skill: 'log', params: { refuse: true } } }));
    expect(refused.agent).toBe(agent);
    expect(refused.error).toMatchObject({ code: 'action_failed', action: 'note', message: expect.stringContaining('not noted') });
    // A failed instruction is not recorded.
    const failed = sync(stepAgent(agent, { kind: 'instructions', instructions: [{ action: 'explode', params: {} }], record: { action: 'note', skill: 'log', params: {} } }));
    expect(failed.agent).toBe(agent);
    expect(failed.error).toMatchObject({ code: 'action_failed', action: 'explode' });
    // The record runs after the step's `run` effects, given the result the caller gets, and an `error` effect's error.
    const chained = defineSkill({
      name: 'chained',
      schema: z.object({}),
      actions: [
        defineAction({ name: 'order', description: 'Orders, then audits', input: z.object({}), run: () => result('ordered', { effects: [Effects.run('audit')] }) }),
        defineAction({ name: 'audit', description: 'Audits', input: z.object({}), run: () => result('audited') }),
        defineAction({ name: 'partial', description: 'Half done', input: z.object({}), run: () => result('half', { effects: [Effects.error({ code: 'action_failed', message: 'half done' })] }) }),
      ],
    });
    const Chained = defineAgent({ name: 'chained_agent', skills: [chained, log] });
    const audited = sync(stepAgent(Chained.new({ id: 't5c' }), { kind: 'instructions', instructions: [{ action: 'order', params: {} }], record: { action: 'note', skill: 'log', params: {} } }));
    expect(audited.result).toBe('audited');
    expect(audited.agent.state).toMatchObject({ log: { seen: ['audited'] } });
    const logErrors = defineSkill({
      name: 'errors',
      schema: z.object({ seen: z.array(z.unknown()).default([]) }),
      actions: [
        defineAction({
          name: 'note',
          description: 'Notes an error',
          input: z.object({ output: z.unknown(), error: z.object({ code: z.string(), message: z.string() }).optional() }),
          state: z.object({ seen: z.array(z.unknown()).default([]) }),
          run: ({ error }, ctx) => result(null, { state: { seen: [...ctx.skillState.seen, error ?? null] } }),
        }),
      ],
    });
    const Partial = defineAgent({ name: 'partial_agent', skills: [chained, logErrors] });
    const half = sync(stepAgent(Partial.new({ id: 't5p' }), { kind: 'instructions', instructions: [{ action: 'partial', params: {} }], record: { action: 'note', skill: 'errors', params: {} } }));
    expect(half.error).toMatchObject({ code: 'action_failed', message: 'half done' });
    expect(half.agent.state).toMatchObject({ errors: { seen: [{ code: 'action_failed', message: 'half done' }] } });
    // After async user code, the same.
    const later = await stepAgent(agent, { kind: 'instructions', instructions: [{ action: 'bump_later', params: {} }], record: { action: 'note', skill: 'log', params: {} } });
    expect(later.agent.state).toEqual({ tally: { n: 100 }, log: { seen: ['later'] } });
    expect(later.result).toBe('later');
  });

  it('mounts and unmounts skills, with one registration effect per action', () => {
    const agent = Tally.new({ id: 't6' });
    const mounted = sync(stepAgent(agent, { kind: 'mount', skill: notebook, config: undefined }));
    expect(mounted.agent.mounted.map((record) => record.name)).toEqual(['tally', 'notebook']);
    expect(mounted.effects.filter((effect) => effect.type === 'register_action')).toHaveLength(notebook.actions.length);
    const unmounted = sync(stepAgent(mounted.agent, { kind: 'unmount', skill: 'notebook' }));
    expect(unmounted.agent.mounted.map((record) => record.name)).toEqual(['tally']);
    expect(unmounted.effects.every((effect) => effect.type === 'deregister_action')).toBe(true);
  });

  it('refuses an agent value without its catalog (plain data)', () => {
    const plain = JSON.parse(JSON.stringify(Tally.new({ id: 't7' }))) as never;
    const outcome = sync(stepAgent(plain, { kind: 'start' }));
    expect(outcome.error?.code).toBe('unlinked_agent');
  });

  it('calls every piece of user code through the host’s invoke, in order', () => {
    const calls: UserCodeCall[] = [];
    const invoke = <T>(call: UserCodeCall, fn: () => T): T => {
      calls.push(call);
      return fn();
    };
    const withHook = defineSkill({
      name: 'hooked',
      schema: z.object({ started: z.boolean().default(false) }),
      mount: () => ({ state: { started: true } }),
    });
    const agent = Tally.new({ id: 't8' });
    sync(stepAgent(agent, { kind: 'signal', signal: createSignal('tally.bump'), call: true }, { invoke }));
    expect(calls.map((call) => call.what)).toEqual(["handleSignal of skill 'tally'", "action 'bump'", "transformResult of skill 'tally'"]);
    expect(calls[1]).toMatchObject({ action: 'bump', skill: 'tally' });
    calls.length = 0;
    const mounted = sync(stepAgent(agent, { kind: 'mount', skill: withHook, config: undefined }, { invoke }));
    expect(calls.map((call) => call.what)).toEqual(["mount hook of skill 'hooked'"]);
    expect(mounted.agent.state).toMatchObject({ hooked: { started: true } });
  });

  it('a handleSignal decision can answer the call without the router', () => {
    const answering = defineSkill({
      name: 'answering',
      schema: z.object({}),
      signalPatterns: ['ask'],
      handleSignal: () => Decision.handle({ output: 'answered' }),
    });
    const outcome = sync(stepAgent(defineAgent({ name: 'answers', skills: [answering] }).new({ id: 'a1' }), { kind: 'signal', signal: createSignal('ask'), call: true }));
    expect(outcome.result).toBe('answered');
    expect(outcome.error).toBeUndefined();
  });
});

describe('failed-outcome builders', () => {
  it('failedOutcome keeps the agent and carries the error as its one effect', () => {
    const agent = Tally.new({ id: 'f1' });
    const outcome = failedOutcome(agent, { code: 'invalid_skill', message: 'no', skill: 'x' });
    expect(outcome).toEqual({ agent, effects: [{ type: 'error', error: { code: 'invalid_skill', message: 'no', skill: 'x' }, meta: { skill: 'x' } }], result: undefined, error: { code: 'invalid_skill', message: 'no', skill: 'x' }, diagnostics: [], signal: undefined });
  });

  it('unknownSkillOutcome says whether the skill is unknown or failed to load', () => {
    const agent = Tally.new({ id: 'f2' });
    expect(unknownSkillOutcome(agent, 'ghost').error).toMatchObject({ code: 'unknown_skill', skill: 'ghost' });
    expect(unknownSkillOutcome(agent, 'ghost').error?.message).toContain('the system does not know it');
    expect(unknownSkillOutcome(agent, 'ghost', new Error('disk gone')).error?.message).toContain('loading it failed: disk gone');
  });
});
