/**
 * A misspelled key is never ignored in favour of its default. An instruction's field (`parms`),
 * `cmd`'s options, the changes given to `result` (`stat`, `efects`), `Decision.handle`'s fields,
 * `definition.new()`'s options, the tool options of `toolsForAgent` and an effect's meta are each
 * refused with a typed error naming the key and the name it probably meant, and `fail` given no
 * reason code is refused saying so. An action or hook whose answer cannot be applied fails its
 * step, and its agent keeps the state it had and keeps answering.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  cmd,
  createAgentSystem,
  createSignal,
  Decision,
  defineAction,
  defineAgent,
  defineSkill,
  Effects,
  fail,
  result,
  RuntimeError,
  SignalError,
  StateError,
  type ActionChanges,
  type CmdResult,
  type Instruction,
} from '../../src/index.js';
import { agentToolset, toolForAction, toolsForAgent, type ToolOptions } from '../../src/core/tools.js';

const account = z.object({ balance: z.number().default(100) });

/** Changes as a hostile user writes them: keys `ActionChanges` does not have. */
const misspelled = (changes: Record<string, unknown>) => changes as ActionChanges;

/** An account whose actions each return something `cmd` must refuse, besides `withdraw`. */
const bank = defineSkill({
  name: 'bank',
  schema: account,
  actions: [
    defineAction({
      name: 'withdraw',
      description: 'Take an amount out (default 1)',
      input: z.object({ amount: z.number().default(1) }),
      state: account,
      run: ({ amount }, { skillState }) => result({ balance: skillState.balance - amount }, { state: { balance: skillState.balance - amount } }),
    }),
    defineAction({
      name: 'typo_state',
      description: 'Returns its state update under a misspelled key',
      input: z.object({}),
      state: account,
      run: () => result('emptied', misspelled({ stat: { balance: 0 } })),
    }),
    defineAction({
      name: 'typo_effects',
      description: 'Returns its effects under a misspelled key, next to a real state update',
      input: z.object({}),
      state: account,
      run: () => result('emptied', misspelled({ state: { balance: 0 }, efects: [Effects.emit(createSignal('bank.emptied'))] })),
    }),
    defineAction({
      name: 'odd_change',
      description: 'Returns its changes under a key no change is near',
      input: z.object({}),
      state: account,
      run: () => result('emptied', misspelled({ state: { balance: 0 }, rollback: true })),
    }),
    defineAction({
      name: 'number_changes',
      description: 'Gives result a number as its changes',
      input: z.object({}),
      run: () => result('x', 5 as unknown as ActionChanges),
    }),
    defineAction({
      name: 'http_fail',
      description: 'Fails with a status code instead of a reason code',
      input: z.object({}),
      run: () => fail(404 as unknown as string),
    }),
    defineAction({
      name: 'tagged_emit',
      description: 'Emits a signal whose meta has a misspelled key',
      input: z.object({}),
      run: () => result('sent', { effects: [Effects.emit(createSignal('bank.sent'), { tag: ['audit'] } as unknown as { tags: string[] })] }),
    }),
  ],
  routes: [
    { path: 'bank.withdraw', target: { action: 'withdraw' } },
    { path: 'bank.typo_state', target: { action: 'typo_state' } },
    { path: 'bank.typo_effects', target: { action: 'typo_effects' } },
    { path: 'bank.handled', target: () => ({ action: 'withdraw', parms: { amount: 50 } }) as unknown as Instruction },
  ],
});
const Bank = defineAgent({ name: 'bank_agent', skills: [bank] });

/** The one error of a `cmd` run that failed, after checking the agent kept its state. */
function onlyError(run: CmdResult<object>, before: object) {
  expect(run.agent.state).toEqual(before);
  const [first] = run.results;
  if (!first || first.ok) throw new Error(`expected a refusal, got ${JSON.stringify(run.results)}`);
  return first.error;
}

