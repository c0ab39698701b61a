/**
 * The `conversation` skill: a model-driven agent's conversation as plain data in its state, and
 * the actions that move it on. Every change to the history, the usage counters and the turn in
 * flight is one of these actions, run as a step of the agent (atomic, persisted, traced), so a
 * snapshot taken at any moment holds a turn that another process can continue.
 *
 * A turn's life, as the state records it:
 *
 *   message → thinking ─┬→ (no tool calls) answered
 *                       └→ acting ⇄ awaiting-approval → … → thinking → …
 *   any of them → failed | cancelled
 *
 * The actions decide; the turn runner (see `driver.ts`) only does the slow work each status asks
 * for (calling the model, running a tool) and records what came back. The actions are hidden from
 * the model (`tool: false`): signals reach them (`chat.message`, `chat.approve`, `chat.deny`,
 * `chat.cancel`, `chat.reset`), and the runner runs the rest.
 *
 * Pure: no I/O, no model, no XState; the time and new ids come from the action's context.
 */
import { z } from 'zod';
import { defineAction, fail, result, type ActionContext, type ActionDefinition, type ActionFailure } from '../core/action.js';
import { Effects, type Effect } from '../core/effects.js';
import { SignalError, type ErrorInfo } from '../core/errors.js';
import { extraArguments } from '../core/options.js';
import { jsonCopy } from '../core/plain.js';
import { createSignal } from '../core/signal.js';
import type { ObjectSchema } from '../core/schema.js';
import { defineSkill } from '../core/skill.js';
import { CALL_ABORTED_SIGNAL } from '../core/system-signals.js';
import { failed, toolResultPart, type ToolError, type ToolOutcome, type ToolResultPart } from './tool-result.js';

/** The name and state key of the conversation skill. */
export const CONVERSATION = 'conversation';

/** Signals a model-driven agent answers and emits. */
export const ChatSignals = {
  /** To the agent: a user message, data `{ text }`. A `call` resolves with the answer's text. */
  message: 'chat.message',
  /** To the agent: run a tool call waiting for approval, data `{ toolCallId }`. */
  approve: 'chat.approve',
  /** To the agent: refuse a tool call waiting for approval, data `{ toolCallId, reason? }`. */
  deny: 'chat.deny',
  /** To the agent: end the turn in flight as cancelled, data `{ reason? }`. */
  cancel: 'chat.cancel',
  /** To the agent: forget the history (refused while a turn is in flight). */
  reset: 'chat.reset',
  /** Emitted: a turn began, data `{ agent, turn }`. */
  started: 'chat.turn.started',
  /** Emitted: a turn waiting for approval may go on, data `{ agent, turn }`. */
  resumed: 'chat.turn.resumed',
  /** Emitted: a turn answered, data `{ agent, turn, text }`. */
  answered: 'chat.turn.answered',
  /** Emitted: a turn failed, data `{ agent, turn, error }`. */
  failed: 'chat.turn.failed',
  /** Emitted: a turn was cancelled, data `{ agent, turn, reason }`. */
  cancelled: 'chat.turn.cancelled',
  /** Emitted: a tool call waits for approval, data `{ agent, turn, toolCallId, tool, args }`. */
  approval: 'chat.turn.approval',
  /** Emitted while the model answers: data `{ agent, turn, step, attempt, text }`, one piece of text (`attempt` counts the step's tries, from 0). */
  delta: 'chat.delta',
  /** Emitted before a tool call runs: data `{ agent, turn, toolCallId, tool, args, preApprovedBy? }` (the skill that let it run without asking). */
  toolCall: 'chat.tool.call',
  /** Emitted after a tool call ran: data `{ agent, turn, toolCallId, tool, ok, output?, error? }`. */
  toolResult: 'chat.tool.result',
  /** Emitted when older history was summarised or dropped: data `{ agent, removed, kept, summarised }`. */
  compacted: 'chat.history.compacted',
} as const;

/** One message of the history, in the AI SDK's message shape (plain JSON). */
export type ChatMessage = { role: 'system' | 'user' | 'assistant' | 'tool'; content: unknown } & Record<string, unknown>;

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);
const NOT_A_MESSAGE = 'a message needs a role (system, user, assistant or tool) and a content';

function isMessage(value: unknown): value is ChatMessage {
  return typeof value === 'object' && value !== null && ROLES.has((value as { role?: unknown }).role as string) && 'content' in value;
}

/**
 * A list of messages, each checked in one pass (a message's own parts are the model's business):
 * as an array of checked items, zod's own work per item would cost more than the check, for the
 * whole history, at every step. A message that is not one is named by its index.
 */
