/**
 * Model turns on the Restate host. A conversation's turn signals (`chat.turn.started`, and
 * `chat.turn.resumed` after an approval) send the agent's turn to this virtual object, keyed by
 * agent id, which moves it on the way the in-process driver does: it reads the agent, asks the
 * model for one step, records the step through the agent's own `run` handler, runs the tool
 * calls the model asked for through the agent one by one (each recorded), and asks again, until
 * the turn is answered, fails, is cancelled or waits for approval.
 *
 * Each model call runs inside `ctx.run`, so its answer is journaled: a service process killed
 * mid-turn resumes where it was without asking the model again, and a retry waits on a durable
 * timer. Every change to the conversation is a step of the agent, so the agent's state in
 * Restate is the only record of the turn.
 */
import * as restate from './sdk.js';
import type { AgentDefinition } from '../core/agent-definition.js';
import type { Agent, AgentData } from '../core/agent-value.js';
import { describeThrown, errorInfo, toErrorInfo, type ErrorInfo } from '../core/errors.js';
import type { InstructionObject } from '../core/instruction.js';
import type { Signal } from '../core/signal.js';
import { agentToolset } from '../core/toolset.js';
import { ChatSignals, CONVERSATION, conversationConfigSchema, type ChatMessage, type ChatUsage, type ConversationSettings, type ConversationState, type PendingToolCall, type TurnRecord } from '../model/conversation.js';
import { checkCompactors, checkModels, classifyModelError, modelTools, plain, preApprovedNote, refusedCallSignals, type ModelProblem, type ModelTools, type WaitingCall } from '../model/model-call.js';
import { askModel, modelWarned, partsDropped } from '../model/model-step.js';
import { loadAi, type AiModule } from '../model/ai-sdk.js';
import type { ChatModel, Compactor } from '../model/models.js';
import { buildSystemPrompt } from '../model/prompt.js';
import { StepAbort, untilAborted } from '../model/step-abort.js';
import { summarizeHistory } from '../model/summary.js';
import type { ToolError } from '../model/tool-result.js';
import * as engine from '../model/turn-engine.js';
import { startTurnSpan, within, type TurnSpan } from '../model/turn-spans.js';
import { contentRecorder, type ContentRecorder, type TelemetryOptions } from '../telemetry/content.js';
import { observing } from '../telemetry/otel.js';
import { activeTraceHeaders } from '../telemetry/traceparent.js';
import { mountedNames, UNREADABLE, type HostSkills } from './skills.js';
import { TURN_INVOCATION_KEY, TURNS, type Announcement, type Answer, type TurnRequest, type TurnStepAnswer, type TurnStepRequest } from './protocol.js';

/** The model options of `restateAgents`. */
export interface TurnHostOptions {
  /** Language models by name: a conversation's `model` config names one (default `default`). */
  models?: Readonly<Record<string, ChatModel>>;
  /** Compactors by name: a conversation's `history.strategy` may name one. */
  compactors?: Readonly<Record<string, Compactor>>;
  /** What the turn's OpenTelemetry spans may record beyond names, counts and codes (docs/observability.md). */
  telemetry?: TelemetryOptions;
}

/** What one model call answered, as the journal keeps it (plain JSON). */
type StepAnswer =
  | {
      ok: true;
      messages: unknown[];
      usage: ChatUsage;
      calls: number;
      pending: WaitingCall[];
      /** What the provider warned about, in words (absent from steps journaled before it was kept). */
      warnings?: string[];
      /** The parts of the answer the history could not keep, in words, when there were any. */
      dropped?: string;
      /** The calls answered without running (unknown tool, input not JSON), as the tool signals tell them. */
      refused?: { call: Record<string, unknown>; result: Record<string, unknown> }[];
    }
  | { ok: false; problem: ModelProblem };

const json = restate.serde.json;

/** How long a turn waits before it asks again for an agent whose skill cannot be read: 1 s, doubling up to 30 s. */
const unreadableWait = (attempt: number) => Math.min(1_000 * 2 ** attempt, 30_000);

