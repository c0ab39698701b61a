/**
 * The Restate host: agent definitions served as Restate virtual objects, one per definition,
 * keyed by agent id. Each handler runs the same pure step engine as the in-process runtime over
 * the agent value kept in Restate state, calls user code inside `ctx.run` (journaled, never
 * repeated on replay) and maps the step's effects to Restate sends. A failed step writes
 * nothing: Restate state changes only when the step succeeded.
 *
 * Never holds agents in memory between invocations: Restate's state is the only copy.
 */
import './polyfill.js';
import * as restate from './sdk.js';
import type { AgentDefinition } from '../core/agent-definition.js';
import { Agent, type AgentData } from '../core/agent-value.js';
import type { Effect, EffectType } from '../core/effects.js';
import { describeThrown, errorInfo, type ErrorInfo } from '../core/errors.js';
import { plainInstructions } from '../core/instruction.js';
import type { InvokeUserCode, UserCodeCall } from '../core/invoke.js';
import { createSignal, signalProblem, type Signal } from '../core/signal.js';
import type { AnySkill } from '../core/skill.js';
import type { SkillResolver } from '../core/skill-registry.js';
import { requiredByError } from '../core/mount.js';
import { stepAgent, type StepOutcome, type WorkItem } from '../engine/index.js';
import { RuntimeError } from '../core/runtime-error.js';
import { fromEntry, toEntry, type JournalEntry } from './journal.js';
import {
  CHILDREN_KEY,
  DEFERRED_BY_KEY,
  DEFERRED_KEY,
  DIRECTORY,
  PARENT_KEY,
  REPLIES,
  replyKey,
  STATE_KEY,
  SUBSCRIBERS_KEY,
  TURNS,
  type AgentAddress,
  type Announcement,
  type Answer,
  type CallAnswer,
  type MountRequest,
  type SpawnRequest,
  type StopRequest,
  type TurnStepRequest,
  type TurnStepAnswer,
} from './protocol.js';
import { HostSkills, mountedNames } from './skills.js';
import { observing, within } from '../telemetry/otel.js';
import { sentWith, StepSpan, subjectOf, type StepSubject } from '../telemetry/step-span.js';
import { tracedAround } from '../telemetry/user-code.js';
import { adoptTurn, cancelTurnInvocation, followTurnSignal, otherTurn, turnsObject, type TurnHostOptions } from './turns.js';

/** A committed step whose effects are being carried out, as each handler sees it. */
interface CarriedStep {
  readonly ctx: restate.ObjectContext;
  /** The id of the called signal whose answer the step may defer. */
  readonly callId: string | undefined;
  /** The step is one the turn object asked for. */
  readonly fromTurn: boolean;
  /** A `stop` effect stopped the agent itself: done once every effect is carried out. */
  stopSelf: boolean;
  /** Where the caller finds the answer, once a `defer_reply` effect deferred it. */
  deferred: CallAnswer | undefined;
}

/** One handler per kind of effect (as the in-process runtime has): a kind without one does not compile. */
type RestateEffectHandlers = {
  readonly [K in EffectType]: (effect: Extract<Effect, { type: K }>, step: CarriedStep) => Promise<void> | void;
};

/** Options of `restateAgents`. */
export interface RestateAgentsOptions extends TurnHostOptions {
  /** The agent definitions to serve: one virtual object each, named after the definition. */
  definitions: readonly AgentDefinition<object>[];
  /** Skills that `mount` may name, besides those the definitions attach. */
  skills?: readonly AnySkill[];
  /**
   * Where else skills are found by name, as in `createAgentSystem({ resolvers })`: a
   * document-skill registry here lets `mount` name its skills. The registries behind the skill
   * tools a definition attaches (`createSkillTools(registry)`) are searched too. A document
   * skill mounted on an agent is loaded again from its folder by whichever service process
   * restores the agent, so every process must see the same folders.
   */
  resolvers?: readonly SkillResolver[];
}

const OPTIONS: Record<keyof RestateAgentsOptions, true> = { definitions: true, skills: true, resolvers: true, models: true, compactors: true, telemetry: true };
const OPTION_KEYS: readonly string[] = Object.keys(OPTIONS);

/** What `restateAgents` returns: the services to bind to a Restate endpoint. */
export type RestateServices = (restate.VirtualObjectDefinition<string, unknown> | restate.WorkflowDefinition<string, unknown>)[];

type AnyDefinition = AgentDefinition<object>;

const ok = (value: unknown): Answer => ({ ok: true, value: value === undefined ? null : value });
const failed = (error: ErrorInfo): Answer => ({ ok: false, error: { ...error } });

