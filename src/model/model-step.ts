/**
 * One model step through the AI SDK's public API: `generateText`, or `streamText` when the text
 * is followed as it comes, asked for one step with the agent's tools offered but not run (they
 * have no `execute`), or the other function when the model does not implement the method the
 * first one asks (a mock scripted with one). The SDK turns the history into the provider's
 * prompt, and the answer into an assistant message in its message shapes (what its own tool loop
 * puts in a history); the step adds the tool calls asked for, each parsed or refused with why.
 *
 * The loop around a step is the conversation's own: the turn engine (`turn-engine.ts`) decides
 * what becomes of each call, and the in-process driver and the Restate host carry it out and
 * record the step (`stepRecord`).
 */
import type { JSONSchema7, ModelMessage, ToolSet } from 'ai';
import { loadAi, loadedAi, sdkModel, type AiModule } from './ai-sdk.js';
import type { ChatMessage, ChatUsage } from './conversation.js';
import type { ChatModel } from './models.js';
import { neitherMethod, notImplemented, type ModelMethod } from './model-methods.js';
import { untilAborted } from './step-abort.js';

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
   * Why it cannot run: its input is not JSON, or its id is an earlier call's of the same answer
   * (`invalid_params`), or it names a tool not offered (`unknown_action`). The message is what the model is told instead of a result.
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
  /** Why the model stopped (`stop`, `tool-calls`, `length`…), as the SDK says. */
  finishReason?: string;
  /** The provider's id of the response and the model that answered, when it says. */
  response?: { id?: string; modelId?: string };
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

// ── The step through the AI SDK ─────────────────────────────────────────────────────────────

/** The options of `generateText` and `streamText` a step gives (the two take the same). */
type StepOptions = Parameters<AiModule['generateText']>[0] & Parameters<AiModule['streamText']>[0];
/** The answer of one step as both functions give it. */
interface StepResult {
  content: readonly { type: string; [key: string]: unknown }[];
  messages: readonly { role: string; content: unknown }[];
  usage: unknown;
  warnings: readonly unknown[];
  finishReason: unknown;
  response: { id?: unknown; modelId?: unknown };
}

/**
 * Asks `model` for one step through the AI SDK: `generateText`, or `streamText` when the text is
 * followed (`onText`), with the tools offered but not run (they have no `execute`), one step, no
 * retries of the SDK's own (the conversation retries, and classifies what failed). A mock model
 * scripted with one method only is answered by the other. Throws what the SDK throws (an
 * `APICallError`, the abort reason).
 */
export async function askModel(model: ChatModel, request: ModelRequest): Promise<ModelAnswer> {
  const ai = loadedAi() ?? (await loadAi());
  const options = stepOptions(ai, model, request);
  const streamed = request.onText !== undefined;
  let result: StepResult;
  let missing: ModelMethod | undefined;
  try {
    result = streamed ? await streamStep(ai, options, request.onText!, request.abortSignal) : await generateStep(ai, options, request.abortSignal);
  } catch (error) {
    if (!notImplemented(error)) throw error;
    // The model lacks the method asked for (a mock scripted with the other one): the other one
    // answers. A model lacking both is named, with what to give it.
    missing = streamed ? 'doStream' : 'doGenerate';
    try {
      result = streamed ? await generateStep(ai, options, request.abortSignal) : await streamStep(ai, options, ignoreText, request.abortSignal);
    } catch (second) {
      if (!notImplemented(second)) throw second;
      throw new Error(neitherMethod(model));
    }
    // Followers of the stream get the whole text at once.
    if (streamed) for (const part of result.content) if (part.type === 'text' && typeof part.text === 'string' && part.text) request.onText!(part.text);
  }
  const answer = answerOf(ai, result);
  return missing === undefined ? answer : { ...answer, missing };
}

const ignoreText = (): void => {};