const messageList = z.custom<ChatMessage[]>((value) => Array.isArray(value), { message: 'expected an array of messages' }).check((payload) => {
  const list = payload.value;
  for (let i = 0; i < list.length; i++) {
    if (!isMessage(list[i])) payload.issues.push({ code: 'custom', message: NOT_A_MESSAGE, input: list[i], path: [i] });
  }
});

const usageSchema = z.object({
  inputTokens: z.number().default(0),
  outputTokens: z.number().default(0),
  totalTokens: z.number().default(0),
});

/** Token counts, as providers report them, added up. */
export type ChatUsage = z.output<typeof usageSchema>;

const pendingCallSchema = z.object({
  toolCallId: z.string(),
  tool: z.string(),
  args: z.unknown(),
  /** `needed`: waits for `chat.approve` / `chat.deny`; `approved` / `denied` once answered. */
  approval: z.enum(['none', 'needed', 'approved', 'denied']),
  reason: z.string().optional(),
  /** The active skill whose `allowed-tools` let this call, which would need approval, run without asking. */
  preApprovedBy: z.string().optional(),
});

/** A tool call the model asked for that has not run yet. */
export type PendingToolCall = z.output<typeof pendingCallSchema>;

const ranCallSchema = z.object({
  toolCallId: z.string(),
  tool: z.string(),
  args: z.unknown(),
  /** The tool's output, as JSON (`null` when it failed). */
  output: z.unknown(),
  /** Set when the call is reported to the model as failed: its step failed with an error effect, or it answered after `toolTimeout`. */
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});

/** A tool call that ran in the model step in progress, recorded in the same step as its effect. */
export type RanToolCall = z.output<typeof ranCallSchema>;

/** What a turn in flight is doing. */
export type TurnStatus = 'thinking' | 'acting' | 'awaiting-approval';

const turnSchema = z.object({
  n: z.number().int(),
  /**
   * The id of the turn's `chat.turn.started` signal: unique, where `n` starts again at 1 for an
   * agent spawned anew under the same id. (Empty in states recorded before turns had one.)
   */
  id: z.string().default(''),
  status: z.enum(['thinking', 'acting', 'awaiting-approval']),
  /** The id of the `chat.message` signal whose caller waits for the answer. */
  replyTo: z.string().nullable(),
  /** The user's text: what the disclosure of document skills is ranked against. */
  query: z.string(),
  /** Model calls made in this turn. */
  steps: z.number().int(),
  /** Tool calls made in this turn. */
  toolCalls: z.number().int(),
  /** Tool calls left to run, in the order the model gave them. */
  pending: z.array(pendingCallSchema),
  /**
   * Tool calls of the model step in progress that ran: each is recorded here by the step that
   * ran it, so their effects and their record commit together. The step's record moves them
   * into the history; a turn restored with some here gets them into the history without running
   * them again.
   */
  ran: z.array(ranCallSchema).default([]),
  startedAt: z.string(),
});

/** The turn in flight, as the state records it. */
export type TurnRecord = z.output<typeof turnSchema>;

const errorSchema = z.custom<ErrorInfo>((value) => typeof value === 'object' && value !== null && typeof (value as ErrorInfo).code === 'string');

const lastSchema = z.object({
  n: z.number().int(),
  outcome: z.enum(['answered', 'failed', 'cancelled']),
  text: z.string().optional(),
  error: errorSchema.optional(),
});

/** How the last finished turn ended. */
export type TurnEnding = z.output<typeof lastSchema>;

/** The conversation slice of a model-driven agent's state. */
export const conversationSchema = z.object({
  messages: messageList.default([]),
  usage: usageSchema.default({ inputTokens: 0, outputTokens: 0, totalTokens: 0 }),
  /** Turns begun so far: the number of the latest. */
  turns: z.number().int().default(0),
  turn: turnSchema.nullable().default(null),
  last: lastSchema.nullable().default(null),
  /** Messages that arrived while a turn was in flight, each starting a turn in order. */
  queue: z.array(z.object({ text: z.string(), replyTo: z.string().nullable() })).default([]),
  /** Messages removed from the history by compaction so far. */
  compacted: z.number().int().default(0),
});

/** The conversation slice of a model-driven agent's state. */
export type ConversationState = z.output<typeof conversationSchema>;