const HINT = 'pass models to restateAgents({ models: { default: ... } })';

/** What the turn object's quiet time adds to the longest model call: Restate's own default quiet time. */
const QUIET_MARGIN = 60_000;

/**
 * How long a turn's invocation may send Restate nothing before Restate asks it to suspend: the
 * longest `modelTimeout` of the conversations the served definitions attach (two minutes by
 * default), and a minute.
 *
 * A model call sends Restate nothing while it runs, and cannot be suspended. Once Restate has
 * asked the invocation to suspend, it passes it no more notifications, its cancellation included:
 * a turn cancelled then would have its model request run to its end instead of being aborted.
 * Restate's default (a minute) is shorter than a model call may take.
 */
function quietTime(definitions: ReadonlyMap<string, AgentDefinition<object>>): { ms: number; longestCall: number } {
  let longestCall = conversationConfigSchema.parse({}).modelTimeout;
  for (const definition of definitions.values()) {
    const settings = conversationConfigSchema.safeParse(definition.skillConfig(CONVERSATION) ?? {});
    if (settings.success) longestCall = Math.max(longestCall, settings.data.modelTimeout);
  }
  return { ms: longestCall + QUIET_MARGIN, longestCall };
}

/** The virtual object that runs the model turns of the agents of `definitions`. */
export function turnsObject(definitions: ReadonlyMap<string, AgentDefinition<object>>, skills: HostSkills, options: TurnHostOptions) {
  const models = checkModels(options.models);
  const compactors = checkCompactors(options.compactors);
  const content = contentRecorder(options.telemetry);
  const quiet = quietTime(definitions);
  return restate.object({
    name: TURNS,
    // Only agents start turns; a cancel must reach a model call however long it takes (see quietTime).
    options: { ingressPrivate: true, inactivityTimeout: quiet.ms },
    handlers: {
      run: async (ctx: restate.ObjectContext, request: TurnRequest): Promise<void> => {
        const definition = definitions.get(request?.definition);
        if (!definition || typeof request.turn !== 'number') {
          ctx.console.warn(`skillstate: turn request for agent '${ctx.key}' names no definition this host serves (${JSON.stringify(request)})`);
          return;
        }
        // Aborted once this attempt's work on the turn is over, however it ends: a model request
        // still under way (the turn was cancelled) is aborted here and now, not once Restate has
        // closed the attempt's stream, which can take a minute.
        const over = new AbortController();
        try {
          const trace = { traceparent: request.traceparent, tracestate: request.tracestate };
          await new RestateTurn(ctx, definition, skills, models, compactors, request.turn, typeof request.turnId === 'string' ? request.turnId : undefined, content, trace, quiet, over.signal).run();
        } catch (error) {
          // The agent cancelled the turn (and ended it in its state already).
          if (!(error instanceof restate.CancelledError)) throw error;
          ctx.console.info(`skillstate: agent '${ctx.key}': turn ${request.turn} was cancelled`);
        } finally {
          over.abort();
        }
      },
    },
  });
}

/** The conversation slice of an agent and its settings, or why its config cannot be read. */
function conversationOf(agent: Agent<object>): { slice: ConversationState; settings: ConversationSettings } | { problem: string } | undefined {
  const slice = (agent.state as { [CONVERSATION]?: ConversationState })[CONVERSATION];
  if (slice === undefined) return undefined;
  const config = agent.mounted.find((mounted) => mounted.name === CONVERSATION)?.config ?? {};
  const settings = conversationConfigSchema.safeParse(config);
  return settings.success ? { slice, settings: settings.data } : { problem: settings.error.message };
}

