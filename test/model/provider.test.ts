/**
 * The model step against the AI SDK's provider interface as providers implement it: what a
 * provider sends back beyond text and tool calls (its metadata, tools it ran itself, warnings,
 * reasoning in a stream) reaches the history and the next prompt intact, and a model of the
 * older specification (v2) works as one of v3 does. The models are the AI SDK's own mock model
 * or a stand-in object implementing the interface, since no provider is under test.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { MockLanguageModelV3 } from 'ai/test';
import { chatMessage } from '../../src/index.js';
import { askModel } from '../../src/model/model-step.js';
import { systemPerTest } from '../runtime/fixtures.js';
import { assistant, chatOf, observed, record } from './fixtures.js';

const systems = systemPerTest();

/** The major version of the `ai` package installed (6 or 7: both are supported). */
async function installedAiMajor(): Promise<number> {
  const manifest = new URL('../../node_modules/ai/package.json', import.meta.url);
  return Number(JSON.parse(await readFile(manifest, 'utf8')).version.split('.')[0]);
}

type GenerateOptions = Parameters<MockLanguageModelV3['doGenerate']>[0];
type GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;
type StreamPart = Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;

const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: output, text: output, reasoning: 0 },
});

describe('the model step', () => {
  it('keeps the provider metadata of reasoning, text and tool calls in the history, and sends it back with the next prompt', async () => {
    const prompts: GenerateOptions['prompt'][] = [];
    let call = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async (options): Promise<GenerateResult> => {
        prompts.push(options.prompt);
        if (call++ === 0) {
          return {
            content: [
              { type: 'reasoning', text: 'Two numbers: add them.', providerMetadata: { anthropic: { signature: 'sig-1' } } },
              { type: 'text', text: 'Adding.' },
              { type: 'tool-call', toolCallId: 'add-1', toolName: 'add', input: '{"a":2,"b":5}', providerMetadata: { openai: { itemId: 'fc_1' } } },
            ],
            finishReason: { unified: 'tool-calls', raw: 'tool_use' },
            usage: usage(10, 4),
            warnings: [],
          };
        }
        return { content: [{ type: 'text', text: '7.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(20, 1), warnings: [] };
      },
    });
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(assistant({ stream: false }));

    await expect(agent.call(chatMessage('2 + 5?'))).resolves.toBe('7.');

    const asked = chatOf(agent).messages[1]!;
    expect(asked).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Two numbers: add them.', providerOptions: { anthropic: { signature: 'sig-1' } } },
        { type: 'text', text: 'Adding.' },
        { type: 'tool-call', toolCallId: 'add-1', toolName: 'add', input: { a: 2, b: 5 }, providerOptions: { openai: { itemId: 'fc_1' } } },
      ],
    });
    // The second prompt carries the first answer back as the provider gave it.
    const second = prompts[1]!;
    expect(second[0]!.role).toBe('system');
    expect(second.slice(1)).toEqual([
      { role: 'user', content: [{ type: 'text', text: '2 + 5?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'Two numbers: add them.', providerOptions: { anthropic: { signature: 'sig-1' } } },
          { type: 'text', text: 'Adding.' },
          { type: 'tool-call', toolCallId: 'add-1', toolName: 'add', input: { a: 2, b: 5 }, providerOptions: { openai: { itemId: 'fc_1' } } },
        ],
      },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'add-1', toolName: 'add', output: { type: 'json', value: { result: 7 } } }] },
    ]);
    expect(chatOf(agent).usage).toEqual({ inputTokens: 30, outputTokens: 5, totalTokens: 35 });
  });

  it('keeps a tool the provider ran itself in the assistant message, and does not run it', async () => {
    const model = new MockLanguageModelV3({
      doGenerate: async () => ({
        content: [
          { type: 'tool-call', toolCallId: 'ws-1', toolName: 'web_search', input: '{"query":"skillstate"}', providerExecuted: true },
          { type: 'tool-result', toolCallId: 'ws-1', toolName: 'web_search', result: { hits: 3 } },
          { type: 'text', text: 'Three hits.' },
        ],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: usage(5, 3),
        warnings: [],
      }),
    });
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(assistant({ stream: false }));

    await expect(agent.call(chatMessage('search'))).resolves.toBe('Three hits.');

    expect(model.doGenerateCalls).toHaveLength(1);
    expect(chatOf(agent).messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'ws-1', toolName: 'web_search', input: { query: 'skillstate' }, providerExecuted: true },
          { type: 'tool-result', toolCallId: 'ws-1', toolName: 'web_search', output: { type: 'json', value: { hits: 3 } } },
          { type: 'text', text: 'Three hits.' },
        ],
      },
    ]);
  });

  it('reports what the provider warned about as a diagnostic naming the model', async () => {
    const model = new MockLanguageModelV3({
      provider: 'acme',
      modelId: 'small',
      doGenerate: async () => ({
        content: [{ type: 'text', text: 'ok' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: usage(1, 1),
        warnings: [{ type: 'unsupported', feature: 'temperature', details: 'this model has a fixed temperature' }],
      }),
    });
    const seen = observed();
    const system = systems.start({ models: { default: model }, onUnhandledDiagnostic: seen.onUnhandledDiagnostic });
    const agent = system.spawn(assistant({ stream: false, temperature: 0.2 }));

    await expect(agent.call(chatMessage('hi'))).resolves.toBe('ok');

    expect(model.doGenerateCalls[0]!.temperature).toBe(0.2);
    const warning = seen.diagnostics.find((d) => d.code === 'model_warning');
    expect(warning?.message).toContain("model 'acme:small' warned: unsupported: temperature: this model has a fixed temperature");
  });

  it("is asked through the AI SDK: a warning logger set as the SDK's AI_SDK_LOG_WARNINGS gets the provider's warnings", async () => {
    const model = new MockLanguageModelV3({
      provider: 'acme',
      modelId: 'small',
      doGenerate: async () => ({ content: [{ type: 'text', text: 'ok' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(1, 1), warnings: [{ type: 'other', message: 'seed is ignored' }] }),
    });
    const logged: unknown[] = [];
    const global = globalThis as { AI_SDK_LOG_WARNINGS?: unknown };
    const before = global.AI_SDK_LOG_WARNINGS;
    global.AI_SDK_LOG_WARNINGS = (options: { warnings: unknown[] }) => logged.push(...options.warnings);
    try {
      const system = systems.start({ models: { default: model }, onUnhandledDiagnostic: () => {} });
      const agent = system.spawn(assistant({ stream: false }));
      await expect(agent.call(chatMessage('hi'))).resolves.toBe('ok');
    } finally {
      global.AI_SDK_LOG_WARNINGS = before;
    }
    expect(logged).toEqual([{ type: 'other', message: 'seed is ignored' }]);
  });

  it('a streamed step whose provider ignores the abort signal ends with the abort: the read gives up, the step rejects with its reason', async () => {
    const model = new MockLanguageModelV3({
      doStream: async () => ({
        stream: new ReadableStream<StreamPart>({
          start(controller) {
            // The answer starts, then neither ends nor heeds the abort signal.
            controller.enqueue({ type: 'text-start', id: 't' });
            controller.enqueue({ type: 'text-delta', id: 't', delta: 'Thinking' });
          },
        }),
      }),
    });
    const abort = new AbortController();
    const reason = new Error('the user left');
    const deltas: string[] = [];
    const step = askModel(model, {
      system: '',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [],
      abortSignal: abort.signal,
      onText: (text) => {
        deltas.push(text);
        abort.abort(reason);
      },
    });
    await expect(step).rejects.toBe(reason);
    expect(deltas).toEqual(['Thinking']);
  });

  it('puts a streamed answer together: reasoning with its metadata, the text as deltas', async () => {
    const model = new MockLanguageModelV3({
      doStream: async () => ({
        stream: new ReadableStream<StreamPart>({
          start(controller) {
            for (const part of [
              { type: 'stream-start', warnings: [] },
              { type: 'reasoning-start', id: 'r1' },
              { type: 'reasoning-delta', id: 'r1', delta: 'Say ' },
              { type: 'reasoning-delta', id: 'r1', delta: 'hello.' },
              // Anthropic sends the signature on a last, empty delta.
              { type: 'reasoning-delta', id: 'r1', delta: '', providerMetadata: { anthropic: { signature: 'sig-2' } } },
              { type: 'reasoning-end', id: 'r1' },
              { type: 'text-start', id: 't1' },
              { type: 'text-delta', id: 't1', delta: 'Hel' },
              { type: 'text-delta', id: 't1', delta: 'lo.' },
              { type: 'text-end', id: 't1' },
              { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(4, 2) },
            ] satisfies StreamPart[]) {
              controller.enqueue(part);
            }
            controller.close();
          },
        }),
      }),
    });
    const system = systems.start({ models: { default: model } });
    const deltas = record(system, 'chat.delta');
    const agent = system.spawn(assistant());

    await expect(agent.call(chatMessage('hi'))).resolves.toBe('Hello.');

    expect(deltas.map((d) => (d.data as { text: string }).text)).toEqual(['Hel', 'lo.']);
    expect(chatOf(agent).messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Say hello.', providerOptions: { anthropic: { signature: 'sig-2' } } },
        { type: 'text', text: 'Hello.' },
      ],
    });
    expect(chatOf(agent).usage).toEqual({ inputTokens: 4, outputTokens: 2, totalTokens: 6 });
  });

  it('keeps a file the model answers with as base64, and sends it back with the next prompt', async () => {
    const prompts: GenerateOptions['prompt'][] = [];
    let call = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async (options): Promise<GenerateResult> => {
        prompts.push(options.prompt);
        const content: GenerateResult['content'] = call++ === 0 ? [{ type: 'file', mediaType: 'image/png', data: new Uint8Array([137, 80, 78, 71]) }, { type: 'text', text: 'Drawn.' }] : [{ type: 'text', text: 'Again.' }];
        return { content, finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(1, 1), warnings: [] };
      },
    });
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(assistant({ stream: false }));

    await expect(agent.call(chatMessage('draw'))).resolves.toBe('Drawn.');
    // The PNG signature's first four bytes, as base64.
    expect(chatOf(agent).messages[1]).toEqual({ role: 'assistant', content: [{ type: 'file', data: 'iVBORw==', mediaType: 'image/png' }, { type: 'text', text: 'Drawn.' }] });

    await expect(agent.call(chatMessage('again'))).resolves.toBe('Again.');
    // A v3 provider takes file data as base64 (or bytes, or a URL).
    expect(prompts[1]![2]).toEqual({ role: 'assistant', content: [{ type: 'file', data: 'iVBORw==', mediaType: 'image/png' }, { type: 'text', text: 'Drawn.' }] });
  });

  it('a v4 model (ai 7) keeps its tagged file as base64 and gets it back tagged; the AI SDK 6 refuses the model, and the turn fails saying so', async () => {
    const prompts: { role: string; content: unknown }[][] = [];
    let call = 0;
    // A stand-in implementing the v4 interface (ai 7), whose files are tagged objects.
    const model = {
      specificationVersion: 'v4' as const,
      provider: 'drawing',
      modelId: 'v4-model',
      supportedUrls: {},
      doGenerate: async (options: { prompt: { role: string; content: unknown }[] }) => {
        prompts.push(options.prompt);
        const content =
          call++ === 0
            ? [{ type: 'file', mediaType: 'image/png', data: { type: 'data', data: new Uint8Array([137, 80, 78, 71]) } }, { type: 'text', text: 'Drawn.' }]
            : [{ type: 'text', text: 'Again.' }];
        return { content, finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(1, 1), warnings: [] };
      },
      doStream: async () => {
        throw new Error('not streamed in this test');
      },
    };
    const system = systems.start({ models: { default: model as never } });
    const agent = system.spawn(assistant({ stream: false, retries: 0 }));

    if ((await installedAiMajor()) < 7) {
      await expect(agent.call(chatMessage('draw'))).rejects.toMatchObject({ code: 'model_failed', message: expect.stringContaining('Unsupported model version v4') });
      expect(prompts).toEqual([]);
      return;
    }
    await expect(agent.call(chatMessage('draw'))).resolves.toBe('Drawn.');
    expect(chatOf(agent).messages[1]).toEqual({ role: 'assistant', content: [{ type: 'file', data: 'iVBORw==', mediaType: 'image/png' }, { type: 'text', text: 'Drawn.' }] });

    await expect(agent.call(chatMessage('again'))).resolves.toBe('Again.');
    expect(prompts[1]![2]).toEqual({ role: 'assistant', content: [{ type: 'file', data: { type: 'data', data: 'iVBORw==' }, mediaType: 'image/png' }, { type: 'text', text: 'Drawn.' }] });
  });

  it('talks to a model of the older specification (v2: flat usage, a plain finish reason)', async () => {
    let call = 0;
    const stepsSeen: number[] = [];
    // A stand-in implementing the v2 interface as providers built for ai 5 do.
    const model = {
      specificationVersion: 'v2' as const,
      provider: 'legacy',
      modelId: 'v2-model',
      supportedUrls: {},
      doGenerate: async (options: { prompt: unknown[] }) => {
        stepsSeen.push(options.prompt.length);
        if (call++ === 0) {
          return {
            content: [{ type: 'tool-call' as const, toolCallId: 'c1', toolName: 'add', input: '{"a":1,"b":1}' }],
            finishReason: 'tool-calls' as const,
            usage: { inputTokens: 6, outputTokens: 2, totalTokens: 8 },
            warnings: [],
          };
        }
        return { content: [{ type: 'text' as const, text: 'Two.' }], finishReason: 'stop' as const, usage: { inputTokens: 9, outputTokens: 1, totalTokens: 10 }, warnings: [] };
      },
      doStream: async () => {
        throw new Error('not streamed in this test');
      },
    };
    const system = systems.start({ models: { default: model as never } });
    const agent = system.spawn(assistant({ stream: false }));

    await expect(agent.call(chatMessage('1 + 1?'))).resolves.toBe('Two.');

    expect((agent.getSnapshot().state as { calculator: { last_result: number } }).calculator.last_result).toBe(2);
    expect(chatOf(agent).usage).toEqual({ inputTokens: 15, outputTokens: 3, totalTokens: 18 });
    // System, user; then system, user, assistant, tool.
    expect(stepsSeen).toEqual([2, 4]);
  });
});