/** The conversation's config: which model, what it is told, and the limits that hold. */
export const conversationConfigSchema = z.object({
  /** The model's name, resolved by the system (`createAgentSystem({ models })`). */
  model: z.string().min(1).default('default'),
  /** The agent's own instructions: the start of every system prompt. */
  instructions: z.string().default(''),
  /** Model calls per turn at most. */
  maxSteps: z.number().int().positive().default(12),
  /** Tool calls per turn at most. */
  maxToolCalls: z.number().int().positive().default(32),
  /** Tokens the agent may use over its life (usage reported by the provider); over it, a turn fails with `budget_exceeded`. */
  maxTokens: z.number().positive().optional(),
  /** Milliseconds one model call may take (each attempt). */
  modelTimeout: z.number().positive().default(120_000),
  /** Milliseconds one tool call may take. */
  toolTimeout: z.number().positive().default(60_000),
  /** Retries of a model call that failed in a way worth retrying (rate limits, time-outs, server errors). */
  retries: z.number().int().min(0).max(10).default(2),
  /** First retry's delay in milliseconds; each next one doubles it. */
  retryDelay: z.number().min(0).default(1000),
  /** Emit the answer's text as `chat.delta` signals while the model writes it. */
  stream: z.boolean().default(true),
  /** Sampling temperature, passed to the model when set. */
  temperature: z.number().optional(),
  /** Most tokens one model answer may have, passed to the model when set. */
  maxOutputTokens: z.number().int().positive().optional(),
  /** When the history passes `maxTokens` (estimated, four characters a token), older turns are compacted. */
  history: z
    .object({
      maxTokens: z.number().positive().default(24_000),
      /** The latest turns always kept whole. */
      keepTurns: z.number().int().min(1).default(2),
      /** `drop`, `summarize` (by the agent's model), or the name of a compactor given to the system. */
      strategy: z.string().min(1).default('summarize'),
    })
    .default({ maxTokens: 24_000, keepTurns: 2, strategy: 'summarize' }),
  /** How document skills are disclosed in the system prompt. */
  disclosure: z
    .object({
      /** Skills shown in full when they match the user's message. */
      maxSkills: z.number().int().min(0).optional(),
      /** Skills always shown in full. */
      preload: z.array(z.string()).optional(),
      /** Tokens the catalog part may take. */
      catalogTokens: z.number().positive().optional(),
      /** Skills with `default_enabled: false` to include. */
      enable: z.array(z.string()).optional(),
    })
    .default({}),
});

/** The conversation's config, as given (every field has a default). */
export type ConversationConfig = z.input<typeof conversationConfigSchema>;
/** The conversation's config, defaults applied. */
export type ConversationSettings = z.output<typeof conversationConfigSchema>;

type Ctx = ActionContext<ConversationState, ConversationSettings>;

/**
 * One of the conversation's actions: it works on the conversation's slice, and is hidden from
 * the model (`tool: false`): signals reach some of them, and the turn's hosts run the others.
 */
function conversationAction<TInput extends ObjectSchema, TReturn>(definition: Omit<ActionDefinition<TInput, TReturn, typeof conversationSchema, ConversationSettings>, 'state' | 'tool'>) {
  return defineAction<TInput, TReturn, typeof conversationSchema, ConversationSettings>({ ...definition, state: conversationSchema, tool: false });
}

/** Usage counters with `more` added. */
function addUsage(usage: ChatUsage, more: ChatUsage): ChatUsage {
  return {
    inputTokens: usage.inputTokens + more.inputTokens,
    outputTokens: usage.outputTokens + more.outputTokens,
    totalTokens: usage.totalTokens + more.totalTokens,
  };
}

/** The answer's text: the text parts of the last assistant message of `messages` (empty when there is none). */
export function answerText(messages: readonly ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== 'assistant') continue;
    if (typeof message.content === 'string') return message.content;
    if (!Array.isArray(message.content)) return '';
    return message.content
      .filter((part: { type?: string }) => part?.type === 'text')
      .map((part: { text?: string }) => part.text ?? '')
      .join('');
  }
  return '';
}

function emit(ctx: Ctx, type: string, data: Record<string, unknown>, id = ctx.newId()): Effect {
  return Effects.emit(createSignal(type, { agent: ctx.agentId, ...data }, { source: ctx.agentId, id, time: new Date(ctx.now()) }));
}

/** The state and effects that begin turn `n` for `text`. */
function beginTurn(ctx: Ctx, messages: readonly ChatMessage[], text: string, replyTo: string | null): { state: Partial<ConversationState>; effects: Effect[] } {
  const n = ctx.skillState.turns + 1;
  const id = ctx.newId();
  const turn: TurnRecord = { n, id, status: 'thinking', replyTo, query: text, steps: 0, toolCalls: 0, pending: [], ran: [], startedAt: new Date(ctx.now()).toISOString() };
  return {
    state: { messages: [...messages, { role: 'user', content: text }], turn, turns: n },
    effects: [emit(ctx, ChatSignals.started, { turn: n, turnId: id }, id)],
  };
}

