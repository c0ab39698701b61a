/**
 * A turn is plain data in the agent's state: persisted in the middle (thinking, or waiting for an
 * approval) and restored in another system, it goes on where it was. Approvals pause a turn
 * until a person answers.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { chatMessage, conversation, createSignal, defineAction, defineAgent, defineSkill, result, type AgentRef, type AgentSnapshot, type ConversationState } from '../../src/index.js';
import { scriptedModel, type ScriptedCall, type ScriptedResponse } from '../../src/testing/index.js';
import { systemPerTest } from '../runtime/fixtures.js';
import { assistant, chatOf, next, observed, record, turnStates } from './fixtures.js';

const systems = systemPerTest();
const Assistant = assistant();

function paidOf(state: unknown): unknown[] {
  return (state as { ledger: { paid: unknown[] } }).ledger.paid;
}

/** Persists the agent as JSON text would carry it to another process. */
function carried(snapshot: AgentSnapshot): unknown {
  return JSON.parse(JSON.stringify(snapshot));
}

describe('approval', () => {
  it('pauses in awaiting-approval, survives persist and restore in a new system, and runs the tool once when approved', async () => {
    const first = systems.start({ models: { default: scriptedModel([{ toolCalls: [{ tool: 'pay', args: { to: 'Bob', amount: 5 }, id: 'pay-1' }] }]) } });
    const agent = first.spawn(Assistant, { id: 'ada' });
    const asked = next(first, 'chat.turn.approval');
    const pending = agent.call(chatMessage('Pay Bob 5'), { timeout: 10_000 });
    expect((await asked).data).toMatchObject({ agent: 'ada', turn: 1, toolCallId: 'pay-1', tool: 'pay', args: { to: 'Bob', amount: 5 } });
    expect(chatOf(agent).turn).toMatchObject({ status: 'awaiting-approval', pending: [{ toolCallId: 'pay-1', approval: 'needed' }] });
    expect(paidOf(agent.getSnapshot().state)).toEqual([]);

    const snapshot = carried(agent.persist());
    await first.shutdown();
    await expect(pending).rejects.toMatchObject({ code: 'agent_stopped' });

    const model = scriptedModel([{ text: 'Paid Bob 5.' }]);
    const seen = observed();
    const second = systems.start({ models: { default: model }, definitions: [Assistant], trace: seen.trace });
    const restored = second.restore(snapshot);
    const answered = next(second, 'chat.turn.answered');
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(turnStates(seen.records, 'ada', 1)).toEqual(['awaiting-approval']);

    restored.send(createSignal('chat.approve', { toolCallId: 'pay-1' }));
    expect((await answered).data).toMatchObject({ turn: 1, text: 'Paid Bob 5.' });
    expect(paidOf(restored.getSnapshot().state)).toEqual([{ to: 'Bob', amount: 5 }]);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(turnStates(seen.records, 'ada', 1)).toEqual(['awaiting-approval', 'acting', 'thinking', 'answered']);
    expect(JSON.stringify(model.calls[0]!.messages)).toContain('"paid":5');
  });

  it('runs the calls of one response one by one in the order asked: a call after an approval waits for it', async () => {
    const model = scriptedModel([
      {
        toolCalls: [
          { tool: 'add', args: { a: 1, b: 1 }, id: 'add-1' },
          { tool: 'pay', args: { to: 'Bob', amount: 5 }, id: 'pay-1' },
          { tool: 'balance', args: {}, id: 'balance-1' },
        ],
      },
      { text: 'Done.' },
    ]);
    const seen = observed();
    const system = systems.start({ models: { default: model }, trace: seen.trace });
    const agent = system.spawn(Assistant, { id: 'ordered' });
    const asked = next(system, 'chat.turn.approval');
    const answer = agent.call(chatMessage('Add, pay Bob 5, then tell me the balance'), { timeout: 10_000 });
    expect((await asked).data).toMatchObject({ toolCallId: 'pay-1' });
    // The call before the approval ran; the one after it waits with it.
    expect(chatOf(agent).turn).toMatchObject({ status: 'awaiting-approval', pending: [{ toolCallId: 'pay-1' }, { toolCallId: 'balance-1' }] });
    expect(paidOf(agent.getSnapshot().state)).toEqual([]);
    agent.send(createSignal('chat.approve', { toolCallId: 'pay-1' }));
    await expect(answer).resolves.toBe('Done.');
    const results = chatOf(agent).messages.filter((m) => m.role === 'tool').flatMap((m) => m.content as { toolCallId: string; output: { value: unknown } }[]);
    expect(results.map((r) => r.toolCallId)).toEqual(['add-1', 'pay-1', 'balance-1']);
    // The balance ran after the payment, so it counts it.
    expect(results[2]!.output.value).toEqual({ total: 5 });
    const steps = seen.records.flatMap((r) => (r.kind === 'step' && r.agent === 'ordered' ? [r.subject] : []));
    // A call that runs is recorded in its own step.
    expect(steps).toEqual(['chat.message', 'record_step', 'add,record_tool_result', 'chat.approve', 'pay,record_tool_result', 'balance,record_tool_result', 'record_step']);
  });

  it('tells the model a denied call was denied, and runs nothing', async () => {
    const model = scriptedModel([{ toolCalls: [{ tool: 'pay', args: { to: 'Eve', amount: 1000 }, id: 'pay-1' }] }, { text: 'I did not pay Eve.' }]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(Assistant);
    const asked = next(system, 'chat.turn.approval');
    const answer = agent.call(chatMessage('Pay Eve 1000'), { timeout: 10_000 });
    await asked;
    agent.send(createSignal('chat.deny', { toolCallId: 'pay-1', reason: 'too much' }));
    await expect(answer).resolves.toBe('I did not pay Eve.');
    expect(paidOf(agent.getSnapshot().state)).toEqual([]);
    const result = chatOf(agent).messages.find((m) => m.role === 'tool')!;
    expect(result.content).toEqual([{ type: 'tool-result', toolCallId: 'pay-1', toolName: 'pay', output: { type: 'execution-denied', reason: 'too much' } }]);
  });

  it('refuses an approval for a tool call that is not waiting, and keeps the turn as it was', async () => {
    const system = systems.start({ models: { default: scriptedModel([{ toolCalls: [{ tool: 'pay', args: { to: 'Bob', amount: 5 }, id: 'pay-1' }] }]) } });
    const agent = system.spawn(Assistant);
    const asked = next(system, 'chat.turn.approval');
    void agent.call(chatMessage('Pay Bob 5'), { timeout: 10_000 }).catch(() => {});
    await asked;
    const before = chatOf(agent);
    await expect(agent.call(createSignal('chat.approve', { toolCallId: 'pay-2' }))).rejects.toMatchObject({
      code: 'action_failed',
      message: expect.stringContaining("tool call 'pay-2' is not waiting for approval (tool call 'pay-1' is)"),
    });
    expect(chatOf(agent)).toBe(before);
  });
});

describe('persisted in the middle of a turn', () => {
  it('restored in another system, a turn that was thinking asks the model again and answers', async () => {
    const slow = scriptedModel([{ text: 'never sent', delay: 5_000 }]);
    const first = systems.start({ models: { default: slow } });
    const agent = first.spawn(Assistant, { id: 'ada' });
    const started = next(first, 'chat.turn.started');
    void agent.call(chatMessage('What is the capital of France?'), { timeout: 10_000 }).catch(() => {});
    await started;
    expect(chatOf(agent).turn).toMatchObject({ status: 'thinking', steps: 0 });
    const snapshot = carried(agent.persist());
    await first.shutdown();

    const model = scriptedModel([{ text: 'Paris.' }]);
    const second = systems.start({ models: { default: model }, definitions: [Assistant] });
    const answered = next(second, 'chat.turn.answered');
    const restored = second.restore(snapshot);
    expect((await answered).data).toMatchObject({ agent: 'ada', turn: 1, text: 'Paris.' });
    expect(model.calls[0]!.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'What is the capital of France?' }] }]);
    expect(chatOf(restored)).toMatchObject({ turn: null, last: { outcome: 'answered', text: 'Paris.' } });
  });

  it('a restored agent without a turn in flight starts nothing', async () => {
    const model = scriptedModel([{ text: 'hello' }]);
    const first = systems.start({ models: { default: model } });
    const agent = first.spawn(Assistant);
    await agent.call(chatMessage('hi'));
    const snapshot = carried(agent.persist());
    const other = scriptedModel([]);
    const second = systems.start({ models: { default: other }, definitions: [Assistant] });
    const signals = record(second, 'chat.**');
    second.restore({ ...(snapshot as object), id: 'copy', agent: { ...(snapshot as { agent: object }).agent, id: 'copy' } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(signals).toEqual([]);
    expect(other.calls).toEqual([]);
  });
});