/**
 * The Restate services serving `definitions`: one virtual object per definition (keyed by agent
 * id), the directory that maps agent ids to definitions, the workflow that holds deferred
 * answers, and the object that runs model turns. Bind them to an endpoint:
 * `restate.endpoint().bind(...)` for each, or use `serveRestateAgents`.
 */
export function restateAgents(options: RestateAgentsOptions): RestateServices {
  const unknown = Object.keys(options ?? {}).filter((key) => !OPTION_KEYS.includes(key));
  if (unknown.length > 0) {
    throw new RuntimeError(errorInfo('invalid_options', `restateAgents: unknown option${unknown.length > 1 ? 's' : ''} ${unknown.map((key) => `'${key}'`).join(', ')}; the options are ${OPTION_KEYS.join(', ')}`, { subject: unknown[0] }));
  }
  const definitions = new Map<string, AnyDefinition>();
  for (const definition of options.definitions) {
    if (definition.name === DIRECTORY || definition.name === REPLIES || definition.name === TURNS) {
      throw new TypeError(`restateAgents: '${definition.name}' is reserved for the host's own services`);
    }
    if (definitions.has(definition.name)) throw new TypeError(`restateAgents: two definitions are named '${definition.name}'`);
    definitions.set(definition.name, definition);
  }
  const resolvers = options.resolvers ?? [];
  for (const [index, resolver] of resolvers.entries()) {
    if (typeof resolver?.get !== 'function') throw new TypeError(`restateAgents: resolvers[${index}] has no get(name) method (see createSkillRegistry, discoverSkills)`);
  }
  const resolver = new HostSkills(definitions.values(), options.skills ?? [], resolvers);
  const turns = turnsObject(definitions, resolver, options);
  const served = new Set(definitions.keys());
  const objects = [...definitions.values()].map((definition) => agentObject(definition, resolver, served));
  return [...objects, directoryObject(), repliesWorkflow(), turns] as RestateServices;
}

/** Agent id → definition name, so a client and a `stop` effect can find an agent by id alone. */
function directoryObject() {
  return restate.object({
    name: DIRECTORY,
    handlers: {
      register: restate.handlers.object.exclusive({ ingressPrivate: true }, async (ctx: restate.ObjectContext, definition: string) => {
        ctx.set('definition', definition);
      }),
      remove: restate.handlers.object.exclusive({ ingressPrivate: true }, async (ctx: restate.ObjectContext) => {
        ctx.clearAll();
      }),
      lookup: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext) => (await ctx.get<string>('definition')) ?? null),
    },
  });
}

/**
 * One deferred answer: started by the agent when a step defers the answer to a call, answered
 * when a later step replies (or the agent stops), waited on by the caller. The answer is kept
 * until Restate's workflow retention ends (a day by default), so a caller that reconnects
 * still gets it.
 */
function repliesWorkflow() {
  return restate.workflow({
    name: REPLIES,
    handlers: {
      // Only the agent starts and answers it; callers can only wait.
      run: restate.handlers.workflow.workflow({ ingressPrivate: true }, async (ctx: restate.WorkflowContext): Promise<Answer> => ctx.promise<Answer>('answer')),
      // The first answer stands (a signal id called twice, a stop racing a reply).
      answer: restate.handlers.workflow.shared({ ingressPrivate: true }, async (ctx: restate.WorkflowSharedContext, answer: Answer): Promise<void> => {
        const promise = ctx.promise<Answer>('answer');
        if ((await promise.peek()) === undefined) await promise.resolve(answer);
      }),
      wait: async (ctx: restate.WorkflowSharedContext): Promise<Answer> => ctx.promise<Answer>('answer'),
    },
  });
}

/**
 * User code inside `ctx.run`: its answer (or what it threw) is journaled, so a replay reuses it.
 * Whether the skills it mounts could be read is journaled with it. A replay in a process that
 * cannot read them, though they could be read when the code ran, must not take another path: it
 * is noted in `blocked`, and the step throws an error Restate retries once the engine is done
 * (a throw here would reach the engine, which turns user code's throws into answers).
 */