/** The tool-result part that answers `call` with `outcome`. */
function toolResult(call: Pick<PendingToolCall, 'toolCallId' | 'tool'>, outcome: ToolOutcome): ToolResultPart {
  return toolResultPart({ toolCallId: call.toolCallId, toolName: call.tool }, outcome);
}

/** The history with `part` added to a trailing tool message, or in a new one. */
function withToolResult(messages: readonly ChatMessage[], part: ToolResultPart): ChatMessage[] {
  const last = messages.at(-1);
  if (last?.role === 'tool' && Array.isArray(last.content)) {
    return [...messages.slice(0, -1), { ...last, content: [...last.content, part] }];
  }
  return [...messages, { role: 'tool', content: [part] }];
}

/**
 * The history with the tool calls that ran in a step whose record is missing: an assistant
 * message asking for them and a tool message with their results, as the model step would have
 * left them (less any text the model wrote with the calls).
 */
function withRanCalls(messages: readonly ChatMessage[], ran: readonly RanToolCall[]): ChatMessage[] {
  return [
    ...messages,
    { role: 'assistant', content: ran.map((call) => ({ type: 'tool-call', toolCallId: call.toolCallId, toolName: call.tool, input: call.args })) },
    { role: 'tool', content: ran.map((call) => toolResult(call, call.error ? failed(call.error) : { ok: true, output: call.output })) },
  ];
}

/**
 * When the runner stops waiting for a tool call (epoch milliseconds). A call that answers later
 * has its effect, but is recorded as timed out: that is what the model is told.
 */
const lateAfter = z.number().optional();

/** A tool call's error, as its step gives it to the record (an `error` effect of the call). */
const stepError = z.object({ code: z.string(), message: z.string() }).loose().optional();

/** The error a call that answered too late is recorded with: the one its caller got. */
const lateError = z.object({ code: z.string(), message: z.string() }).optional();

/** Why a recorded call counts as failed (at time `now`): the error of its step, or its answer came too late. */
function callError(
  tool: string,
  error: { code: string; message: string } | undefined,
  until: number | undefined,
  late: { code: string; message: string } | undefined,
  now: number,
): { code: string; message: string } | undefined {
  if (error !== undefined) return { code: error.code, message: error.message };
  if (until !== undefined && now > until) return late ?? { code: 'timeout', message: `tool '${tool}' answered after its time-out` };
  return undefined;
}

/** A tool's output as JSON, as the history keeps it (`undefined` is `null`). */
function asJson(output: unknown): unknown {
  return output === undefined ? null : jsonCopy(output, { freeze: true });
}

/**
 * Ends the turn in flight: the state it leaves, the reply to its caller and the signals. Tool
 * calls that had not run get an error result, so the history stays valid input for the model.
 */
function endTurn(ctx: Ctx, messages: ChatMessage[], ending: TurnEnding, extra: Effect[] = []): { state: Partial<ConversationState>; effects: Effect[] } {
  const turn = ctx.skillState.turn!;
  let history = turn.ran.length > 0 ? withRanCalls(messages, turn.ran) : messages;
  if (ending.outcome !== 'answered') {
    const error = ending.error ?? { code: 'cancelled', message: 'the turn ended before this tool call ran' };
    for (const call of turn.pending) history = withToolResult(history, toolResult(call, failed({ code: error.code, message: `not run: ${error.message}` })));
  }
  const effects: Effect[] = [...extra];
  if (turn.replyTo !== null) {
    effects.push(
      ending.outcome === 'answered'
        ? Effects.reply(ending.text ?? '', {}, { to: turn.replyTo })
        : Effects.reply(undefined, {}, { to: turn.replyTo, error: ending.error! }),
    );
  }
  if (ending.outcome === 'answered') effects.push(emit(ctx, ChatSignals.answered, { turn: turn.n, text: ending.text ?? '' }));
  else if (ending.outcome === 'cancelled') effects.push(emit(ctx, ChatSignals.cancelled, { turn: turn.n, reason: ending.error?.message ?? 'cancelled' }));
  else effects.push(emit(ctx, ChatSignals.failed, { turn: turn.n, error: ending.error }));
  const state: Partial<ConversationState> = { messages: history, turn: null, last: ending };
  // The next message waiting starts its turn in the same step.
  const [next, ...rest] = ctx.skillState.queue;
  if (next) {
    const begun = beginTurn(ctx, history, next.text, next.replyTo);
    return { state: { ...state, ...begun.state, queue: rest }, effects: [...effects, ...begun.effects] };
  }
  return { state, effects };
}

