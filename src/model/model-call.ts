/**
 * What every host of model-driven agents does the same way around one model step: the agent's
 * tools as the model is offered them, the calls left waiting and whether each needs approval
 * (or is pre-approved by an active skill), what went wrong with a call and
 * whether to try again, and the history's size and where compaction cuts.
 * The in-process conversation driver and the Restate host both build on these, so a turn reads
 * the same whichever runs it.
 *
 * No I/O of its own: the SDK is passed in.
 */
import { catalogOf, type Agent } from '../core/agent-value.js';
import { describeThrown, errorInfo, type ErrorInfo } from '../core/errors.js';
import { isPlainObject, jsonCopy } from '../core/plain.js';
import { diagnostic, type Diagnostic } from '../core/diagnostics.js';
import type { Toolset } from '../core/toolset.js';
import { RuntimeError } from '../core/runtime-error.js';
import type { ChatMessage, ConversationSettings, TurnRecord } from './conversation.js';
import type { AskedCall, OfferedTool } from './model-step.js';
import type { AiModule } from './ai-sdk.js';
import type { ChatModel, Compactor } from './models.js';
import { preApprovalsOf, preApprovedBy, type PreApprovals } from './pre-approval.js';

/** An agent's tools as the model is offered them, the names of those that need approval, and what its active skills pre-approve. */
export interface ModelTools {
  tools: OfferedTool[];
  approval: Set<string>;
  preApprovals: PreApprovals;
}

/**
 * The tools of `toolset` (the agent's) as the model is offered them, which of them need approval,
 * and what the agent's active skills pre-approve (`preApprovals.diagnostics` names the
 * `allowed-tools` entries that pre-approve nothing: a host reports them).
 */
export function modelTools(agent: Agent<object> | undefined, toolset: Toolset): ModelTools {
  const catalog = catalogOf(agent);
  const approval = new Set<string>();
  const tools: OfferedTool[] = [];
  for (const tool of toolset.tools) {
    const name = tool.function.name;
    tools.push({ name, description: tool.function.description, inputSchema: tool.function.parameters as Record<string, unknown> });
    const binding = toolset.bindings.get(name);
    if (binding && catalog) {
      const actions = binding.skill === undefined ? catalog.blueprint.ownActions : (catalog.skills.get(binding.skill)?.spec.actions ?? []);
      if (actions.find((action) => action.name === binding.action)?.needsApproval) approval.add(name);
    }
  }
  return { tools, approval, preApprovals: preApprovalsOf(agent, toolset) };
}

/** A tool call of a step that did not run in it (it waits for approval, or for the host to run it). */
export interface WaitingCall {
  toolCallId: string;
  tool: string;
  args: unknown;
  needsApproval: boolean;
  /** The active skill whose `allowed-tools` lets this call, which would need approval, run without asking. */
  preApprovedBy?: string;
}

/**
 * A tool call the model asked for, as it waits to run: it needs approval when its tool does,
 * unless an active skill pre-approves this call (decided now, when the model asks for it).
 */
export function waiting(call: AskedCall, tools: ModelTools): WaitingCall {
  const args = plain(call.input ?? {});
  const base = { toolCallId: call.toolCallId, tool: call.toolName, args };
  if (!tools.approval.has(call.toolName)) return { ...base, needsApproval: false };
  const skill = preApprovedBy(tools.preApprovals, call.toolName, args);
  return skill === undefined ? { ...base, needsApproval: true } : { ...base, needsApproval: false, preApprovedBy: skill };
}

/** The diagnostic a host reports when a call runs without asking because a skill pre-approved it. */
export function preApprovedNote(agentId: string, turn: number, call: { toolCallId: string; tool: string; preApprovedBy: string }): Diagnostic {
  return diagnostic('info', 'tool_pre_approved', `agent '${agentId}', turn ${turn}: tool call '${call.toolCallId}' of '${call.tool}' runs without asking: skill '${call.preApprovedBy}' pre-approves it (allowed-tools)`, {
    skill: call.preApprovedBy,
    subject: call.tool,
    details: { toolCallId: call.toolCallId },
  });
}