function journaled(ctx: restate.ObjectContext, skills: HostSkills, definition: AnyDefinition, blocked: { reason?: string }): InvokeUserCode {
  const mounting = (entry: JournalEntry) =>
    entry.kind === 'result' ? skills.fromFolders([...(entry.mount ?? []).map((m) => (typeof m === 'string' ? m : m[0])), ...(entry.replace ?? [])], definition) : [];
  return (<T>(call: UserCodeCall, fn: () => T): T =>
    ctx
      .run(call.what, async (): Promise<JournalEntry> => {
        let entry: JournalEntry;
        try {
          entry = toEntry({ returned: await fn() });
        } catch (thrown) {
          return toEntry({ thrown });
        }
        const unjournaled = notJournaled(call, entry);
        if (unjournaled) return unjournaled;
        const names = mounting(entry);
        if (entry.kind === 'result' && names.length > 0 && (await skills.check(names))) entry.unreadable = true;
        return entry;
      })
      .then(async (entry) => {
        const names = mounting(entry);
        if (entry.kind === 'result' && names.length > 0 && !entry.unreadable) {
          const problem = await skills.check(names);
          if (problem) blocked.reason ??= skills.unavailable(ctx.key, problem);
        }
        // Skills that could not be read when the code ran stay bare names, as they were then.
        const unread = entry.kind === 'result' && entry.unreadable ? new Set(names) : undefined;
        return fromEntry(entry, { get: (name) => (unread?.has(name) ? undefined : (definition.blueprint.resolveSkill(name) ?? skills.get(name))) });
      }) as unknown as T) as InvokeUserCode;
}

/**
 * What is journaled instead of an answer that is not JSON (a `BigInt` in an action's output):
 * journaled as it is, it would fail the invocation again and again. An action fails with
 * `invalid_output`, naming itself; other user code, as if it had thrown. Undefined when the
 * answer is JSON.
 */
function notJournaled(call: UserCodeCall, entry: JournalEntry): JournalEntry | undefined {
  try {
    JSON.stringify(entry);
    return undefined;
  } catch (thrown) {
    const message = `the output of ${call.what} is not JSON: ${describeThrown(thrown)}`;
    return call.action !== undefined ? { kind: 'failure', reason: 'invalid_output', message } : { kind: 'thrown', name: 'TypeError', message };
  }
}