/** The request as the SDK's options; the tools of one offer are made once. */
function stepOptions(ai: AiModule, model: ChatModel, request: ModelRequest): StepOptions {
  const history = request.messages as unknown as ModelMessage[];
  const options = {
    model: sdkModel(model),
    // The SDK checks `messages` against its message schema at every call, the whole history at
    // every step: some 70 µs for each tool call or result, a cost that grows with the
    // conversation (7 ms a step at 100 messages). The history is the SDK's own answers and the
    // conversation's checked messages, so it is given through `prepareStep`, which the SDK
    // takes as it is for the step's prompt; `messages` is one empty message for the SDK to check.
    messages: [{ role: 'user', content: '' }],
    prepareStep: () => ({ messages: history }),
    maxRetries: 0,
    stopWhen: ai.stepCountIs(1),
    abortSignal: request.abortSignal,
  } as StepOptions;
  if (request.system) options.system = request.system;
  // No tools at all (not an empty set): a call the model makes up is told no tool is available.
  if (request.tools.length > 0) options.tools = toolSet(ai, request.tools);
  if (request.temperature !== undefined) options.temperature = request.temperature;
  if (request.maxOutputTokens !== undefined) options.maxOutputTokens = request.maxOutputTokens;
  return options;
}

const toolSets = new WeakMap<readonly OfferedTool[], ToolSet>();

/** The offered tools as the SDK's tools, without `execute`: the SDK returns their calls and the turn runs them. */
function toolSet(ai: AiModule, tools: readonly OfferedTool[]): ToolSet {
  let set = toolSets.get(tools);
  if (set === undefined) {
    set = {};
    for (const tool of tools) {
      set[tool.name] = ai.tool({
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        // No validation here: the action checks its input against its own schema, with its own errors.
        inputSchema: ai.jsonSchema(tool.inputSchema as JSONSchema7),
      });
    }
    toolSets.set(tools, set);
  }
  return set;
}

/** One step asked whole; a provider that ignores the abort signal does not hold the turn: the step gives up with it. */
async function generateStep(ai: AiModule, options: StepOptions, abortSignal: AbortSignal): Promise<StepResult> {
  const result = await untilAborted(ai.generateText(options), abortSignal);
  return { content: result.content as StepResult['content'], messages: result.response.messages, usage: result.usage, warnings: result.warnings ?? [], finishReason: result.finishReason, response: result.response };
}

/** One streamed step: each piece of text is passed on as it comes; an error part is thrown. */
async function streamStep(ai: AiModule, options: StepOptions, onText: (text: string) => void, abortSignal: AbortSignal): Promise<StepResult> {
  // Errors come as parts of the stream, read below: the SDK's default handler would log them too.
  const result = ai.streamText({ ...options, onError: ignoreText });
  const reader = result.fullStream.getReader();
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
  let finished = false;
  try {
    for (;;) {
      const { done, value: part } = await Promise.race([reader.read(), aborted]);
      if (done) break;
      if (part.type === 'text-delta' && part.text) onText(part.text);
      else if (part.type === 'error') throw part.error;
      else if (part.type === 'abort') throw abortSignal.reason;
    }
    finished = true;
  } finally {
    stopWatching();
    // Left early (an error part, an abort): the read is cancelled, not left open. (The provider's
    // own stream ends through the abort signal the SDK handed it.)
    if (!finished) await reader.cancel(abortSignal.aborted ? abortSignal.reason : undefined).catch(() => {});
    reader.releaseLock();
  }
  if (abortSignal.aborted) throw abortSignal.reason;
  const [content, response, usage, warnings, finishReason] = await Promise.all([result.content, result.response, result.usage, result.warnings, result.finishReason]);
  return { content: content as StepResult['content'], messages: response.messages, usage, warnings: warnings ?? [], finishReason, response };
}

/**
 * The kinds of content part the SDK's response message has a shape for (a client tool's
 * result or error is the turn's, and a source is a citation, never sent back).
 */
const KEPT = new Set(['text', 'reasoning', 'reasoning-file', 'file', 'custom', 'tool-call', 'tool-result', 'tool-error', 'tool-approval-request', 'source']);