/** A tool call the model asked for that cannot run, as the signals that follow tool calls tell it: asked for, then failed. */
export function refusedCallSignals(call: AskedCall & { problem: NonNullable<AskedCall['problem']> }): { call: Record<string, unknown>; result: Record<string, unknown> } {
  const named = { toolCallId: call.toolCallId, tool: call.toolName };
  return { call: { ...named, args: plain(call.input ?? {}) }, result: { ...named, ok: false, error: { code: call.problem.code, message: call.problem.message } } };
}

/** A value as plain JSON (what the provider returned may hold class instances), frozen: it is bound for the agent's state. */
export function plain<T>(value: T): T {
  return jsonCopy(value, { freeze: true });
}

/** An error of the model call, and whether trying again may help. */
export interface ModelProblem {
  error: ErrorInfo;
  retryable: boolean;
  /** What the provider asked to wait, in milliseconds. */
  retryAfter?: number;
}

/** The longest wait between two attempts, whatever the provider asks. */
export const MAX_RETRY_WAIT = 60_000;

/** What went wrong with a model call, and whether to try again. */
export function classifyModelError(ai: AiModule, error: unknown, timedOut: boolean, settings: ConversationSettings, model: ChatModel): ModelProblem {
  const name = `model '${model.provider}:${model.modelId}'`;
  if (timedOut) return { retryable: true, error: errorInfo('model_timeout', `${name} gave no answer within ${settings.modelTimeout} ms`, { details: { timeout: settings.modelTimeout } }) };
  const cause = ai.RetryError.isInstance(error) ? error.lastError : error;
  if (ai.APICallError.isInstance(cause)) {
    const status = cause.statusCode;
    const details = { status: status ?? null, retryable: cause.isRetryable };
    const retryAfter = retryAfterOf(cause.responseHeaders);
    if (status === 429) {
      return { retryable: true, ...(retryAfter !== undefined ? { retryAfter } : {}), error: errorInfo('rate_limited', `${name} is rate limited: ${cause.message}`, { details }) };
    }
    return { retryable: cause.isRetryable, ...(retryAfter !== undefined ? { retryAfter } : {}), error: errorInfo('model_failed', `${name} failed${status ? ` (HTTP ${status})` : ''}: ${cause.message}`, { details }) };
  }
  return { retryable: false, error: errorInfo('model_failed', `${name} failed: ${describeThrown(cause)}`) };
}

/**
 * The wait a provider asks for, in milliseconds: `retry-after-ms` (OpenAI's), else `retry-after`
 * in seconds or as an HTTP date (RFC 9110, section 10.2.3); undefined when it asks none, or
 * something that is not a wait.
 */
