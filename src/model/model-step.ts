/**
 * One model step through the AI SDK's provider interface: a language model's `doGenerate`, or
 * `doStream` when the answer is streamed (specification v2, v3 and v4 alike), or the other one
 * when the model does not implement the one asked for. The history goes to the provider as its
 * prompt, the agent's tools as function tools; the answer comes back as the parts of an
 * assistant message in the AI SDK's message shapes (what its own tool loop puts in a history),
 * the tool calls asked for, parsed, and the usage.
 *
 * The loop around a step is the conversation's own: the in-process driver and the Restate host
 * each ask the model once per step, run the tool calls through the agent in the order the model
 * gave them, and record the step with `answerMessages`.
 */
import type { ChatMessage, ChatUsage } from './conversation.js';
import type { ChatModel } from './models.js';
import { neitherMethod, notImplemented, type ModelMethod } from './model-methods.js';
import { toolResultOutput } from './tool-result.js';

/** A tool as the model is offered it: its name, what it does, and its input's JSON Schema. */
export interface OfferedTool {
  name: string;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
}

/** What one step asks of the model. */
export interface ModelRequest {
  /** The system prompt ('' for none). */
  system: string;
  messages: readonly ChatMessage[];
  tools: readonly OfferedTool[];
  temperature?: number | undefined;
  maxOutputTokens?: number | undefined;
  abortSignal: AbortSignal;
  /** Given, the answer is streamed, and each piece of its text is passed on as it comes. */
  onText?: ((text: string) => void) | undefined;
}

/** A tool call the model asked for, to be run by the loop. */
export interface AskedCall {
  toolCallId: string;
  toolName: string;
  /** Its input, parsed (`{}` when the model sent none). */
  input: unknown;
  /**
   * Why it cannot run: its input is not JSON (`invalid_params`), or it names a tool not offered
   * (`unknown_action`). The message is what the model is told instead of a result.
   */
  problem?: { code: 'invalid_params' | 'unknown_action'; message: string };
}

/** The model's answer in one step. */
export interface ModelAnswer {
  /** The parts of the assistant's message: text, reasoning, files, tool calls (and results of tools the provider ran). */
  content: Record<string, unknown>[];
  /** The tool calls for the loop to run, in the order the model gave them (not those the provider ran itself). */
  calls: AskedCall[];
  usage: ChatUsage;
  /** What the provider warned about (a setting it does not support, say). */
  warnings: unknown[];
  /** The kinds of content part the answer had that a history does not keep. */
  dropped: string[];
  /** The method the model does not implement, when the other one answered instead. */
  missing?: ModelMethod;
}

/** What a step reports of a provider's warning: `model 'acme:small' warned: unsupported: temperature`. */
export function modelWarned(model: ChatModel, warning: unknown): string {
  return `model '${model.provider}:${model.modelId}' warned: ${warningText(warning)}`;
}

/** What a step reports of the parts of an answer a history cannot keep. */
export function partsDropped(model: ChatModel, parts: readonly string[]): string {
  return `the answer of model '${model.provider}:${model.modelId}' had parts the history does not keep: ${parts.join(', ')}`;
}

/** A provider's warning in words: its message, or what it concerns (`unsupported: temperature`). */
function warningText(warning: unknown): string {
  const { type, message, details, feature, setting, tool } = (warning ?? {}) as Record<string, unknown>;
  if (typeof message === 'string') return message;
  const subject = [feature, setting, typeof tool === 'object' && tool !== null ? (tool as { name?: unknown }).name : tool].find((value) => typeof value === 'string');
  return [String(type ?? 'warning'), subject, typeof details === 'string' ? details : undefined].filter((part) => part !== undefined).join(': ');
}

// ── The provider interface, as far as a step reads it (the same in v2, v3 and v4) ──────────

type Part = { type: string; [key: string]: unknown };
interface ProviderResult {
  content?: Part[];
  usage?: unknown;
  warnings?: unknown[];
}
interface ProviderStream {
  stream: ReadableStream<Part>;
}
interface ProviderModel {
  doGenerate(options: Record<string, unknown>): PromiseLike<ProviderResult>;
  doStream(options: Record<string, unknown>): PromiseLike<ProviderStream>;
}