describe('an instruction with a field it does not take', () => {
  const cases: { given: Record<string, unknown>; field: string; suggestion?: string }[] = [
    { given: { action: 'withdraw', parms: { amount: 1 } }, field: 'parms', suggestion: 'params' },
    { given: { action: 'withdraw', params: { amount: 1 }, skil: 'bank' }, field: 'skil', suggestion: 'skill' },
    { given: { action: 'withdraw', amount: 1 }, field: 'amount' },
  ];

  it.each(cases)('cmd refuses $field (invalid_instruction) and runs nothing', async ({ given, field, suggestion }) => {
    const agent = Bank.new({ id: 'b1' });
    const error = onlyError(await cmd(agent, given as unknown as Instruction), agent.state);
    expect(error).toMatchObject({ code: 'invalid_instruction', action: 'withdraw', subject: field, details: { field, known: ['action', 'params', 'skill'] } });
    expect(error.message).toContain(`instruction for 'withdraw': ${field} is not a field of an instruction`);
    if (suggestion) {
      expect(error.message).toContain(`did you mean '${suggestion}'?`);
      expect(error.details).toMatchObject({ suggestion });
    } else expect(error.details).not.toHaveProperty('suggestion');
  });

  it('as does a route handler returning one, and ref.run', async () => {
    const system = createAgentSystem();
    try {
      const ref = system.spawn(Bank, { id: 'b2' });
      const refused = await ref.run({ action: 'withdraw', parms: { amount: 30 } } as unknown as Instruction).catch((caught: unknown) => caught);
      expect(refused).toBeInstanceOf(RuntimeError);
      expect(refused).toMatchObject({ code: 'invalid_instruction', subject: 'parms', details: { suggestion: 'params' } });
      expect((refused as RuntimeError).message).toMatch(/parms is not a field of an instruction; did you mean 'params'\?/);
      const handled = await ref.call(createSignal('bank.handled')).catch((caught: unknown) => caught);
      expect(handled).toMatchObject({ code: 'invalid_instruction' });
      expect((handled as RuntimeError).message).toMatch(/route handler for 'bank.handled' returned an invalid instruction: .*parms is not a field of an instruction; did you mean 'params'\?/);
      // Nothing ran, and the agent answers the next run.
      expect(ref.getSnapshot().state).toMatchObject({ bank: { balance: 100 } });
      await expect(ref.run({ action: 'withdraw', params: { amount: 30 } })).resolves.toEqual({ balance: 70 });
    } finally {
      await system.shutdown();
    }
  });
});

describe("cmd's options", () => {
  it.each([
    [{ bogus: 1 }, 'bogus', undefined],
    [{ onEror: 'continue' }, 'onEror', 'onError'],
    [{ singal: createSignal('bank.withdraw') }, 'singal', 'signal'],
  ] as const)('%o is refused (invalid_options) and nothing runs', async (options, option, suggestion) => {
    const agent = Bank.new({ id: 'b3' });
    for (const run of [cmd(agent, { action: 'withdraw' }, options as object), Bank.cmd(agent, { action: 'withdraw' }, options as object)]) {
      const error = onlyError(await run, agent.state);
      expect(error).toMatchObject({ code: 'invalid_options', subject: option, details: { option, known: ['signal', 'onError'] } });
      expect(error.message).toContain(`unknown option '${option}'`);
      if (suggestion) expect(error.message).toContain(`did you mean '${suggestion}'?`);
    }
  });

  it('an onError that is neither stop nor continue is refused', async () => {
    const agent = Bank.new({ id: 'b4' });
    const error = onlyError(await cmd(agent, ['withdraw', 'withdraw'], { onError: 'contine' as 'continue' }), agent.state);
    expect(error).toMatchObject({ code: 'invalid_options', subject: 'onError', details: { option: 'onError', value: 'contine' } });
    expect(error.message).toBe("cmd's onError must be 'stop' or 'continue', got a string, 'contine'");
  });

  it('options that are not an object are refused', async () => {
    const agent = Bank.new({ id: 'b5' });
    const error = onlyError(await cmd(agent, 'withdraw', 'continue' as unknown as object), agent.state);
    expect(error).toMatchObject({ code: 'invalid_options' });
    expect(error.message).toContain("cmd options must be an object such as { onError: 'continue' }");
  });
});

