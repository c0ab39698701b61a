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
import * as restate from '@restatedev/restate-sdk';
import type { AgentDefinition } from '../core/agent-definition.js';
import type { Agent, AgentData } from '../core/agent-value.js';
import { describeThrown, errorInfo, toErrorInfo, type ErrorInfo } from '../core/errors.js';
import type { InstructionObject } from '../core/instruction.js';
import { agentToolset } from '../core/toolset.js';
import { ChatSignals, CONVERSATION, conversationConfigSchema, type ChatMessage, type ChatUsage, type ConversationSettings, type ConversationState, type PendingToolCall, type TurnRecord } from '../model/conversation.js';
import { callsRun, checkCompactors, checkModels, classifyModelError, historyTokens, keepFrom, modelTools, overBudget, plain, refusedCallSignals, retryWait } from '../model/model-call.js';
import { preApprovedNote, toolFailure, toolLimit, unknownModel, waiting, type ModelProblem, type ModelTools, type WaitingCall } from '../model/model-call.js';
import { answerMessages, askModel, errorResult, modelWarned, partsDropped } from '../model/model-step.js';
import { loadAi, type AiModule } from '../model/ai-sdk.js';
import type { ChatModel, Compactor } from '../model/models.js';
import { buildSystemPrompt } from '../model/prompt.js';
import { StepAbort } from '../model/step-abort.js';
import { summarizeHistory } from '../model/summary.js';
import { noAnswerError } from '../runtime/errors.js';
import { mountedNames, UNREADABLE, type HostSkills } from './skills.js';
import { TURNS, type Announcement, type Answer, type TurnRequest, type TurnStepAnswer, type TurnStepRequest } from './protocol.js';