function agentObject(definition: AnyDefinition, skills: HostSkills, served: ReadonlySet<string>) {
  const load = async (ctx: restate.ObjectContext | restate.ObjectSharedContext): Promise<Agent<object> | ErrorInfo> => {
    const data = await ctx.get<AgentData<object>>(STATE_KEY);
    if (data === null) return errorInfo('unknown_agent', `no agent '${ctx.key}' of definition '${definition.name}'`, { subject: ctx.key });
    // Skills read from folders may be missing or broken here: the agent answers `unknown_skill`
    // with the reason (and can still be stopped, or the skill unmounted), as a replay will.
    const unreadable = await skills.readJournaled(ctx, 'read mounted skills', skills.fromFolders(mountedNames(data), definition));
    if (unreadable) return unreadable;
    const restored = definition.restore(data, { skills });
    return restored.ok ? restored.value : restored.error;
  };

  /**
   * Unmounts a skill from an agent that cannot be read here (a skill of it, this one or another,
   * has its folder missing): its record and state slice are dropped from the stored agent,
   * without its unmount hooks. Refused, as any unmount, while a skill that can be read requires
   * it. Undefined when the agent can be read: a normal unmount.
   */
  const unmountUnreadable = async (ctx: restate.ObjectContext, skill: string): Promise<Answer | undefined> => {
    const data = await ctx.get<AgentData<object>>(STATE_KEY);
    const record = data?.mounted?.find((mounted) => mounted.name === skill);
    if (!data || !record || skills.fromFolders(mountedNames(data), definition).length === 0) return undefined;
    const { [record.stateKey]: _dropped, ...state } = data.state as Record<string, unknown>;
    const rest: AgentData<object> = { ...data, state, mounted: data.mounted.filter((mounted) => mounted !== record) };
    // Journaled, so a replay takes the path the first attempt took.
    const read = await ctx.run(
      'read skills to unmount',
      async () => {
        const unread = (await skills.check(skills.fromFolders([skill], definition))) ?? null;
        const others = (await skills.check(skills.fromFolders(mountedNames(rest), definition))) ?? null;
        // The skills left that can be read, and require it.
        const requiredBy = rest.mounted.filter((other) => (definition.blueprint.resolveSkill(other.name) ?? skills.get(other.name))?.requires.includes(skill)).map((other) => other.name);
        return { skill: unread, rest: others, requiredBy };
      },
      { serde: restate.serde.json as restate.Serde<{ skill: ErrorInfo | null; rest: ErrorInfo | null; requiredBy: string[] }> },
    );
    if (read.skill === null && read.rest === null) return undefined;
    if (read.requiredBy.length > 0) return failed(requiredByError(skill, read.requiredBy));
    if (read.rest !== null) {
      // Other skills cannot be read either: the record goes, and the agent stays as it is until
      // they are unmounted too, or can be read.
      ctx.set(STATE_KEY, rest);
    } else {
      await skills.require(skills.fromFolders(mountedNames(rest), definition), ctx.key);
      const restored = definition.restore(rest, { skills });
      if (!restored.ok) return failed(restored.error);
      ctx.set(STATE_KEY, restored.value.toJSON());
    }
    const why = (read.skill ?? read.rest)!.message;
    ctx.console.warn(`skillstate: agent '${ctx.key}' cannot be read here (${why}); skill '${skill}' was unmounted without its unmount hooks`);
    return ok({ skill, unmounted: true, effects: [] });
  };

  /**
   * One step: on success the new agent is written and its effects carried out; on failure
   * nothing is written. `callId` is the id of the signal of a `call`, whose answer the step may
   * defer.
   */
  const step = async (
    ctx: restate.ObjectContext,
    item: WorkItem | (() => WorkItem | ErrorInfo),
    callId?: string,
    fromTurn = false,
    before?: () => Promise<void>,
    /** The trace of the turn's work that asked for the step (a signal carries its own). */
    trace?: Pick<TurnStepRequest, 'traceparent' | 'tracestate'>,
  ): Promise<CallAnswer> => {
    const agent = await load(ctx);
    if (!(agent instanceof Agent)) return failed(agent);
    const work = typeof item === 'function' ? item() : item;
    if (!('kind' in work)) return failed(work);
    await before?.();
    if (!observing()) return stepped(ctx, agent, work, callId, fromTurn, undefined);
    const subject = subjectOf(work);
    const span = StepSpan.start({ id: ctx.key, definition: definition.name }, subject, sentWith(trace));
    try {
      return await within(span, () => stepped(ctx, agent, work, callId, fromTurn, span && { span, subject }));
    } catch (error) {
      span?.crashed({ id: ctx.key, definition: definition.name }, subject, error);
      throw error;
    }
  };

  /** The step itself, once the agent is read: `traced`, the span it ends with its outcome. */
  const stepped = async (ctx: restate.ObjectContext, agent: Agent<object>, work: WorkItem, callId: string | undefined, fromTurn: boolean, traced: { span: StepSpan; subject: StepSubject } | undefined): Promise<CallAnswer> => {
    const blocked: { reason?: string } = {};
    const invoke = journaled(ctx, skills, definition, blocked);
    let outcome = await stepAgent(agent, work, { invoke: traced ? tracedAround(invoke) : invoke });
    if (blocked.reason !== undefined) throw new Error(blocked.reason);
    if (traced) outcome = { ...outcome, effects: traced.span.carried(outcome.effects) };
    if (outcome.error) {
      traced?.span.end({ id: ctx.key, definition: definition.name }, traced.subject, outcome);
      return failed(outcome.error);
    }
    ctx.set(STATE_KEY, outcome.agent.toJSON());
    if (outcome.agent.mounted !== agent.mounted) await answerLeft(ctx, outcome.agent);
    const deferred = await carryOut(ctx, outcome, callId, fromTurn);
    traced?.span.end({ id: ctx.key, definition: definition.name }, traced.subject, outcome);
    return deferred ?? ok(outcome.result);
  };

  /** The called signals whose answer is deferred: signal id → the key of the workflow holding the answer. */
  const deferredCalls = async (ctx: restate.ObjectContext) => (await ctx.get<Record<string, string>>(DEFERRED_KEY)) ?? {};

  /** The skill whose step deferred each answer still awaited (signal id → skill). */
  const deferredBy = async (ctx: restate.ObjectContext) => (await ctx.get<Record<string, string>>(DEFERRED_BY_KEY)) ?? {};

  /** Answers the caller waiting for the deferred answer to signal `to`; a reply to nobody reaches nobody. */
  const answerDeferred = async (ctx: restate.ObjectContext, to: string, answer: Answer) => {
    const { [to]: reply, ...rest } = await deferredCalls(ctx);
    if (reply === undefined) return;
    if (Object.keys(rest).length) ctx.set(DEFERRED_KEY, rest);
    else ctx.clear(DEFERRED_KEY);
    const { [to]: _skill, ...others } = await deferredBy(ctx);
    if (Object.keys(others).length) ctx.set(DEFERRED_BY_KEY, others);
    else ctx.clear(DEFERRED_BY_KEY);
    sendTo(ctx, REPLIES, reply, 'answer', answer);
  };

  /**
   * Skills left the agent in this step (unmounted): the callers still waiting for an answer one of
   * them deferred get `cancelled`, as no step of that skill can answer them any more.
   */
  const answerLeft = async (ctx: restate.ObjectContext, after: Agent<object>) => {
    const now = new Set(after.mounted.map((record) => record.name));
    for (const [signalId, skill] of Object.entries(await deferredBy(ctx))) {
      if (now.has(skill)) continue;
      const message = `agent '${ctx.key}': skill '${skill}' was unmounted before it answered this call (signal '${signalId}')`;
      await answerDeferred(ctx, signalId, failed(errorInfo('cancelled', message, { skill, subject: signalId, details: { reason: `skill '${skill}' was unmounted` } })));
    }
  };

  /**
   * Carries out a committed step's effects, each by its handler; returns where its caller finds
   * the answer when the step deferred it. `fromTurn`: the step is one the turn object asked for.
   */
  const carryOut = async (ctx: restate.ObjectContext, outcome: StepOutcome, callId: string | undefined, fromTurn = false): Promise<CallAnswer | undefined> => {
    const step: CarriedStep = { ctx, callId, fromTurn, stopSelf: false, deferred: undefined };
    for (const effect of outcome.effects as Effect[]) await (handlers[effect.type] as (effect: Effect, step: CarriedStep) => Promise<void> | void)(effect, step);
    if (step.stopSelf) await stop(ctx, 'stopped by its own step');
    return step.deferred;
  };

  /** How each effect of a committed step is carried out on Restate. */
  const handlers: RestateEffectHandlers = {
    emit: async (effect, { ctx, fromTurn }) => {
      await publish(ctx, effect.signal, served);
      await followTurnSignal(ctx, definition.name, effect.signal, fromTurn);
    },
    schedule: (effect, { ctx }) => {
      sendTo(ctx, definition.name, ctx.key, 'send', effect.signal, effect.delay);
    },
    spawn: async (effect, { ctx }) => {
      // A send to a definition no process serves would fail this step's invocation again and
      // again, and the agent would answer nothing more: refused here, and said.
      if (!served.has(effect.definition)) {
        ctx.console.warn(`skillstate: agent '${ctx.key}' asked to spawn definition '${effect.definition}', which this host does not serve; nothing was spawned`);
        return;
      }
      const id = effect.id ?? ctx.rand.uuidv4();
      const request: SpawnRequest = { definition: effect.definition, ...(effect.state ? { state: effect.state } : {}), parent: { id: ctx.key, definition: definition.name } };
      // Known as a child from this step on: a stop effect of a later step reaches it even
      // before its spawn has registered it (Restate delivers the two to its key in order).
      ctx.set(CHILDREN_KEY, { ...(await childrenOf(ctx)), [id]: effect.definition });
      sendTo(ctx, effect.definition, id, 'spawn', request);
    },
    stop: async (effect, step) => {
      const { ctx } = step;
      if (effect.agent === undefined || effect.agent === ctx.key) {
        step.stopSelf = true;
        return;
      }
      const children = await childrenOf(ctx);
      if (Object.hasOwn(children, effect.agent)) {
        const { [effect.agent]: childDefinition, ...rest } = children;
        ctx.set(CHILDREN_KEY, rest);
        sendTo(ctx, childDefinition!, effect.agent, 'stop', { reason: effect.reason ?? 'stopped', parent: ctx.key } satisfies StopRequest);
        return;
      }
      const target = await ctx.genericCall<string, string | null>({ service: DIRECTORY, method: 'lookup', key: effect.agent, parameter: '', inputSerde: restate.serde.json, outputSerde: restate.serde.json });
      if (target !== null) sendTo(ctx, target, effect.agent, 'stop', { reason: effect.reason ?? 'stopped' } satisfies StopRequest);
      else ctx.console.warn(`skillstate: agent '${ctx.key}' asked to stop agent '${effect.agent}', which is not known (not spawned, already stopped, or its spawn not yet done)`);
    },
    // The answer to this call comes from a later step: a workflow of its own holds it, and the
    // caller waits there. A step on a `send` has no caller to keep.
    defer_reply: async (effect, step) => {
      const { ctx, callId } = step;
      if (callId === undefined || step.deferred !== undefined) return;
      const waiting = await deferredCalls(ctx);
      // A signal id called again while its first answer is awaited shares that answer; each
      // deferral gets a workflow of its own, so an id used again later is answered afresh.
      let reply = waiting[callId];
      if (reply === undefined) {
        reply = replyKey(definition.name, ctx.key, ctx.rand.uuidv4());
        ctx.set(DEFERRED_KEY, { ...waiting, [callId]: reply });
        if (effect.meta?.skill !== undefined) ctx.set(DEFERRED_BY_KEY, { ...(await deferredBy(ctx)), [callId]: effect.meta.skill });
        sendTo(ctx, REPLIES, reply, 'run', null);
      }
      step.deferred = { ok: 'deferred', reply };
    },
    // Without `to`, `reply` is the handler's answer (the step's result).
    reply: async (effect, { ctx }) => {
      if (effect.to !== undefined) await answerDeferred(ctx, effect.to, effect.error !== undefined ? failed(effect.error) : ok(effect.data));
    },
    // `error` is the failure the handler returns; action (de)registration is bookkeeping the
    // engine already did in the agent value; `run` was carried out within the step.
    error: () => {},
    register_action: () => {},
    deregister_action: () => {},
    run: () => {},
  };

  /** The agents this one spawned and has not stopped (id → definition). */
  const childrenOf = async (ctx: restate.ObjectContext) => (await ctx.get<Record<string, string>>(CHILDREN_KEY)) ?? {};

  /**
   * Removes the agent; callers still waiting for a deferred answer get `agent_stopped`, the
   * agents it spawned stop too, and its parent forgets it.
   */
  const stop = async (ctx: restate.ObjectContext, reason: string) => {
    for (const reply of Object.values(await deferredCalls(ctx))) {
      sendTo(ctx, REPLIES, reply, 'answer', failed(errorInfo('agent_stopped', `agent '${ctx.key}' stopped (${reason}) before answering`, { subject: ctx.key })));
    }
    for (const [child, childDefinition] of Object.entries(await childrenOf(ctx))) {
      sendTo(ctx, childDefinition, child, 'stop', { reason: `its parent '${ctx.key}' stopped`, parent: ctx.key } satisfies StopRequest);
    }
    const parent = await ctx.get<AgentAddress>(PARENT_KEY);
    if (parent !== null) sendTo(ctx, parent.definition, parent.id, 'childStopped', ctx.key);
    // A turn under way ends with the agent, and its model request with it.
    await cancelTurnInvocation(ctx);
    ctx.clearAll();
    sendTo(ctx, DIRECTORY, ctx.key, 'remove', null);
  };

  /** A step running instructions (one, or a list), or the refusal of a value that is not one. */
  const runStep = async (ctx: restate.ObjectContext, value: unknown, fromTurn = false, before?: () => Promise<void>, trace?: Pick<TurnStepRequest, 'traceparent' | 'tracestate'>): Promise<Answer> => {
    const instructions = plainInstructions(Array.isArray(value) ? value : [value]);
    if (!instructions.ok) return failed(instructions.error);
    return (await step(ctx, { kind: 'instructions', instructions: instructions.value }, undefined, fromTurn, before, trace)) as Answer;
  };

  /** A step on a signal, or the refusal of a value that is not one. */
  const signalStep = (ctx: restate.ObjectContext, value: unknown, call: boolean): Promise<CallAnswer> => {
    const problem = signalProblem(value);
    if (problem !== undefined) return Promise.resolve(failed(errorInfo('invalid_signal', problem)));
    // A signal without an id gets one (from Restate's deterministic random, so a replay agrees).
    const signal = (typeof (value as Signal).id === 'string' ? value : { ...(value as object), id: ctx.rand.uuidv4() }) as Signal;
    return step(ctx, { kind: 'signal', signal, call }, call ? signal.id : undefined);
  };

  return restate.object({
    name: definition.name,
    handlers: {
      spawn: async (ctx: restate.ObjectContext, request: SpawnRequest): Promise<Answer> => {
        if ((await ctx.get(STATE_KEY)) !== null) return failed(errorInfo('duplicate_agent', `agent '${ctx.key}' already exists`, { subject: ctx.key }));
        let agent: Agent<object>;
        try {
          agent = definition.new({ id: ctx.key, ...(request?.state ? { state: request.state } : {}) });
        } catch (thrown) {
          return failed(errorInfo('invalid_state', describeThrown(thrown), { subject: ctx.key }));
        }
        const blocked: { reason?: string } = {};
        const outcome = await stepAgent(agent, { kind: 'start' }, { invoke: journaled(ctx, skills, definition, blocked) });
        if (blocked.reason !== undefined) throw new Error(blocked.reason);
        if (outcome.error) return failed(outcome.error);
        ctx.set(STATE_KEY, outcome.agent.toJSON());
        if (isAddress(request.parent)) ctx.set(PARENT_KEY, { id: request.parent.id, definition: request.parent.definition } satisfies AgentAddress);
        // Awaited, so the agent can be found by id as soon as its spawn is answered.
        await ctx.genericCall({ service: DIRECTORY, method: 'register', key: ctx.key, parameter: definition.name, inputSerde: restate.serde.json, outputSerde: restate.serde.json });
        await carryOut(ctx, outcome, undefined);
        await adoptTurn(ctx, definition.name, outcome.agent);
        return ok(outcome.agent.toJSON());
      },
      send: async (ctx: restate.ObjectContext, value: unknown): Promise<Answer> => {
        const answer = (await signalStep(ctx, value, false)) as Answer;
        // Nobody waits for a send: its failure goes to the service's log (and stays the
        // invocation's answer in Restate), never nowhere.
        if (!answer.ok) ctx.console.warn(`skillstate: signal to agent '${ctx.key}' failed (${answer.error.code}): ${answer.error.message}`);
        return answer;
      },
      call: async (ctx: restate.ObjectContext, value: unknown): Promise<CallAnswer> => signalStep(ctx, value, true),
      run: async (ctx: restate.ObjectContext, value: unknown): Promise<Answer> => runStep(ctx, value),
      // `run` for the turn object: the answer, and the agent as it is after the step (one request
      // where a `run` and a `snapshot` would take two).
      turnStep: restate.handlers.object.exclusive({ ingressPrivate: true }, async (ctx: restate.ObjectContext, value: TurnStepRequest | unknown): Promise<TurnStepAnswer> => {
        // A turn object of a deployment before turns had ids sends the instructions alone.
        const request: TurnStepRequest = typeof value === 'object' && value !== null && 'instructions' in value ? (value as TurnStepRequest) : { instructions: value };
        // A turn of an agent that stopped meanwhile must not act on one spawned anew under its id.
        if (typeof request.turnId === 'string') {
          const data = await ctx.get<AgentData<object>>(STATE_KEY);
          const other = otherTurn(ctx, data, request.turnId);
          if (other) return { answer: failed(other), agent: data };
        }
        // Announced once the agent is read (a step refused before that is asked for again, and must not announce twice).
        const answer = await runStep(ctx, request.instructions, true, () => announce(ctx, request.announce, served), request);
        return { answer, agent: await ctx.get<AgentData<object>>(STATE_KEY) };
      }),
      mount: async (ctx: restate.ObjectContext, request: MountRequest): Promise<Answer> => {
        if (typeof request?.skill !== 'string' || (request.config !== undefined && (typeof request.config !== 'object' || request.config === null))) {
          return failed(errorInfo('invalid_skill', 'mount takes { skill: <name>, config?: {...} }', { subject: ctx.key }));
        }
        // A document skill is read from its folder first, as an in-process mount by name does;
        // whether it could be is journaled, so a replay answers the same.
        let unloadable: ErrorInfo | null = null;
        const reads = skills.fromFolders([request.skill], definition);
        if (reads.length > 0) {
          const read = await ctx.run('read skill to mount', async () => ({ problem: (await skills.ensure(reads)) ?? null, found: skills.get(request.skill) !== undefined }), {
            serde: restate.serde.json as restate.Serde<{ problem: ErrorInfo | null; found: boolean }>,
          });
          unloadable = read.problem;
          // Read when the mount first ran: a replay must read it too.
          if (read.found) await skills.require(reads, ctx.key);
        }
        // The agent is looked up first: an unknown agent is the answer before an unknown skill.
        const mounting = (): WorkItem | ErrorInfo => {
          if (unloadable) return unloadable;
          // As in-process: the definition's own skills and registry, then the host's.
          const skill = definition.blueprint.resolveSkill(request.skill) ?? skills.get(request.skill);
          return skill
            ? { kind: 'mount', skill, config: request.config }
            : errorInfo('unknown_skill', `cannot mount skill '${request.skill}' on agent '${ctx.key}': the host does not know it (pass it in restateAgents({ skills }), or a registry that has it in restateAgents({ resolvers }))`, { skill: request.skill });
        };
        return (await step(ctx, mounting)) as Answer;
      },
      unmount: async (ctx: restate.ObjectContext, skill: string): Promise<Answer> => {
        if (typeof skill !== 'string') return failed(errorInfo('invalid_skill', 'unmount takes a skill name', { subject: ctx.key }));
        const left = await unmountUnreadable(ctx, skill);
        return left ?? ((await step(ctx, { kind: 'unmount', skill })) as Answer);
      },
      subscribe: async (ctx: restate.ObjectContext, target: { definition: string; id: string }): Promise<Answer> => {
        if (typeof target?.id !== 'string' || typeof target.definition !== 'string' || !served.has(target.definition)) {
          return failed(errorInfo('unknown_agent', `subscribe takes { definition, id } naming a definition this host serves (${[...served].join(', ')})`, { subject: ctx.key }));
        }
        const subscribers = (await ctx.get<{ definition: string; id: string }[]>(SUBSCRIBERS_KEY)) ?? [];
        if (!subscribers.some((known) => known.id === target.id)) ctx.set(SUBSCRIBERS_KEY, [...subscribers, target]);
        return ok(null);
      },
      stop: async (ctx: restate.ObjectContext, request: StopRequest | string | null): Promise<Answer> => {
        // Stopping reads no skill: an agent whose skills cannot be read here still stops.
        if ((await ctx.get(STATE_KEY)) === null) return failed(errorInfo('unknown_agent', `no agent '${ctx.key}' of definition '${definition.name}'`, { subject: ctx.key }));
        const { reason, parent }: StopRequest = typeof request === 'object' && request !== null ? request : typeof request === 'string' ? { reason: request } : {};
        // A parent's stop reaches only its own child: the id may have been spawned anew since.
        if (typeof parent === 'string' && (await ctx.get<AgentAddress>(PARENT_KEY))?.id !== parent) {
          return failed(errorInfo('unknown_agent', `agent '${ctx.key}' is not a child of '${parent}'`, { subject: ctx.key }));
        }
        await stop(ctx, typeof reason === 'string' ? reason : 'stopped');
        return ok(null);
      },
      // A child of this agent stopped: it is forgotten.
      childStopped: restate.handlers.object.exclusive({ ingressPrivate: true }, async (ctx: restate.ObjectContext, child: string): Promise<void> => {
        const children = await childrenOf(ctx);
        if (typeof child !== 'string' || !Object.hasOwn(children, child)) return;
        const { [child]: _gone, ...rest } = children;
        ctx.set(CHILDREN_KEY, rest);
      }),
      snapshot: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext): Promise<Answer> => {
        const data = await ctx.get<AgentData<object>>(STATE_KEY);
        return data === null ? failed(errorInfo('unknown_agent', `no agent '${ctx.key}' of definition '${definition.name}'`, { subject: ctx.key })) : ok(data);
      }),
    },
  });
}

