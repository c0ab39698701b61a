/**
 * Model-driven agents against hostile models, tools and users: a provider that breaks the
 * protocol or ignores its abort signal, a tool that misbehaves, a user who sends what they should
 * not. Each case holds a promise of docs/models.md against input a well-behaved model or user
 * never sends. The models are the AI SDK's `MockLanguageModelV3`, scripted with exactly the
 * hostile answer; everything past the provider is real.
 */
import { describe, expect, it, vi } from 'vitest';
import { APICallError } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { chatMessage, conversation, createSignal, defineAction, defineAgent, defineSkill } from '../../src/index.js';
import { retryAfterOf } from '../../src/model/model-call.js';
import { scriptedModel } from '../../src/testing/index.js';
import { systemPerTest } from '../runtime/fixtures.js';
import { assistant, chatOf, next, observed, record } from './fixtures.js';

const systems = systemPerTest();

const usage = { inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 2, text: 2, reasoning: 0 } };

/** What `doGenerate` answers: the content parts, and anything of the result to change. */
type Answer = { content: unknown[] } & Record<string, unknown>;

/** A provider that answers each `doGenerate` with the next of `answers` (the last one again when they run out). */
function provider(...answers: Answer[]): MockLanguageModelV3 {
  let i = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => ({ finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [], ...answers[Math.min(i++, answers.length - 1)]! }) as never,
  });
}

const says = (text: string): Answer => ({ content: [{ type: 'text', text }] });
const asks = (...calls: [id: string, tool: string, input: unknown][]): Answer => ({
  content: calls.map(([toolCallId, toolName, input]) => ({ type: 'tool-call', toolCallId, toolName, input: JSON.stringify(input) })),
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
});

/** A provider that never answers and ignores the abort signal it is handed. */
const deaf = () => new MockLanguageModelV3({ doGenerate: () => new Promise(() => {}), doStream: () => new Promise(() => {}) });

