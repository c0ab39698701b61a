/**
 * The turn engine: what a model turn does next, decided once for every host. Given the turn as
 * the agent's state records it (and what just happened: the model's answer, a failed model call),
 * it returns the next move as plain data: ask the model, run a tool call, record a refusal, wait
 * for approval, compact the history, settle a step, fail. The in-process driver and the Restate
 * turn object only carry moves out (with their own I/O, timers and journal) and record what came
 * back through the conversation's actions, so a turn reads the same whichever host runs it.
 *
 * No XState, no timers, no I/O; the clock is passed in.
 */
import type { Diagnostic } from '../core/diagnostics.js';
import { diagnostic } from '../core/diagnostics.js';
import { errorInfo, type ErrorInfo } from '../core/errors.js';
import { ChatSignals, CONVERSATION, type ChatMessage, type ChatUsage, type ConversationSettings, type PendingToolCall, type TurnRecord } from './conversation.js';
import {
  callsRun,
  historyTokens,
  keepFrom,
  overBudget,
  plain,
  retryWait,
  toolLimit,
  unknownModel,
  waiting,
  type ModelProblem,
  type ModelTools,
  type WaitingCall,
} from './model-call.js';
import type { AskedCall, ModelAnswer } from './model-step.js';
import type { AgentItemEvent } from '../../machines/agent.js';
import { CALL_ABORTED_SIGNAL } from '../core/system-signals.js';
import { failed, toolResultPart, type ToolError, type ToolResultPart } from './tool-result.js';

/** What the engine reads of a turn in flight. */
export interface TurnView {
  agentId: string;
  turn: TurnRecord;
  messages: readonly ChatMessage[];
  usage: ChatUsage;
  settings: ConversationSettings;
  /** The names of the models the host knows. */
  models: readonly string[];
  /** What the host tells a user whose agent names a model it does not know. */
  modelHint: string;
  /**
   * The history was compacted for the model call to come: it is not compacted again before it
   * (a compaction that leaves it over budget would otherwise repeat).
   */
  compacted: boolean;
}

/** The next move of a turn. */
export type TurnMove =
  /** Nothing to do until a person approves or denies the call waiting (`chat.approve`, `chat.deny`). */
  | { kind: 'wait' }
  /** Calls ran in a model step whose record is missing: record them (`settle_step`), without running them again. */
  | { kind: 'settle' }
  /** End the turn with `error` (`fail_turn`). */
  | { kind: 'fail'; error: ErrorInfo }
  /** Replace the oldest `remove` messages of the history with a summary by `strategy` (or drop them), then move again. */
  | { kind: 'compact'; remove: number; tokens: number; strategy: string }
  /** Ask the model for the next step; `notes` are to be reported first. */
  | { kind: 'ask'; notes: Diagnostic[] }
  /** Record the refused call's result without running it (`record_tool_result`). */
  | { kind: 'deny'; call: PendingToolCall }
  /** Run the next call waiting, through the agent, and record its result. */
  | { kind: 'run'; call: PendingToolCall };

const WAIT: TurnMove = Object.freeze({ kind: 'wait' });
const SETTLE: TurnMove = Object.freeze({ kind: 'settle' });

/** The next move of the turn in flight. */
export function nextMove(view: TurnView): TurnMove {
  const { turn, settings } = view;
  if (turn.status === 'awaiting-approval') return WAIT;
  if (turn.status === 'acting') {
    // The calls past the limit do not run: the turn ends, and they get an error result.
    if (callsRun(turn) >= settings.maxToolCalls) return { kind: 'fail', error: toolLimit(turn.n, settings.maxToolCalls) };
    const call = turn.pending[0]!;
    return call.approval === 'denied' ? { kind: 'deny', call } : { kind: 'run', call };
  }
  // Tool calls ran in a model step whose record is missing (the process stopped in between):
  // into the history with them, without running them again.
  if (turn.ran.length > 0) return SETTLE;
  if (settings.maxTokens !== undefined && view.usage.totalTokens >= settings.maxTokens) {
    return { kind: 'fail', error: overBudget(view.agentId, view.usage.totalTokens, settings.maxTokens) };
  }
  if (!view.models.includes(settings.model)) return { kind: 'fail', error: unknownModel(view.agentId, settings.model, view.models, view.modelHint) };
  const tokens = historyTokens(view.messages);
  if (view.compacted || tokens <= settings.history.maxTokens) return { kind: 'ask', notes: [] };
  const remove = keepFrom(view.messages, settings.history.keepTurns);
  if (remove > 0) return { kind: 'compact', remove, tokens, strategy: settings.history.strategy };
  const kept = diagnostic(
    'warning',
    'history_over_budget',
    `agent '${view.agentId}': the history (about ${tokens} tokens) is over its budget of ${settings.history.maxTokens}, but only the latest ${settings.history.keepTurns} turn(s) are left, which are kept`,
    { details: { tokens, budget: settings.history.maxTokens } },
  );
  return { kind: 'ask', notes: [kept] };
}