describe('a tool call and its record commit together', () => {
  const tallyState = z.object({ total: z.number().default(0) });
  const tally = defineSkill({
    name: 'tally',
    schema: tallyState,
    actions: [
      defineAction({
        name: 'tally',
        description: 'Adds an amount to the running total',
        input: z.object({ amount: z.number() }),
        state: tallyState,
        run: ({ amount }, { skillState }) => result({ total: skillState.total + amount }, { state: { total: skillState.total + amount } }),
      }),
    ],
  });
  // No tool needs approval: the calls run inside the AI SDK's own step.
  const Tallier = defineAgent({ name: 'tallier', skills: [[conversation, { stream: false }], tally] });

  /** Asks for `tally 2` and `tally 3` in one answer, then says the total the results show. */
  function tallyModel(call: ScriptedCall): ScriptedResponse {
    const results = call.messages.flatMap((m) => (m.role === 'tool' ? m.content : [])) as unknown as { output: { value: { total: number } } }[];
    if (results.length === 0) return { text: 'Adding.', toolCalls: [{ tool: 'tally', args: { amount: 2 }, id: 't1' }, { tool: 'tally', args: { amount: 3 }, id: 't2' }] };
    return { text: `The total is ${results.at(-1)!.output.value.total}.` };
  }

  /** The amounts of the tally calls a snapshot's conversation holds: in its history and in the step in progress. */
  function recordedAmounts(state: { conversation: ConversationState }): number[] {
    const chat = state.conversation;
    const asked = new Map<string, number>();
    for (const message of chat.messages) {
      if (message.role !== 'assistant' || !Array.isArray(message.content)) continue;
      for (const part of message.content as { type: string; toolCallId: string; input: { amount: number } }[]) if (part.type === 'tool-call') asked.set(part.toolCallId, part.input.amount);
    }
    const answered = chat.messages.flatMap((m) => (m.role === 'tool' ? (m.content as { toolCallId: string; output: { type: string } }[]) : []));
    return [
      ...answered.filter((part) => part.output.type === 'json').map((part) => asked.get(part.toolCallId)!),
      ...(chat.turn?.ran ?? []).map((call) => (call.args as { amount: number }).amount),
    ];
  }

  it('every snapshot taken during a turn records each tool call whose effect it holds; restored after the calls ran, the turn goes on without running them again', async () => {
    const first = systems.start({ models: { default: scriptedModel([tallyModel], { loop: true }) } });
    const agent = first.spawn(Tallier, { id: 'tim' }) as AgentRef<{ tally: { total: number }; conversation: ConversationState }>;
    // Saved on every change of the agent, as an app that keeps its agents in a database would.
    type Saved = { agent: { state: { tally: { total: number }; conversation: ConversationState } } };
    const saved: { total: number; snapshot: Saved }[] = [];
    agent.actor.subscribe(() => {
      const snapshot = carried(agent.persist()) as Saved;
      saved.push({ total: snapshot.agent.state.tally.total, snapshot });
    });
    await expect(agent.call(chatMessage('Tally 2 and 3'), { timeout: 10_000 })).resolves.toBe('The total is 5.');
    for (const { total, snapshot } of saved) {
      const amounts = recordedAmounts(snapshot.agent.state);
      expect(amounts.reduce((sum, amount) => sum + amount, 0)).toBe(total);
    }
    // The last snapshot with the first call run and the model step not recorded yet (the second
    // call's step records the model step with it): the process dies there.
    const midStep = saved.findLast(({ snapshot }) => (snapshot.agent.state.conversation.turn?.ran.length ?? 0) === 1);
    expect(midStep).toBeDefined();
    expect(midStep!.total).toBe(2);
    expect(saved.some(({ snapshot }) => (snapshot.agent.state.conversation.turn?.ran.length ?? 0) > 1)).toBe(false);
    await first.shutdown();

    const model = scriptedModel([tallyModel], { loop: true });
    const seen = observed();
    const second = systems.start({ models: { default: model }, definitions: [Tallier], trace: seen.trace });
    const answered = next(second, 'chat.turn.answered');
    const restored = second.restore(midStep!.snapshot as unknown as AgentSnapshot) as AgentRef<{ tally: { total: number } }>;
    expect((await answered).data).toMatchObject({ agent: 'tim', turn: 1, text: 'The total is 2.' });
    expect(restored.getSnapshot().state.tally.total).toBe(2);
    // The model was asked once, with the call that ran and its result in its history.
    expect(model.calls).toHaveLength(1);
    expect(JSON.stringify(model.calls[0]!.messages)).toContain('"total":2');
    const steps = seen.records.flatMap((r) => (r.kind === 'step' && r.agent === 'tim' ? [r.subject] : []));
    expect(steps).toEqual(['settle_step', 'record_step']);
    const chat = chatOf(restored);
    expect(chat.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(chat.last).toMatchObject({ outcome: 'answered' });
  });

  it('an approved call is recorded by the step that runs it: no snapshot holds the payment with the call still waiting', async () => {
    const first = systems.start({ models: { default: scriptedModel([{ toolCalls: [{ tool: 'pay', args: { to: 'Bob', amount: 5 }, id: 'pay-1' }] }, { text: 'Paid.' }]) } });
    const agent = first.spawn(Assistant, { id: 'ada' });
    const saved: unknown[] = [];
    agent.actor.subscribe(() => saved.push(carried(agent.persist())));
    const asked = next(first, 'chat.turn.approval');
    const answer = agent.call(chatMessage('Pay Bob 5'), { timeout: 10_000 });
    await asked;
    agent.send(createSignal('chat.approve', { toolCallId: 'pay-1' }));
    await expect(answer).resolves.toBe('Paid.');
    // No snapshot holds the payment with the call still waiting to run.
    for (const snapshot of saved) {
      const { state } = (snapshot as { agent: { state: { ledger: { paid: unknown[] }; conversation: ConversationState } } }).agent;
      if (state.ledger.paid.length > 0) expect(state.conversation.turn?.pending ?? []).toEqual([]);
      else expect(JSON.stringify(state.conversation.messages)).not.toContain('"paid":5');
    }
  });

  it('a call that answers after its toolTimeout is recorded, by its own step, as timed out: what the model is told', async () => {
    const slowState = z.object({ total: z.number().default(0) });
    const busyWait = (ms: number) => {
      const end = Date.now() + ms;
      while (Date.now() < end);
    };
    for (const needsApproval of [false, true]) {
      const slow = defineSkill({
        name: 'slow',
        schema: slowState,
        actions: [
          defineAction({
            name: 'crunch',
            description: 'Adds one, slowly',
            input: z.object({}),
            state: slowState,
            needsApproval,
            run: (_params: Record<string, never>, { skillState }) => {
              busyWait(120);
              return result({ total: skillState.total + 1 }, { state: { total: skillState.total + 1 } });
            },
          }),
        ],
      });
      const Slow = defineAgent({ name: `slow_${needsApproval}`, skills: [[conversation, { stream: false, toolTimeout: 50 }], slow] });
      const system = systems.start({ models: { default: scriptedModel([{ toolCalls: [{ tool: 'crunch', args: {}, id: 'c1' }] }, { text: 'done' }]) } });
      const agent = system.spawn(Slow) as AgentRef<{ slow: { total: number }; conversation: ConversationState }>;
      const saved: { slow: { total: number }; conversation: ConversationState }[] = [];
      agent.actor.subscribe(() => saved.push((carried(agent.persist()) as { agent: { state: (typeof saved)[number] } }).agent.state));
      const asked = needsApproval ? next(system, 'chat.turn.approval') : undefined;
      const answer = agent.call(chatMessage('crunch'), { timeout: 10_000 });
      if (asked) {
        await asked;
        agent.send(createSignal('chat.approve', { toolCallId: 'c1' }));
      }
      await expect(answer).resolves.toBe('done');
      const results = chatOf(agent).messages.flatMap((m) => (m.role === 'tool' ? (m.content as { output: { type: string; value: string } }[]) : []));
      expect(results.map((r) => r.output)).toEqual([{ type: 'error-text', value: expect.stringMatching(/^timeout: tool 'crunch' of agent '.*' gave no answer within 50 ms$/) }]);
      expect(agent.getSnapshot().state.slow.total).toBe(1);
      // No snapshot holds the effect without the call recorded (in the step in progress, or answered in the history).
      for (const state of saved) {
        if (state.slow.total === 0) continue;
        const inHistory = JSON.stringify(state.conversation.messages).includes('"toolCallId":"c1","toolName":"crunch","output"');
        const inStep = (state.conversation.turn?.ran ?? []).some((call) => call.toolCallId === 'c1' && call.error?.code === 'timeout');
        expect(inHistory || inStep).toBe(true);
        expect(state.conversation.turn?.pending ?? []).toEqual([]);
      }
    }
  });
});