describe('a provider that ignores its abort signal', () => {
  it('fails the step with model_timeout once modelTimeout passes, unstreamed as streamed', async () => {
    const system = systems.start({ models: { default: deaf() }, onUnhandledDiagnostic: () => {} });
    const unstreamed = system.spawn(assistant({ stream: false, modelTimeout: 50, retries: 0 }));
    await expect(unstreamed.call(chatMessage('hi'), { timeout: 5_000 })).rejects.toMatchObject({ code: 'model_timeout', message: expect.stringContaining('within 50 ms') });
    // Streamed: someone follows the deltas.
    system.subscribe('chat.delta', () => {});
    const streamed = system.spawn(assistant({ modelTimeout: 50, retries: 0 }, 'streaming'));
    await expect(streamed.call(chatMessage('hi'), { timeout: 5_000 })).rejects.toMatchObject({ code: 'model_timeout' });
    expect(chatOf(unstreamed).last).toMatchObject({ n: 1, outcome: 'failed', error: { code: 'model_timeout' } });
  });

  it("gives up on the summary it was asked for after modelTimeout: compaction drops the older messages and the turn answers", async () => {
    let asked = 0;
    const model = new MockLanguageModelV3({
      doGenerate: () => {
        asked++;
        // The first turn's answer; then the summary request, which never comes; then the second turn's answer.
        if (asked === 2) return new Promise(() => {});
        return Promise.resolve({ content: [{ type: 'text', text: `answer ${asked} ${'x'.repeat(400)}` }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }) as never;
      },
    });
    const seen = observed();
    const system = systems.start({ models: { default: model }, onUnhandledDiagnostic: seen.onUnhandledDiagnostic });
    const agent = system.spawn(assistant({ stream: false, modelTimeout: 50, history: { maxTokens: 50, keepTurns: 1, strategy: 'summarize' } }));
    await agent.call(chatMessage('one'), { timeout: 5_000 });
    await expect(agent.call(chatMessage('two'), { timeout: 5_000 })).resolves.toMatch(/^answer 3/);
    expect(seen.diagnostics.map((d) => d.code)).toContain('compaction_failed');
    expect(chatOf(agent).messages.map((m) => m.role)).toEqual(['user', 'assistant']);
  });
});

describe('a model that breaks the tool-call protocol', () => {
  it('runs a call whose id an earlier call of the same answer has not at all, and tells the model why', async () => {
    // The SDK gives the second call the first one's input: running it would pay 'ann' twice.
    const model = provider(asks(['c1', 'pay', { to: 'ann', amount: 5 }], ['c1', 'pay', { to: 'bob', amount: 7 }]), says('Paid.'));
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(assistant({ stream: false }));
    const answered = agent.call(chatMessage('pay ann and bob'), { timeout: 5_000 });
    const approval = await next(system, 'chat.turn.approval');
    expect(approval.data).toMatchObject({ toolCallId: 'c1', args: { to: 'ann', amount: 5 } });
    agent.send(createSignal('chat.approve', { toolCallId: 'c1' }));
    await expect(answered).resolves.toBe('Paid.');
    expect((agent.getSnapshot().state as { ledger: { paid: unknown[] } }).ledger.paid).toEqual([{ to: 'ann', amount: 5 }]);
    // The repeated id is made unique in the history: each call has its own result, and the model reads why the second did not run.
    const asked = chatOf(agent).messages[1] as { role: string; content: { toolCallId: string }[] };
    expect(asked.role).toBe('assistant');
    expect(asked.content.map((part) => part.toolCallId)).toEqual(['c1', 'c1~2']);
    const results = new Map(chatOf(agent).messages.flatMap((m) => (m.role === 'tool' ? (m.content as { toolCallId: string; output: { type: string; value?: unknown } }[]) : [])).map((r) => [r.toolCallId, r.output]));
    expect(results.get('c1')).toEqual({ type: 'json', value: { paid: 5, to: 'ann' } });
    expect(results.get('c1~2')).toEqual({ type: 'error-text', value: expect.stringMatching(/^invalid_params: tool call id 'c1' is already used by an earlier call of this answer, so this call \(now 'c1~2'\) did not run/) });
  });
});

describe('a model that names its tool calls oddly', () => {
  it('runs a call whose id is not a string (a number) under that id as text, and one whose id is empty', async () => {
    const model = provider({ content: [{ type: 'tool-call', toolCallId: 7, toolName: 'add', input: '{"a":1,"b":2}' }, { type: 'tool-call', toolCallId: '', toolName: 'add', input: '{"a":3,"b":4}' }] }, says('3 and 7.'));
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(assistant({ stream: false }));
    await expect(agent.call(chatMessage('add'), { timeout: 5_000 })).resolves.toBe('3 and 7.');
    const results = chatOf(agent).messages[2]!.content as { toolCallId: string; output: unknown }[];
    expect(results.map((r) => [r.toolCallId, r.output])).toEqual([
      ['7', { type: 'json', value: { result: 3 } }],
      ['', { type: 'json', value: { result: 7 } }],
    ]);
  });
});

describe('a provider that numbers its tool calls afresh in each answer', () => {
  it("runs a call whose id an earlier answer's call had: ids need be unique within one answer only", async () => {
    const model = provider(asks(['call_0', 'add', { a: 1, b: 2 }]), asks(['call_0', 'add', { a: 10, b: 20 }]), says('3, then 30.'));
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(assistant({ stream: false }));
    await expect(agent.call(chatMessage('add twice'), { timeout: 5_000 })).resolves.toBe('3, then 30.');
    const results = chatOf(agent).messages.flatMap((m) => (m.role === 'tool' ? (m.content as { toolCallId: string; output: unknown }[]) : []));
    expect(results.map((r) => [r.toolCallId, r.output])).toEqual([
      ['call_0', { type: 'json', value: { result: 3 } }],
      ['call_0', { type: 'json', value: { result: 30 } }],
    ]);
  });
});

describe('usage a provider misreports', () => {
  it('counts a negative or NaN token count as none: it never gives back budget the agent used', async () => {
    const model = provider(
      { ...says('one'), usage: { inputTokens: { total: 12 }, outputTokens: { total: -100 } } },
      { ...says('two'), usage: { inputTokens: { total: Number.NaN }, outputTokens: { total: 4 } } },
    );
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(assistant({ stream: false, maxTokens: 20 }));
    await expect(agent.call(chatMessage('one'), { timeout: 5_000 })).resolves.toBe('one');
    expect(chatOf(agent).usage).toEqual({ inputTokens: 12, outputTokens: 0, totalTokens: 12 });
    await expect(agent.call(chatMessage('two'), { timeout: 5_000 })).resolves.toBe('two');
    expect(chatOf(agent).usage).toEqual({ inputTokens: 12, outputTokens: 4, totalTokens: 16 });
    // 16 of 20 used: the next turn may still ask; then the budget is spent.
    await agent.call(chatMessage('three'), { timeout: 5_000 });
    await expect(agent.call(chatMessage('four'), { timeout: 5_000 })).rejects.toMatchObject({ code: 'budget_exceeded' });
  });
});

describe('a compactor that never answers', () => {
  it('is given up after modelTimeout, as a summary request is: compaction_failed names it, the older messages are dropped, and the turn answers', async () => {
    const model = provider(says(`one ${'x'.repeat(400)}`), says('two'));
    let signal: AbortSignal | undefined;
    const seen = observed();
    const system = systems.start({
      models: { default: model },
      compactors: { stuck: ({ abortSignal }) => ((signal = abortSignal), new Promise(() => {})) },
      onUnhandledDiagnostic: seen.onUnhandledDiagnostic,
    });
    const agent = system.spawn(assistant({ stream: false, modelTimeout: 50, history: { maxTokens: 50, keepTurns: 1, strategy: 'stuck' } }));
    await agent.call(chatMessage('one'), { timeout: 5_000 });
    await expect(agent.call(chatMessage('two'), { timeout: 5_000 })).resolves.toBe('two');
    const failed = seen.diagnostics.find((d) => d.code === 'compaction_failed');
    expect(failed?.message).toMatch(/with 'stuck' failed \(no answer within 50 ms\); the older messages are dropped instead/);
    // The compactor was told to stop.
    expect(signal?.aborted).toBe(true);
    expect(chatOf(agent).messages.map((m) => m.content)).toEqual(['two', [{ type: 'text', text: 'two' }]]);
  });
});

describe('chat.cancel during compaction', () => {
  it('cancels the turn at once, its caller gets cancelled, and the compactor is told to stop', async () => {
    const model = provider(says(`one ${'x'.repeat(400)}`), says('three'));
    let compacting!: (signal: AbortSignal) => void;
    const asked = new Promise<AbortSignal>((resolve) => (compacting = resolve));
    const system = systems.start({
      models: { default: model },
      compactors: { stuck: ({ abortSignal }) => (compacting(abortSignal), new Promise(() => {})) },
      onUnhandledDiagnostic: () => {},
    });
    const agent = system.spawn(assistant({ stream: false, history: { maxTokens: 50, keepTurns: 1, strategy: 'stuck' } }));
    await agent.call(chatMessage('one'), { timeout: 5_000 });
    const second = agent.call(chatMessage('two'), { timeout: 5_000 });
    const signal = await asked;
    agent.send(createSignal('chat.cancel', { reason: 'enough' }));
    await expect(second).rejects.toMatchObject({ code: 'cancelled', message: 'enough' });
    expect(signal.aborted).toBe(true);
    expect(chatOf(agent).last).toMatchObject({ n: 2, outcome: 'cancelled' });
  });
});

describe('an agent stopped mid-turn', () => {
  it.each(['the agent stops', 'the system shuts down'])('settles every caller with agent_stopped when %s, those queued behind the turn too, while a tool of the turn never settles', async (how) => {
    const stuck = defineSkill({
      name: 'stuck',
      actions: [defineAction({ name: 'wait_forever', description: 'Never answers', input: z.object({}), run: () => new Promise<never>(() => {}) })],
    });
    const model = provider(asks(['w1', 'wait_forever', {}]), says('never'));
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(defineAgent({ name: 'stuck-agent', skills: [[conversation, { stream: false }], stuck] }));
    const running = next(system, 'chat.tool.call');
    const callers = ['one', 'two', 'three'].map((text) => agent.call(chatMessage(text), { timeout: 60_000 }));
    await running;
    await (how === 'the agent stops' ? agent.stop() : system.shutdown());
    for (const caller of callers) await expect(caller).rejects.toMatchObject({ code: 'agent_stopped' });
  });
});

describe('a history strategy misspelt', () => {
  it("is read as a compactor's name: the compaction that finds none says which strategies there are, and drops the older messages", async () => {
    const model = provider(says(`one ${'x'.repeat(400)}`), says('two'));
    const seen = observed();
    const system = systems.start({ models: { default: model }, onUnhandledDiagnostic: seen.onUnhandledDiagnostic });
    const agent = system.spawn(assistant({ stream: false, history: { maxTokens: 50, keepTurns: 1, strategy: 'summarise' } }));
    await agent.call(chatMessage('one'), { timeout: 5_000 });
    await expect(agent.call(chatMessage('two'), { timeout: 5_000 })).resolves.toBe('two');
    expect(seen.diagnostics.find((d) => d.code === 'compaction_failed')?.message).toContain(
      "no compactor named 'summarise' was given to the system (known: none); the built-in strategies are 'summarize' and 'drop'",
    );
  });
});

describe('a stream that fails half-way', () => {
  it('is tried again, and the deltas of the new attempt say so: a follower drops the text the failed one wrote', async () => {
    let tries = 0;
    const model = new MockLanguageModelV3({
      doStream: async () => {
        const first = ++tries === 1;
        const parts: unknown[] = [{ type: 'stream-start', warnings: [] }, { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: first ? 'Hal' : 'Hello.' }];
        if (first) parts.push({ type: 'error', error: new APICallError({ message: 'overloaded', url: 'https://api.example', requestBodyValues: {}, statusCode: 503, isRetryable: true }) });
        else parts.push({ type: 'text-end', id: 't' }, { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage });
        return { stream: new ReadableStream({ start: (controller) => (parts.forEach((part) => controller.enqueue(part)), controller.close()) }) } as never;
      },
    });
    const system = systems.start({ models: { default: model }, onUnhandledDiagnostic: () => {} });
    const deltas = record(system, 'chat.delta');
    const agent = system.spawn(assistant({ retries: 1, retryDelay: 1 }));
    await expect(agent.call(chatMessage('hi'), { timeout: 5_000 })).resolves.toBe('Hello.');
    expect(deltas.map((d) => d.data)).toEqual([
      { agent: agent.id, turn: 1, step: 0, attempt: 0, text: 'Hal' },
      { agent: agent.id, turn: 1, step: 0, attempt: 1, text: 'Hello.' },
    ]);
  });
});

describe("a scripted answer that fails part-way (streamFails)", () => {
  it('streams its first pieces, then fails with the provider error; the step is tried again with the next attempt', async () => {
    const model = scriptedModel([{ text: 'The answer is forty two.', streamFails: { after: 2, status: 503, message: 'connection reset' } }, { text: 'The answer is 42.' }]);
    const seen = observed();
    const system = systems.start({ models: { default: model }, onUnhandledDiagnostic: seen.onUnhandledDiagnostic });
    const deltas = record(system, 'chat.delta');
    const agent = system.spawn(assistant({ retries: 1, retryDelay: 1 }));
    await expect(agent.call(chatMessage('hi'), { timeout: 5_000 })).resolves.toBe('The answer is 42.');
    const texts = (attempt: number) => deltas.filter((d) => (d.data as { attempt: number }).attempt === attempt).map((d) => (d.data as { text: string }).text);
    expect(texts(0)).toEqual(['The ', 'answer ']);
    expect(texts(1).join('')).toBe('The answer is 42.');
    expect(seen.diagnostics.find((d) => d.code === 'model_retry')?.message).toContain('connection reset');
  });

  it('asked whole (not streamed), fails at once with the provider error', async () => {
    const model = scriptedModel([{ text: 'The answer is forty two.', streamFails: { after: 2, status: 400, message: 'connection reset' } }]);
    const system = systems.start({ models: { default: model }, onUnhandledDiagnostic: () => {} });
    const agent = system.spawn(assistant({ stream: false, retries: 0 }));
    await expect(agent.call(chatMessage('hi'), { timeout: 5_000 })).rejects.toMatchObject({ code: 'model_failed', message: expect.stringContaining('connection reset') });
  });
});

describe('a script with a misspelt key', () => {
  it.each([
    [[{ txt: 'Hello' }], "scripted response 1 (of 1): unknown key 'txt' (a response has text, toolCalls, delay, usage, warnings, streamFails, error)"],
    [[{ text: 'Hello', streamFails: { after: 1, message: 'reset', stauts: 503 } }], "scripted response 1 (of 1): streamFails: unknown key 'stauts' (it has after, status, message, retryable)"],
    [[{ text: 'Hello', streamFails: { message: 'reset' } }], 'scripted response 1 (of 1): streamFails must be an object with a count of text pieces and a message'],
    [[{ toolCalls: [{ name: 'add', args: {} }] }], 'scripted response 1 (of 1): toolCalls[0] must be an object with a tool name'],
    [[{ toolCalls: [{ tool: 'add', arguments: {} }] }], "scripted response 1 (of 1): toolCalls[0]: unknown key 'arguments' (a tool call has tool, args, id)"],
    [[null], 'scripted response 1 (of 1): a response must be an object'],
  ])('fails the turn naming the response and the key, never answers as if it were not there: %j', async (script, message) => {
    const system = systems.start({ models: { default: scriptedModel(script as never) } });
    const agent = system.spawn(assistant({ retries: 0 }));
    await expect(agent.call(chatMessage('hi'), { timeout: 5_000 })).rejects.toMatchObject({ code: 'model_failed', message: expect.stringContaining(message) });
  });
});

describe("a provider's retry-after", () => {
  it('is waited as it says: retry-after-ms first, else retry-after in seconds or as an HTTP date; anything else is no wait asked', () => {
    const now = Date.parse('Wed, 21 Oct 2026 07:28:00 GMT');
    expect.soft(retryAfterOf({ 'retry-after-ms': '1500', 'retry-after': '2' }, now)).toBe(1500);
    expect.soft(retryAfterOf({ 'retry-after': '2' }, now)).toBe(2000);
    expect.soft(retryAfterOf({ 'retry-after': 'Wed, 21 Oct 2026 07:28:30 GMT' }, now)).toBe(30_000);
    expect.soft(retryAfterOf({ 'retry-after': 'Wed, 21 Oct 2026 07:27:00 GMT' }, now)).toBe(0);
    for (const header of ['-5', 'soon', '']) expect.soft(retryAfterOf({ 'retry-after': header }, now)).toBeUndefined();
    expect.soft(retryAfterOf(undefined, now)).toBeUndefined();
  });

  it('in milliseconds (retry-after-ms) sets the wait before the next attempt', async () => {
    let asked = 0;
    const limited = new APICallError({ message: 'slow down', url: 'https://api.example', requestBodyValues: {}, statusCode: 429, responseHeaders: { 'retry-after-ms': '3' }, isRetryable: true });
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        if (asked++ === 0) throw limited;
        return { content: [{ type: 'text', text: 'ok' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] } as never;
      },
    });
    const seen = observed();
    const system = systems.start({ models: { default: model }, onUnhandledDiagnostic: seen.onUnhandledDiagnostic });
    const agent = system.spawn(assistant({ stream: false, retryDelay: 10_000 }));
    await expect(agent.call(chatMessage('hi'), { timeout: 5_000 })).resolves.toBe('ok');
    expect(seen.diagnostics.find((d) => d.code === 'model_retry')?.details).toMatchObject({ code: 'rate_limited', wait: 3 });
  });
});

