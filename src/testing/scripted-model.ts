/**
 * A scripted language model: a stand-in for a real provider that answers from a list of
 * responses, in order, for demos, offline use and tests where the model itself is not under
 * test. It implements the AI SDK's language model interface (specification v3), so everything
 * between it and the agent — the prompt as a provider gets it, tool-call parsing, streaming,
 * retries — is the real code path.
 *
 * A response is plain JSON (so a script can live in a file): text, tool calls, a provider error,
 * a stream that fails part-way, or a delay. A function may stand in for a response to answer from
 * what the model was sent.
 */
import type { LanguageModel } from 'ai';
import type { ChatModel } from '../model/models.js';

type ModelV3 = Extract<Exclude<LanguageModel, string>, { specificationVersion: 'v3' }>;
type CallOptions = Parameters<ModelV3['doGenerate']>[0];
type GenerateResult = Awaited<ReturnType<ModelV3['doGenerate']>>;
type StreamResult = Awaited<ReturnType<ModelV3['doStream']>>;
type StreamPart = StreamResult['stream'] extends ReadableStream<infer P> ? P : never;

/** How a scripted answer fails part-way: after so many text pieces, with a provider error. */
export interface ScriptedStreamFailure {
  /** Text pieces streamed before the failure (pieces as `chunk` cuts them: words by default). */
  after: number;
  status?: number;
  message: string;
  /** Whether trying again may help (default: for 429 and 5xx). */
  retryable?: boolean;
}

/** A tool call a scripted response makes. */
export interface ScriptedToolCall {
  tool: string;
  /** The arguments, as an object (or as raw text, to script malformed JSON). Default `{}`. */
  args?: Record<string, unknown> | string;
  /** Default `call-<n>`, numbered across the script. */
  id?: string;
}

/** One answer of a scripted model. */
export type ScriptedResponse =
  | {
      /** The answer's text (with tool calls, the text said before them). */
      text?: string;
      toolCalls?: ScriptedToolCall[];
      /** Milliseconds to wait before answering (a cancellation or a time-out can come meanwhile). */
      delay?: number;
      /** Token counts to report; default: about four characters a token. */
      usage?: { inputTokens?: number; outputTokens?: number };
      /** Warnings the provider sends with the answer (each as `{ type: 'other', message }`), as one does for a setting it ignores. */
      warnings?: string[];
      /**
       * The answer fails part-way, as a dropped connection does: streamed, the stream sends
       * `after` pieces of the text, then fails with this provider error (an HTTP status: 429 and
       * 5xx are retryable, as for `error`); asked whole, the call fails with it at once.
       */
      streamFails?: ScriptedStreamFailure;
    }
  | {
      /** The provider fails: an HTTP status (429: rate limited; 5xx: retryable) and a message. */
      error: { status?: number; message: string; retryable?: boolean };
      delay?: number;
    };

/** What a scripted model was sent in one call, for tests to look at. */
export interface ScriptedCall {
  /** The system prompt. */
  system: string;
  /** The conversation's messages after the system prompt, in the provider's form. */
  messages: ScriptedPromptMessage[];
  /** Names of the tools offered. */
  tools: string[];
  streamed: boolean;
  /** The caller aborted the request (a cancelled turn, a time-out) before it was answered. */
  aborted: boolean;
}

/**
 * A message of the prompt as a provider gets it (the AI SDK's language model prompt, declared by
 * its shape so that these types compile without `ai` installed): a user's, the assistant's (text,
 * tool calls) or the tools' results, as parts of a `type` (`text`, `tool-call`, `tool-result`...)
 * with that type's fields.
 */
export interface ScriptedPromptMessage {
  role: 'user' | 'assistant' | 'tool';
  content: readonly { readonly type: string }[];
}

/** A scripted step: a response, or a function that chooses one from what the model was sent. */
export type ScriptStep = ScriptedResponse | ((call: ScriptedCall) => ScriptedResponse);

/** A scripted model: an AI SDK language model (specification v3) that also records its calls. */
export type ScriptedModel = ChatModel & {
  /** Every call so far, oldest first. */
  readonly calls: ScriptedCall[];
  /** Responses not used yet. */
  readonly remaining: number;
};