/** Asks `model` for one step. Throws what the provider throws (an `APICallError`, the abort reason). */
export async function askModel(model: ChatModel, request: ModelRequest): Promise<ModelAnswer> {
  const provider = model as unknown as ProviderModel;
  const offered = new Set(request.tools.map((tool) => tool.name));
  const options: Record<string, unknown> = {
    prompt: toPrompt(request.system, request.messages, (model as { specificationVersion?: string }).specificationVersion),
    abortSignal: request.abortSignal,
  };
  if (request.tools.length > 0) {
    options.tools = request.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      inputSchema: tool.inputSchema,
    }));
    options.toolChoice = { type: 'auto' };
  }
  if (request.temperature !== undefined) options.temperature = request.temperature;
  if (request.maxOutputTokens !== undefined) options.maxOutputTokens = request.maxOutputTokens;
  const streamed = request.onText !== undefined;
  const generate = async () => {
    const result = await provider.doGenerate(options);
    return { parts: result.content ?? [], usage: result.usage, warnings: result.warnings ?? [] };
  };
  const stream = async () => readStream(await provider.doStream({ ...options, includeRawChunks: false }), request.onText ?? ignoreText, request.abortSignal);
  let read: { parts: Part[]; usage: unknown; warnings: unknown[] };
  let missing: ModelMethod | undefined;
  try {
    read = streamed ? await stream() : await generate();
  } catch (error) {
    if (!notImplemented(error)) throw error;
    // The model lacks the method asked for (a mock scripted with the other one): the other one
    // answers. A model lacking both is named, with what to give it.
    missing = streamed ? 'doStream' : 'doGenerate';
    try {
      read = streamed ? await generate() : await stream();
    } catch (second) {
      if (!notImplemented(second)) throw second;
      throw new Error(neitherMethod(model));
    }
    // Followers of the stream get the whole text at once.
    if (streamed) for (const part of read.parts) if (part.type === 'text' && typeof part.text === 'string' && part.text) request.onText!(part.text);
  }
  const answer = answerOf(read.parts, read.usage, read.warnings, offered);
  return missing === undefined ? answer : { ...answer, missing };
}

const ignoreText = (): void => {};

/** The parts of a streamed answer, put together as `doGenerate` would have given them. */
async function readStream(result: ProviderStream, onText: (text: string) => void, abortSignal: AbortSignal): Promise<{ parts: Part[]; usage: unknown; warnings: unknown[] }> {
  const parts: Part[] = [];
  const open = new Map<string, Part>();
  let usage: unknown;
  let warnings: unknown[] = [];
  const reader = result.stream.getReader();
  // A provider that ignores the abort signal does not hold the turn: the read gives up with it.
  // The listener goes when the read ends: a signal keeps its listeners, and what they hold, as long as it lives.
  let stopWatching = (): void => {};
  const aborted = new Promise<never>((_, reject) => {
    const fail = () => reject(abortSignal.reason);
    if (abortSignal.aborted) return fail();
    abortSignal.addEventListener('abort', fail, { once: true });
    stopWatching = () => abortSignal.removeEventListener('abort', fail);
  });
  aborted.catch(() => {});
  /** The text or reasoning part of stream id `id`, opened by its start part or its first delta. */
  const partOf = (kind: 'text' | 'reasoning', id: unknown): Part => {
    const key = `${kind}:${String(id)}`;
    let into = open.get(key);
    if (!into) {
      into = { type: kind, text: '' };
      open.set(key, into);
      parts.push(into);
    }
    return into;
  };
  let finished = false;
  try {
    for (;;) {
      const { done, value: part } = await Promise.race([reader.read(), aborted]);
      if (done) break;
      switch (part.type) {
        case 'stream-start':
          warnings = (part.warnings as unknown[] | undefined) ?? [];
          break;
        case 'text-start':
        case 'reasoning-start':
        case 'text-delta':
        case 'reasoning-delta':
        case 'text-end':
        case 'reasoning-end': {
          const kind = part.type.startsWith('text') ? 'text' : 'reasoning';
          const into = partOf(kind, part.id);
          // Providers send metadata (a reasoning signature) on any of the parts: the latest holds.
          if (part.providerMetadata !== undefined) into.providerMetadata = part.providerMetadata;
          if (part.type.endsWith('-delta')) {
            const delta = String(part.delta ?? '');
            into.text = `${String(into.text)}${delta}`;
            if (kind === 'text' && delta) onText(delta);
          }
          break;
        }
        case 'finish':
          usage = part.usage;
          break;
        case 'error':
          throw part.error;
        case 'tool-call':
        case 'tool-result':
        case 'file':
        case 'reasoning-file':
        case 'custom':
          parts.push(part);
          break;
        default:
          break; // progress of a tool's input, sources, metadata, raw chunks: not part of the message
      }
    }
    finished = true;
  } finally {
    stopWatching();
    // Left early (an error part, an abort): the provider's stream is cancelled, not left open.
    if (!finished) await reader.cancel(abortSignal.aborted ? abortSignal.reason : undefined).catch(() => {});
    reader.releaseLock();
  }
  if (abortSignal.aborted) throw abortSignal.reason;
  return { parts, usage, warnings };
}