/** Asks the model for one step, offering the tools without running them: the host runs them through the agent, one step each. */
async function askForStep(
  ai: AiModule,
  model: ChatModel,
  settings: ConversationSettings,
  system: string,
  turn: TurnRecord,
  messages: readonly ChatMessage[],
  tools: ModelTools,
  /** Abort when the invocation's work on the turn is over: the turn was cancelled, or the process is going. */
  over: readonly AbortSignal[],
  span: TurnSpan | undefined,
): Promise<StepAnswer> {
  const request = new StepAbort(settings.modelTimeout, ...over);
  const call = span?.modelCall(model, { system, messages, temperature: settings.temperature, maxOutputTokens: settings.maxOutputTokens });
  try {
    const answer = await within(call, () =>
      askModel(model, {
        system,
        messages,
        tools: tools.tools,
        temperature: settings.temperature,
        maxOutputTokens: settings.maxOutputTokens,
        // The attempt ends early when the invocation is cancelled (the turn was cancelled).
        abortSignal: request.signal,
      }),
    );
    call?.answered(answer);
    // Calls that cannot run are answered in the step; the others wait for the host to run them.
    const plans = engine.planCalls(answer, tools, turn, settings, false);
    const refused = plans.flatMap((plan) => (plan.kind === 'refuse' ? [plan] : []));
    return {
      ok: true,
      messages: plain(engine.stepMessages(answer, refused.map(engine.refusedPart))),
      usage: answer.usage,
      calls: answer.calls.length,
      pending: plans.flatMap((plan) => (plan.kind === 'wait' ? [plan.call] : [])),
      warnings: answer.warnings.map((warning) => modelWarned(model, warning)),
      ...(answer.dropped.length > 0 ? { dropped: partsDropped(model, answer.dropped) } : {}),
      ...(refused.length > 0 ? { refused: refused.map((plan) => refusedCallSignals(plan.call)) } : {}),
    };
  } catch (error) {
    const problem = classifyModelError(ai, error, request.timedOut, settings, model);
    call?.failed(problem.error);
    return { ok: false, problem };
  } finally {
    request.release();
  }
}

/** One turn of one agent, moved on as far as it goes within one invocation. */
class RestateTurn {
  /** The agent's data as the last step left it (undefined: read it from the agent; null: it is gone). */
  private data: AgentData<object> | null | undefined;
  /** The notes already said in this invocation (`allowed-tools` ones: the tools are prepared again at every step; model calls longer than the turn object covers). */
  private readonly noted = new Set<string>();

  constructor(
    private readonly ctx: restate.ObjectContext,
    private readonly definition: AgentDefinition<object>,
    private readonly skills: HostSkills,
    private readonly models: Readonly<Record<string, ChatModel>>,
    private readonly compactors: Readonly<Record<string, Compactor>>,
    private readonly n: number,
    /** The turn's id: a turn of the same number of an agent spawned anew under this id is another turn. */
    private readonly turnId: string | undefined,
    private readonly content: ContentRecorder,
    /** The trace of the step that started or resumed the turn. */
    private readonly trace: { traceparent?: string | undefined; tracestate?: string | undefined },
    /** How long the invocation may be quiet, and the longest model call that covers. */
    private readonly quiet: { ms: number; longestCall: number },
    /** Aborted when the handler is done with the turn (it returned, or the turn was cancelled). */
    private readonly handled: AbortSignal,
  ) {}

  /** What ends model work early: the handler done with the turn, or the invocation's attempt over (the process is going). */
  private get over(): AbortSignal[] {
    return [this.handled, this.ctx.request().attemptCompletedSignal];
  }

  /** The span of this invocation's work on the turn, while tracing. */
  private span: TurnSpan | undefined;
  /** Where the last step recorded left the turn. */
  private phase: string | undefined;
  /** The error the turn was failed with, by this invocation. */
  private failure: ErrorInfo | undefined;

  /** Moves the turn on (see `moves`), inside a turn span while tracing. */
  async run(): Promise<void> {
    const span = observing() ? startTurnSpan({ agentId: this.ctx.key, definition: this.definition.name, n: this.n, ...this.trace }, this.content) : undefined;
    if (span === undefined) return this.moves();
    this.span = span;
    try {
      await span.within(() => this.moves());
    } catch (error) {
      span.finish('crashed', { code: error instanceof restate.CancelledError ? 'cancelled' : 'signal_failed', message: describeThrown(error) });
      throw error;
    }
    span.finish(this.phase ?? 'moved', this.failure);
  }

