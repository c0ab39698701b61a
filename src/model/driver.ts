/**
 * The conversation driver: runs the turns of a system's model-driven agents. It listens to the
 * `chat.turn.*` signals the conversation skill emits, starts one turn actor per turn in flight
 * (and one for each turn found in flight when an agent is restored), and does the slow work
 * their states ask for: asking the model (with retries, a time-out and cancellation, streaming
 * text as `chat.delta` signals) and running tool calls through the agent. Every result is
 * recorded by one of the conversation's actions, as a step of the agent.
 *
 * Never holds conversation state of its own: what it knows of a turn it reads from the agent.
 */
import { createActor } from 'xstate';
import type { InspectionEvent } from 'xstate';
import type { Agent } from '../core/agent-value.js';
import type { Diagnostic } from '../core/diagnostics.js';
import { diagnostic } from '../core/diagnostics.js';
import { describeThrown, errorInfo, toErrorInfo, type ErrorInfo } from '../core/errors.js';
import { createSignal, type Signal } from '../core/signal.js';
import type { Toolset } from '../core/toolset.js';
import type { SkillResolver } from '../core/skill-registry.js';
import { DocumentSkillRegistry } from '../manifest/document-registry.js';
import type { InstructionObject } from '../core/instruction.js';
import type { AgentRef, CallOptions } from '../runtime/agent-ref.js';
import { noAnswerError, RuntimeError } from '../runtime/errors.js';
import type { Tracer } from '../runtime/trace.js';
import {
  ChatSignals,
  conversationConfigSchema,
  errorOutput,
  CONVERSATION,
  type ChatMessage,
  type ChatUsage,
  type ConversationSettings,
  type ConversationState,
  type TurnRecord,
} from './conversation.js';
import {
  callsRun,
  checkCompactors,
  checkModels,
  classifyModelError,
  historyTokens,
  keepFrom,
  modelTools,
  overBudget,
  plain,
  preApprovedNote,
  refusedCallSignals,
  retryWait,
  toolFailure,
  toolLimit,
  unknownModel,
  waiting,
  type ModelTools,
  type WaitingCall,
} from './model-call.js';
import { loadAi, type AiModule } from './ai-sdk.js';
import { notStreamed } from './model-methods.js';
import { answerMessages, askModel, errorResult, modelWarned, partsDropped, toolOutput, type AskedCall, type CallResult } from './model-step.js';
import type { ChatModel, Compactor } from './models.js';
import { buildSystemPrompt, PromptCache } from './prompt.js';
import { StepAbort } from './step-abort.js';
import { summarizeHistory } from './summary.js';
import { turnMachine, turnStateName, type TurnActivity, type TurnActor, type TurnPhase, type TurnWork } from './turn-machine.js';

/** What the driver needs from the system it runs in. */
export interface ConversationHost {
  get(id: string): AgentRef | undefined;
  /**
   * Runs a tool call of the agent behind `ref`, with `record` (an action of the conversation)
   * run in the same step, given the call's output: the call's effect and its record commit
   * together, or neither does.
   */
  callTool(ref: AgentRef, tool: string, args: unknown, record: InstructionObject, options: CallOptions): Promise<unknown>;
  /** The last committed agent value of a running agent (undefined once it stopped): cheaper than a snapshot view. */
  agent(id: string): Agent<object> | undefined;
  subscribe(pattern: string, listener: (signal: Signal) => void): () => void;
  publish(signal: Signal, from: string): void;
  /** Whether a signal of `type` would reach anyone (progress nobody follows is not published). */
  listening(type: string): boolean;
  diagnose(agentId: string, diagnostic: Diagnostic): void;
  report(agentId: string, error: ErrorInfo): void;
  readonly inspect: ((event: InspectionEvent) => void) | undefined;
  /** The system's trace, which gets one `turn` record per state a turn actor enters. */
  readonly trace: Tracer | undefined;
  /** The system's skill resolvers: a document-skill registry among them is what is disclosed. */
  readonly resolvers: readonly SkillResolver[];
}