/** Options of `scriptedModel`. */
export interface ScriptedModelOptions {
  /** Shown as the model's id (default `scripted`). */
  modelId?: string;
  /** Characters per streamed text piece (default: one word at a time). */
  chunk?: number;
  /** When the script is used up: start again from its first response (default: fail the call). */
  loop?: boolean;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

function tokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function usageOf(options: CallOptions, response: { text?: string; toolCalls?: ScriptedToolCall[]; usage?: { inputTokens?: number; outputTokens?: number } }): GenerateResult['usage'] {
  const input = response.usage?.inputTokens ?? tokens(JSON.stringify(options.prompt));
  const output = response.usage?.outputTokens ?? tokens((response.text ?? '') + JSON.stringify(response.toolCalls ?? []));
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: output, text: output, reasoning: 0 },
  };
}

/** Splits text the way a provider streams it: word by word, or in pieces of `size` characters. */
function pieces(text: string, size: number | undefined): string[] {
  if (size !== undefined) {
    const out: string[] = [];
    for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
    return out;
  }
  return text.match(/\S+\s*|\s+/g) ?? [];
}

const RESPONSE_KEYS = ['text', 'toolCalls', 'delay', 'usage', 'warnings', 'streamFails', 'error'];
const STREAM_FAILURE_KEYS = ['after', 'status', 'message', 'retryable'];
const TOOL_CALL_KEYS = ['tool', 'args', 'id'];

/** What is wrong with a scripted response, in words; undefined when nothing is. A misspelt key is never ignored. */
function responseProblem(response: ScriptedResponse): string | undefined {
  if (typeof response !== 'object' || response === null) return `a response must be an object such as { "text": "Hello" }, got ${JSON.stringify(response)}`;
  const unknown = Object.keys(response).find((key) => !RESPONSE_KEYS.includes(key));
  if (unknown !== undefined) return `unknown key '${unknown}' (a response has ${RESPONSE_KEYS.join(', ')})`;
  const { toolCalls, warnings } = response as { toolCalls?: unknown; warnings?: unknown };
  if (toolCalls !== undefined) {
    if (!Array.isArray(toolCalls)) return `toolCalls must be a list, got ${JSON.stringify(toolCalls)}`;
    for (const [i, call] of toolCalls.entries()) {
      if (typeof call !== 'object' || call === null || typeof (call as { tool?: unknown }).tool !== 'string') return `toolCalls[${i}] must be an object with a tool name, such as { "tool": "add", "args": { "a": 1 } }`;
      const key = Object.keys(call).find((name) => !TOOL_CALL_KEYS.includes(name));
      if (key !== undefined) return `toolCalls[${i}]: unknown key '${key}' (a tool call has ${TOOL_CALL_KEYS.join(', ')})`;
    }
  }
  if (warnings !== undefined && !(Array.isArray(warnings) && warnings.every((warning) => typeof warning === 'string'))) return `warnings must be a list of strings, got ${JSON.stringify(warnings)}`;
  const { streamFails } = response as { streamFails?: unknown };
  if (streamFails !== undefined) {
    const failure = streamFails as Partial<Record<string, unknown>> | null;
    if (typeof failure !== 'object' || failure === null || !(Number.isInteger(failure.after) && (failure.after as number) >= 0) || typeof failure.message !== 'string') {
      return `streamFails must be an object with a count of text pieces and a message, such as { "after": 2, "status": 503, "message": "connection reset" }, got ${JSON.stringify(streamFails)}`;
    }
    const key = Object.keys(failure).find((name) => !STREAM_FAILURE_KEYS.includes(name));
    if (key !== undefined) return `streamFails: unknown key '${key}' (it has ${STREAM_FAILURE_KEYS.join(', ')})`;
  }
  return undefined;
}

/** The AI SDK's error for a provider's failure: an HTTP status (429 and 5xx retryable unless said otherwise) and a message. */
async function providerError(failure: { status?: number; message: string; retryable?: boolean }): Promise<Error> {
  const { APICallError } = await import('ai');
  const { status } = failure;
  return new APICallError({
    message: failure.message,
    url: 'scripted://model',
    requestBodyValues: {},
    ...(status !== undefined ? { statusCode: status } : {}),
    isRetryable: failure.retryable ?? (status === 429 || (status !== undefined && status >= 500)),
  });
}