/** The answer in the history's shapes: the SDK's assistant message, and the calls for the turn to run. */
function answerOf(ai: AiModule, result: StepResult): ModelAnswer {
  const assistant = result.messages.find((message) => message.role === 'assistant');
  const renamed = uniqueIds();
  const content = (Array.isArray(assistant?.content) ? (assistant.content as Record<string, unknown>[]) : []).map((part) =>
    part.type === 'tool-call' ? renamedCall(part, renamed(String(part.toolCallId))) : part,
  );
  const calls: AskedCall[] = [];
  const dropped: string[] = [];
  const renamedAsked = uniqueIds();
  for (const part of result.content) {
    if (!KEPT.has(part.type)) dropped.push(part.type);
    if (part.type !== 'tool-call') continue;
    const asked = String(part.toolCallId);
    const id = renamedAsked(asked);
    if (part.providerExecuted === true) continue;
    const call = { toolCallId: id, toolName: String(part.toolName) };
    if (id !== asked) {
      // The SDK gives a call that repeats an id the input of the first: running it would run the
      // first call again, with effects the model never asked for.
      calls.push({ ...call, input: {}, problem: { code: 'invalid_params', message: repeatedId(asked, id) } });
      continue;
    }
    if (part.invalid !== true) {
      calls.push({ ...call, input: part.input ?? {} });
      continue;
    }
    // Input that is not JSON stays as sent; the history, like the call, has `{}` for it.
    const input = typeof part.input === 'object' && part.input !== null ? part.input : {};
    const code = ai.NoSuchToolError.isInstance(part.error) ? 'unknown_action' : 'invalid_params';
    calls.push({ ...call, input, problem: { code, message: part.error instanceof Error ? part.error.message : String(part.error) } });
  }
  const answer: ModelAnswer = { content, calls, usage: usageOf(result.usage), warnings: [...result.warnings], dropped };
  if (typeof result.finishReason === 'string') answer.finishReason = result.finishReason;
  const { id, modelId } = result.response;
  if (typeof id === 'string' || typeof modelId === 'string') answer.response = { ...(typeof id === 'string' ? { id } : {}), ...(typeof modelId === 'string' ? { modelId } : {}) };
  return answer;
}

/**
 * Tool call ids made unique within one answer, in order: an id seen before becomes `<id>~<n>`
 * (its n-th use), so each call of the history has its own result and none is read as another's.
 */
function uniqueIds(): (id: string) => string {
  const seen = new Map<string, number>();
  return (id) => {
    const n = (seen.get(id) ?? 0) + 1;
    seen.set(id, n);
    return n === 1 ? id : `${id}~${n}`;
  };
}

function renamedCall(part: Record<string, unknown>, toolCallId: string): Record<string, unknown> {
  return part.toolCallId === toolCallId ? part : { ...part, toolCallId };
}

/** What the model is told of a tool call whose id an earlier call of the same answer has. */
function repeatedId(toolCallId: string, renamed: string): string {
  return `tool call id '${toolCallId}' is already used by an earlier call of this answer, so this call (now '${renamed}') did not run; give each call an id of its own`;
}

/**
 * Token counts as providers report them: nested in v3 and v4 (`inputTokens.total`), flat in v2.
 * A count that is not a number of tokens (missing, `NaN`, infinite, negative) counts as none: a
 * negative one would give back tokens the agent's budget (`maxTokens`) has counted.
 */
export function usageOf(usage: unknown): ChatUsage {
  const counts = (usage ?? {}) as { inputTokens?: unknown; outputTokens?: unknown; totalTokens?: unknown };
  const tokens = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0;
  const count = (value: unknown): number => {
    const total = typeof value === 'object' && value !== null ? (value as { total?: unknown }).total : value;
    return tokens(total) ? total : 0;
  };
  const input = count(counts.inputTokens);
  const output = count(counts.outputTokens);
  const total = tokens(counts.totalTokens) ? counts.totalTokens : input + output;
  return { inputTokens: input, outputTokens: output, totalTokens: total };
}