  /**
   * Moves the turn on, move after move as the turn engine decides them, until it waits for
   * approval or is over (answered, failed, cancelled, or the agent is gone).
   */
  private async moves(): Promise<void> {
    let warnedStream = false;
    let compacted = false;
    const modelNames = Object.keys(this.models);
    for (;;) {
      const agent = await this.agent();
      const conversation = agent && conversationOf(agent);
      if (conversation && 'problem' in conversation) {
        await this.fail(errorInfo('invalid_config', `agent '${this.ctx.key}': the conversation's config is not valid: ${conversation.problem}`));
        return;
      }
      const turn = conversation?.slice.turn;
      if (!agent || !conversation || !turn || !this.isMine(turn)) return;
      const { slice, settings } = conversation;
      if (settings.stream && !warnedStream) {
        warnedStream = true;
        this.ctx.console.warn(`skillstate: agent '${this.ctx.key}': streaming is not served on the Restate host; turn ${this.n} answers whole (no chat.delta signals)`);
      }
      const move = engine.nextMove({ agentId: this.ctx.key, turn, messages: slice.messages, usage: slice.usage, settings, models: modelNames, modelHint: HINT, compacted });
      let going: boolean;
      switch (move.kind) {
        case 'wait':
          this.phase = turn.status;
          this.span?.waitsForApproval(turn.pending.filter((call) => call.approval === 'needed'));
          return;
        case 'fail':
          await this.fail(move.error);
          return;
        case 'settle':
          going = await this.record('settle_step', { turn: this.n });
          break;
        case 'compact':
          going = await this.compact(move, slice.messages, settings);
          compacted = true;
          break;
        case 'ask':
          for (const note of move.notes) this.ctx.console.warn(`skillstate: ${note.message}`);
          compacted = false;
          going = await this.ask(agent, turn, slice.messages, settings);
          break;
        case 'deny':
          this.span?.denied(move.call.toolCallId, move.call.tool);
          going = await this.record('record_tool_result', { turn: this.n, toolCallId: move.call.toolCallId, ok: false });
          break;
        case 'run':
          going = await this.act(agent, move.call, settings);
          break;
      }
      if (!going) return;
    }
  }

  private isMine(turn: TurnRecord): boolean {
    return turn.n === this.n && (this.turnId === undefined || turn.id === this.turnId);
  }

  // ── The agent, through its own handlers ─────────────────────────────────────────────────

  private callAgent<T>(method: string, parameter: unknown): Promise<T> {
    return this.ctx.genericCall<unknown, T>({ service: this.definition.name, method, key: this.ctx.key, parameter, inputSerde: json, outputSerde: json });
  }

  /**
   * A step of the agent running `instruction`; remembers the agent as the step left it. Given a
   * `timeout`, an answer that takes longer is not waited for (the answer is then `timeout.error`):
   * the step still runs (it is the agent's), and the agent is read again afterwards.
   */
  private async runOnAgent(instruction: InstructionObject, timeout?: { ms: number; error: ToolError }, announce?: Announcement[]): Promise<Answer> {
    const request: TurnStepRequest = { instructions: instruction, ...(this.turnId !== undefined ? { turnId: this.turnId } : {}), ...(announce?.length ? { announce } : {}), ...activeTraceHeaders() };
    for (let attempt = 0; ; attempt++) {
      const call = this.ctx.genericCall<unknown, TurnStepAnswer>({ service: this.definition.name, method: 'turnStep', key: this.ctx.key, parameter: request, inputSerde: json, outputSerde: json });
      let stepped: TurnStepAnswer;
      try {
        stepped = await (timeout === undefined ? call : call.orTimeout(timeout.ms));
      } catch (error) {
        if (!(error instanceof restate.TimeoutError) || timeout === undefined) throw error;
        this.data = undefined;
        return { ok: false, error: errorInfo('timeout', timeout.error.message, { subject: this.ctx.key }) };
      }
      this.data = stepped.agent;
      const answer = stepped.answer;
      // The agent cannot be read in the process that served the step (a skill folder missing
      // there): the turn waits, on a durable timer, and asks again. Stopping the agent ends it.
      if (answer.ok || answer.error.code !== 'unknown_skill' || answer.error.details?.reason !== UNREADABLE) return answer;
      const wait = unreadableWait(attempt);
      this.ctx.console.warn(`skillstate: agent '${this.ctx.key}', turn ${this.n}: ${answer.error.message}; asking again in ${wait} ms`);
      await this.ctx.sleep(wait);
    }
  }