describe('result(output, changes) with a change it does not take', () => {
  it('fails the action with invalid_output naming the key, the change it meant and the changes there are', async () => {
    const agent = Bank.new({ id: 'b6' });
    const cases = [
      { action: 'typo_state', field: 'stat', suggestion: 'state' },
      { action: 'typo_effects', field: 'efects', suggestion: 'effects' },
      { action: 'odd_change', field: 'rollback', suggestion: undefined },
    ];
    for (const { action, field, suggestion } of cases) {
      const run = await cmd(agent, action);
      const error = onlyError(run, agent.state);
      // Nothing of the result is applied: not the state update given next to the misspelled key, nor an effect.
      expect(run.effects.map((effect) => effect.type)).toEqual(['error']);
      expect(error).toMatchObject({ code: 'invalid_output', action, skill: 'bank', subject: field, details: { field, known: ['state', 'effects', 'mount', 'unmount', 'replace'] } });
      expect(error.message).toContain(`action '${action}' returned a result it cannot apply: result(output, changes) was given '${field}', which is not a change`);
      expect(error.message).toContain('(changes: state, effects, mount, unmount, replace)');
      if (suggestion) expect(error.message).toContain(`did you mean '${suggestion}'?`);
      expect(error.details).toEqual(suggestion ? { field, known: ['state', 'effects', 'mount', 'unmount', 'replace'], suggestion } : { field, known: ['state', 'effects', 'mount', 'unmount', 'replace'] });
    }
  });

  it('changes that are not an object are refused too', async () => {
    const agent = Bank.new({ id: 'b7' });
    const error = onlyError(await cmd(agent, 'number_changes'), agent.state);
    expect(error).toMatchObject({ code: 'invalid_output', action: 'number_changes' });
    expect(error.message).toContain('result(output, changes) was given changes that are not an object (5)');
  });

  it('in a running agent: the call rejects, the agent keeps its state and answers the next call', async () => {
    const system = createAgentSystem();
    try {
      const ref = system.spawn(Bank, { id: 'b8' });
      await expect(ref.call(createSignal('bank.withdraw', { amount: 10 }))).resolves.toEqual({ balance: 90 });
      for (const type of ['bank.typo_state', 'bank.typo_effects']) {
        const refused = await ref.call(createSignal(type)).catch((caught: unknown) => caught);
        expect(refused).toBeInstanceOf(RuntimeError);
        expect(refused).toMatchObject({ code: 'invalid_output', details: { suggestion: type === 'bank.typo_state' ? 'state' : 'effects' } });
        expect(ref.getSnapshot().state).toMatchObject({ bank: { balance: 90 } });
      }
      await expect(ref.call(createSignal('bank.withdraw', { amount: 5 }))).resolves.toEqual({ balance: 85 });
    } finally {
      await system.shutdown();
    }
  });
});

describe('Decision.handle with a key it does not take', () => {
  it('fails the step with hook_failed naming the key; the agent keeps its state and answers', async () => {
    const guard = defineSkill({
      name: 'guard',
      signalPatterns: ['bank.freeze'],
      handleSignal: () => Decision.handle({ stat: { balance: 0 } } as { output?: unknown }),
    });
    const system = createAgentSystem();
    try {
      const ref = system.spawn(defineAgent({ name: 'guarded', skills: [bank, guard] }), { id: 'g1' });
      const refused = await ref.call(createSignal('bank.freeze')).catch((caught: unknown) => caught);
      expect(refused).toMatchObject({ code: 'hook_failed', skill: 'guard', subject: 'stat' });
      expect((refused as RuntimeError).message).toContain("returned Decision.handle whose stat is not a field of Decision.handle; did you mean 'state'? (fields: decision, state, effects, output)");
      expect(ref.getSnapshot().state).toMatchObject({ bank: { balance: 100 } });
      await expect(ref.call(createSignal('bank.withdraw', { amount: 1 }))).resolves.toEqual({ balance: 99 });
    } finally {
      await system.shutdown();
    }
  });
});