/** The model options of `restateAgents`. */
export interface TurnHostOptions {
  /** Language models by name: a conversation's `model` config names one (default `default`). */
  models?: Readonly<Record<string, ChatModel>>;
  /** Compactors by name: a conversation's `history.strategy` may name one. */
  compactors?: Readonly<Record<string, Compactor>>;
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

/** The virtual object that runs the model turns of the agents of `definitions`. */
export function turnsObject(definitions: ReadonlyMap<string, AgentDefinition<object>>, skills: HostSkills, options: TurnHostOptions) {
  const models = checkModels(options.models);
  const compactors = checkCompactors(options.compactors);
  return restate.object({
    name: TURNS,
    // Only agents start turns.
    options: { ingressPrivate: true },
    handlers: {
      run: async (ctx: restate.ObjectContext, request: TurnRequest): Promise<void> => {
        const definition = definitions.get(request?.definition);
        if (!definition || typeof request.turn !== 'number') {
          ctx.console.warn(`skillstate: turn request for agent '${ctx.key}' names no definition this host serves (${JSON.stringify(request)})`);
          return;
        }
        try {
          await new RestateTurn(ctx, definition, skills, models, compactors, request.turn, typeof request.turnId === 'string' ? request.turnId : undefined).run();
        } catch (error) {
          // The agent cancelled the turn (and ended it in its state already). This attempt ends
          // here, which aborts a model request still under way.
          if (!(error instanceof restate.CancelledError)) throw error;
          ctx.console.info(`skillstate: agent '${ctx.key}': turn ${request.turn} was cancelled`);
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

/** Asks the model for one step, offering the tools without running them: the host runs them through the agent. */
async function askForStep(
  ai: AiModule,
  model: ChatModel,
  settings: ConversationSettings,
  system: string,
  messages: readonly ChatMessage[],
  tools: ModelTools,
  /** Aborted when the invocation's attempt ends: the turn was cancelled, or the process is going. */
  attemptOver: AbortSignal,
): Promise<StepAnswer> {
  const request = new StepAbort(settings.modelTimeout, attemptOver);
  try {
    const answer = await askModel(model, {
      system,
      messages,
      tools: tools.tools,
      temperature: settings.temperature,
      maxOutputTokens: settings.maxOutputTokens,
      // The attempt ends early when the invocation is cancelled (the turn was cancelled).
      abortSignal: request.signal,
    });
    // Calls that cannot run are answered in the step; the others wait for the host to run them.
    const refused = answer.calls.flatMap((call) => (call.problem !== undefined ? [{ call, problem: call.problem }] : []));
    return {
      ok: true,
      messages: plain(answerMessages(answer, refused.map(({ call, problem }) => errorResult(call, problem.message)))),
      usage: answer.usage,
      calls: answer.calls.length,
      pending: answer.calls.filter((call) => call.problem === undefined).map((call) => waiting(call, tools)),
      warnings: answer.warnings.map((warning) => modelWarned(model, warning)),
      ...(answer.dropped.length > 0 ? { dropped: partsDropped(model, answer.dropped) } : {}),
      ...(refused.length > 0 ? { refused: refused.map(({ call, problem }) => refusedCallSignals({ ...call, problem })) } : {}),
    };
  } catch (error) {
    return { ok: false, problem: classifyModelError(ai, error, request.timedOut, settings, model) };
  } finally {
    request.release();
  }
}

/** One turn of one agent, moved on as far as it goes within one invocation. */
class RestateTurn {
  /** The agent's data as the last step left it (undefined: read it from the agent; null: it is gone). */
  private data: AgentData<object> | null | undefined;
  /** The history was compacted for the model call to come: it is not compacted again before it. */
  private compacted = false;
  /** The `allowed-tools` notes already said in this invocation (the tools are prepared again at every step). */
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
  ) {}

  /** Runs the turn until it waits for approval or is over (answered, failed, cancelled, or the agent is gone). */
  async run(): Promise<void> {
    let warnedStream = false;
    for (;;) {
      const agent = await this.agent();
      const conversation = agent && conversationOf(agent);
      if (conversation && 'problem' in conversation) {
        await this.fail(errorInfo('invalid_config', `agent '${this.ctx.key}': the conversation's config is not valid: ${conversation.problem}`));
        return;
      }
      const turn = conversation?.slice.turn;
      if (!agent || !conversation || !turn || !this.isMine(turn)) return;
      if (conversation.settings.stream && !warnedStream) {
        warnedStream = true;
        this.ctx.console.warn(`skillstate: agent '${this.ctx.key}': streaming is not served on the Restate host; turn ${this.n} answers whole (no chat.delta signals)`);
      }
      let going: boolean;
      if (turn.status === 'awaiting-approval') return;
      // The calls past the limit do not run: the turn ends, and they get an error result.
      if (turn.status === 'acting' && callsRun(turn) >= conversation.settings.maxToolCalls) going = await this.fail(toolLimit(this.n, conversation.settings.maxToolCalls));
      else if (turn.status === 'acting') going = await this.act(agent, turn.pending[0]!, conversation.settings.toolTimeout);
      else going = await this.think(agent, conversation.slice, turn, conversation.settings);
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
   * `timeout`, an answer that takes longer is not waited for: the step still runs (it is the
   * agent's), and the agent is read again afterwards.
   */
  private async runOnAgent(instruction: InstructionObject, timeout?: number, announce?: Announcement[]): Promise<Answer> {
    const request: TurnStepRequest = { instructions: instruction, ...(this.turnId !== undefined ? { turnId: this.turnId } : {}), ...(announce?.length ? { announce } : {}) };
    for (let attempt = 0; ; attempt++) {
      const call = this.ctx.genericCall<unknown, TurnStepAnswer>({ service: this.definition.name, method: 'turnStep', key: this.ctx.key, parameter: request, inputSerde: json, outputSerde: json });
      let stepped: TurnStepAnswer;
      try {
        stepped = await (timeout === undefined ? call : call.orTimeout(timeout));
      } catch (error) {
        if (!(error instanceof restate.TimeoutError)) throw error;
        this.data = undefined;
        const what = `run of '${String(instruction.action)}'`;
        return { ok: false, error: noAnswerError(what, this.ctx.key, timeout ?? Infinity, { subject: this.ctx.key }) };
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
      return status !== 'answered' && status !== 'failed' && status !== 'cancelled' && status !== 'awaiting-approval';
    }
    // The turn ended meanwhile (cancelled, or the agent stopped): nothing more to do.
    if ((answer.error.code === 'action_failed' && answer.error.details?.reason === 'no_turn') || answer.error.code === 'unknown_agent') return false;
    if (action !== 'fail_turn') return this.fail(answer.error);
    this.ctx.console.warn(`skillstate: agent '${this.ctx.key}': turn ${this.n} could not be ended (${answer.error.code}): ${answer.error.message}`);
    return false;
  }

  private fail(error: ErrorInfo): Promise<boolean> {
    return this.record('fail_turn', { turn: this.n, error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) } });
  }

  // ── Thinking: one model call ────────────────────────────────────────────────────────────

  private async think(agent: Agent<object>, slice: ConversationState, turn: TurnRecord, settings: ConversationSettings): Promise<boolean> {
    // Tool calls that ran in a model step whose record is missing (a snapshot taken in between,
    // handed on from the in-process runtime): into the history, without running them again.
    if (turn.ran.length > 0) return this.record('settle_step', { turn: this.n });
    if (settings.maxTokens !== undefined && slice.usage.totalTokens >= settings.maxTokens) return this.fail(overBudget(this.ctx.key, slice.usage.totalTokens, settings.maxTokens));
    const model = this.models[settings.model];
    if (!model) return this.fail(unknownModel(this.ctx.key, settings.model, Object.keys(this.models), HINT));
    let ai: AiModule;
    try {
      ai = await loadAi();
    } catch (error) {
      return this.fail(toErrorInfo(error, 'model_unavailable'));
    }
    if (!this.compacted) {
      const compacted = await this.compactIfNeeded(slice.messages, settings, model, ai);
      if (compacted !== undefined) {
        this.compacted = true;
        return compacted;
      }
    }
    this.compacted = false;

    let tools: ModelTools;
    try {
      tools = modelTools(agent, agentToolset(agent));
    } catch (error) {
      return this.fail(errorInfo('model_failed', `turn ${this.n} of agent '${this.ctx.key}' failed unexpectedly preparing the model call: ${describeThrown(error)}`));
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
    if ('failed' in prompt) return this.fail(errorInfo('model_failed', `turn ${this.n} of agent '${this.ctx.key}' failed unexpectedly building the system prompt: ${prompt.failed}`));
    const system = prompt.text;
    for (let attempt = 0; ; attempt++) {
      const what = `model call: turn ${this.n}, step ${turn.steps + 1}${attempt ? `, retry ${attempt}` : ''}`;
      const attemptOver = this.ctx.request().attemptCompletedSignal;
      const answer = await this.ctx.run(what, () => askForStep(ai, model, settings, system, slice.messages, tools, attemptOver), { serde: json as restate.Serde<StepAnswer> });
      if (answer.ok) {
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
      if (!answer.problem.retryable || attempt >= settings.retries) return this.fail(answer.problem.error);
      const wait = retryWait(answer.problem, settings, attempt);
      this.ctx.console.warn(`skillstate: agent '${this.ctx.key}', turn ${this.n}: ${answer.problem.error.message}; trying again in ${wait} ms (retry ${attempt + 1} of ${settings.retries})`);
      await this.ctx.sleep(wait);
      // The turn may have been cancelled, or the agent stopped, meanwhile.
      this.data = undefined;
      const now = await this.agent();
      const current = now && conversationOf(now);
      if (!current || 'problem' in current || !current.slice.turn || !this.isMine(current.slice.turn) || current.slice.turn.status !== 'thinking') return false;
    }
  }

  /**
   * Compacts the history when it passes its budget. Resolves undefined when nothing was done;
   * otherwise whether the turn goes on (it is read again before the model is asked).
   */
  private async compactIfNeeded(messages: readonly ChatMessage[], settings: ConversationSettings, model: ChatModel, ai: AiModule): Promise<boolean | undefined> {
    const tokens = historyTokens(messages);
    if (tokens <= settings.history.maxTokens) return undefined;
    const remove = keepFrom(messages, settings.history.keepTurns);
    if (remove <= 0) {
      this.ctx.console.warn(`skillstate: agent '${this.ctx.key}': the history (about ${tokens} tokens) is over its budget of ${settings.history.maxTokens}, but only the latest ${settings.history.keepTurns} turn(s) are left, which are kept`);
      return undefined;
    }
    const strategy = settings.history.strategy;
    let summary: string | undefined;
    if (strategy !== 'drop') {
      const summarised = await this.ctx.run(
        `history summary: turn ${this.n}`,
        async (): Promise<{ summary?: string; failed?: string }> => {
          const request = new StepAbort(settings.modelTimeout);
          const abortSignal = request.signal;
          try {
            if (strategy === 'summarize') {
              return { summary: (await summarizeHistory(ai, model, messages.slice(0, remove), settings, abortSignal)).text };
            }
            const compactor = this.compactors[strategy];
            if (!compactor) throw new Error(`no compactor named '${strategy}' was given to the host (known: ${Object.keys(this.compactors).join(', ') || 'none'})`);
            const out = await compactor({ agent: this.ctx.key, messages, keepFrom: remove, model, abortSignal });
            return out.summary !== undefined ? { summary: out.summary } : {};
          } catch (error) {
            return { failed: describeThrown(error) };
          } finally {
            request.release();
          }
        },
        { serde: json as restate.Serde<{ summary?: string; failed?: string }> },
      );
      if (summarised.failed !== undefined) {
        this.ctx.console.warn(`skillstate: agent '${this.ctx.key}': summarising the history with '${strategy}' failed (${summarised.failed}); the older messages are dropped instead`);
      } else summary = summarised.summary;
    }
    const going = await this.record('compact', summary ? { remove, summary } : { remove });
    this.ctx.console.info(`skillstate: agent '${this.ctx.key}': ${remove} older message(s) were ${summary ? 'summarised' : 'dropped'} (strategy '${strategy}')`);
    return going;
  }

  // ── Acting: the next tool call ──────────────────────────────────────────────────────────

  /** Runs the next tool call through the agent (a step of its own) and records its result. */
  private async act(agent: Agent<object>, call: PendingToolCall, toolTimeout: number): Promise<boolean> {
    if (call.approval === 'denied') return this.record('record_tool_result', { turn: this.n, toolCallId: call.toolCallId, ok: false });
    const converted = agentToolset(agent).toInstruction(call.tool, call.args);
    // The agent's subscribers hear of the call before it runs, and of what the model gets after.
    const progress = (type: string, data: Record<string, unknown>): Announcement => ({
      type,
      data: { agent: this.ctx.key, turn: this.n, toolCallId: call.toolCallId, tool: call.tool, ...data },
    });
    const before = progress(ChatSignals.toolCall, { args: call.args, ...(call.preApprovedBy !== undefined ? { preApprovedBy: call.preApprovedBy } : {}) });
    if (call.preApprovedBy !== undefined) this.ctx.console.info(`skillstate: ${preApprovedNote(this.ctx.key, this.n, { ...call, preApprovedBy: call.preApprovedBy }).message}`);
    let outcome: { ok: true; output: unknown } | { ok: false; error: { code: string; message: string } };
    let announced = false;
    if (!converted.ok) outcome = { ok: false, error: toolFailure(converted.error) };
    else {
      const answer = await this.runOnAgent(converted.instruction, toolTimeout, [before]);
      announced = true;
      if (answer.ok) outcome = { ok: true, output: answer.value ?? null };
      else if (answer.error.code === 'unknown_agent') return false;
      else outcome = { ok: false, error: toolFailure(answer.error) };
    }
    const after = progress(ChatSignals.toolResult, outcome);
    return this.record('record_tool_result', { turn: this.n, toolCallId: call.toolCallId, ...outcome }, announced ? [after] : [before, after]);
  }
}