/** The turn in flight when it is turn `n`, or the failure that says why not. */
function currentTurn(ctx: Ctx, n: number) {
  const turn = ctx.skillState.turn;
  if (turn === null || turn.n !== n) {
    return fail('no_turn', turn === null ? `turn ${n} is over; no turn is in flight` : `turn ${n} is over; turn ${turn.n} is in flight`, { turn: n });
  }
  return turn;
}

/** The status after the tool calls in `pending`: approval first, then acting, then thinking again. */
function statusFor(pending: readonly PendingToolCall[]): TurnStatus {
  if (pending.length === 0) return 'thinking';
  return pending[0]!.approval === 'needed' ? 'awaiting-approval' : 'acting';
}

const message = conversationAction({
  name: 'message',
  description: 'A user message: starts a turn, or waits for the turn in flight to end.',
  input: z.object({ text: z.string().min(1, 'the message is empty') }),
  run: ({ text }, ctx: Ctx) => {
    const replyTo = ctx.signal?.id ?? null;
    const effects: Effect[] = replyTo !== null ? [Effects.deferReply()] : [];
    if (ctx.skillState.turn !== null) {
      return result({ queued: true, turn: ctx.skillState.turn.n }, { state: { queue: [...ctx.skillState.queue, { text, replyTo }] }, effects });
    }
    const begun = beginTurn(ctx, ctx.skillState.messages, text, replyTo);
    return result({ queued: false, turn: begun.state.turn!.n }, { state: begun.state, effects: [...effects, ...begun.effects] });
  },
});

const pendingInput = z.object({ toolCallId: z.string(), tool: z.string(), args: z.unknown(), needsApproval: z.boolean(), preApprovedBy: z.string().optional() });

/** The turn after a round of tool calls: `turn_limit` when it has used its model calls, else `next`. */
function afterTools(ctx: Ctx, messages: ChatMessage[], next: TurnRecord): { state: Partial<ConversationState>; effects: Effect[]; failed: boolean } {
  if (next.status === 'thinking' && next.steps >= ctx.config.maxSteps) {
    const limit: ErrorInfo = {
      code: 'turn_limit',
      message: `turn ${next.n} made ${next.steps} model calls without answering; at most ${ctx.config.maxSteps} are allowed per turn`,
      details: { limit: 'maxSteps', value: ctx.config.maxSteps },
    };
    return { ...endTurn({ ...ctx, skillState: { ...ctx.skillState, turn: next } } as Ctx, messages, { n: next.n, outcome: 'failed', error: limit }), failed: true };
  }
  const effects: Effect[] = next.status === 'awaiting-approval' ? [approvalSignal(ctx, next)] : [];
  return { state: { messages, turn: next }, effects, failed: false };
}

const recordStep = conversationAction({
  name: 'record_step',
  description:
    "Records one model step of the turn in flight: the messages it added (the model's answer, and the results of the tool calls that ran), its usage, and the tool calls still to run.",
  input: z.object({
    turn: z.number().int(),
    messages: messageList,
    usage: usageSchema,
    /** Tool calls the model asked for in this step. */
    calls: z.number().int().min(0),
    /** Those of them that did not run yet (they wait for approval, or for the runner), in order. */
    pending: z.array(pendingInput),
    /**
     * The step's last tool call, when this record runs in the step that runs it (the record of a
     * tool call, as `record_tool_call`'s): its result, from the step's `output` or `error`, goes
     * in at `at` among the results of `messages`. The step's record then costs no step of its own.
     */
    ranLast: z.object({ at: z.number().int().min(0), toolCallId: z.string(), tool: z.string(), until: lateAfter, late: lateError }).optional(),
    output: z.unknown().optional(),
    error: stepError,
  }),
  run: ({ turn: n, messages: asked, usage, calls, pending: waiting, ranLast, output, error }, ctx: Ctx) => {
    const turn = currentTurn(ctx, n);
    if (!('n' in turn)) return turn;
    if (turn.status !== 'thinking') return fail('no_turn', `turn ${n} is ${turn.status}, not waiting for the model`, { turn: n });
    let messages = asked;
    if (ranLast !== undefined) {
      const outcome = ranOutcome(n, ranLast.tool, output, callError(ranLast.tool, error, ranLast.until, ranLast.late, ctx.now()));
      if (!('ok' in outcome)) return outcome;
      messages = withResultAt(asked, ranLast.at, toolResult(ranLast, outcome));
    }
    const state = ctx.skillState;
    const history = [...state.messages, ...messages];
    const total = addUsage(state.usage, usage);
    if (calls === 0) {
      // The answer is what the model said in this step: an empty answer is the empty string,
      // never the text of an earlier step or turn.
      const text = answerText(messages);
      const ended = endTurn(ctx, history, { n, outcome: 'answered', text });
      return result({ status: 'answered', text }, { state: { ...ended.state, usage: total }, effects: ended.effects });
    }
    const pending: PendingToolCall[] = waiting.map((call) => ({
      toolCallId: call.toolCallId,
      tool: call.tool,
      args: call.args,
      approval: call.needsApproval ? 'needed' : 'none',
      ...(call.preApprovedBy !== undefined ? { preApprovedBy: call.preApprovedBy } : {}),
    }));
    const next: TurnRecord = { ...turn, steps: turn.steps + 1, toolCalls: turn.toolCalls + calls, pending, ran: [], status: statusFor(pending) };
    const after = afterTools(ctx, history, next);
    return result({ status: after.failed ? 'failed' : next.status }, { state: { ...after.state, usage: total }, effects: after.effects });
  },
});