/** The answer in the history's shapes, from the provider's content parts. */
function answerOf(parts: readonly Part[], usage: unknown, warnings: unknown[], offered: ReadonlySet<string>): ModelAnswer {
  const content: Record<string, unknown>[] = [];
  const calls: AskedCall[] = [];
  const dropped: string[] = [];
  for (const part of parts) {
    const options = part.providerMetadata !== undefined ? { providerOptions: part.providerMetadata } : {};
    switch (part.type) {
      case 'text':
      case 'reasoning':
        if (part.type === 'text' && String(part.text ?? '').length === 0) break;
        content.push({ type: part.type, text: String(part.text ?? ''), ...options });
        break;
      case 'file':
        content.push({ type: 'file', data: fileData(part.data), mediaType: part.mediaType, ...options });
        break;
      case 'tool-call': {
        const call = parseCall(part, offered);
        content.push({
          type: 'tool-call',
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          input: call.input,
          ...(part.providerExecuted === true ? { providerExecuted: true } : {}),
          ...options,
        });
        if (part.providerExecuted !== true) calls.push(call);
        break;
      }
      case 'tool-result':
        // A tool the provider ran itself (a web search): its result belongs to the assistant's
        // message. A preliminary result is followed by the final one, which is what is kept.
        if (part.preliminary === true) break;
        content.push({
          type: 'tool-result',
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          output: toolResultOutput(part.isError === true ? { ok: false, provider: part.result } : { ok: true, output: part.result }),
          ...options,
        });
        break;
      case 'source':
        break; // citations: shown by the provider's own UI helpers, never sent back
      default:
        // A kind of part a history has no shape for (a v4 reasoning file, a provider's custom
        // part): not kept, and said so.
        dropped.push(part.type);
    }
  }
  return { content, calls, usage: usageOf(usage), warnings, dropped };
}

/** A tool call's input parsed, or why it cannot run. */
function parseCall(part: Part, offered: ReadonlySet<string>): AskedCall {
  const toolCallId = String(part.toolCallId);
  const toolName = String(part.toolName);
  const raw = part.input;
  let input: unknown = {};
  let problem: AskedCall['problem'];
  if (typeof raw === 'string') {
    if (raw.trim() !== '') {
      try {
        input = JSON.parse(raw);
      } catch (error) {
        problem = { code: 'invalid_params', message: `Invalid input for tool ${toolName}: JSON parsing failed: Text: ${raw}.\nError message: ${error instanceof Error ? error.message : String(error)}` };
      }
    }
  } else if (raw !== undefined && raw !== null) {
    input = raw;
  }
  if (part.providerExecuted !== true && !offered.has(toolName)) {
    problem = { code: 'unknown_action', message: `Model tried to call unavailable tool '${toolName}'. ${offered.size ? `Available tools: ${[...offered].join(', ')}.` : 'No tools are available.'}` };
  }
  return problem === undefined ? { toolCallId, toolName, input } : { toolCallId, toolName, input, problem };
}