// ── After the model answered ─────────────────────────────────────────────────────────────

/** What becomes of one tool call the model asked for. */
export type CallPlan =
  /** It cannot run (unknown tool, input not JSON): answered in the step with its problem. */
  | { kind: 'refuse'; call: AskedCall & { problem: NonNullable<AskedCall['problem']> } }
  /** It runs now, inside the model step, recorded by the step that runs it. */
  | { kind: 'run'; call: AskedCall }
  /** It waits, recorded with the step: for approval, or for the host to run it as a step of its own. */
  | { kind: 'wait'; call: WaitingCall };

/**
 * What becomes of each call of `answer`, in the order the model gave them. A host that runs
 * calls inside the model step (`runInStep`) does so only while no call needs approval and the
 * turn's tool calls stay within `maxToolCalls`; once one call waits, the ones after it wait too,
 * so the calls run in the order asked.
 */
export function planCalls(answer: Pick<ModelAnswer, 'calls'>, tools: ModelTools, turn: Pick<TurnRecord, 'toolCalls'>, settings: ConversationSettings, runInStep: boolean): CallPlan[] {
  let running = runInStep && tools.approval.size === 0;
  let ran = 0;
  return answer.calls.map((call): CallPlan => {
    if (call.problem !== undefined) return { kind: 'refuse', call: { ...call, problem: call.problem } };
    if (running && turn.toolCalls + ran < settings.maxToolCalls) {
      ran++;
      return { kind: 'run', call };
    }
    running = false;
    return { kind: 'wait', call: waiting(call, tools) };
  });
}

/** The result a refused call is answered with in its step: its problem, as any failed call's. */
export function refusedPart(plan: CallPlan & { kind: 'refuse' }): ToolResultPart {
  return toolResultPart(plan.call, failed(plan.call.problem));
}

/**
 * The messages a model step adds to the history: the assistant's message (when it said or asked
 * for anything) and a tool message with the results of the calls answered in the step, in the
 * order asked.
 */