/** Sends `signal` to the agents subscribed to this one (emit reaches subscribers only). */
async function publish(ctx: restate.ObjectContext, signal: Signal, served: ReadonlySet<string>): Promise<void> {
  for (const target of await subscribersOf(ctx, served)) sendTo(ctx, target.definition, target.id, 'send', signal);
}

/**
 * The agent's subscribers whose definition this host serves. A send to a definition no process
 * serves fails again and again and would hold up the agent: those are dropped, and said.
 */
async function subscribersOf(ctx: restate.ObjectContext, served: ReadonlySet<string>): Promise<AgentAddress[]> {
  const subscribers = (await ctx.get<AgentAddress[]>(SUBSCRIBERS_KEY)) ?? [];
  const kept = subscribers.filter((target) => served.has(target.definition));
  if (kept.length < subscribers.length) {
    ctx.set(SUBSCRIBERS_KEY, kept);
    const gone = subscribers.filter((target) => !served.has(target.definition)).map((target) => `'${target.id}' (${target.definition})`);
    ctx.console.warn(`skillstate: agent '${ctx.key}': subscribers whose definition this host does not serve were dropped: ${gone.join(', ')}`);
  }
  return kept;
}

/**
 * Sends the turn's progress signals to the agent's subscribers, if it has any. Each signal is made
 * inside `ctx.run` (its id and time are journaled), so a replay sends the same one.
 */
