/**
 * A turn is plain data in the agent's state: persisted in the middle (thinking, or waiting for an
 * approval) and restored in another system, it goes on where it was. Approvals pause a turn
 * until a person answers.
 */
import { describe, expect, it } from 'vitest';
import { chatMessage, createSignal, type AgentSnapshot } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
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
    expect(steps).toEqual(['chat.message', 'record_step', 'add', 'record_tool_result', 'chat.approve', 'pay', 'record_tool_result', 'balance', 'record_tool_result', 'record_step']);
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