describe('fail(reason) with a reason that is not a code string', () => {
  it('does not throw where it is called, and fails the action with invalid_output saying why', async () => {
    expect(() => fail(404 as unknown as string)).not.toThrow();
    const agent = Bank.new({ id: 'b9' });
    const error = onlyError(await cmd(agent, 'http_fail'), agent.state);
    expect(error).toMatchObject({ code: 'invalid_output', action: 'http_fail', skill: 'bank' });
    expect(error.message).toBe("action 'http_fail' returned a failure that cannot be reported: fail(reason) needs a reason code string such as 'not_found', got 404");
  });
});

describe('an effect whose meta has a key it does not take', () => {
  it('fails the action with invalid_effect naming the key and the one it meant', async () => {
    const agent = Bank.new({ id: 'b10' });
    const error = onlyError(await cmd(agent, 'tagged_emit'), agent.state);
    expect(error).toMatchObject({ code: 'invalid_effect', action: 'tagged_emit' });
    expect(error.message).toContain("effect 'emit' has a meta whose tag is not a field of an effect meta; did you mean 'tags'? (fields: skill, tags)");
  });

  it('Effects.emit(signal, { bogus }) is no well-formed effect', () => {
    const effect = Effects.emit(createSignal('bank.sent'), { bogus: 1 } as unknown as { skill: string });
    expect(Effects.isEmit(effect)).toBe(false);
  });
});

describe("definition.new()'s options", () => {
  it('a misspelled id is refused with a StateError (invalid_options), not replaced by a random id', () => {
    let refused: unknown;
    try {
      Bank.new({ idd: 'mine' } as unknown as { id: string });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(StateError);
    expect(refused).toMatchObject({ code: 'invalid_options', subject: 'idd', details: { option: 'idd', known: ['id', 'state'], suggestion: 'id' } });
    expect((refused as StateError).message).toBe("agent 'bank_agent': unknown option 'idd'; did you mean 'id'? (new() options are: id, state)");
    expect(Bank.new({ id: 'mine' }).id).toBe('mine');
  });
});

describe('tool options', () => {
  const withdraw = bank.actions[0]!;

  it('toolsForAgent and agentToolset refuse a misspelled strict, as a ref.toolset does', async () => {
    const agent = Bank.new({ id: 'b11' });
    const system = createAgentSystem();
    try {
      const ref = system.spawn(Bank, { id: 'b12' });
      const calls: [string, () => unknown][] = [
        ['toolsForAgent', () => toolsForAgent(agent, { strictt: true } as ToolOptions)],
        ['agentToolset', () => agentToolset(agent, { strictt: true } as ToolOptions)],
        ['toolset', () => ref.toolset({ strictt: true } as ToolOptions)],
      ];
      for (const [where, call] of calls) {
        expect(call).toThrow(RuntimeError);
        expect(call).toThrow(`unknown option 'strictt'; did you mean 'strict'? (${where} options are: strict)`);
        try {
          call();
        } catch (error) {
          expect(error).toMatchObject({ code: 'invalid_options', subject: 'strictt', details: { option: 'strictt', known: ['strict'], suggestion: 'strict' } });
        }
      }
      expect(toolsForAgent(agent, { strict: true }).map((tool) => tool.function.name)).toContain('withdraw');
    } finally {
      await system.shutdown();
    }
  });

  it('toolForAction refuses a misspelled name', () => {
    expect(() => toolForAction(withdraw, { nmae: 'take' } as ToolOptions)).toThrow("unknown option 'nmae'; did you mean 'name'? (toolForAction options are: strict, name)");
    expect(toolForAction(withdraw, { name: 'take' }).function.name).toBe('take');
  });
});

describe('signal types', () => {
  it('a letter outside ASCII is refused with a message that says ASCII letters', () => {
    let refused: unknown;
    try {
      createSignal('order.café');
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(SignalError);
    expect((refused as SignalError).message).toBe("signal type 'order.café' has an invalid segment 'café' (allowed: ASCII letters, digits, '_' and '-')");
    expect(createSignal('order.cafe').type).toBe('order.cafe');
  });
});
