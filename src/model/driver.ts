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
import { diagnostic } from '../core/diagnostics.js';
import { describeThrown, toErrorInfo, type ErrorInfo } from '../core/errors.js';
import { createSignal, type Signal } from '../core/signal.js';
import type { Toolset } from '../core/toolset.js';
import { DocumentSkillRegistry } from '../manifest/document-registry.js';
import type { InstructionObject } from '../core/instruction.js';
import type { AgentRef } from '../runtime/agent-ref.js';
import type { AgentItemEvent } from '../../machines/agent.js';
import { RuntimeError } from '../core/runtime-error.js';
import type { SystemServices } from '../runtime/extension.js';
import { ChatSignals, conversationConfigSchema, CONVERSATION, type ChatUsage, type ConversationSettings, type ConversationState, type PendingToolCall, type TurnRecord } from './conversation.js';
import { checkCompactors, checkModels, classifyModelError, historyTokens, modelTools, plain, preApprovedNote, refusedCallSignals, type ModelTools, type WaitingCall } from './model-call.js';
import { loadAi, loadedAi } from './ai-sdk.js';
import { notStreamed } from './model-methods.js';
import { askModel, modelWarned, partsDropped, type AskedCall, type ModelAnswer } from './model-step.js';
import type { ChatModel, Compactor } from './models.js';
import { buildSystemPrompt, PromptCache } from './prompt.js';
import { StepAbort, untilAborted } from './step-abort.js';
import { summarizeHistory } from './summary.js';
import { failed, toolResultPart, type ToolError, type ToolResultPart } from './tool-result.js';
import {
  afterModelFailure,
  compacted,
  compactedSummary,
  compactionFailed,
  compactRecord,
  crashedError,
  endsTurn,
  lateError,
  nextMove,
  planCalls,
  refusedPart,
  stepRecord,
  toolDeadline,
  toolFailure,
  unknownCompactor,
  type TurnMove,
  type TurnView,
} from './turn-engine.js';
import { startTurnSpan, within, type TurnSpan } from './turn-spans.js';
import { contentRecorder, type ContentRecorder, type TelemetryOptions } from '../telemetry/content.js';
import { observing, tracing } from '../telemetry/otel.js';
import { stopTurn, turnMachine, turnStateName, type TurnActivity, type TurnActor, type TurnPhase, type TurnWork } from './turn-machine.js';

/** What the driver needs from the system it runs in: the services a system gives its extensions. */
export type ConversationHost = SystemServices;

/** The model options of `createAgentSystem`. */
export interface ConversationOptions {
  /** Language models by name: a conversation's `model` config names one (default `default`). */
  models?: Readonly<Record<string, ChatModel>> | undefined;
  /** Compactors by name: a conversation's `history.strategy` may name one. */
  compactors?: Readonly<Record<string, Compactor>> | undefined;
  /** What the turn's spans may record beyond names, counts and codes (docs/observability.md). */
  telemetry?: TelemetryOptions | undefined;
}

const NO_CONFIG = Object.freeze({});
const unwatched = (): void => {};
const parsedSettings = new WeakMap<object, ConversationSettings>();

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

/** The abort signal the model calls of one run of a turn's work share (see `requestAbort`). */
interface ModelRequests {
  abort?: StepAbort;
}

/**
 * The abort signal of the next model call of a turn's work, its time-out started: the one of the
 * call before, unless that one aborted (its time-out fired) or the time-out changed. One signal,
 * one parent listener and one timer serve the turn's steps one after another; the work releases
 * it when it ends.
 */
function requestAbort(requests: ModelRequests, ms: number, parent: AbortSignal): StepAbort {
  const held = requests.abort;
  if (held !== undefined && !held.signal.aborted && held.ms === ms) {
    held.restart();
    return held;
  }
  held?.release();
  return (requests.abort = new StepAbort(ms, parent));
}

/** What a user whose agent names a model the system does not know is told to do. */
const MODEL_HINT = 'pass models to createAgentSystem({ models: { default: ... } })';