  /** The agent as the last step left it (read from Restate the first time), or undefined once it is gone. */
  private async agent(): Promise<Agent<object> | undefined> {
    if (this.data === undefined) {
      const answer = await this.callAgent<Answer>('snapshot', null);
      this.data = answer.ok ? (answer.value as AgentData<object>) : null;
    }
    if (this.data === null) return undefined;
    // A skill that cannot be read here: the turn waits on a durable timer, reading the agent
    // again each time (it may have been stopped, or the skill unmounted), until it can.
    for (let attempt = 0; ; attempt++) {
      const problem = await this.skills.readJournaled(this.ctx, 'read mounted skills', this.skills.fromFolders(mountedNames(this.data), this.definition));
      if (!problem) break;
      const wait = unreadableWait(attempt);
      this.ctx.console.warn(`skillstate: agent '${this.ctx.key}', turn ${this.n}: ${problem.message}; reading it again in ${wait} ms`);
      await this.ctx.sleep(wait);
      const answer = await this.callAgent<Answer>('snapshot', null);
      this.data = answer.ok ? (answer.value as AgentData<object>) : null;
      if (this.data === null) return undefined;
    }
    const restored = this.definition.restore(this.data, { skills: this.skills });
    if (!restored.ok) {
      this.ctx.console.warn(`skillstate: agent '${this.ctx.key}' cannot be restored to run turn ${this.n}: ${restored.error.message}`);
      return undefined;
    }
    return restored.value;
  }

  /**
   * Runs one of the conversation's actions as a step of the agent. Resolves true while the turn
   * goes on; false once it is over (the action says so, or the turn ended meanwhile).
   */
  private async record(action: string, params: Record<string, unknown>, announce?: Announcement[]): Promise<boolean> {
    const instruction: InstructionObject = { action, skill: CONVERSATION, params };
    const answer = await this.runOnAgent(instruction, undefined, announce);
    if (answer.ok) {
      const status = (answer.value as { status?: string } | null)?.status;
      if (status !== undefined) this.phase = status;
      return status !== 'answered' && status !== 'failed' && status !== 'cancelled' && status !== 'awaiting-approval';
    }
    // The turn ended meanwhile (cancelled, or the agent stopped): nothing more to do.
    if ((answer.error.code === 'action_failed' && answer.error.details?.reason === 'no_turn') || answer.error.code === 'unknown_agent') return false;
    if (action !== 'fail_turn') return this.fail(answer.error);
    this.ctx.console.warn(`skillstate: agent '${this.ctx.key}': turn ${this.n} could not be ended (${answer.error.code}): ${answer.error.message}`);
    return false;
  }