/** The model options of `createAgentSystem`. */
export interface ConversationOptions {
  /** Language models by name: a conversation's `model` config names one (default `default`). */
  models?: Readonly<Record<string, ChatModel>> | undefined;
  /** Compactors by name: a conversation's `history.strategy` may name one. */
  compactors?: Readonly<Record<string, Compactor>> | undefined;
}

/** A tool call's outcome, as the history records it. */
type ToolOutcome = { ok: true; output: unknown } | { ok: false; error: { code: string; message: string } };

/**
 * When the driver stops waiting for a tool call, as its record reads it: a millisecond before
 * the call's own time-out, which starts after this, so a step the caller gave up on is always
 * late by the record's reckoning.
 */
function deadline(settings: ConversationSettings): number {
  return Date.now() + settings.toolTimeout - 1;
}

/** The error a tool call that answers after its deadline is recorded with: the one its caller gets at the deadline. */
function lateError(ref: AgentRef, tool: string, settings: ConversationSettings): { code: string; message: string } {
  const action = ref.toolset().bindings.get(tool)?.action ?? tool;
  const { code, message } = noAnswerError(`run of '${action}'`, ref.id, settings.toolTimeout);
  return { code, message };
}

/** A call that failed, as its result tells the model: its error's code, then its message. */
function failedResult(call: Pick<AskedCall, 'toolCallId' | 'toolName'>, error: { code: string; message: string }): CallResult {
  return { toolCallId: call.toolCallId, toolName: call.toolName, output: errorOutput(error) };
}

const NO_CONFIG = Object.freeze({});
const unwatched = (): void => {};
const parsedSettings = new WeakMap<object, ConversationSettings>();

/**
 * The summary a compactor returned: a string, or undefined to drop the older messages. Anything
 * else is refused, naming the compactor, like a compactor that throws.
 */
function compactedSummary(name: string, returned: unknown): string | undefined {
  if (returned === undefined) return undefined;
  if (typeof returned !== 'object' || returned === null) throw new Error(`compactor '${name}' returned ${returned === null ? 'null' : typeof returned}; it must return { summary } (a string) or nothing`);
  const summary = (returned as { summary?: unknown }).summary;
  if (summary === undefined || typeof summary === 'string') return summary;
  throw new Error(`compactor '${name}' returned a summary of type ${summary === null ? 'null' : typeof summary}; a summary must be a string`);
}

function sleep(ms: number, abort: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (abort.aborted) return reject(abort.reason);
    const timer = setTimeout(() => {
      abort.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abort.reason);
    };
    abort.addEventListener('abort', onAbort, { once: true });
  });
}

/** Runs the turns of one system's model-driven agents. */
export class ConversationDriver {
  private readonly models: Readonly<Record<string, ChatModel>>;
  private readonly compactors: Readonly<Record<string, Compactor>>;
  private readonly running = new Map<string, { n: number; actor: TurnActor }>();
  private readonly cache = new PromptCache();
  private readonly offered = new WeakMap<Toolset, ModelTools>();
  /** The agents told of a toolset's `allowed-tools` entries that pre-approve nothing. */
  private readonly notedPreApprovals = new WeakMap<Toolset, Set<string>>();
  /** Models already reported as not streaming (reported once, not at every step). */
  private readonly unstreamed = new WeakSet<ChatModel>();
  private unsubscribe: (() => void) | undefined;
  private stopped = false;

  constructor(
    private readonly host: ConversationHost,
    options: ConversationOptions,
  ) {
    this.models = checkModels(options.models);
    this.compactors = checkCompactors(options.compactors);
    this.unsubscribe = host.subscribe('chat.turn.*', (signal) => this.heard(signal));
  }

  /** An agent just restored (or spawned with state): runs the turn it has in flight, if any. */
  adopt(agentId: string): void {
    queueMicrotask(() => this.ensure(agentId));
  }