describe('the conversation skill unmounted mid-turn', () => {
  it("answers the turn's caller and those queued behind it with cancelled, and the agent goes on", async () => {
    let release: (() => void) | undefined;
    let aborted = false;
    const model = new MockLanguageModelV3({
      doGenerate: ({ abortSignal }) => {
        abortSignal?.addEventListener('abort', () => (aborted = true));
        return new Promise((resolve) => (release = () => resolve({ content: [{ type: 'text', text: 'late' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] } as never)));
      },
    });
    const errors: unknown[] = [];
    const system = systems.start({ models: { default: model }, onUnhandledError: (error) => errors.push(error), onUnhandledDiagnostic: () => {} });
    const agent = system.spawn(assistant({ stream: false }));
    const settled = (promise: Promise<unknown>) => promise.then(() => 'answered', (error: unknown) => error);
    const first = settled(agent.call(chatMessage('first'), { timeout: 10_000 }));
    const second = settled(agent.call(chatMessage('second'), { timeout: 10_000 }));
    await vi.waitFor(() => expect(release).toBeDefined());
    await agent.unmount('conversation');
    for (const answer of [await first, await second]) {
      expect(answer).toMatchObject({ code: 'cancelled', skill: 'conversation', details: { reason: "skill 'conversation' was unmounted" } });
    }
    // Its model request is aborted; an answer that comes anyway changes nothing.
    await vi.waitFor(() => expect(aborted).toBe(true));
    release!();
    await agent.call(createSignal('calculator.add', { a: 2, b: 3 }));
    expect(agent.getSnapshot().state).toMatchObject({ calculator: { last_result: 5 } });
    expect(agent.getSnapshot().state).not.toHaveProperty('conversation');
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(errors).toEqual([]);
  });
});