  private fail(error: ErrorInfo): Promise<boolean> {
    this.failure = error;
    return this.record('fail_turn', { turn: this.n, error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) } });
  }

  // ── Asking the model ────────────────────────────────────────────────────────────────────

  /** Asks the model for the next step (journaled, with retries on durable timers) and records it. */
  private async ask(agent: Agent<object>, turn: TurnRecord, messages: readonly ChatMessage[], settings: ConversationSettings): Promise<boolean> {
    const model = this.models[settings.model]!;
    let ai: AiModule;
    try {
      ai = await loadAi();
    } catch (error) {
      return this.fail(toErrorInfo(error, 'model_unavailable'));
    }
    let tools: ModelTools;
    try {
      tools = modelTools(agent, agentToolset(agent));
    } catch (error) {
      return this.fail(engine.crashedError(this.ctx.key, this.n, 'preparing the model call', describeThrown(error)));
    }
    for (const note of tools.preApprovals.diagnostics) {
      if (this.noted.has(note.message)) continue;
      this.noted.add(note.message);
      this.ctx.console.warn(`skillstate: agent '${this.ctx.key}', turn ${this.n}: ${note.message}`);
    }
    // The prompt reads skill bodies from their folders: journaled, so a replay in a process that
    // cannot read them now takes the path the first attempt took.
    const prompt = await this.ctx.run(
      `system prompt: turn ${this.n}, step ${turn.steps + 1}`,
      async (): Promise<{ text: string } | { failed: string }> => {
        try {
          return { text: (await buildSystemPrompt(agent, settings, turn.query, this.skills.documents(), undefined)).text };
        } catch (error) {
          return { failed: describeThrown(error) };
        }
      },
      { serde: json as restate.Serde<{ text: string } | { failed: string }> },
    );
    if ('failed' in prompt) return this.fail(engine.crashedError(this.ctx.key, this.n, 'building the system prompt', prompt.failed));
    this.noteLongCalls(settings);
    for (let attempt = 0; ; attempt++) {
      const what = `model call: turn ${this.n}, step ${turn.steps + 1}${attempt ? `, retry ${attempt}` : ''}`;
      const over = this.over;
      const answer = await this.ctx.run(what, () => askForStep(ai, model, settings, prompt.text, turn, messages, tools, over, this.span), { serde: json as restate.Serde<StepAnswer> });
      if (answer.ok) {
        const asking = answer.pending.filter((call) => call.needsApproval && call.preApprovedBy === undefined);
        if (asking.length > 0) this.span?.waitsForApproval(asking);
        // Said once: Restate's console is silent while an invocation replays its journal.
        for (const warning of answer.warnings ?? []) this.ctx.console.info(`skillstate: agent '${this.ctx.key}', turn ${this.n}: ${warning}`);
        if (answer.dropped !== undefined) this.ctx.console.warn(`skillstate: agent '${this.ctx.key}', turn ${this.n}: ${answer.dropped}`);
        // Followers of tool calls see the calls that cannot run fail, as the step records them.
        const announce = (answer.refused ?? []).flatMap((refused): Announcement[] => [
          { type: ChatSignals.toolCall, data: { agent: this.ctx.key, turn: this.n, ...refused.call } },
          { type: ChatSignals.toolResult, data: { agent: this.ctx.key, turn: this.n, ...refused.result } },
        ]);
        return this.record('record_step', { turn: this.n, messages: answer.messages, usage: answer.usage, calls: answer.calls, pending: answer.pending }, announce);
      }
      const after = engine.afterModelFailure(this.ctx.key, this.n, answer.problem, attempt, settings);
      if (after.kind === 'fail') return this.fail(after.error);
      this.ctx.console.warn(`skillstate: ${after.note.message}`);
      await this.ctx.sleep(after.wait);
      // The turn may have been cancelled, or the agent stopped, meanwhile.
      this.data = undefined;
      const now = await this.agent();
      const current = now && conversationOf(now);
      if (!current || 'problem' in current || !current.slice.turn || !this.isMine(current.slice.turn) || current.slice.turn.status !== 'thinking') return false;
    }
  }

  /**
   * Says, once an invocation, that the agent's model calls may last longer than the turn object
   * keeps Restate waiting (its conversation was mounted with a longer `modelTimeout` than any the
   * served definitions attach): a cancel then waits for the model's answer.
   */
  private noteLongCalls(settings: ConversationSettings): void {
    if (settings.modelTimeout <= this.quiet.longestCall) return;
    const note = `agent '${this.ctx.key}': its conversation's modelTimeout (${settings.modelTimeout} ms) is longer than the model calls the turn object keeps Restate waiting for (${this.quiet.longestCall} ms, the longest modelTimeout of the served definitions' conversations): a turn cancelled after ${this.quiet.ms} ms of a model call has its model request run to its end (attach a conversation with this modelTimeout to a served definition)`;
    if (this.noted.has(note)) return;
    this.noted.add(note);
    this.ctx.console.warn(`skillstate: ${note}`);
  }

  // ── Compaction ──────────────────────────────────────────────────────────────────────────

  /** Compacts the history as the turn engine asked. Resolves whether the turn goes on (it is read again before the model is asked). */
  private async compact(move: engine.TurnMove & { kind: 'compact' }, messages: readonly ChatMessage[], settings: ConversationSettings): Promise<boolean> {
    const compaction = this.span?.compaction(move.strategy, move.remove, move.tokens);
    try {
      return await within(compaction, () => this.compactHistory(move, messages, settings));
    } finally {
      compaction?.end();
    }
  }

  private async compactHistory(move: engine.TurnMove & { kind: 'compact' }, messages: readonly ChatMessage[], settings: ConversationSettings): Promise<boolean> {
    const { remove, strategy } = move;
    let summary: string | undefined;
    let usage: ChatUsage | undefined;
    if (strategy !== 'drop') {
      const model = this.models[settings.model]!;
      this.noteLongCalls(settings);
      // The summary ends early as a model call does (the turn was cancelled).
      const over = this.over;
      const summarised = await this.ctx.run(
        `history summary: turn ${this.n}`,
        async (): Promise<{ summary?: string; usage?: ChatUsage; failed?: string }> => {
          const request = new StepAbort(settings.modelTimeout, ...over);
          const abortSignal = request.signal;
          try {
            if (strategy === 'summarize') {
              const { text, usage } = await summarizeHistory(await loadAi(), model, messages.slice(0, remove), settings, abortSignal);
              return { summary: text, usage };
            }
            const compactor = this.compactors[strategy];
            if (!compactor) throw engine.unknownCompactor(strategy, Object.keys(this.compactors), 'host');
            const summary = engine.compactedSummary(strategy, await untilAborted(Promise.resolve(compactor({ agent: this.ctx.key, messages, keepFrom: remove, model, abortSignal })), abortSignal));
            return summary !== undefined ? { summary } : {};
          } catch (error) {
            return { failed: describeThrown(error) };
          } finally {
            request.release();
          }
        },
        { serde: json as restate.Serde<{ summary?: string; usage?: ChatUsage; failed?: string }> },
      );
      if (summarised.failed !== undefined) this.ctx.console.warn(`skillstate: ${engine.compactionFailed(this.ctx.key, strategy, summarised.failed).message}`);
      else ({ summary, usage } = summarised);
    }
    const going = await this.record('compact', engine.compactRecord(remove, summary, usage, true));
    this.ctx.console.info(`skillstate: agent '${this.ctx.key}': ${remove} older message(s) were ${summary ? 'summarised' : 'dropped'} (strategy '${strategy}')`);
    return going;
  }

  // ── Acting: the next tool call ──────────────────────────────────────────────────────────

  /** Runs the next tool call through the agent (a step of its own) and records its result. */
  private async act(agent: Agent<object>, call: PendingToolCall, settings: ConversationSettings): Promise<boolean> {
    const converted = agentToolset(agent).toInstruction(call.tool, call.args);
    // The agent's subscribers hear of the call before it runs, and of what the model gets after.
    const progress = (type: string, data: Record<string, unknown>): Announcement => ({
      type,
      data: { agent: this.ctx.key, turn: this.n, toolCallId: call.toolCallId, tool: call.tool, ...data },
    });
    const before = progress(ChatSignals.toolCall, { args: call.args, ...(call.preApprovedBy !== undefined ? { preApprovedBy: call.preApprovedBy } : {}) });
    if (call.preApprovedBy !== undefined) this.ctx.console.info(`skillstate: ${preApprovedNote(this.ctx.key, this.n, { ...call, preApprovedBy: call.preApprovedBy }).message}`);
    let outcome: { ok: true; output: unknown } | { ok: false; error: ToolError };
    let announced = false;
    if (!converted.ok) outcome = { ok: false, error: engine.toolFailure(converted.error) };
    else {
      const toolSpan = this.span?.toolCall(call.toolCallId, call.tool, call.args);
      const answer = await within(toolSpan, () => this.runOnAgent(converted.instruction, { ms: settings.toolTimeout, error: engine.lateError(this.ctx.key, call.tool, settings) }, [before]));
      announced = true;
      if (answer.ok) outcome = { ok: true, output: answer.value ?? null };
      else if (answer.error.code === 'unknown_agent') {
        toolSpan?.end(answer.error);
        return false;
      } else outcome = { ok: false, error: engine.toolFailure(answer.error) };
      toolSpan?.ran(outcome);
    }
    const after = progress(ChatSignals.toolResult, outcome);
    return this.record('record_tool_result', { turn: this.n, toolCallId: call.toolCallId, ...outcome }, announced ? [after] : [before, after]);
  }
}