async function announce(ctx: restate.ObjectContext, announcements: unknown, served: ReadonlySet<string>): Promise<void> {
  if (!Array.isArray(announcements) || announcements.length === 0) return;
  const subscribers = await subscribersOf(ctx, served);
  if (subscribers.length === 0) return;
  for (const announcement of announcements as Announcement[]) {
    const made = await ctx.run(
      'progress signal',
      (): Signal | string => {
        try {
          return createSignal(announcement.type, announcement.data, { source: ctx.key });
        } catch (error) {
          return describeThrown(error);
        }
      },
      { serde: restate.serde.json as restate.Serde<Signal | string> },
    );
    if (typeof made === 'string') ctx.console.warn(`skillstate: agent '${ctx.key}': a progress signal was not sent: ${made}`);
    else for (const target of subscribers) sendTo(ctx, target.definition, target.id, 'send', made);
  }
}

function isAddress(value: unknown): value is AgentAddress {
  return typeof value === 'object' && value !== null && typeof (value as AgentAddress).id === 'string' && typeof (value as AgentAddress).definition === 'string';
}

/** A one-way send to another handler (durable: Restate delivers it once the step is journaled). */
function sendTo(ctx: restate.ObjectContext, service: string, key: string, method: string, parameter: unknown, delay?: number): restate.InvocationHandle {
  return ctx.genericSend({ service, method, key, parameter, inputSerde: restate.serde.json, ...(delay !== undefined && delay > 0 ? { delay } : {}) });
}