/** A step's tool messages with `part` put in at `at` among their results (a tool message made for it when there is none). */
function withResultAt(messages: readonly ChatMessage[], at: number, part: ToolResultPart): ChatMessage[] {
  const last = messages.at(-1);
  if (last?.role !== 'tool' || !Array.isArray(last.content)) return [...messages, { role: 'tool', content: [part] }];
  return [...messages.slice(0, -1), { ...last, content: [...last.content.slice(0, at), part, ...last.content.slice(at)] }];
}

/**
 * How a tool call that ran is recorded: failed with `failed` (its step's error, or its answer
 * came too late), or its output as JSON; an output that is not JSON is refused, naming the tool.
 */
function ranOutcome(n: number, tool: string, output: unknown, failed: ToolError | undefined): { ok: true; output: unknown } | { ok: false; error: ToolError } | ActionFailure {
  if (failed !== undefined) return { ok: false, error: failed };
  try {
    return { ok: true, output: asJson(output) };
  } catch (thrown) {
    return fail('invalid_output', `the output of tool '${tool}' is not JSON: ${thrown instanceof Error ? thrown.message : String(thrown)}`, { turn: n, tool });
  }
}

const recordToolCall = conversationAction({
  name: 'record_tool_call',
  description:
    'Records a tool call that ran inside a model step, in the step that ran it (its `output` is the call\'s). The record of the model step moves it into the history.',
  input: z.object({ turn: z.number().int(), toolCallId: z.string(), tool: z.string(), args: z.unknown(), output: z.unknown(), error: stepError, until: lateAfter, late: lateError }),
  run: ({ turn: n, toolCallId, tool, args, output, error, until, late }, ctx: Ctx) => {
    const turn = currentTurn(ctx, n);
    if (!('n' in turn)) return turn;
    if (turn.status !== 'thinking') return fail('no_turn', `turn ${n} is ${turn.status}, not waiting for the model`, { turn: n });
    const outcome = ranOutcome(n, tool, output, callError(tool, error, until, late, ctx.now()));
    if (!('ok' in outcome)) return outcome;
    const call: RanToolCall = outcome.ok ? { toolCallId, tool, args: args ?? {}, output: outcome.output } : { toolCallId, tool, args: args ?? {}, output: null, error: outcome.error };
    return result({ recorded: toolCallId }, { state: { turn: { ...turn, ran: [...turn.ran, call] } } });
  },
});

const settleStep = conversationAction({
  name: 'settle_step',
  description:
    'Records a model step whose tool calls ran but whose own record is missing (the process stopped in between): their calls and results go into the history, and the turn asks the model again.',
  input: z.object({ turn: z.number().int() }),
  run: ({ turn: n }, ctx: Ctx) => {
    const turn = currentTurn(ctx, n);
    if (!('n' in turn)) return turn;
    if (turn.status !== 'thinking' || turn.ran.length === 0) return result({ status: turn.status, settled: 0 });
    const next: TurnRecord = { ...turn, steps: turn.steps + 1, toolCalls: turn.toolCalls + turn.ran.length, ran: [] };
    const after = afterTools(ctx, withRanCalls(ctx.skillState.messages, turn.ran), next);
    return result({ status: after.failed ? 'failed' : next.status, settled: turn.ran.length }, { state: after.state, effects: after.effects });
  },
});

function approvalSignal(ctx: Ctx, turn: TurnRecord): Effect {
  const call = turn.pending[0]!;
  return emit(ctx, ChatSignals.approval, { turn: turn.n, toolCallId: call.toolCallId, tool: call.tool, args: call.args });
}