// ── The agent's side: its turn signals move its turn on ──────────────────────────────────

/** Has the turn object move turn `n` of the agent of `definition` (the agent of `ctx`) on. */
function moveTurn(ctx: restate.ObjectContext, definition: string, n: number, turnId: string | undefined, trace?: Pick<Signal, 'traceparent' | 'tracestate'>): restate.InvocationHandle {
  const request: TurnRequest = { definition, turn: n, ...(turnId ? { turnId } : {}) };
  if (trace?.traceparent !== undefined) request.traceparent = trace.traceparent;
  if (trace?.tracestate !== undefined) request.tracestate = trace.tracestate;
  return ctx.genericSend({ service: TURNS, method: 'run', key: ctx.key, parameter: request, inputSerde: json });
}

/**
 * What an agent's step does about a signal it emitted: its own turn begun (`chat.turn.started`)
 * or resumed after an approval (`chat.turn.resumed`) is sent to the turn object; its turn
 * cancelled from outside (`chat.turn.cancelled`, not by the turn object itself) has the turn
 * object's invocation cancelled too, which aborts the model request under way.
 */
export async function followTurnSignal(ctx: restate.ObjectContext, definition: string, signal: Signal, fromTurn: boolean): Promise<void> {
  const data = signal.data as { agent?: unknown; turn?: unknown; turnId?: unknown } | undefined;
  if (data?.agent !== ctx.key || typeof data.turn !== 'number') return;
  if (signal.type === ChatSignals.started || signal.type === ChatSignals.resumed) {
    ctx.set(TURN_INVOCATION_KEY, await moveTurn(ctx, definition, data.turn, typeof data.turnId === 'string' ? data.turnId : undefined, signal).invocationId);
  } else if (signal.type === ChatSignals.cancelled && !fromTurn) await cancelTurnInvocation(ctx);
}