/**
 * Makes a scripted model: each call answers with the next response of `script`. When the script
 * is used up a call fails with a message saying so (or, with `loop`, starts again).
 *
 * @example
 * const model = scriptedModel([
 *   { toolCalls: [{ tool: 'add', args: { a: 2, b: 3 } }] },
 *   { text: '2 + 3 = 5' },
 * ]);
 * const system = createAgentSystem({ models: { default: model } });
 */
export function scriptedModel(script: readonly ScriptStep[], options: ScriptedModelOptions = {}): ScriptedModel {
  if (!Array.isArray(script)) throw new TypeError('scriptedModel takes an array of responses');
  const calls: ScriptedCall[] = [];
  let next = 0;
  let callIds = 0;

  const take = async (callOptions: CallOptions, streamed: boolean) => {
    const system = callOptions.prompt.filter((message) => message.role === 'system').map((message) => message.content as string).join('\n');
    const call: ScriptedCall = {
      system,
      messages: callOptions.prompt.filter((message) => message.role !== 'system') as ScriptedPromptMessage[],
      tools: (callOptions.tools ?? []).map((tool) => tool.name),
      streamed,
      aborted: callOptions.abortSignal?.aborted ?? false,
    };
    callOptions.abortSignal?.addEventListener('abort', () => (call.aborted = true), { once: true });
    calls.push(call);
    if (next >= script.length) {
      if (options.loop && script.length > 0) next = 0;
      else throw new Error(`the scripted model has no response left: its script of ${script.length} was used up (call ${calls.length})`);
    }
    const step = script[next++]!;
    const response = typeof step === 'function' ? step(call) : step;
    const problem = responseProblem(response);
    if (problem !== undefined) throw new TypeError(`scripted response ${next} (of ${script.length}): ${problem}`);
    if (response.delay !== undefined) await sleep(response.delay, callOptions.abortSignal);
    if ('error' in response) throw await providerError(response.error);
    const toolCalls = (response.toolCalls ?? []).map((toolCall: ScriptedToolCall) => ({
      type: 'tool-call' as const,
      toolCallId: toolCall.id ?? `call-${++callIds}`,
      toolName: toolCall.tool,
      input: typeof toolCall.args === 'string' ? toolCall.args : JSON.stringify(toolCall.args ?? {}),
    }));
    const warnings = (response.warnings ?? []).map((message: string) => ({ type: 'other' as const, message }));
    return { response, toolCalls, usage: usageOf(callOptions, response), warnings };
  };

  const model = {
    specificationVersion: 'v3' as const,
    provider: 'scripted',
    modelId: options.modelId ?? 'scripted',
    supportedUrls: {},
    calls,
    get remaining() {
      return Math.max(0, script.length - next);
    },
    async doGenerate(callOptions: CallOptions): Promise<GenerateResult> {
      const { response, toolCalls, usage, warnings } = await take(callOptions, false);
      if ('streamFails' in response && response.streamFails) throw await providerError(response.streamFails);
      const text = 'text' in response && response.text ? [{ type: 'text' as const, text: response.text }] : [];
      return {
        content: [...text, ...toolCalls],
        finishReason: { unified: toolCalls.length ? 'tool-calls' : 'stop', raw: undefined },
        usage,
        warnings,
      };
    },
    async doStream(callOptions: CallOptions): Promise<StreamResult> {
      const { response, toolCalls, usage, warnings } = await take(callOptions, true);
      const parts: StreamPart[] = [{ type: 'stream-start', warnings }];
      const text = 'text' in response ? (response.text ?? '') : '';
      const failure = 'streamFails' in response ? response.streamFails : undefined;
      if (failure) {
        // The pieces that got through, then the provider's error as the stream's last part.
        parts.push({ type: 'text-start', id: 'text-1' });
        for (const delta of pieces(text, options.chunk).slice(0, failure.after)) parts.push({ type: 'text-delta', id: 'text-1', delta });
        parts.push({ type: 'error', error: await providerError(failure) });
      } else {
        if (text) {
          parts.push({ type: 'text-start', id: 'text-1' });
          for (const delta of pieces(text, options.chunk)) parts.push({ type: 'text-delta', id: 'text-1', delta });
          parts.push({ type: 'text-end', id: 'text-1' });
        }
        parts.push(...toolCalls);
        parts.push({ type: 'finish', usage, finishReason: { unified: toolCalls.length ? 'tool-calls' : 'stop', raw: undefined } });
      }
      return {
        stream: new ReadableStream<StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  };
  return (model satisfies ModelV3) as ScriptedModel;
}