const recordToolResult = conversationAction({
  name: 'record_tool_result',
  description: 'Records the result of the next tool call of the turn in flight.',
  input: z.object({
    turn: z.number().int(),
    toolCallId: z.string(),
    ok: z.boolean(),
    output: z.unknown().optional(),
    error: stepError,
    until: lateAfter,
    late: lateError,
    /** Record only when the call is still the next one (it may have been recorded by its own step meanwhile). */
    ifNext: z.boolean().optional(),
  }),
  run: ({ turn: n, toolCallId, ok: given, output, error: stepFailed, until, late: lateAs, ifNext }, ctx: Ctx) => {
    const turn = currentTurn(ctx, n);
    if (!('n' in turn)) return turn;
    const call = turn.pending[0];
    if (call === undefined || call.toolCallId !== toolCallId) {
      if (ifNext === true) return result({ status: turn.status, recorded: false });
      return fail('no_turn', `tool call '${toolCallId}' is not the next one of turn ${n}${call ? ` ('${call.toolCallId}' is)` : ''}`, { turn: n });
    }
    const late = given ? callError(call.tool, stepFailed, until, lateAs, ctx.now()) : undefined;
    const ok = given && late === undefined;
    const error = late ?? stepFailed;
    let json: unknown;
    try {
      json = ok ? asJson(output) : null;
    } catch (error) {
      return fail('invalid_output', `the output of tool '${call.tool}' is not JSON: ${error instanceof Error ? error.message : String(error)}`, { turn: n, tool: call.tool });
    }
    const part = toolResult(
      call,
      ok ? { ok: true, output: json } : call.approval === 'denied' ? { ok: false, denied: true, reason: call.reason } : failed(error ?? { code: 'action_failed', message: 'the tool call failed' }),
    );
    const pending = turn.pending.slice(1);
    const next: TurnRecord = { ...turn, pending, status: statusFor(pending) };
    const after = afterTools(ctx, withToolResult(ctx.skillState.messages, part), next);
    return result({ status: after.failed ? 'failed' : next.status }, { state: after.state, effects: after.effects });
  },
});

function decide(approve: boolean) {
  return ({ toolCallId, reason }: { toolCallId: string; reason?: string | undefined }, ctx: Ctx) => {
    const turn = ctx.skillState.turn;
    const call = turn?.pending[0];
    if (!turn || turn.status !== 'awaiting-approval' || call === undefined || call.toolCallId !== toolCallId) {
      const waiting = turn?.status === 'awaiting-approval' ? ` (tool call '${turn.pending[0]!.toolCallId}' is)` : '';
      return fail('no_turn', `tool call '${toolCallId}' is not waiting for approval${waiting}`, { toolCallId });
    }
    const decided: PendingToolCall = { ...call, approval: approve ? 'approved' : 'denied' };
    if (!approve && reason !== undefined) decided.reason = reason;
    const next: TurnRecord = { ...turn, status: 'acting', pending: [decided, ...turn.pending.slice(1)] };
    return result({ toolCallId, approved: approve }, { state: { turn: next }, effects: [emit(ctx, ChatSignals.resumed, { turn: turn.n, turnId: turn.id })] });
  };
}

const approve = conversationAction({
  name: 'approve',
  description: 'Lets the tool call waiting for approval run.',
  input: z.object({ toolCallId: z.string() }),
  run: decide(true),
});

const deny = conversationAction({
  name: 'deny',
  description: 'Refuses the tool call waiting for approval: the model is told it was denied.',
  input: z.object({ toolCallId: z.string(), reason: z.string().optional() }),
  run: decide(false),
});

const failTurn = conversationAction({
  name: 'fail_turn',
  description: 'Ends the turn in flight with an error (the model failed, a limit was reached, it was cancelled).',
  input: z.object({ turn: z.number().int(), error: z.object({ code: z.string(), message: z.string() }).loose() }),
  run: ({ turn: n, error }, ctx: Ctx) => {
    const turn = currentTurn(ctx, n);
    if (!('n' in turn)) return turn;
    const info = error as ErrorInfo;
    const outcome = info.code === 'cancelled' ? 'cancelled' : 'failed';
    return result({ status: outcome }, endTurn(ctx, ctx.skillState.messages, { n, outcome, error: info }));
  },
});

function cancelTurn(ctx: Ctx, reason: string) {
  const turn = ctx.skillState.turn;
  if (turn === null) return result({ cancelled: false });
  const error: ErrorInfo = { code: 'cancelled', message: reason };
  return result({ cancelled: true, turn: turn.n }, endTurn(ctx, ctx.skillState.messages, { n: turn.n, outcome: 'cancelled', error }));
}