  /** Stops every turn actor (their model requests are aborted). */
  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    for (const { actor } of this.running.values()) actor.stop();
    this.running.clear();
  }

  // ── Turn actors ──────────────────────────────────────────────────────────────────────────

  private heard(signal: Signal): void {
    const data = signal.data as { agent?: unknown; turn?: unknown } | undefined;
    if (typeof data?.agent !== 'string' || typeof data.turn !== 'number') return;
    const agentId = data.agent;
    const n = data.turn;
    const running = this.running.get(agentId);
    switch (signal.type) {
      case ChatSignals.started:
        // Emitted from inside the agent's step: the actor starts once the step is over.
        queueMicrotask(() => this.ensure(agentId));
        return;
      case ChatSignals.resumed:
        queueMicrotask(() => {
          const current = this.running.get(agentId);
          if (current?.n === n && current.actor.getSnapshot().status === 'active') current.actor.send({ type: 'resume' });
          else this.ensure(agentId);
        });
        return;
      case ChatSignals.cancelled:
        // Anyone may publish a signal of this type (a bridge forwarding another system's, a
        // mistake): only the cancellation the agent's own state records stops the turn. Emitted
        // from inside the agent's step, it is checked once the step is over.
        queueMicrotask(() => {
          const current = this.running.get(agentId);
          if (current?.n !== n || this.phaseOf(agentId, n) !== 'cancelled') return;
          this.running.delete(agentId);
          current.actor.send({ type: 'cancel' });
        });
        return;
      case ChatSignals.answered:
      case ChatSignals.failed:
        this.cache.forget(agentId);
        // As for a cancellation: only the ending the agent's state records counts.
        queueMicrotask(() => {
          const phase = this.phaseOf(agentId, n);
          if (this.running.get(agentId) === running && running?.n === n && (phase === 'answered' || phase === 'failed')) this.running.delete(agentId);
        });
        return;
    }
  }

  /** Starts the actor of the agent's turn in flight, unless it runs already. */
  private ensure(agentId: string): void {
    if (this.stopped) return;
    const ref = this.host.get(agentId);
    const turn = ref ? this.slice(ref)?.turn : undefined;
    if (!ref || !turn) return;
    const current = this.running.get(agentId);
    if (current?.n === turn.n && current.actor.getSnapshot().status === 'active') return;
    if (current) current.actor.stop();
    // Between thinking and acting, the actor moves only for those who watch it (the inspector, the trace).
    const watched = this.host.inspect !== undefined || this.host.trace !== undefined;
    const work: TurnWork = {
      work: (n, abort, notify) => this.work(ref, n, abort, watched ? notify : unwatched),
      phase: (n) => this.phaseOf(agentId, n),
      crashed: (n, error) => this.crashed(ref, n, error),
    };
    const actor = createActor(turnMachine, {
      input: { agent: agentId, n: turn.n, phase: turn.status, work },
      systemId: `${agentId}/turns/${turn.n}`,
      id: `${agentId}/turns/${turn.n}`,
      ...(this.host.inspect ? { inspect: this.host.inspect } : {}),
    });
    this.running.set(agentId, { n: turn.n, actor });
    // The agent stops: so does its turn (the model request is aborted).
    const agentGone = () => {
      actor.stop();
      if (this.running.get(agentId)?.actor === actor) this.running.delete(agentId);
    };
    const agentWatch = ref.actor.subscribe({ complete: agentGone, error: agentGone });
    const trace = this.host.trace;
    let traced: unknown;
    actor.subscribe({
      next: (snapshot) => {
        if (!trace) return;
        const state = turnStateName(snapshot.value);
        if (state === traced || state === 'next' || state === 'choosing') return;
        traced = state;
        trace({ kind: 'turn', agent: agentId, turn: turn.n, state });
      },
      complete: () => {
        agentWatch.unsubscribe();
        if (this.running.get(agentId)?.actor === actor) this.running.delete(agentId);
      },
    });
    actor.start();
  }

  /** The document-skill registry among the system's resolvers, whose skills are disclosed. */
  private documents(): DocumentSkillRegistry | undefined {
    return this.host.resolvers.find((resolver): resolver is DocumentSkillRegistry => resolver instanceof DocumentSkillRegistry);
  }

  // ── Reading the agent ────────────────────────────────────────────────────────────────────

  private slice(ref: AgentRef): ConversationState | undefined {
    return (this.host.agent(ref.id)?.state as { [CONVERSATION]?: ConversationState } | undefined)?.[CONVERSATION];
  }

  /** The conversation's settings: its config with defaults, parsed once per config (committed configs are frozen). */
  private settings(ref: AgentRef): ConversationSettings {
    const config = this.host.agent(ref.id)?.mounted.find((mounted) => mounted.name === CONVERSATION)?.config ?? NO_CONFIG;
    let settings = parsedSettings.get(config);
    if (!settings) parsedSettings.set(config, (settings = conversationConfigSchema.parse(config)));
    return settings;
  }

  /** Where turn `n` of the agent is, as its state says. */
  private phaseOf(agentId: string, n: number): TurnPhase {
    const ref = this.host.get(agentId);
    const slice = ref ? this.slice(ref) : undefined;
    if (slice?.turn?.n === n) return slice.turn.status;
    if (slice?.last?.n === n) return slice.last.outcome;
    return 'cancelled';
  }

  /** The turn in flight when it is `n` and has `status`; otherwise where turn `n` is. */
  private turnAt(ref: AgentRef, n: number, status: TurnRecord['status']): TurnRecord | TurnPhase {
    if (this.host.agent(ref.id) === undefined) return 'cancelled';
    const turn = this.slice(ref)?.turn;
    if (turn?.n === n && turn.status === status) return turn;
    return this.phaseOf(ref.id, n);
  }

  /** Runs one of the conversation's actions; resolves with where turn `n` is afterwards. */
  private async record(ref: AgentRef, n: number, action: string, params: Record<string, unknown>): Promise<TurnPhase> {
    try {
      const output = (await ref.run({ action, skill: CONVERSATION, params }, { timeout: Infinity })) as { status?: TurnPhase } | undefined;
      return output?.status ?? this.phaseOf(ref.id, n);
    } catch (error) {
      if (error instanceof RuntimeError && error.code === 'agent_stopped') return 'cancelled';
      // The turn ended meanwhile (cancelled): what the state says is the answer.
      if (error instanceof RuntimeError && error.is('action_failed') && error.details?.reason === 'no_turn') return this.phaseOf(ref.id, n);
      throw error;
    }
  }

  private fail(ref: AgentRef, n: number, error: ErrorInfo): Promise<TurnPhase> {
    return this.record(ref, n, 'fail_turn', { turn: n, error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) } });
  }

  private crashed(ref: AgentRef, n: number, error: unknown): void {
    const info = errorInfo('model_failed', `turn ${n} of agent '${ref.id}' failed unexpectedly: ${describeThrown(error)}`);
    this.host.report(ref.id, info);
    void this.fail(ref, n, info).catch(() => {});
  }

  /** Publishes progress (deltas, tool calls) when someone follows it: nobody listening is no problem. */
  private publish(agentId: string, type: string, data: Record<string, unknown>): void {
    if (!this.host.listening(type)) return;
    this.host.publish(createSignal(type, { agent: agentId, ...data }, { source: agentId }), agentId);
  }

  // ── Working: asking the model, running tools ─────────────────────────────────────────────

  /** Moves turn `n` on: runs the next tool call waiting, or lets the model answer. */
  private async work(ref: AgentRef, n: number, abort: AbortSignal, notify: (activity: TurnActivity) => void): Promise<void> {
    const phase = this.phaseOf(ref.id, n);
    if (phase === 'acting') {
      notify('acting');
      await this.act(ref, n);
    } else if (phase === 'thinking') {
      notify('thinking');
      await this.think(ref, n, abort, notify);
    }
  }

  /**
   * Lets the model answer, step after step (see `segment`), with retries and a time-out per
   * model call, until it answers, a tool call waits for approval, or a limit is reached.
   */
  private async think(ref: AgentRef, n: number, abort: AbortSignal, notify: (activity: TurnActivity) => void): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const turn = this.turnAt(ref, n, 'thinking');
      if (typeof turn === 'string') return;
      // Tool calls ran in a step whose record is missing (the process stopped in between): into
      // the history with them, without running them again.
      if (turn.ran.length > 0) {
        if ((await this.record(ref, n, 'settle_step', { turn: n })) !== 'thinking') return;
        attempt--;
        continue;
      }
      const settings = this.settings(ref);
      const slice = this.slice(ref)!;
      if (settings.maxTokens !== undefined && slice.usage.totalTokens >= settings.maxTokens) {
        await this.fail(ref, n, overBudget(ref.id, slice.usage.totalTokens, settings.maxTokens));
        return;
      }
      const model = this.models[settings.model];
      if (!model) {
        await this.fail(ref, n, unknownModel(ref.id, settings.model, Object.keys(this.models), 'pass models to createAgentSystem({ models: { default: ... } })'));
        return;
      }
      let ai: AiModule;
      try {
        ai = await loadAi();
      } catch (error) {
        await this.fail(ref, n, toErrorInfo(error, 'model_unavailable'));
        return;
      }
      if ((await this.compactIfNeeded(ref, n, settings, model, ai, abort)) !== undefined) return;
      // The agent may have stopped, or the turn ended, while the SDK loaded.
      if (typeof this.turnAt(ref, n, 'thinking') === 'string') return;

      // Restarted as each step begins and after each tool call (a tool has its own time-out).
      const timer = new StepAbort(settings.modelTimeout, abort);
      try {
        await this.segment(ref, n, turn, settings, model, timer, notify);
        return;
      } catch (error) {
        if (abort.aborted || this.phaseOf(ref.id, n) !== 'thinking') return;
        if (error instanceof RuntimeError && error.code === 'agent_stopped') return;
        const problem = classifyModelError(ai, error, timer.timedOut, settings, model);
        if (!problem.retryable || attempt >= settings.retries) {
          await this.fail(ref, n, problem.error);
          return;
        }
        const wait = retryWait(problem, settings, attempt);
        this.host.diagnose(
          ref.id,
          diagnostic('warning', 'model_retry', `agent '${ref.id}', turn ${n}: ${problem.error.message}; trying again in ${wait} ms (retry ${attempt + 1} of ${settings.retries})`, {
            details: { code: problem.error.code, attempt: attempt + 1, wait },
          }),
        );
        try {
          await sleep(wait, abort);
        } catch {
          return;
        }
      } finally {
        timer.release();
      }
    }
  }

  /**
   * Model steps, one after another, from the history the agent's state holds: each asks the
   * model once (the system prompt rebuilt from the agent's state), runs the tool calls it asked
   * for through the agent, one by one in the order given, and is recorded as it ends. Ends when
   * the model answers, a call waits for approval, the agent's tools change (a skill was loaded
   * or unloaded: the next segment offers the new ones), or a limit is reached.
   */
  private async segment(
    ref: AgentRef,
    n: number,
    turn: TurnRecord,
    settings: ConversationSettings,
    model: ChatModel,
    timer: StepAbort,
    notify: (activity: TurnActivity) => void,
  ): Promise<void> {
    const toolset = ref.toolset();
    const prepared = this.prepared(ref, toolset);
    // When some tool needs approval, no call runs within the step: the turn runs them one by
    // one instead, pausing at each approval.
    const ordered = prepared.approval.size > 0;
    const documents = this.documents();
    const abortSignal = timer.signal;
    let executed = 0;
    for (let step = 0; ; step++) {
      if (step > 0 && (ref.toolset() !== toolset || this.phaseOf(ref.id, n) !== 'thinking')) return;
      abortSignal.throwIfAborted();
      const agent = this.host.agent(ref.id);
      const history = this.slice(ref)?.messages;
      if (agent === undefined || history === undefined) return;
      timer.restart();
      const prompt = await buildSystemPrompt(agent, settings, turn.query, documents, this.cache);
      for (const note of prompt.diagnostics) this.host.diagnose(ref.id, note);
      const index = turn.steps + step;
      const answer = await askModel(model, {
        system: prompt.text,
        messages: history,
        tools: prepared.tools,
        temperature: settings.temperature,
        maxOutputTokens: settings.maxOutputTokens,
        abortSignal,
        // Nobody follows the text as it comes: the answer is asked for whole.
        onText: settings.stream && this.host.listening(ChatSignals.delta) ? (text) => this.publish(ref.id, ChatSignals.delta, { turn: n, step: index, text }) : undefined,
      });
      for (const warning of answer.warnings) {
        this.host.diagnose(ref.id, diagnostic('info', 'model_warning', `agent '${ref.id}', turn ${n}: ${modelWarned(model, warning)}`, { details: { warning: plain(warning) } }));
      }
      if (answer.missing === 'doStream' && !this.unstreamed.has(model)) {
        this.unstreamed.add(model);
        this.host.diagnose(ref.id, diagnostic('info', 'model_not_streamed', `agent '${ref.id}', turn ${n}: ${notStreamed(model)}`, { details: { missing: answer.missing } }));
      }
      if (answer.dropped.length > 0) {
        this.host.diagnose(ref.id, diagnostic('warning', 'model_part_dropped', `agent '${ref.id}', turn ${n}: ${partsDropped(model, answer.dropped)}`, { details: { parts: answer.dropped } }));
      }
      const results: CallResult[] = [];
      const pending: WaitingCall[] = [];
      let limit: ErrorInfo | undefined;
      for (const call of answer.calls) {
        // Cancelled (or stopped) while an earlier call of this answer ran: no further call of the
        // turn starts, and none is announced.
        abortSignal.throwIfAborted();
        if (typeof this.turnAt(ref, n, 'thinking') === 'string') return;
        if (call.problem !== undefined) {
          // Answered without running, and followers of tool calls see it fail.
          const signals = refusedCallSignals({ ...call, problem: call.problem });
          this.publish(ref.id, ChatSignals.toolCall, { turn: n, ...signals.call });
          this.publish(ref.id, ChatSignals.toolResult, { turn: n, ...signals.result });
          results.push(errorResult(call, call.problem.message));
        }
        else if (ordered) pending.push(waiting(call, prepared));
        else if (turn.toolCalls + executed >= settings.maxToolCalls) {
          limit ??= toolLimit(n, settings.maxToolCalls);
          results.push(failedResult(call, limit));
        } else {
          executed++;
          results.push(await this.runStepCall(ref, n, call, settings, timer, notify));
        }
      }
      // The calls ran: their results go into the history, whatever happened meanwhile.
      const messages = answerMessages(answer, results);
      await this.record(ref, n, 'record_step', { turn: n, messages: plain(messages), usage: answer.usage, calls: answer.calls.length, pending });
      if (limit !== undefined) {
        if (this.phaseOf(ref.id, n) === 'thinking') await this.fail(ref, n, limit);
        return;
      }
      if (answer.calls.length === 0 || pending.length > 0) return;
    }
  }

  /** Runs a tool call of a model step through the agent, recorded in the step that runs it; resolves with its result for the model. */
  private async runStepCall(ref: AgentRef, n: number, call: AskedCall, settings: ConversationSettings, timer: StepAbort, notify: (activity: TurnActivity) => void): Promise<CallResult> {
    notify('acting');
    // A tool call has its own time-out: the model's does not run meanwhile.
    timer.pause();
    try {
      const record = {
        action: 'record_tool_call',
        skill: CONVERSATION,
        params: { turn: n, toolCallId: call.toolCallId, tool: call.toolName, args: call.input, until: deadline(settings), late: lateError(ref, call.toolName, settings) },
      };
      const outcome = await this.runTool(ref, n, call.toolCallId, call.toolName, call.input, settings, record);
      if (!outcome.ok) return failedResult(call, outcome.error);
      // Answered, but after its deadline: recorded as timed out, so the model is told that.
      const recorded = this.slice(ref)?.turn?.ran.findLast((ran) => ran.toolCallId === call.toolCallId);
      if (recorded?.error !== undefined) return failedResult(call, recorded.error);
      return { toolCallId: call.toolCallId, toolName: call.toolName, output: toolOutput(outcome.output) };
    } finally {
      timer.restart();
      notify('thinking');
    }
  }

  /**
   * The agent's tools as the model is offered them, which need approval and what its skills
   * pre-approve: made once per toolset (agents with the same skills share one). The
   * `allowed-tools` entries that pre-approve nothing are reported once per agent and toolset.
   */
  private prepared(ref: AgentRef, toolset: Toolset): ModelTools {
    let prepared = this.offered.get(toolset);
    if (!prepared) this.offered.set(toolset, (prepared = modelTools(this.host.agent(ref.id), toolset)));
    const notes = prepared.preApprovals.diagnostics;
    if (notes.length > 0) {
      let reported = this.notedPreApprovals.get(toolset);
      if (!reported) this.notedPreApprovals.set(toolset, (reported = new Set()));
      if (!reported.has(ref.id)) {
        reported.add(ref.id);
        for (const note of notes) this.host.diagnose(ref.id, note);
      }
    }
    return prepared;
  }

  /**
   * Runs one tool call through the agent (a step of its own, which also runs `record` when the
   * call succeeds), telling followers before and after.
   */
  private async runTool(ref: AgentRef, n: number, toolCallId: string, tool: string, args: unknown, settings: ConversationSettings, record: InstructionObject, preApprovedBy?: string): Promise<ToolOutcome> {
    this.publish(ref.id, ChatSignals.toolCall, { turn: n, toolCallId, tool, args, ...(preApprovedBy !== undefined ? { preApprovedBy } : {}) });
    let outcome: ToolOutcome;
    try {
      const output = await this.host.callTool(ref, tool, args, record, { timeout: settings.toolTimeout });
      outcome = { ok: true, output: output === undefined ? null : output };
    } catch (error) {
      if (error instanceof RuntimeError && error.code === 'agent_stopped') throw error;
      outcome = { ok: false, error: toolFailure(toErrorInfo(error, 'action_failed')) };
    }
    this.publish(ref.id, ChatSignals.toolResult, { turn: n, toolCallId, tool, ...outcome });
    return outcome;
  }

  // ── Compaction ───────────────────────────────────────────────────────────────────────────

  /** Compacts the history when it passes its budget; resolves with an ending when the turn ended meanwhile. */
  private async compactIfNeeded(ref: AgentRef, n: number, settings: ConversationSettings, model: ChatModel, ai: AiModule, abort: AbortSignal): Promise<TurnPhase | undefined> {
    const messages = this.slice(ref)?.messages;
    if (messages === undefined) return 'cancelled';
    const tokens = historyTokens(messages);
    if (tokens <= settings.history.maxTokens) return undefined;
    const remove = keepFrom(messages, settings.history.keepTurns);
    if (remove <= 0) {
      this.host.diagnose(ref.id, diagnostic('warning', 'history_over_budget', `agent '${ref.id}': the history (about ${tokens} tokens) is over its budget of ${settings.history.maxTokens}, but only the latest ${settings.history.keepTurns} turn(s) are left, which are kept`, {
        details: { tokens, budget: settings.history.maxTokens },
      }));
      return undefined;
    }
    const strategy = settings.history.strategy;
    let summary: string | undefined;
    // What the summary request cost: it counts against the agent's token budget like any model call.
    let usage: ChatUsage | undefined;
    if (strategy !== 'drop') {
      try {
        if (strategy === 'summarize') {
          const request = new StepAbort(settings.modelTimeout, abort);
          try {
            ({ text: summary, usage } = await summarizeHistory(ai, model, messages.slice(0, remove), settings, request.signal));
          } finally {
            request.release();
          }
        } else {
          const compactor = this.compactors[strategy];
          if (!compactor) throw new Error(`no compactor named '${strategy}' was given to the system (known: ${Object.keys(this.compactors).join(', ') || 'none'})`);
          summary = compactedSummary(strategy, await compactor({ agent: ref.id, messages, keepFrom: remove, model, abortSignal: abort }));
        }
      } catch (error) {
        if (abort.aborted) return this.phaseOf(ref.id, n);
        this.host.diagnose(ref.id, diagnostic('warning', 'compaction_failed', `agent '${ref.id}': summarising the history with '${strategy}' failed (${describeThrown(error)}); the older messages are dropped instead`));
        summary = undefined;
      }
    }
    const params = { remove, ...(summary ? { summary } : {}), ...(usage ? { usage } : {}), announce: this.host.listening(ChatSignals.compacted) };
    try {
      await ref.run({ action: 'compact', skill: CONVERSATION, params }, { timeout: Infinity });
    } catch (error) {
      if (error instanceof RuntimeError && error.code === 'agent_stopped') return 'cancelled';
      throw error;
    }
    this.host.diagnose(
      ref.id,
      diagnostic('info', 'history_compacted', `agent '${ref.id}': ${remove} older message(s) (about ${tokens - historyTokens(this.slice(ref)!.messages)} tokens) were ${summary ? 'summarised' : 'dropped'}`, {
        details: { removed: remove, strategy, summarised: summary !== undefined },
      }),
    );
    return this.turnAt(ref, n, 'thinking') === 'cancelled' ? 'cancelled' : undefined;
  }

  // ── Acting: a tool call that waited (for approval, or across a restore) ────────────────────

  private async act(ref: AgentRef, n: number): Promise<void> {
    const turn = this.turnAt(ref, n, 'acting');
    if (typeof turn === 'string') return;
    const call = turn.pending[0]!;
    // The calls past the limit do not run: the turn ends, and they get an error result.
    const { maxToolCalls } = this.settings(ref);
    if (callsRun(turn) >= maxToolCalls) {
      await this.fail(ref, n, toolLimit(n, maxToolCalls));
      return;
    }
    if (call.approval === 'denied') {
      await this.record(ref, n, 'record_tool_result', { turn: n, toolCallId: call.toolCallId, ok: false });
      return;
    }
    // A call whose step commits is recorded by that step (as timed out when it answered after
    // its deadline). One whose step failed changed nothing: its error is recorded now, unless its
    // step, still running when the caller gave up, records it first.
    const settings = this.settings(ref);
    const record = { action: 'record_tool_result', skill: CONVERSATION, params: { turn: n, toolCallId: call.toolCallId, ok: true, until: deadline(settings), late: lateError(ref, call.tool, settings) } };
    if (call.preApprovedBy !== undefined) this.host.diagnose(ref.id, preApprovedNote(ref.id, n, { ...call, preApprovedBy: call.preApprovedBy }));
    const outcome = await this.runTool(ref, n, call.toolCallId, call.tool, call.args, settings, record, call.preApprovedBy).catch((error: unknown) => {
      if (error instanceof RuntimeError && error.code === 'agent_stopped') return undefined;
      throw error;
    });
    const still = this.turnAt(ref, n, 'acting');
    if (outcome && !outcome.ok && typeof still !== 'string' && still.pending.length === turn.pending.length) {
      await this.record(ref, n, 'record_tool_result', { turn: n, toolCallId: call.toolCallId, ok: false, error: outcome.error, ifNext: true });
    }
  }
}