export function retryAfterOf(headers: Readonly<Record<string, string | undefined>> | undefined, now = Date.now()): number | undefined {
  const ms = Number(headers?.['retry-after-ms'] ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const header = headers?.['retry-after']?.trim();
  if (!header) return undefined;
  if (/^\d+(\.\d+)?$/.test(header)) return Number(header) * 1000;
  // An HTTP date (`Wed, 21 Oct 2015 07:28:00 GMT`): the wait is until then, none once it is past.
  const at = /^[A-Za-z]{3}, /.test(header) ? Date.parse(header) : NaN;
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/** How long to wait before attempt `attempt + 1`: what the provider asked, else exponential, at most a minute. */
export function retryWait(problem: ModelProblem, settings: ConversationSettings, attempt: number): number {
  return Math.min(problem.retryAfter ?? settings.retryDelay * 2 ** attempt, MAX_RETRY_WAIT);
}

/** The error a turn ends with when its model is not among the host's. */
export function unknownModel(agentId: string, name: string, known: readonly string[], hint: string): ErrorInfo {
  return errorInfo('model_not_found', `agent '${agentId}' asks for model '${name}', which the system does not know; ${known.length ? `known models: ${known.join(', ')}` : hint}`, { subject: name });
}

/** How many of the turn's tool calls have run (or were refused): those asked for, less those still waiting. */
export function callsRun(turn: Pick<TurnRecord, 'toolCalls' | 'pending'>): number {
  return turn.toolCalls - turn.pending.length;
}

/** The error a turn ends with when the model asked for more tool calls than it may make. */
export function toolLimit(turn: number, max: number): ErrorInfo {
  return errorInfo('turn_limit', `turn ${turn} asked for more than ${max} tool calls; at most ${max} are allowed per turn`, { details: { limit: 'maxToolCalls', value: max } });
}

/** The error a turn ends with when the agent has used its token budget. */
export function overBudget(agentId: string, used: number, budget: number): ErrorInfo {
  return errorInfo('budget_exceeded', `agent '${agentId}' has used ${used} tokens of its budget of ${budget}`, { details: { used, budget } });
}

/** Checks a `models` option: each a language model object of the AI SDK. */
export function checkModels(models: unknown): Readonly<Record<string, ChatModel>> {
  if (models === undefined) return {};
  if (!isPlainObject(models)) throw new RuntimeError(errorInfo('invalid_options', 'models must be an object of language models by name, such as { default: openai("gpt-4.1") }', { subject: 'models' }));
  for (const [name, model] of Object.entries(models)) {
    const ok = typeof model === 'object' && model !== null && typeof (model as { doGenerate?: unknown }).doGenerate === 'function' && typeof (model as { doStream?: unknown }).doStream === 'function';
    if (!ok) {
      throw new RuntimeError(
        errorInfo('invalid_options', `models.${name} is not an AI SDK language model (an object with doGenerate and doStream, such as openai("gpt-4.1"))`, { subject: `models.${name}` }),
      );
    }
  }
  return models as Readonly<Record<string, ChatModel>>;
}

/** Checks a `compactors` option: an object of functions by name. */
export function checkCompactors(compactors: unknown): Readonly<Record<string, Compactor>> {
  if (compactors === undefined) return {};
  if (!isPlainObject(compactors)) throw new RuntimeError(errorInfo('invalid_options', 'compactors must be an object of functions by name', { subject: 'compactors' }));
  for (const [name, compactor] of Object.entries(compactors)) {
    if (typeof compactor !== 'function') throw new RuntimeError(errorInfo('invalid_options', `compactors.${name} is not a function`, { subject: `compactors.${name}` }));
  }
  return compactors as Readonly<Record<string, Compactor>>;
}

// ── The history's size, and compaction ─────────────────────────────────────────────────────

/** Each message's length as JSON, measured once: a history shares its messages with the one before it. */
const measured = new WeakMap<ChatMessage, number>();

/** The history's size in tokens, estimated at four characters a token (of the history as JSON). */
export function historyTokens(messages: readonly ChatMessage[]): number {
  // The length of `JSON.stringify(messages)`: each message's, the commas and the brackets.
  let length = messages.length > 0 ? messages.length + 1 : 2;
  for (const message of messages) {
    let size = measured.get(message);
    if (size === undefined) measured.set(message, (size = JSON.stringify(message).length));
    length += size;
  }
  return Math.ceil(length / 4);
}

/** Where the latest `keepTurns` turns begin: the index of their first user message (0 when there are no more). */
export function keepFrom(messages: readonly ChatMessage[], keepTurns: number): number {
  let seen = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === 'user' && typeof message.content === 'string' && !message.content.startsWith('<conversation_summary>')) {
      if (++seen === keepTurns) return i;
    }
  }
  return 0;
}

/** The instructions the model summarises an older history with (the `summarize` strategy). */
export const SUMMARY_INSTRUCTIONS =
  'Summarise this conversation so far for yourself: the facts, decisions, open questions and results of tool calls that matter later. Be brief.';

/** A history as text for a summary. */
export function transcript(messages: readonly ChatMessage[]): string {
  return messages
    .map((message) => {
      const content = typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
      return `${message.role}: ${content}`;
    })
    .join('\n');
}