describe('a model that implements one of its methods (the AI SDK mock model scripted with one)', () => {
  const answered = (text: string): GenerateResult => ({ content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(3, 2), warnings: [] });
  const streamOf = (text: string) => ({
    stream: new ReadableStream<StreamPart>({
      start(controller) {
        for (const part of [
          { type: 'stream-start', warnings: [] },
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: text },
          { type: 'text-end', id: 't' },
          { type: 'finish', usage: usage(3, 2), finishReason: { unified: 'stop', raw: 'stop' } },
        ] as StreamPart[])
          controller.enqueue(part);
        controller.close();
      },
    }),
  });

  it('doGenerate only: a turn nobody streams asks doGenerate; a followed stream gets the answer whole, with a diagnostic naming doStream and stream: false', async () => {
    const model = new MockLanguageModelV3({ doGenerate: async () => answered('Hello.') });
    const seen = observed();
    const system = systems.start({ models: { default: model }, onUnhandledDiagnostic: seen.onUnhandledDiagnostic });
    const agent = system.spawn(assistant());
    // Streaming is on by default, but nobody follows the text: doStream is never asked.
    await expect(agent.call(chatMessage('Hi'))).resolves.toBe('Hello.');
    expect(model.doStreamCalls).toHaveLength(0);
    expect(seen.diagnostics.filter((d) => d.code === 'model_not_streamed')).toEqual([]);
    // Someone follows it: doStream is tried, is not implemented, and doGenerate answers.
    const deltas = record(system, 'chat.delta');
    await expect(agent.call(chatMessage('Hi again'))).resolves.toBe('Hello.');
    await expect(agent.call(chatMessage('And again'))).resolves.toBe('Hello.');
    expect(deltas.map((delta) => (delta.data as { text: string }).text)).toEqual(['Hello.', 'Hello.']);
    expect(model.doGenerateCalls).toHaveLength(3);
    // Said once for the model, not at every step.
    const notes = seen.diagnostics.filter((d) => d.code === 'model_not_streamed');
    expect(notes).toHaveLength(1);
    expect(notes[0]!.message).toContain("model 'mock-provider:mock-model-id' does not implement doStream");
    expect(notes[0]!.message).toContain('stream: false');
    expect(chatOf(agent).last).toMatchObject({ outcome: 'answered' });
  });

  it('doStream only: an unstreamed turn is answered through the stream, and the compaction summary is written through it too', async () => {
    let calls = 0;
    const model = new MockLanguageModelV3({
      doStream: async (options) => {
        calls++;
        const system = options.prompt[0]?.role === 'system' ? String(options.prompt[0].content) : '';
        return streamOf(system.startsWith('Summarise') ? 'They talked about apples.' : `Answer ${calls}.`);
      },
    });
    const seen = observed();
    const system = systems.start({ models: { default: model }, onUnhandledDiagnostic: seen.onUnhandledDiagnostic });
    const agent = system.spawn(assistant({ stream: false, history: { maxTokens: 40, keepTurns: 1, strategy: 'summarize' } }));
    await expect(agent.call(chatMessage('a long question about apples, pears and the orchards they grow in'))).resolves.toBe('Answer 1.');
    await expect(agent.call(chatMessage('and plums?'))).resolves.toBe('Answer 3.');
    expect(seen.diagnostics.filter((d) => d.code === 'compaction_failed')).toEqual([]);
    expect(chatOf(agent).messages[0]).toEqual({ role: 'user', content: '<conversation_summary>\nThey talked about apples.\n</conversation_summary>' });
    // doGenerate was tried for each (the turn does not stream, the summary is generateText's) and is not implemented.
    expect(model.doGenerateCalls).toHaveLength(3);
    expect(model.doStreamCalls).toHaveLength(3);
  });

  it('neither: the turn fails naming both methods; a real failure of doStream is reported, not replaced by doGenerate', async () => {
    const brokenModel = new MockLanguageModelV3({ doGenerate: async () => answered('never'), doStream: async () => Promise.reject(new Error('socket hang up')) });
    const system = systems.start({ models: { none: new MockLanguageModelV3(), broken: brokenModel } });
    const none = system.spawn(assistant({ model: 'none', stream: false }, 'none'));
    await expect(none.call(chatMessage('Hi'))).rejects.toMatchObject({
      code: 'model_failed',
      message: expect.stringContaining("model 'mock-provider:mock-model-id' implements neither doGenerate nor doStream"),
    });
    const broken = system.spawn(assistant({ model: 'broken', retries: 0 }, 'broken'));
    record(system, 'chat.delta');
    await expect(broken.call(chatMessage('Hi'))).rejects.toMatchObject({ code: 'model_failed', message: expect.stringContaining('socket hang up') });
    expect(brokenModel.doGenerateCalls).toHaveLength(0);
  });
});