/** Cancels the turn object's invocation that moves this agent's turn on, if one was sent (the agent stops, or its turn was cancelled). */
export async function cancelTurnInvocation(ctx: restate.ObjectContext): Promise<void> {
  const running = await ctx.get<string>(TURN_INVOCATION_KEY);
  if (running === null) return;
  ctx.clear(TURN_INVOCATION_KEY);
  ctx.invocation(running as restate.InvocationId).cancel();
}

/** An agent spawned with a turn in flight (restored from elsewhere) has it moved on. */
export async function adoptTurn(ctx: restate.ObjectContext, definition: string, agent: Agent<object>): Promise<void> {
  const turn = (agent.state as { [CONVERSATION]?: ConversationState })[CONVERSATION]?.turn;
  if (turn && turn.status !== 'awaiting-approval') ctx.set(TURN_INVOCATION_KEY, await moveTurn(ctx, definition, turn.n, turn.id || undefined).invocationId);
}

/** The refusal of a step the turn object asked for on behalf of turn `turnId`, when the agent's turn in flight is another (or none). */
export function otherTurn(ctx: restate.ObjectContext, data: AgentData<object> | null, turnId: string): ErrorInfo | undefined {
  const turn = (data?.state as { [CONVERSATION]?: ConversationState } | undefined)?.[CONVERSATION]?.turn;
  if (data === null || turn?.id === turnId) return undefined;
  const now = turn ? `turn ${turn.n} (${turn.id}) is in flight` : 'no turn is in flight';
  return errorInfo('action_failed', `turn ${turnId} of agent '${ctx.key}' is over; ${now}`, { details: { reason: 'no_turn' } });
}
