/**
 * A model turn as spans with the GenAI semantic conventions: the turn, each model call, each tool
 * call, an approval waited for, a compaction; and prompts recorded only when the user opts in.
 */
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { chatMessage, conversation, createSignal, defineAgent } from '../../src/index.js';
import { calculator } from '../../skills/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { systemPerTest } from '../runtime/fixtures.js';
import { assistant, next } from '../model/fixtures.js';
import { recordSpans } from './fixtures.js';

const systems = systemPerTest();

const Calculating = defineAgent({ name: 'calculating', skills: [[conversation, { instructions: 'You add numbers.', stream: false }], calculator] });

const usage = (input: number, output: number) => ({ inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: output, text: output, reasoning: 0 } });

/** The AI SDK's mock model: two tool calls in its first answer, then a text answer. */
function twoCalls(): MockLanguageModelV3 {
  let calls = 0;
  return new MockLanguageModelV3({
    provider: 'acme',
    modelId: 'acme-small',
    doGenerate: async () => {
      calls++;
      if (calls === 1) {
        return {
          content: [
            { type: 'tool-call', toolCallId: 'c1', toolName: 'add', input: JSON.stringify({ a: 2, b: 3 }) },
            { type: 'tool-call', toolCallId: 'c2', toolName: 'add', input: JSON.stringify({ a: 5, b: 5 }) },
          ],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage: usage(20, 8),
          warnings: [],
          response: { id: 'resp-1', modelId: 'acme-small-2026' },
        };
      }
      return { content: [{ type: 'text', text: 'The sums are 5 and 10.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(40, 9), warnings: [] };
    },
  });
}

describe('a model turn', () => {
  it('is an invoke_agent span holding a chat span per model call and an execute_tool span per tool call', async () => {
    const recorded = recordSpans();
    const system = systems.start({ models: { default: twoCalls() } });
    const agent = system.spawn(Calculating, { id: 'ada' });
    await expect(agent.call(chatMessage('Add 2 and 3, and 5 and 5.'))).resolves.toBe('The sums are 5 and 10.');

    const turn = recorded.one('invoke_agent calculating');
    expect(turn.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'calculating', 'gen_ai.agent.id': 'ada', 'skillstate.turn.n': 1, 'skillstate.turn.phase': 'answered' });
    // The turn continues the trace of the step that took the user's message.
    expect(recorded.parentOf(turn)).toBe(recorded.one('step chat.message'));

    const chats = recorded.named('chat acme-small');
    expect(chats).toHaveLength(2);
    for (const chat of chats) expect(recorded.parentOf(chat)).toBe(turn);
    expect(chats[0]!.kind).toBe(2); // SpanKind.CLIENT
    expect(chats[0]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'acme',
      'gen_ai.request.model': 'acme-small',
      'gen_ai.response.model': 'acme-small-2026',
      'gen_ai.response.id': 'resp-1',
      'gen_ai.response.finish_reasons': ['tool-calls'],
      'gen_ai.usage.input_tokens': 20,
      'gen_ai.usage.output_tokens': 8,
    });
    expect(chats[1]!.attributes).toMatchObject({ 'gen_ai.response.finish_reasons': ['stop'], 'gen_ai.usage.input_tokens': 40, 'gen_ai.usage.output_tokens': 9 });

    const tools = recorded.named('execute_tool add');
    expect(tools.map((tool) => tool.attributes['gen_ai.tool.call.id'])).toEqual(['c1', 'c2']);
    for (const tool of tools) {
      expect(tool.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'add', 'gen_ai.tool.type': 'function' });
      expect(recorded.parentOf(tool)).toBe(turn);
    }
    // Each tool call is a step of the agent, inside the tool call's span.
    const runs = recorded.named('step run add');
    expect(runs.map((run) => recorded.parentOf(run))).toEqual(tools);
    // Nothing of what was said is recorded unless asked for.
    const said = recorded.spans().flatMap((span) => Object.keys(span.attributes)).filter((key) => key.endsWith('.messages') || key.includes('system_instructions') || key.startsWith('gen_ai.tool.call.'));
    expect(said.filter((key) => key !== 'gen_ai.tool.call.id')).toEqual([]);
  });

  it('a tool call that fails ends its span with the error code', async () => {
    const recorded = recordSpans();
    const model = scriptedModel([{ toolCalls: [{ tool: 'balance', args: { explode: true }, id: 'b1' }] }, { text: 'The ledger is offline.' }]);
    const system = systems.start({ models: { default: model } });
    await system.spawn(assistant({ stream: false }), { id: 'ada' }).call(chatMessage('balance?'));
    const tool = recorded.one('execute_tool balance');
    expect(tool.status.code).toBe(2);
    expect(tool.attributes['error.type']).toBe('ledger_offline');
  });

  it('a model call that fails ends its span and the turn span with the error code', async () => {
    const recorded = recordSpans();
    const model = new MockLanguageModelV3({ doGenerate: async () => Promise.reject(new Error('socket hang up')) });
    const system = systems.start({ models: { default: model } });
    await expect(system.spawn(assistant({ stream: false, retries: 0 }), { id: 'ada' }).call(chatMessage('Hi'))).rejects.toMatchObject({ code: 'model_failed' });
    const chat = recorded.one('chat mock-model-id');
    expect(chat.attributes['error.type']).toBe('model_failed');
    expect(chat.status).toMatchObject({ code: 2, message: expect.stringContaining('socket hang up') });
    const turn = recorded.one('invoke_agent assistant');
    expect(turn.attributes).toMatchObject({ 'skillstate.turn.phase': 'failed', 'error.type': 'model_failed' });
  });

  it('an approval waited for is an event on the turn; the approved call runs in a turn span continuing the approval', async () => {
    const recorded = recordSpans();
    const model = scriptedModel([{ toolCalls: [{ tool: 'pay', args: { to: 'Bob', amount: 5 }, id: 'pay-1' }] }, { text: 'Paid Bob 5.' }]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(assistant({ stream: false }), { id: 'ada' });
    const asked = next(system, 'chat.turn.approval');
    const answered = agent.call(chatMessage('Pay Bob 5'));
    await asked;
    const answeredSignal = next(system, 'chat.turn.answered');
    agent.send(createSignal('chat.approve', { toolCallId: 'pay-1' }));
    await expect(answered).resolves.toBe('Paid Bob 5.');
    await answeredSignal;
    await new Promise<void>((resolve) => setImmediate(resolve));

    const [waiting, resumed] = recorded.named('invoke_agent assistant');
    expect(waiting!.attributes['skillstate.turn.phase']).toBe('awaiting-approval');
    expect(waiting!.events.map((event) => [event.name, event.attributes?.['gen_ai.tool.name'], event.attributes?.['gen_ai.tool.call.id']])).toEqual([['skillstate.approval.waiting', ['pay'], ['pay-1']]]);
    expect(recorded.parentOf(resumed!)).toBe(recorded.one('step chat.approve'));
    expect(recorded.parentOf(recorded.one('execute_tool pay'))).toBe(resumed);
  });

  it('a denied call is an event on the turn, and no tool span', async () => {
    const recorded = recordSpans();
    const model = scriptedModel([{ toolCalls: [{ tool: 'pay', args: { to: 'Bob', amount: 5 }, id: 'pay-1' }] }, { text: 'Not paid.' }]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(assistant({ stream: false }), { id: 'ada' });
    const asked = next(system, 'chat.turn.approval');
    const answered = agent.call(chatMessage('Pay Bob 5'));
    await asked;
    agent.send(createSignal('chat.deny', { toolCallId: 'pay-1' }));
    await expect(answered).resolves.toBe('Not paid.');
    await new Promise<void>((resolve) => setImmediate(resolve));
    const events = recorded.named('invoke_agent assistant').flatMap((span) => span.events.map((event) => event.name));
    expect(events).toEqual(['skillstate.approval.waiting', 'skillstate.approval.denied']);
    expect(recorded.named('execute_tool pay')).toEqual([]);
  });

  it('a compaction is a span of the turn naming the strategy and what it removed', async () => {
    const recorded = recordSpans();
    const model = scriptedModel([{ toolCalls: [{ tool: 'add', args: { a: 1, b: 2 } }] }, { text: 'It is 3, which is the sum of one and two as asked.' }, { text: 'Still here.' }]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(defineAgent({ name: 'forgetful', skills: [[conversation, { stream: false, history: { maxTokens: 40, keepTurns: 1, strategy: 'drop' } }], calculator] }), { id: 'ada' });
    await agent.call(chatMessage('what is one plus two, please tell me'));
    await agent.call(chatMessage('are you there?'));
    const compaction = recorded.one('compact forgetful');
    expect(compaction.attributes).toMatchObject({ 'skillstate.compaction.strategy': 'drop', 'skillstate.compaction.messages_removed': 4 });
    const [, second] = recorded.named('invoke_agent forgetful');
    expect(recorded.parentOf(compaction)).toBe(second);
  });
});

describe('prompts and completions', () => {
  it('are recorded with recordContent: true, as the GenAI attributes', async () => {
    const recorded = recordSpans();
    const system = systems.start({ models: { default: twoCalls() }, telemetry: { recordContent: true } });
    await system.spawn(Calculating, { id: 'ada' }).call(chatMessage('Add 2 and 3, and 5 and 5.'));
    const [first, second] = recorded.named('chat acme-small');
    expect(first!.attributes['gen_ai.system_instructions']).toContain('You add numbers.');
    expect(JSON.parse(String(first!.attributes['gen_ai.input.messages']))).toEqual([{ role: 'user', content: 'Add 2 and 3, and 5 and 5.' }]);
    expect(String(second!.attributes['gen_ai.output.messages'])).toContain('The sums are 5 and 10.');
    const [tool] = recorded.named('execute_tool add');
    expect(JSON.parse(String(tool!.attributes['gen_ai.tool.call.arguments']))).toEqual({ a: 2, b: 3 });
    expect(tool!.attributes['gen_ai.tool.call.result']).toContain('5');
  });

  it('go through the redactor given, which can change or drop each value', async () => {
    const recorded = recordSpans();
    const seen: string[] = [];
    const redact = (value: unknown, kind: string) => {
      seen.push(kind);
      return kind === 'gen_ai.input.messages' ? '[redacted]' : undefined;
    };
    const system = systems.start({ models: { default: twoCalls() }, telemetry: { recordContent: redact } });
    await system.spawn(Calculating, { id: 'ada' }).call(chatMessage('Add 2 and 3, and 5 and 5.'));
    const [first] = recorded.named('chat acme-small');
    expect(first!.attributes['gen_ai.input.messages']).toBe('[redacted]');
    expect(first!.attributes).not.toHaveProperty('gen_ai.system_instructions');
    expect(first!.attributes).not.toHaveProperty('gen_ai.output.messages');
    expect(new Set(seen)).toEqual(new Set(['gen_ai.system_instructions', 'gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.tool.call.arguments', 'gen_ai.tool.call.result']));
  });

  it('a wrong telemetry option is refused when the system is made, naming it', () => {
    expect(() => systems.start({ telemetry: { recordContents: true } as never })).toThrow(expect.objectContaining({ code: 'invalid_options', message: expect.stringContaining("'recordContents'") }));
    expect(() => systems.start({ telemetry: { recordContent: 'yes' } as never })).toThrow(expect.objectContaining({ code: 'invalid_options', message: expect.stringContaining('recordContent must be') }));
  });
});