/** Token counts as providers report them: nested in v3 and v4 (`inputTokens.total`), flat in v2. */
export function usageOf(usage: unknown): ChatUsage {
  const counts = (usage ?? {}) as { inputTokens?: unknown; outputTokens?: unknown; totalTokens?: unknown };
  const count = (value: unknown): number => {
    const total = typeof value === 'object' && value !== null ? (value as { total?: unknown }).total : value;
    return typeof total === 'number' && Number.isFinite(total) ? total : 0;
  };
  const input = count(counts.inputTokens);
  const output = count(counts.outputTokens);
  const total = typeof counts.totalTokens === 'number' && Number.isFinite(counts.totalTokens) ? counts.totalTokens : input + output;
  return { inputTokens: input, outputTokens: output, totalTokens: total };
}

/**
 * A file's data as a history keeps it: base64 text, or a URL. Providers give bytes or base64
 * (v2, v3) or a tagged object (`{ type: 'data', data }`, `{ type: 'url', url }`: v4).
 */
function fileData(data: unknown): unknown {
  if (data instanceof Uint8Array) return Buffer.from(data).toString('base64');
  if (typeof data === 'object' && data !== null) {
    const tagged = data as { type?: unknown; data?: unknown; url?: unknown };
    if (tagged.type === 'data') return fileData(tagged.data);
    if (tagged.type === 'url') return String(tagged.url);
  }
  return data;
}

/** A file's data as a provider of `spec` takes it: v4 wants it tagged, as data or as a URL. */
function providerFileData(data: unknown, spec: string | undefined): unknown {
  if (spec !== 'v4' || (typeof data === 'object' && data !== null && !(data instanceof Uint8Array) && !(data instanceof URL))) return data;
  if (data instanceof URL) return { type: 'url', url: data };
  if (typeof data === 'string' && /^https?:\/\//i.test(data)) return { type: 'url', url: new URL(data) };
  return { type: 'data', data };
}

// ── The history as the provider's prompt ───────────────────────────────────────────────────

type MessagePart = Record<string, unknown> & { type?: unknown };

/** The system prompt and the history in the provider's prompt shape. */
export function toPrompt(system: string, messages: readonly ChatMessage[], spec?: string): Record<string, unknown>[] {
  const prompt: Record<string, unknown>[] = system ? [{ role: 'system', content: system }] : [];
  for (const message of messages) {
    const options = message.providerOptions !== undefined ? { providerOptions: message.providerOptions } : {};
    const content = message.content;
    switch (message.role) {
      case 'system':
        prompt.push({ role: 'system', content: String(content), ...options });
        break;
      case 'user':
      case 'assistant': {
        const parts = typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? (content as MessagePart[]).flatMap((part) => promptPart(message.role, part, spec)) : [];
        prompt.push({ role: message.role, content: parts, ...options });
        break;
      }
      case 'tool':
        prompt.push({ role: 'tool', content: Array.isArray(content) ? (content as MessagePart[]).flatMap((part) => promptPart('tool', part, spec)) : [], ...options });
        break;
    }
  }
  return prompt;
}

function promptPart(role: string, part: MessagePart, spec: string | undefined): Record<string, unknown>[] {
  const options = part.providerOptions !== undefined ? { providerOptions: part.providerOptions } : {};
  switch (part.type) {
    case 'text':
      // An empty text says nothing (unless it carries provider options).
      if (role === 'assistant' && part.text === '' && part.providerOptions === undefined) return [];
      return [{ type: 'text', text: part.text, ...options }];
    case 'reasoning':
      return role === 'assistant' ? [{ type: 'reasoning', text: part.text, ...options }] : [];
    case 'image':
      return [{ type: 'file', data: providerFileData(part.image, spec), mediaType: part.mediaType ?? 'image/*', ...options }];
    case 'file':
      return [{ type: 'file', data: providerFileData(part.data, spec), mediaType: part.mediaType, ...(part.filename !== undefined ? { filename: part.filename } : {}), ...options }];
    case 'tool-call':
      return [{ type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, input: part.input, ...(part.providerExecuted === true ? { providerExecuted: true } : {}), ...options }];
    case 'tool-result':
      return [{ type: 'tool-result', toolCallId: part.toolCallId, toolName: part.toolName, output: part.output, ...options }];
    default:
      return []; // approval requests and responses: for the SDK's own approval flow, not the provider
  }
}