const cancel = conversationAction({
  name: 'cancel',
  description: 'Cancels the turn in flight.',
  input: z.object({ reason: z.string().optional() }),
  run: ({ reason }, ctx: Ctx) => cancelTurn(ctx, reason ?? 'cancelled by a chat.cancel signal'),
});

const callAborted = conversationAction({
  name: 'call_aborted',
  description: "Cancels the turn whose caller aborted its call, or drops that caller's queued message.",
  input: z.object({ signal: z.string() }),
  run: ({ signal }, ctx: Ctx) => {
    const state = ctx.skillState;
    if (state.turn?.replyTo === signal) return cancelTurn(ctx, 'the caller aborted its call');
    const queue = state.queue.filter((item) => item.replyTo !== signal);
    return queue.length === state.queue.length ? result({ cancelled: false }) : result({ cancelled: true }, { state: { queue } });
  },
});

const compact = conversationAction({
  name: 'compact',
  description:
    'Replaces the oldest messages of the history by a summary (or drops them), and adds what the summary request used to the usage counters.',
  input: z.object({
    remove: z.number().int().positive(),
    summary: z.string().optional(),
    /** The provider-reported usage of the request that wrote the summary. */
    usage: usageSchema.optional(),
    /** Emit `chat.history.compacted`: the runner says no when nobody listens, as for other progress. */
    announce: z.boolean().default(true),
  }),
  run: ({ remove, summary, usage, announce }, ctx: Ctx) => {
    const state = ctx.skillState;
    if (remove > state.messages.length) return fail('invalid_compaction', `cannot remove ${remove} messages from a history of ${state.messages.length}`);
    const kept = state.messages.slice(remove);
    const head: ChatMessage[] = summary ? [{ role: 'user', content: `<conversation_summary>\n${summary}\n</conversation_summary>` }] : [];
    return result(
      { removed: remove, kept: kept.length },
      {
        state: { messages: [...head, ...kept], compacted: state.compacted + remove, ...(usage ? { usage: addUsage(state.usage, usage) } : {}) },
        effects: announce ? [emit(ctx, ChatSignals.compacted, { removed: remove, kept: kept.length, summarised: summary !== undefined })] : [],
      },
    );
  },
});

const reset = conversationAction({
  name: 'reset',
  description: 'Forgets the history. The usage counters are kept: they count over the agent\'s life, as `maxTokens` does.',
  input: z.object({}),
  run: (_params: Record<string, never>, ctx: Ctx) => {
    if (ctx.skillState.turn !== null) return fail('turn_in_flight', `turn ${ctx.skillState.turn.n} is in flight; cancel it first (chat.cancel)`);
    return result({ reset: true }, { state: { messages: [], compacted: 0, last: null } });
  },
});

/**
 * The conversation skill. Attach it to an agent to make the agent model-driven: a `chat.message`
 * call runs turns against the model the system knows by `config.model`, and resolves with the
 * answer's text.
 *
 * @example
 * const Assistant = defineAgent({
 *   name: 'assistant',
 *   skills: [[conversation, { instructions: 'You help with arithmetic.' }], calculator],
 * });
 * const system = createAgentSystem({ models: { default: openai('gpt-4.1') } });
 * const answer = await system.spawn(Assistant).call(chatMessage('What is 2 + 3?'), { timeout: 60_000 });
 */
export const conversation = defineSkill({
  name: CONVERSATION,
  description: 'A conversation with a language model: history, usage, the turn in flight, and the limits that hold.',
  category: 'model',
  schema: conversationSchema,
  configSchema: conversationConfigSchema,
  actions: [message, recordStep, recordToolCall, settleStep, recordToolResult, approve, deny, failTurn, cancel, callAborted, compact, reset],
  routes: [
    { path: ChatSignals.message, target: { action: 'message' } },
    { path: ChatSignals.approve, target: { action: 'approve' } },
    { path: ChatSignals.deny, target: { action: 'deny' } },
    { path: ChatSignals.cancel, target: { action: 'cancel' } },
    { path: ChatSignals.reset, target: { action: 'reset' } },
    { path: CALL_ABORTED_SIGNAL, target: { action: 'call_aborted' } },
  ],
});

/**
 * A `chat.message` signal for `text`, to `send` or `call`. Takes the text only: an options bag
 * after it is refused (`invalid_options`), not ignored; a signal with options of its own is
 * `createSignal(ChatSignals.message, { text }, options)`.
 */
export function chatMessage(text: string) {
  const extra = extraArguments('chatMessage', arguments, ['the text'], `for a signal with options, write createSignal('${ChatSignals.message}', { text }, options)`);
  if (extra) throw new SignalError(extra);
  return createSignal(ChatSignals.message, { text });
}