/** Runs the turns of one system's model-driven agents. */
export class ConversationDriver {
  private readonly models: Readonly<Record<string, ChatModel>>;
  private readonly modelNames: readonly string[];
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
  /** How the turn spans record prompts and completions: undefined for not at all. */
  private readonly content: ContentRecorder;
  /** The trace of the signal that last started or resumed each agent's turn, kept while tracing. */
  private readonly traces = new Map<string, { traceparent?: string | undefined; tracestate?: string | undefined }>();

  constructor(
    private readonly host: ConversationHost,
    options: ConversationOptions,
  ) {
    this.models = checkModels(options.models);
    this.modelNames = Object.keys(this.models);
    this.compactors = checkCompactors(options.compactors);
    this.content = contentRecorder(options.telemetry);
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
    for (const { actor } of this.running.values()) stopTurn(actor);
    this.running.clear();
  }

  // ── Turn actors ──────────────────────────────────────────────────────────────────────────

  private heard(signal: Signal): void {
    const data = signal.data as { agent?: unknown; turn?: unknown } | undefined;
    if (typeof data?.agent !== 'string' || typeof data.turn !== 'number') return;
    const agentId = data.agent;
    const n = data.turn;
    const running = this.running.get(agentId);
    if ((signal.type === ChatSignals.started || signal.type === ChatSignals.resumed) && tracing()) this.traces.set(agentId, { traceparent: signal.traceparent, tracestate: signal.tracestate });
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
          this.traces.delete(agentId);
          current.actor.send({ type: 'cancel' });
        });
        return;
      case ChatSignals.answered:
      case ChatSignals.failed:
        this.cache.forget(agentId);
        this.traces.delete(agentId);
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
    if (current) stopTurn(current.actor);
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
    // The agent stops, or its conversation is unmounted: so does its turn (the model request is aborted).
    const agentGone = () => {
      stopTurn(actor);
      if (this.running.get(agentId)?.actor === actor) this.running.delete(agentId);
    };
    const unmounted = () => {
      if (this.slice(ref) === undefined) agentGone();
    };
    const agentWatch = ref.actor.subscribe({ next: unmounted, complete: agentGone, error: agentGone });
    const trace = this.host.trace;
    let traced: unknown;
    actor.subscribe({
      next: (snapshot) => {
        if (!trace) return;
        const state = turnStateName(snapshot.value);
        if (state === traced || state === 'next') return;
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
    const info = crashedError(ref.id, n, '', describeThrown(error));
    this.host.report(ref.id, info);
    void this.fail(ref, n, info).catch(() => {});
  }

  /** Publishes progress (deltas, tool calls) when someone follows it: nobody listening is no problem. */
  private publish(agentId: string, type: string, data: Record<string, unknown>): void {
    if (!this.host.listening(type)) return;
    this.host.publish(createSignal(type, { agent: agentId, ...data }, { source: agentId }), agentId);
  }

  // ── Working: the moves of the turn engine, carried out ───────────────────────────────────

  /** What the turn engine reads of turn `n`, or undefined when it is not in flight (any more). */
  private view(ref: AgentRef, n: number, compacted: boolean): TurnView | undefined {
    const slice = this.slice(ref);
    const turn = slice?.turn;
    if (!slice || !turn || turn.n !== n) return undefined;
    return { agentId: ref.id, turn, messages: slice.messages, usage: slice.usage, settings: this.settings(ref), models: this.modelNames, modelHint: MODEL_HINT, compacted };
  }

  /**
   * Moves turn `n` on, move after move as the turn engine decides them, until it waits for
   * approval or is over (answered, failed, cancelled, or the agent stopped).
   */
  private async work(ref: AgentRef, n: number, abort: AbortSignal, notify: (activity: TurnActivity) => void): Promise<void> {
    const span = observing() ? startTurnSpan({ agentId: ref.id, definition: ref.definition, n, ...this.traces.get(ref.id) }, this.content) : undefined;
    if (span === undefined) {
      await this.moves(ref, n, abort, notify, undefined);
      return;
    }
    let phase: TurnPhase;
    try {
      phase = (await span.within(() => this.moves(ref, n, abort, notify, span))) ?? this.phaseOf(ref.id, n);
    } catch (error) {
      span.finish('crashed', { code: 'signal_failed', message: describeThrown(error) });
      throw error;
    }
    const last = this.slice(ref)?.last;
    span.finish(phase, phase === 'failed' && last?.n === n ? last.error : undefined);
  }

  /** The moves of `work`, each carried out (inside the turn's span, when there is one); resolves with where they left the turn, when known. */
  private async moves(ref: AgentRef, n: number, abort: AbortSignal, notify: (activity: TurnActivity) => void, span: TurnSpan | undefined): Promise<TurnPhase | undefined> {
    const requests: ModelRequests = {};
    try {
      return await this.movesWith(ref, n, abort, notify, span, requests);
    } finally {
      requests.abort?.release();
    }
  }

  private async movesWith(ref: AgentRef, n: number, abort: AbortSignal, notify: (activity: TurnActivity) => void, span: TurnSpan | undefined, requests: ModelRequests): Promise<TurnPhase | undefined> {
    let compacted = false;
    for (;;) {
      if (abort.aborted) return;
      const view = this.view(ref, n, compacted);
      if (view === undefined) return;
      const move = nextMove(view);
      let phase: TurnPhase | undefined;
      switch (move.kind) {
        case 'wait':
          span?.waitsForApproval(view.turn.pending.filter((call) => call.approval === 'needed'));
          return view.turn.status;
        case 'fail':
          return this.fail(ref, n, move.error);
        case 'settle':
          phase = await this.record(ref, n, 'settle_step', { turn: n });
          break;
        case 'compact':
          phase = await this.compact(ref, n, move, view, abort, span);
          compacted = true;
          break;
        case 'ask':
          for (const note of move.notes) this.host.diagnose(ref.id, note);
          compacted = false;
          notify('thinking');
          phase = await this.ask(ref, n, view, abort, notify, span, requests);
          break;
        case 'deny':
          notify('acting');
          span?.denied(move.call.toolCallId, move.call.tool);
          phase = await this.record(ref, n, 'record_tool_result', { turn: n, toolCallId: move.call.toolCallId, ok: false });
          break;
        case 'run':
          notify('acting');
          await this.act(ref, n, move.call, view.settings, span, abort);
          break;
      }
      if (phase !== undefined && phase !== 'thinking' && phase !== 'acting') return phase;
    }
  }

  /**
   * Asks the model for one step (with retries and a time-out per attempt), runs the calls the
   * turn engine says run inside the step, and records the step. Resolves with where the turn is
   * afterwards (undefined when it ended, or the agent stopped, meanwhile).
   */
  private async ask(
    ref: AgentRef,
    n: number,
    view: TurnView,
    abort: AbortSignal,
    notify: (activity: TurnActivity) => void,
    span: TurnSpan | undefined,
    requests: ModelRequests,
  ): Promise<TurnPhase | undefined> {
    const { settings, turn } = view;
    const model = this.models[settings.model]!;
    let ai = loadedAi();
    if (ai === undefined) {
      try {
        ai = await loadAi();
      } catch (error) {
        return this.fail(ref, n, toErrorInfo(error, 'model_unavailable'));
      }
    }
    // The agent may have stopped, or the turn ended, while the SDK loaded (or as the notes of
    // this move were reported: a listener of diagnostics may cancel the turn).
    const agent = this.host.agent(ref.id);
    if (agent === undefined || typeof this.turnAt(ref, n, 'thinking') === 'string') return undefined;
    const toolset = ref.toolset();
    const prepared = this.prepared(ref, toolset);
    const prompt = await buildSystemPrompt(agent, settings, turn.query, this.documents(), this.cache);
    for (const note of prompt.diagnostics) this.host.diagnose(ref.id, note);
    const step = turn.steps;
    let answer: ModelAnswer;
    for (let attempt = 0; ; attempt++) {
      const timer = requestAbort(requests, settings.modelTimeout, abort);
      const call = span?.modelCall(model, { system: prompt.text, messages: view.messages, temperature: settings.temperature, maxOutputTokens: settings.maxOutputTokens });
      try {
        answer = await within(call, () => askModel(model, {
          system: prompt.text,
          messages: view.messages,
          tools: prepared.tools,
          temperature: settings.temperature,
          maxOutputTokens: settings.maxOutputTokens,
          abortSignal: timer.signal,
          // Nobody follows the text as it comes: the answer is asked for whole. A step tried
          // again writes its text anew: `attempt` tells followers to drop the earlier attempt's.
          onText: settings.stream && this.host.listening(ChatSignals.delta) ? (text) => this.publish(ref.id, ChatSignals.delta, { turn: n, step, attempt, text }) : undefined,
        }));
        call?.answered(answer);
        break;
      } catch (error) {
        if (abort.aborted || this.phaseOf(ref.id, n) !== 'thinking') {
          call?.failed({ code: 'cancelled', message: describeThrown(error) });
          return undefined;
        }
        const problem = classifyModelError(ai, error, timer.timedOut, settings, model);
        call?.failed(problem.error);
        const after = afterModelFailure(ref.id, n, problem, attempt, settings);
        if (after.kind === 'fail') return this.fail(ref, n, after.error);
        this.host.diagnose(ref.id, after.note);
        try {
          await sleep(after.wait, abort);
        } catch {
          return undefined;
        }
        // The turn may have been cancelled, or the agent stopped, meanwhile.
        if (typeof this.turnAt(ref, n, 'thinking') === 'string') return undefined;
      } finally {
        timer.pause();
      }
    }
    this.reportAnswer(ref.id, n, model, answer);

    const plans = planCalls(answer, prepared, turn, settings, true);
    const waiting = plans.flatMap((plan) => (plan.kind === 'wait' ? [plan.call] : []));
    // The last call that runs carries the step's record, which commits with it: a model step
    // costs the agent one step per call, and none of its own.
    const last = plans.findLastIndex((plan) => plan.kind === 'run');
    const results: ToolResultPart[] = [];
    let recorded = false;
    for (const [i, plan] of plans.entries()) {
      if (plan.kind === 'wait') continue;
      // Cancelled (or stopped) while an earlier call of this answer ran: no further call of the
      // turn starts, and none is announced.
      if (!recorded && (abort.aborted || typeof this.turnAt(ref, n, 'thinking') === 'string')) return undefined;
      if (plan.kind === 'refuse') {
        // Answered without running, and followers of tool calls see it fail.
        const signals = refusedCallSignals(plan.call);
        this.publish(ref.id, ChatSignals.toolCall, { turn: n, ...signals.call });
        this.publish(ref.id, ChatSignals.toolResult, { turn: n, ...signals.result });
        results.push(refusedPart(plan));
        continue;
      }
      if (i !== last) {
        results.push((await this.runStepCall(ref, n, plan.call, settings, abort, notify, span, undefined))!);
        continue;
      }
      // The refusals after it are answered in the same record.
      const later = plans.slice(i + 1).flatMap((after) => (after.kind === 'refuse' ? [refusedPart(after)] : []));
      const part = await this.runStepCall(ref, n, plan.call, settings, abort, notify, span, { at: results.length, record: stepRecord(n, answer, [...results, ...later], waiting) });
      if (part === undefined) {
        // Recorded: the refusals after it are only announced.
        recorded = true;
        results.push(...later);
      } else results.push(part);
    }
    const asking = waiting.filter((call) => call.needsApproval && call.preApprovedBy === undefined);
    if (asking.length > 0) span?.waitsForApproval(asking);
    if (recorded) return this.phaseOf(ref.id, n);
    // The calls ran: their results go into the history, whatever happened meanwhile.
    return this.record(ref, n, 'record_step', stepRecord(n, answer, results, waiting));
  }

  /** Reports what the provider warned about, parts of the answer the history cannot keep, and a model that does not stream. */
  private reportAnswer(agentId: string, n: number, model: ChatModel, answer: ModelAnswer): void {
    for (const warning of answer.warnings) {
      this.host.diagnose(agentId, diagnostic('info', 'model_warning', `agent '${agentId}', turn ${n}: ${modelWarned(model, warning)}`, { details: { warning: plain(warning) } }));
    }
    if (answer.missing === 'doStream' && !this.unstreamed.has(model)) {
      this.unstreamed.add(model);
      this.host.diagnose(agentId, diagnostic('info', 'model_not_streamed', `agent '${agentId}', turn ${n}: ${notStreamed(model)}`, { details: { missing: answer.missing } }));
    }
    if (answer.dropped.length > 0) {
      this.host.diagnose(agentId, diagnostic('warning', 'model_part_dropped', `agent '${agentId}', turn ${n}: ${partsDropped(model, answer.dropped)}`, { details: { parts: answer.dropped } }));
    }
  }

  /**
   * Runs a tool call of a model step through the agent, recorded in the step that runs it;
   * resolves with its result for the model. Given the step's record (`withStep`: the model
   * step's last call), the call's step records the whole model step, its result put in at `at`,
   * and resolves with nothing when it did; a call whose step failed recorded nothing.
   */
  private async runStepCall(
    ref: AgentRef,
    n: number,
    call: AskedCall,
    settings: ConversationSettings,
    abort: AbortSignal,
    notify: (activity: TurnActivity) => void,
    span: TurnSpan | undefined,
    withStep: { at: number; record: Record<string, unknown> } | undefined,
  ): Promise<ToolResultPart | undefined> {
    notify('acting');
    try {
      const until = toolDeadline(Date.now(), settings);
      const late = lateError(ref.id, call.toolName, settings);
      const record =
        withStep === undefined
          ? { action: 'record_tool_call', skill: CONVERSATION, params: { turn: n, toolCallId: call.toolCallId, tool: call.toolName, args: call.input, until, late } }
          : { action: 'record_step', skill: CONVERSATION, params: { ...withStep.record, ranLast: { at: withStep.at, toolCallId: call.toolCallId, tool: call.toolName, until, late } } };
      const outcome = await this.runTool(ref, n, { toolCallId: call.toolCallId, tool: call.toolName, args: call.input }, settings, record, span, abort);
      if (!outcome.ok) return toolResultPart(call, outcome);
      if (withStep !== undefined) return undefined;
      // Answered, but after its deadline: recorded as timed out, so the model is told that.
      const recorded = this.slice(ref)?.turn?.ran.findLast((ran) => ran.toolCallId === call.toolCallId);
      return toolResultPart(call, recorded?.error !== undefined ? failed(recorded.error) : outcome);
    } finally {
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
   * call succeeds), telling followers before and after. The call's `ctx.abortSignal` is aborted
   * when the turn's work is (`abort`), and as soon as something that ends the turn reaches the
   * agent (`endsTurn`), though the agent records that only once the call's step is over.
   */
  private async runTool(
    ref: AgentRef,
    n: number,
    call: { toolCallId: string; tool: string; args: unknown; preApprovedBy?: string | undefined },
    settings: ConversationSettings,
    record: InstructionObject,
    span: TurnSpan | undefined,
    abort: AbortSignal,
  ): Promise<{ ok: true; output: unknown } | { ok: false; error: ToolError }> {
    const { toolCallId, tool, args, preApprovedBy } = call;
    const turn = this.slice(ref)?.turn;
    const interrupt = turn ? (event: AgentItemEvent) => endsTurn(event, turn) : undefined;
    this.publish(ref.id, ChatSignals.toolCall, { turn: n, toolCallId, tool, args, ...(preApprovedBy !== undefined ? { preApprovedBy } : {}) });
    const toolSpan = span?.toolCall(toolCallId, tool, args);
    let outcome: { ok: true; output: unknown } | { ok: false; error: ToolError };
    try {
      const output = await within(toolSpan, () => this.host.callTool(ref, tool, args, record, { timeout: settings.toolTimeout, signal: abort }, interrupt));
      outcome = { ok: true, output: output === undefined ? null : output };
    } catch (error) {
      if (error instanceof RuntimeError && error.code === 'agent_stopped') {
        toolSpan?.end(error);
        throw error;
      }
      outcome = { ok: false, error: toolFailure(toErrorInfo(error, 'action_failed')) };
    }
    toolSpan?.ran(outcome);
    this.publish(ref.id, ChatSignals.toolResult, { turn: n, toolCallId, tool, ...outcome });
    return outcome;
  }

  // ── Compaction ───────────────────────────────────────────────────────────────────────────

  /** Compacts the history as the turn engine asked; resolves with where the turn is afterwards. */
  private async compact(ref: AgentRef, n: number, move: TurnMove & { kind: 'compact' }, view: TurnView, abort: AbortSignal, span: TurnSpan | undefined): Promise<TurnPhase | undefined> {
    const compaction = span?.compaction(move.strategy, move.remove, move.tokens);
    try {
      return await within(compaction, () => this.compactHistory(ref, n, move, view, abort));
    } finally {
      compaction?.end();
    }
  }

  private async compactHistory(ref: AgentRef, n: number, move: TurnMove & { kind: 'compact' }, view: TurnView, abort: AbortSignal): Promise<TurnPhase | undefined> {
    const { remove, strategy, tokens } = move;
    const { settings, messages } = view;
    const model = this.models[settings.model]!;
    let summary: string | undefined;
    let usage: ChatUsage | undefined;
    if (strategy !== 'drop') {
      // A summary, the model's or a compactor's, may take as long as a model step.
      const request = new StepAbort(settings.modelTimeout, abort);
      try {
        if (strategy === 'summarize') {
          ({ text: summary, usage } = await summarizeHistory(await loadAi(), model, messages.slice(0, remove), settings, request.signal));
        } else {
          const compactor = this.compactors[strategy];
          if (!compactor) throw unknownCompactor(strategy, Object.keys(this.compactors), 'system');
          const returned = compactor({ agent: ref.id, messages, keepFrom: remove, model, abortSignal: request.signal });
          summary = compactedSummary(strategy, await untilAborted(Promise.resolve(returned), request.signal));
        }
      } catch (error) {
        if (abort.aborted) return this.phaseOf(ref.id, n);
        this.host.diagnose(ref.id, compactionFailed(ref.id, strategy, describeThrown(error)));
        summary = undefined;
      } finally {
        request.release();
      }
    }
    try {
      await ref.run({ action: 'compact', skill: CONVERSATION, params: compactRecord(remove, summary, usage, this.host.listening(ChatSignals.compacted)) }, { timeout: Infinity });
    } catch (error) {
      if (error instanceof RuntimeError && error.code === 'agent_stopped') return 'cancelled';
      throw error;
    }
    const now = this.slice(ref)?.messages;
    this.host.diagnose(ref.id, compacted(ref.id, remove, strategy, summary !== undefined && summary !== '', now ? tokens - historyTokens(now) : undefined));
    return this.phaseOf(ref.id, n);
  }

  // ── Acting: a tool call that waited (for approval, or across a restore) ────────────────────

  private async act(ref: AgentRef, n: number, call: PendingToolCall, settings: ConversationSettings, span: TurnSpan | undefined, abort: AbortSignal): Promise<void> {
    const waitingFor = this.turnAt(ref, n, 'acting');
    if (typeof waitingFor === 'string') return;
    // A call whose step commits is recorded by that step (as timed out when it answered after
    // its deadline). One whose step failed changed nothing: its error is recorded now, unless its
    // step, still running when the caller gave up, records it first.
    const record = {
      action: 'record_tool_result',
      skill: CONVERSATION,
      params: { turn: n, toolCallId: call.toolCallId, ok: true, until: toolDeadline(Date.now(), settings), late: lateError(ref.id, call.tool, settings) },
    };
    if (call.preApprovedBy !== undefined) this.host.diagnose(ref.id, preApprovedNote(ref.id, n, { ...call, preApprovedBy: call.preApprovedBy }));
    const outcome = await this.runTool(ref, n, call, settings, record, span, abort).catch((error: unknown) => {
      if (error instanceof RuntimeError && error.code === 'agent_stopped') return undefined;
      throw error;
    });
    const still = this.turnAt(ref, n, 'acting');
    if (outcome && !outcome.ok && typeof still !== 'string' && still.pending.length === waitingFor.pending.length) {
      await this.record(ref, n, 'record_tool_result', { turn: n, toolCallId: call.toolCallId, ok: false, error: outcome.error, ifNext: true });
    }
  }
}
