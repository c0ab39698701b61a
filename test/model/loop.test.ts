/**
 * The conversation loop on a real system: turns run against a scripted model (the model is not
 * under test; everything from the AI SDK's prompt conversion to the agent's steps is real).
 */
import { describe, expect, it } from 'vitest';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { chatMessage, conversation, createSignal, defineAction, defineAgent, defineSkill, RuntimeError } from '../../src/index.js';
import { calculator } from '../../skills/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { systemPerTest } from '../runtime/fixtures.js';
import { assistant, chatOf, next, observed, record, turnStates } from './fixtures.js';

const systems = systemPerTest();

/** An agent none of whose tools needs approval: its tool calls run within the model step that asked for them. */
const Calculating = defineAgent({ name: 'calculating', skills: [[conversation, { instructions: 'You add numbers.' }], calculator] });

describe('a turn', () => {
  it('runs the tool calls the model asks for through the agent and answers the call', async () => {
    const model = scriptedModel([{ text: 'Let me add.', toolCalls: [{ tool: 'add', args: { a: 2, b: 3 } }] }, { text: '2 + 3 = 5.' }]);
    const seen = observed();
    const system = systems.start({ models: { default: model }, trace: seen.trace });
    const agent = system.spawn(Calculating, { id: 'ada' });

    await expect(agent.call(chatMessage('What is 2 + 3?'))).resolves.toBe('2 + 3 = 5.');

    expect((agent.getSnapshot().state as { calculator: { last_result: number } }).calculator.last_result).toBe(5);
    const chat = chatOf(agent);
    expect(chat.turn).toBeNull();
    expect(chat.last).toEqual({ n: 1, outcome: 'answered', text: '2 + 3 = 5.' });
    expect(chat.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(chat.usage.totalTokens).toBeGreaterThan(0);
    expect(chat.usage.totalTokens).toBe(chat.usage.inputTokens + chat.usage.outputTokens);
    // The model saw the tool's result on its second call.
    expect(JSON.stringify(model.calls[1]!.messages)).toContain('"result":5');
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(turnStates(seen.records, 'ada', 1)).toEqual(['thinking', 'acting', 'thinking', 'answered']);
    // Each tool call is a step of the agent that also records it, the model step's last call its
    // whole model step; a model step without calls is recorded in a step of its own.
    const steps = seen.records.flatMap((r) => (r.kind === 'step' && r.agent === 'ada' ? [r.subject] : []));
    expect(steps).toEqual(['chat.message', 'add,record_step', 'record_step']);
  });

  it('answers an empty string when the model says nothing, never the text of an earlier answer', async () => {
    // The scripted model answers the first turn, then says nothing: once at once, once after a tool call.
    const model = scriptedModel([{ text: 'First answer: 42.' }, { text: '' }, { text: 'Adding.', toolCalls: [{ tool: 'add', args: { a: 1, b: 1 } }] }, { text: '' }]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(Calculating);
    await expect(agent.call(chatMessage('q1'))).resolves.toBe('First answer: 42.');
    await expect(agent.call(chatMessage('q2'))).resolves.toBe('');
    expect(chatOf(agent).last).toEqual({ n: 2, outcome: 'answered', text: '' });
    await expect(agent.call(chatMessage('q3'))).resolves.toBe('');
    expect(chatOf(agent).last).toEqual({ n: 3, outcome: 'answered', text: '' });
  });

  it('works with the AI SDK mock model as well', async () => {
    const model = new MockLanguageModelV3({
      doGenerate: async () => ({
        content: [{ type: 'text', text: 'Hello.' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: { inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 2, text: 2, reasoning: 0 } },
        warnings: [],
      }),
    });
    const system = systems.start({ models: { fast: model } });
    const agent = system.spawn(assistant({ model: 'fast', stream: false }));
    await expect(agent.call(chatMessage('Hi'))).resolves.toBe('Hello.');
    expect(chatOf(agent).usage).toEqual({ inputTokens: 3, outputTokens: 2, totalTokens: 5 });
    expect(model.doGenerateCalls).toHaveLength(1);
  });

  it('builds the system prompt from the agent instructions and the active skills, and offers only model tools', async () => {
    const model = scriptedModel([{ text: 'ok' }]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(assistant());
    await agent.call(chatMessage('hello'));
    const call = model.calls[0]!;
    expect(call.system).toContain('You are a careful assistant.');
    expect(call.system).toContain('<skill name="ledger">\nPayments go through the pay tool');
    // Hidden actions (the conversation's own, the ledger's audit) are no tools; still routable.
    expect(call.tools).toEqual(['add', 'subtract', 'multiply', 'pay', 'balance']);
    await agent.call(createSignal('ledger.audit'));
    expect((agent.getSnapshot().state as { ledger: { audits: number } }).ledger.audits).toBe(1);
  });

  it('tells the model about a failing tool and goes on', async () => {
    const model = scriptedModel([{ toolCalls: [{ tool: 'balance', args: { explode: true } }] }, { text: 'The ledger is offline; try later.' }]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(assistant());
    await expect(agent.call(chatMessage('How much did we pay?'))).resolves.toBe('The ledger is offline; try later.');
    const toolMessage = chatOf(agent).messages[2]!;
    expect(toolMessage).toMatchObject({
      role: 'tool',
      // The code the action failed with, and its own reason.
      content: [{ type: 'tool-result', toolName: 'balance', output: { type: 'error-text', value: 'ledger_offline: the ledger is offline' } }],
    });
  });

  it('answers invalid arguments, malformed JSON and unknown tools with errors the model reads', async () => {
    const model = scriptedModel([
      {
        toolCalls: [
          { tool: 'add', args: { a: 'two', b: 3 }, id: 'bad-args' },
          { tool: 'add', args: '{"a": 1,', id: 'bad-json' },
          { tool: 'teleport', args: {}, id: 'unknown' },
          { tool: 'add', args: { a: 1, b: 1 }, id: 'good' },
        ],
      },
      { text: 'One of four worked.' },
    ]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(assistant());
    await expect(agent.call(chatMessage('go'))).resolves.toBe('One of four worked.');
    const results = chatOf(agent).messages.filter((m) => m.role === 'tool').flatMap((m) => m.content as { toolCallId: string; output: { type: string; value: unknown } }[]);
    const byId = Object.fromEntries(results.map((r) => [r.toolCallId, r.output]));
    expect(Object.keys(byId).sort()).toEqual(['bad-args', 'bad-json', 'good', 'unknown']);
    expect(byId['bad-args']).toEqual({ type: 'error-text', value: expect.stringMatching(/^invalid_params: /) });
    expect(byId['bad-json']!.type).toBe('error-text');
    expect(String(byId['unknown']!.value)).toContain("unavailable tool 'teleport'");
    expect(byId['good']).toEqual({ type: 'json', value: { result: 2 } });
    // Every tool call of the history has its result: valid input for the next model call.
    const asked = chatOf(agent).messages.flatMap((m) => (m.role === 'assistant' ? (m.content as { type: string; toolCallId?: string }[]).filter((p) => p.type === 'tool-call').map((p) => p.toolCallId) : []));
    expect(asked.sort()).toEqual(Object.keys(byId).sort());
  });

  it('publishes a call to a tool that does not exist as a failed chat.tool call, like a call with input that is not JSON', async () => {
    const model = scriptedModel([
      { toolCalls: [{ tool: 'teleport', args: { to: 'Mars' }, id: 'away' }, { tool: 'add', args: '{"a": 1,', id: 'cut' }, { tool: 'add', args: { a: 1, b: 2 }, id: 'sum' }] },
      { text: 'Done.' },
    ]);
    const system = systems.start({ models: { default: model } });
    const signals = record(system, 'chat.tool.*');
    const agent = system.spawn(Calculating, { id: 'ada' });
    await expect(agent.call(chatMessage('go'))).resolves.toBe('Done.');
    const seen = signals.map((signal) => [signal.type, (signal.data as { toolCallId: string }).toolCallId]);
    expect(seen).toEqual([
      ['chat.tool.call', 'away'],
      ['chat.tool.result', 'away'],
      ['chat.tool.call', 'cut'],
      ['chat.tool.result', 'cut'],
      ['chat.tool.call', 'sum'],
      ['chat.tool.result', 'sum'],
    ]);
    expect(signals[0]!.data).toEqual({ agent: 'ada', turn: 1, toolCallId: 'away', tool: 'teleport', args: { to: 'Mars' } });
    expect(signals[1]!.data).toEqual({
      agent: 'ada',
      turn: 1,
      toolCallId: 'away',
      tool: 'teleport',
      ok: false,
      error: { code: 'unknown_action', message: "Model tried to call unavailable tool 'teleport'. Available tools: add, subtract, multiply." },
    });
    expect(signals[3]!.data).toMatchObject({ tool: 'add', ok: false, error: { code: 'invalid_params', message: expect.stringContaining('JSON parsing failed') } });
  });

  it("tells the model a tool's output that is not JSON under the tool's own name and the reason, never an internal action's", async () => {
    const Counting = defineAgent({
      name: 'counting',
      skills: [
        [conversation, {}],
        defineSkill({ name: 'big', actions: [defineAction({ name: 'count_atoms', description: 'Counts atoms', input: z.object({}), run: () => ({ atoms: 10n ** 80n }) })] }),
      ],
    });
    const model = scriptedModel([{ toolCalls: [{ tool: 'count_atoms', args: {}, id: 'atoms' }] }, { text: 'Too many to say.' }]);
    const system = systems.start({ models: { default: model } });
    const results = record(system, 'chat.tool.result');
    const agent = system.spawn(Counting);
    await expect(agent.call(chatMessage('how many atoms?'))).resolves.toBe('Too many to say.');
    const tool = chatOf(agent).messages.find((m) => m.role === 'tool')!.content as { output: { type: string; value: string } }[];
    expect(tool[0]!.output).toEqual({ type: 'error-text', value: "invalid_output: the output of tool 'count_atoms' is not JSON: Do not know how to serialize a BigInt" });
    expect(results[0]!.data).toMatchObject({ tool: 'count_atoms', ok: false, error: { code: 'invalid_output', message: expect.not.stringContaining('record_tool_call') } });
  });

  it('streams the answer as chat.delta signals, in order, and the call still resolves with the whole text', async () => {
    const model = scriptedModel([{ text: 'One two three four five.' }], { chunk: 3 });
    const system = systems.start({ models: { default: model } });
    const deltas = record(system, 'chat.delta');
    const agent = system.spawn(assistant());
    const answer = await agent.call(chatMessage('count'));
    expect(answer).toBe('One two three four five.');
    expect(deltas.map((d) => (d.data as { text: string }).text)).toEqual(['One', ' tw', 'o t', 'hre', 'e f', 'our', ' fi', 've.']);
    expect(deltas.every((d) => (d.data as { agent: string }).agent === agent.id)).toBe(true);
  });

  it('queues a message that arrives during a turn and answers both, in order', async () => {
    const model = scriptedModel([{ text: 'first', delay: 30 }, { text: 'second' }]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(assistant());
    const [a, b] = await Promise.all([agent.call(chatMessage('one')), agent.call(chatMessage('two'))]);
    expect([a, b]).toEqual(['first', 'second']);
    expect(chatOf(agent).messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['one', 'two']);
    expect(chatOf(agent).turns).toBe(2);
  });

  it('keeps two agents conversing at once apart', async () => {
    const model = scriptedModel([
      (call) => ({ text: `echo: ${JSON.stringify(call.messages.at(-1))}`, delay: 10 }),
      (call) => ({ text: `echo: ${JSON.stringify(call.messages.at(-1))}`, delay: 10 }),
    ]);
    const system = systems.start({ models: { default: model } });
    const Assistant = assistant();
    const ada = system.spawn(Assistant, { id: 'ada' });
    const bob = system.spawn(Assistant, { id: 'bob' });
    const [fromAda, fromBob] = await Promise.all([ada.call(chatMessage('I am Ada')), bob.call(chatMessage('I am Bob'))]);
    expect(fromAda).toContain('I am Ada');
    expect(fromBob).toContain('I am Bob');
    expect(chatOf(ada).messages.map((m) => JSON.stringify(m)).join()).not.toContain('Bob');
    expect(chatOf(bob).messages.map((m) => JSON.stringify(m)).join()).not.toContain('Ada');
  });

  it('emits chat.turn signals a UI can follow', async () => {
    const model = scriptedModel([{ toolCalls: [{ tool: 'add', args: { a: 1, b: 2 } }] }, { text: 'three' }]);
    const system = systems.start({ models: { default: model } });
    const signals = record(system, 'chat.**');
    const agent = system.spawn(assistant());
    await agent.call(chatMessage('1+2'));
    expect(signals.map((s) => s.type).filter((t) => t !== 'chat.delta')).toEqual(['chat.turn.started', 'chat.tool.call', 'chat.tool.result', 'chat.turn.answered']);
  });
});

describe('models', () => {
  it('refuses a model name the system does not know, and the agent answers the next message', async () => {
    const system = systems.start({ models: { default: scriptedModel([{ text: 'fine' }]) } });
    const agent = system.spawn(assistant({ model: 'gpt-imaginary' }));
    const error = await agent.call(chatMessage('hi')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({ code: 'model_not_found', message: expect.stringContaining('known models: default') });
    expect(chatOf(agent).last).toMatchObject({ outcome: 'failed', error: { code: 'model_not_found' } });
    expect(chatOf(agent).turn).toBeNull();
  });

  it('refuses models that are not AI SDK language models', () => {
    expect(() => systems.start({ models: { default: 'gpt-4.1' as never } })).toThrow(/models.default is not an AI SDK language model/);
  });

  it('retries a provider error worth retrying, with a diagnostic, then answers', async () => {
    const model = scriptedModel([{ error: { status: 503, message: 'overloaded' } }, { error: { status: 429, message: 'slow down' } }, { text: 'made it' }]);
    const seen = observed();
    const system = systems.start({ models: { default: model }, onUnhandledDiagnostic: seen.onUnhandledDiagnostic });
    const agent = system.spawn(assistant());
    await expect(agent.call(chatMessage('hi'))).resolves.toBe('made it');
    expect(seen.diagnostics.filter((d) => d.code === 'model_retry').map((d) => d.details?.code)).toEqual(['model_failed', 'rate_limited']);
  });

  it('gives up after its retries with a typed error, and the agent lives on', async () => {
    const model = scriptedModel([{ error: { status: 429, message: 'slow down' } }, { error: { status: 429, message: 'slow down' } }, { text: 'later' }]);
    const system = systems.start({ models: { default: model }, onUnhandledDiagnostic: () => {} });
    const agent = system.spawn(assistant({ retries: 1 }));
    await expect(agent.call(chatMessage('hi'))).rejects.toMatchObject({
      code: 'rate_limited',
      message: expect.stringContaining("model 'scripted:scripted' is rate limited"),
      details: { status: 429, retryable: true },
    });
    await expect(agent.call(chatMessage('again'))).resolves.toBe('later');
  });

  it("passes a scripted answer's warnings on as the provider would, streamed or not: each one is a diagnostic naming the model", async () => {
    for (const stream of [false, true]) {
      const model = scriptedModel([{ text: 'ok', warnings: ['temperature is fixed for this model'] }], { modelId: `fixed-${stream}` });
      const seen = observed();
      const system = systems.start({ models: { default: model }, onUnhandledDiagnostic: seen.onUnhandledDiagnostic });
      const agent = system.spawn(assistant({ stream }));
      // A stream somebody follows (one nobody follows is asked for whole).
      record(system, 'chat.delta');
      await expect(agent.call(chatMessage('hi'))).resolves.toBe('ok');
      expect(model.calls[0]!.streamed).toBe(stream);
      expect(seen.diagnostics.filter((d) => d.code === 'model_warning').map((d) => d.message)).toEqual([
        `agent '${agent.id}', turn 1: model 'scripted:fixed-${stream}' warned: temperature is fixed for this model`,
      ]);
    }
  });

  it('refuses scripted warnings that are not a list of strings, saying which response', async () => {
    const model = scriptedModel([{ text: 'ok', warnings: 'temperature is fixed' as never }]);
    const system = systems.start({ models: { default: model }, onUnhandledDiagnostic: () => {} });
    const agent = system.spawn(assistant({ retries: 0 }));
    await expect(agent.call(chatMessage('hi'))).rejects.toMatchObject({
      code: 'model_failed',
      message: expect.stringContaining('scripted response 1 (of 1): warnings must be a list of strings, got "temperature is fixed"'),
    });
  });

  it('does not retry an error that will not pass', async () => {
    const model = scriptedModel([{ error: { status: 400, message: 'bad request' } }, { text: 'never' }]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(assistant());
    await expect(agent.call(chatMessage('hi'))).rejects.toMatchObject({ code: 'model_failed', message: expect.stringContaining('HTTP 400'), details: { status: 400, retryable: false } });
    expect(model.calls).toHaveLength(1);
  });

  it('times out a model that does not answer', async () => {
    const model = scriptedModel([{ text: 'too late', delay: 1_000 }, { text: 'too late', delay: 1_000 }]);
    const system = systems.start({ models: { default: model }, onUnhandledDiagnostic: () => {} });
    const agent = system.spawn(assistant({ modelTimeout: 30, retries: 1 }));
    await expect(agent.call(chatMessage('hi'))).rejects.toMatchObject({ code: 'model_timeout' });
    expect(model.calls).toHaveLength(2);
  });

  it('asks again after a time-out with a time-out of its own, not the spent one', async () => {
    const model = scriptedModel([{ text: 'too late', delay: 60_000 }, { text: 'in time', delay: 1 }]);
    const system = systems.start({ models: { default: model }, onUnhandledDiagnostic: () => {} });
    const agent = system.spawn(assistant({ modelTimeout: 200, retries: 1, retryDelay: 0 }));
    await expect(agent.call(chatMessage('hi'))).resolves.toBe('in time');
    expect(model.calls).toHaveLength(2);
  });
});

describe('reset', () => {
  it('forgets the history and keeps the usage counters, as its description says', async () => {
    const model = scriptedModel([{ text: 'Hi.', usage: { inputTokens: 3, outputTokens: 2 } }]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(assistant());
    await agent.call(chatMessage('hello'));
    await agent.call(createSignal('chat.reset'));
    expect(chatOf(agent)).toMatchObject({ messages: [], usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 } });
    const description = conversation.actions.find((action) => action.name === 'reset')!.description;
    expect(description).not.toMatch(/forgets[^.]*usage/i);
    expect(description).toMatch(/usage counters are kept/);
  });
});

describe('limits', () => {
  it('ends a turn that makes too many model calls with turn_limit, leaving a valid history', async () => {
    const model = scriptedModel([{ toolCalls: [{ tool: 'add', args: { a: 1, b: 1 } }] }], { loop: true });
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(assistant({ maxSteps: 3 }));
    await expect(agent.call(chatMessage('loop'))).rejects.toMatchObject({ code: 'turn_limit', details: { limit: 'maxSteps', value: 3 } });
    expect(model.calls).toHaveLength(3);
    const chat = chatOf(agent);
    const calls = chat.messages.flatMap((m) => (m.role === 'assistant' ? (m.content as { type: string; toolCallId?: string }[]).filter((p) => p.type === 'tool-call') : []));
    const results = chat.messages.flatMap((m) => (m.role === 'tool' ? (m.content as { toolCallId: string }[]) : []));
    expect(results.map((r) => r.toolCallId)).toEqual(calls.map((c) => c.toolCallId));
  });

  it('ends a turn that asks for too many tool calls: the calls past the limit do not run and get an error', async () => {
    const model = scriptedModel([{ toolCalls: [1, 2, 3].map((a) => ({ tool: 'add', args: { a, b: 10 } })) }]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(assistant({ maxToolCalls: 2 }));
    await expect(agent.call(chatMessage('many'))).rejects.toMatchObject({ code: 'turn_limit', details: { limit: 'maxToolCalls', value: 2 } });
    const results = chatOf(agent).messages.filter((m) => m.role === 'tool').flatMap((m) => m.content as { output: { type: string; value: unknown } }[]);
    expect(results.map((r) => r.output)).toEqual([
      { type: 'json', value: { result: 11 } },
      { type: 'json', value: { result: 12 } },
      { type: 'error-text', value: expect.stringMatching(/^turn_limit: /) },
    ]);
    expect((agent.getSnapshot().state as { calculator: { last_result: number } }).calculator.last_result).toBe(12);
  });

  it('refuses a turn once the token budget is spent', async () => {
    const model = scriptedModel([{ text: 'first', usage: { inputTokens: 60, outputTokens: 50 } }, { text: 'second' }]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(assistant({ maxTokens: 100 }));
    await expect(agent.call(chatMessage('one'))).resolves.toBe('first');
    await expect(agent.call(chatMessage('two'))).rejects.toMatchObject({ code: 'budget_exceeded', details: { used: 110, budget: 100 } });
    expect(model.calls).toHaveLength(1);
  });
});

describe('cancellation', () => {
  it('an AbortSignal on the call aborts the model request and ends the turn as cancelled', async () => {
    const model = scriptedModel([{ text: 'slow', delay: 5_000 }, { text: 'next one' }]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(assistant());
    const controller = new AbortController();
    const cancelled = next(system, 'chat.turn.cancelled');
    const thinking = next(system, 'chat.turn.started');
    const pending = agent.call(chatMessage('take your time'), { signal: controller.signal, timeout: 10_000 });
    await thinking;
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toMatchObject({ code: 'cancelled' });
    await cancelled;
    expect(chatOf(agent)).toMatchObject({ turn: null, last: { n: 1, outcome: 'cancelled' } });
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0]!.aborted).toBe(true);
    // The agent answers the next message.
    await expect(agent.call(chatMessage('quick'))).resolves.toBe('next one');
  });

  it('stopping the agent mid-turn aborts the model request, answers the caller agent_stopped and reports nothing else', async () => {
    const model = scriptedModel([{ text: 'slow', delay: 5_000 }]);
    const errors: unknown[] = [];
    const system = systems.start({ models: { default: model }, onUnhandledError: (error) => errors.push(error) });
    const agent = system.spawn(assistant());
    const started = next(system, 'chat.turn.started');
    const pending = agent.call(chatMessage('hello'), { timeout: 10_000 });
    await started;
    while (model.calls.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await agent.stop();
    await expect(pending).rejects.toMatchObject({ code: 'agent_stopped' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(model.calls[0]!.aborted).toBe(true);
    expect(errors).toEqual([]);
  });

  it('stopping the agent before the model is asked reports nothing', async () => {
    const model = scriptedModel([{ text: 'never' }]);
    const errors: unknown[] = [];
    const system = systems.start({ models: { default: model }, onUnhandledError: (error) => errors.push(error) });
    const agent = system.spawn(assistant());
    const pending = agent.call(chatMessage('hello'), { timeout: 10_000 }).catch((error: { code: string }) => error.code);
    await agent.stop();
    expect(await pending).toBe('agent_stopped');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(errors).toEqual([]);
    expect(model.calls).toEqual([]);
  });

  it('a turn cancelled while a tool call of an answer runs starts none of the calls after it, and announces none', async () => {
    // The scripted model asks for three mails in one answer; the cancel comes while the first is sent.
    const sent: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let cancel!: () => void;
    const mailer = defineSkill({
      name: 'mailer',
      actions: [
        defineAction({
          name: 'send_mail',
          description: 'Send an e-mail',
          input: z.object({ to: z.string() }),
          run: async ({ to }) => {
            if (to === 'alice') {
              cancel();
              await gate;
            }
            sent.push(to);
            return { sent: to };
          },
        }),
      ],
    });
    const Mailing = defineAgent({ name: 'mailing', skills: [conversation, mailer] });
    const model = scriptedModel([
      { toolCalls: [{ tool: 'send_mail', args: { to: 'alice' } }, { tool: 'send_mail', args: { to: 'bob' } }, { tool: 'send_mail', args: { to: 'carol' } }] },
      { text: 'Hello again.' },
    ]);
    const system = systems.start({ models: { default: model } });
    const progress = record(system, 'chat.tool.*');
    const agent = system.spawn(Mailing);
    cancel = () => {
      agent.send(createSignal('chat.cancel', { reason: 'the user pressed stop' }));
      queueMicrotask(release);
    };
    await expect(agent.call(chatMessage('mail everyone'))).rejects.toMatchObject({ code: 'cancelled' });
    // The next turn runs after whatever the cancelled one still did.
    await expect(agent.call(chatMessage('hello'))).resolves.toBe('Hello again.');

    expect(sent.filter((to) => to !== 'alice')).toEqual([]);
    const announced = progress.map((signal) => `${signal.type}:${(signal.data as { tool: string; args?: { to: string } }).args?.to ?? ''}`);
    expect(announced.filter((entry) => entry.endsWith(':bob') || entry.endsWith(':carol'))).toEqual([]);
    expect(model.calls).toHaveLength(2);
  });

  it('a chat.turn.cancelled signal the agent did not emit leaves its turn running', async () => {
    // The scripted model takes a moment, so the forged signal arrives while it is asked.
    const model = scriptedModel([{ delay: 50, toolCalls: [{ tool: 'add', args: { a: 1, b: 2 } }] }, { text: '1 + 2 = 3.' }, { text: 'Hello.' }]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(Calculating, { id: 'ada' });
    const pending = agent.call(chatMessage('What is 1 + 2?'));
    while (model.calls.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    // A bridge forwarding another system's turn signals, say.
    system.publish(createSignal('chat.turn.cancelled', { agent: 'ada', turn: 1, reason: 'forwarded from elsewhere' }));
    await expect(pending).resolves.toBe('1 + 2 = 3.');
    expect(chatOf(agent)).toMatchObject({ turn: null, last: { n: 1, outcome: 'answered' } });
    await expect(agent.call(chatMessage('hello'))).resolves.toBe('Hello.');
  });

  it('a chat.cancel signal cancels the turn in flight, and its caller gets cancelled', async () => {
    const model = scriptedModel([{ text: 'slow', delay: 5_000 }]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(assistant());
    const started = next(system, 'chat.turn.started');
    const pending = agent.call(chatMessage('hello'), { timeout: 10_000 });
    await started;
    agent.send(createSignal('chat.cancel', { reason: 'the user left' }));
    await expect(pending).rejects.toMatchObject({ code: 'cancelled', message: 'the user left' });
    expect(chatOf(agent).last).toMatchObject({ outcome: 'cancelled' });
  });
});