export function stepMessages(answer: Pick<ModelAnswer, 'content'>, results: readonly ToolResultPart[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (answer.content.length > 0) messages.push({ role: 'assistant', content: answer.content });
  if (results.length > 0) messages.push({ role: 'tool', content: results });
  return messages;
}

/** The parameters of `record_step` for a model step of turn `n`: what the history gains, the usage, the calls left waiting. */
export function stepRecord(n: number, answer: Pick<ModelAnswer, 'content' | 'calls' | 'usage'>, results: readonly ToolResultPart[], waiting: readonly WaitingCall[]): Record<string, unknown> {
  return { turn: n, messages: plain(stepMessages(answer, results)), usage: answer.usage, calls: answer.calls.length, pending: waiting };
}

/** What follows a failed model call: another attempt after `wait` milliseconds, or the turn fails. */
export type AfterFailure = { kind: 'retry'; wait: number; note: Diagnostic } | { kind: 'fail'; error: ErrorInfo };

/** What follows model call attempt `attempt` (0 for the first) of turn `n` failing with `problem`. */
export function afterModelFailure(agentId: string, n: number, problem: ModelProblem, attempt: number, settings: ConversationSettings): AfterFailure {
  if (!problem.retryable || attempt >= settings.retries) return { kind: 'fail', error: problem.error };
  const wait = retryWait(problem, settings, attempt);
  const note = diagnostic('warning', 'model_retry', `agent '${agentId}', turn ${n}: ${problem.error.message}; trying again in ${wait} ms (retry ${attempt + 1} of ${settings.retries})`, {
    details: { code: problem.error.code, attempt: attempt + 1, wait },
  });
  return { kind: 'retry', wait, note };
}

// ── Tool calls ───────────────────────────────────────────────────────────────────────────

/**
 * When the host stops waiting for a tool call, as its record reads it: a millisecond before the
 * call's own time-out, which starts after this, so a step the host gave up on is always late by
 * the record's reckoning.
 */
export function toolDeadline(now: number, settings: ConversationSettings): number {
  return now + settings.toolTimeout - 1;
}

/** The error a tool call that answered after its deadline is recorded with, naming the tool (never the action behind it). */
export function lateError(agentId: string, tool: string, settings: ConversationSettings): ToolError {
  return { code: 'timeout', message: `tool '${tool}' of agent '${agentId}' gave no answer within ${settings.toolTimeout} ms` };
}

/**
 * What the model, and a follower of `chat.tool.result`, read of a failed tool call. An action's
 * refusal (`fail('resource_refused', ...)`) keeps its own code rather than the generic
 * `action_failed`, and the message drops the "action '…' failed: " its step puts first: the
 * result already names the tool, and the action behind a tool is not the model's business.
 */
export function toolFailure(error: ErrorInfo): ToolError {
  const reason = error.code === 'action_failed' ? error.details?.reason : undefined;
  const prefix = error.action !== undefined ? `action '${error.action}' failed: ` : undefined;
  return {
    code: typeof reason === 'string' && reason !== '' ? reason : error.code,
    message: prefix !== undefined && error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message,
  };
}

// ── Compaction ───────────────────────────────────────────────────────────────────────────

/**
 * The summary a compactor returned: a string, or undefined to drop the older messages. Anything
 * else is refused, naming the compactor, like a compactor that throws.
 */
export function compactedSummary(name: string, returned: unknown): string | undefined {
  if (returned === undefined) return undefined;
  if (typeof returned !== 'object' || returned === null) throw new Error(`compactor '${name}' returned ${returned === null ? 'null' : typeof returned}; it must return { summary } (a string) or nothing`);
  const summary = (returned as { summary?: unknown }).summary;
  if (summary === undefined || typeof summary === 'string') return summary;
  throw new Error(`compactor '${name}' returned a summary of type ${summary === null ? 'null' : typeof summary}; a summary must be a string`);
}

/** No compactor of that name: the error a compaction fails with (the older messages are then dropped). */
export function unknownCompactor(strategy: string, known: readonly string[], host: string): Error {
  return new Error(`no compactor named '${strategy}' was given to the ${host} (known: ${known.join(', ') || 'none'}); the built-in strategies are 'summarize' and 'drop'`);
}

/** The diagnostic of a compaction whose summary failed: the older messages are dropped instead. */
export function compactionFailed(agentId: string, strategy: string, why: string): Diagnostic {
  return diagnostic('warning', 'compaction_failed', `agent '${agentId}': summarising the history with '${strategy}' failed (${why}); the older messages are dropped instead`, {
    details: { strategy },
  });
}

/**
 * The parameters of `compact`: the messages removed, the summary (when there is one) and what
 * the summary request used, which counts against the agent's token budget like any model call.
 */
export function compactRecord(remove: number, summary: string | undefined, usage: ChatUsage | undefined, announce: boolean): Record<string, unknown> {
  return { remove, ...(summary !== undefined && summary !== '' ? { summary } : {}), ...(usage ? { usage } : {}), announce };
}

/** The diagnostic of a compaction done. */
export function compacted(agentId: string, remove: number, strategy: string, summarised: boolean, freed?: number): Diagnostic {
  const size = freed !== undefined ? ` (about ${freed} tokens)` : '';
  return diagnostic('info', 'history_compacted', `agent '${agentId}': ${remove} older message(s)${size} were ${summarised ? 'summarised' : 'dropped'}`, {
    details: { removed: remove, strategy, summarised },
  });
}

/** A turn's crash: work failed unexpectedly (a bug, not a model or tool error). */
export function crashedError(agentId: string, n: number, what: string, why: string): ErrorInfo {
  return errorInfo('model_failed', `turn ${n} of agent '${agentId}' failed unexpectedly${what ? ` ${what}` : ''}: ${why}`);
}

/**
 * Why an item reaching the agent while a tool call of `turn` runs ends that turn, or undefined:
 * a `chat.cancel`, the turn's caller giving up (`skillstate.call.aborted` naming its call), or
 * the `conversation` skill unmounted. The item waits behind the call's step, and the agent
 * records the cancellation once the step is over; the call's `ctx.abortSignal` is aborted at
 * once, so the step need not run to its end first.
 */
export function endsTurn(event: AgentItemEvent, turn: Pick<TurnRecord, 'n' | 'replyTo'>): string | undefined {
  if (event.type === 'unmount') return event.skill === CONVERSATION ? `turn ${turn.n} ends: skill '${CONVERSATION}' is being unmounted` : undefined;
  if (event.type !== 'signal') return undefined;
  const { type, data } = event.signal;
  if (type === ChatSignals.cancel) return `turn ${turn.n} is being cancelled (${ChatSignals.cancel})`;
  if (type === CALL_ABORTED_SIGNAL && turn.replyTo !== null && (data as { signal?: unknown } | undefined)?.signal === turn.replyTo) {
    return `turn ${turn.n} is being cancelled: its caller aborted its call`;
  }
  return undefined;
}
