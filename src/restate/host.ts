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
import * as restate from '@restatedev/restate-sdk';
import type { AgentDefinition } from '../core/agent-definition.js';
import { Agent, type AgentData } from '../core/agent-value.js';
import type { Effect } from '../core/effects.js';
import { describeThrown, errorInfo, type ErrorInfo } from '../core/errors.js';
import type { InvokeUserCode } from '../core/invoke.js';
import { signalProblem, type Signal } from '../core/signal.js';
import type { AnySkill } from '../core/skill.js';
import { stepAgent, type StepOutcome, type WorkItem } from '../engine/index.js';
import { fromEntry, toEntry, type JournalEntry } from './journal.js';
import { DIRECTORY, STATE_KEY, SUBSCRIBERS_KEY, type Answer, type MountRequest, type SpawnRequest } from './protocol.js';

/** Options of `restateAgents`. */
export interface RestateAgentsOptions {
  /** The agent definitions to serve: one virtual object each, named after the definition. */
  definitions: readonly AgentDefinition<object>[];
  /** Skills that `mount` may name, besides those the definitions attach. */
  skills?: readonly AnySkill[];
  /**
   * Reserved for model-driven agents (language models by name); the Restate host does not run
   * model turns yet and refuses a non-empty map rather than ignoring it.
   */
  models?: Record<string, unknown>;
}

type AnyDefinition = AgentDefinition<object>;
type SkillLookup = { get(name: string): AnySkill | undefined };

const ok = (value: unknown): Answer => ({ ok: true, value: value === undefined ? null : value });
const failed = (error: ErrorInfo): Answer => ({ ok: false, error: { ...error } });

/**
 * The Restate services serving `definitions`: one virtual object per definition (keyed by agent
 * id) and the directory that maps agent ids to definitions. Bind them to an endpoint:
 * `restate.endpoint().bind(...restateAgents({ definitions })).listen(9080)`.
 */
export function restateAgents(options: RestateAgentsOptions): restate.VirtualObjectDefinition<string, unknown>[] {
  if (options.models !== undefined && Object.keys(options.models).length > 0) {
    throw new TypeError('restateAgents: model-driven agents are not served by the Restate host yet; pass no `models`');
  }
  const definitions = new Map<string, AnyDefinition>();
  for (const definition of options.definitions) {
    if (definition.name === DIRECTORY) throw new TypeError(`restateAgents: '${DIRECTORY}' is reserved for the agent directory`);
    if (definitions.has(definition.name)) throw new TypeError(`restateAgents: two definitions are named '${definition.name}'`);
    definitions.set(definition.name, definition);
  }
  const skills = new Map<string, AnySkill>();
  for (const definition of definitions.values()) for (const skill of definition.skills()) skills.set(skill.name, skill);
  for (const skill of options.skills ?? []) skills.set(skill.name, skill);
  const resolver = { get: (name: string) => skills.get(name) };
  const objects = [...definitions.values()].map((definition) => agentObject(definition, resolver));
  return [...objects, directoryObject()] as restate.VirtualObjectDefinition<string, unknown>[];
}

/** Agent id → definition name, so a client and a `stop` effect can find an agent by id alone. */
function directoryObject() {
  return restate.object({
    name: DIRECTORY,
    handlers: {
      register: async (ctx: restate.ObjectContext, definition: string) => {
        ctx.set('definition', definition);
      },
      remove: async (ctx: restate.ObjectContext) => {
        ctx.clearAll();
      },
      lookup: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext) => (await ctx.get<string>('definition')) ?? null),
    },
  });
}

/** User code inside `ctx.run`: its answer (or what it threw) is journaled, so a replay reuses it. */
function journaled(ctx: restate.ObjectContext, skills: SkillLookup): InvokeUserCode {
  return (<T>(call: { what: string }, fn: () => T): T =>
    ctx
      .run(call.what, async (): Promise<JournalEntry> => {
        try {
          return toEntry({ returned: await fn() });
        } catch (thrown) {
          return toEntry({ thrown });
        }
      })
      .then((entry) => fromEntry(entry, skills)) as unknown as T) as InvokeUserCode;
}

function agentObject(definition: AnyDefinition, skills: SkillLookup) {
  const load = async (ctx: restate.ObjectContext | restate.ObjectSharedContext): Promise<Agent<object> | ErrorInfo> => {
    const data = await ctx.get<AgentData<object>>(STATE_KEY);
    if (data === null) return errorInfo('unknown_agent', `no agent '${ctx.key}' of definition '${definition.name}'`, { subject: ctx.key });
    const restored = definition.restore(data, { skills });
    return restored.ok ? restored.value : restored.error;
  };

  /** One step: on success the new agent is written and its effects carried out; on failure nothing is written. */
  const step = async (ctx: restate.ObjectContext, item: WorkItem | ((agent: Agent<object>) => WorkItem | ErrorInfo)): Promise<Answer> => {
    const agent = await load(ctx);
    if (!(agent instanceof Agent)) return failed(agent);
    const work = typeof item === 'function' ? item(agent) : item;
    if (!('kind' in work)) return failed(work);
    const outcome = await stepAgent(agent, work, { invoke: journaled(ctx, skills) });
    if (outcome.error) return failed(outcome.error);
    ctx.set(STATE_KEY, outcome.agent.toJSON());
    await carryOut(ctx, outcome);
    return ok(outcome.result);
  };

  const carryOut = async (ctx: restate.ObjectContext, outcome: StepOutcome) => {
    let stopSelf = false;
    for (const effect of outcome.effects as Effect[]) {
      switch (effect.type) {
        case 'emit': {
          const subscribers = (await ctx.get<{ definition: string; id: string }[]>(SUBSCRIBERS_KEY)) ?? [];
          for (const target of subscribers) sendTo(ctx, target.definition, target.id, 'send', effect.signal);
          break;
        }
        case 'schedule':
          sendTo(ctx, definition.name, ctx.key, 'send', effect.signal, effect.delay);
          break;
        case 'spawn': {
          const id = effect.id ?? ctx.rand.uuidv4();
          const request: SpawnRequest = { definition: effect.definition, ...(effect.state ? { state: effect.state } : {}) };
          sendTo(ctx, effect.definition, id, 'spawn', request);
          break;
        }
        case 'stop': {
          if (effect.agent === undefined || effect.agent === ctx.key) {
            stopSelf = true;
            break;
          }
          const target = await ctx.genericCall<string, string | null>({ service: DIRECTORY, method: 'lookup', key: effect.agent, parameter: '', inputSerde: restate.serde.json, outputSerde: restate.serde.json });
          if (target !== null) sendTo(ctx, target, effect.agent, 'stop', effect.reason ?? 'stopped');
          break;
        }
        // `reply` is the handler's answer (the step's result); `error` is the failure it returns;
        // action (de)registration is bookkeeping the engine already did in the agent value.
        case 'reply':
        case 'error':
        case 'register_action':
        case 'deregister_action':
        case 'run':
          break;
        // Deferred answers are not kept across handlers yet: the call is answered with the step's
        // own result, and a later `reply` naming it reaches nobody (docs/restate.md says so).
        case 'defer_reply':
          break;
        default: {
          const unknown: never = effect;
          throw new Error(`the Restate host has no mapping for effect '${(unknown as Effect).type}'`);
        }
      }
    }
    if (stopSelf) stop(ctx);
  };

  const stop = (ctx: restate.ObjectContext) => {
    ctx.clearAll();
    sendTo(ctx, DIRECTORY, ctx.key, 'remove', null);
  };

  /** A step on a signal, or the refusal of a value that is not one. */
  const signalStep = (ctx: restate.ObjectContext, value: unknown, call: boolean): Promise<Answer> => {
    const problem = signalProblem(value);
    return problem === undefined ? step(ctx, { kind: 'signal', signal: value as Signal, call }) : Promise.resolve(failed(errorInfo('invalid_signal', problem)));
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
        const outcome = await stepAgent(agent, { kind: 'start' }, { invoke: journaled(ctx, skills) });
        if (outcome.error) return failed(outcome.error);
        ctx.set(STATE_KEY, outcome.agent.toJSON());
        sendTo(ctx, DIRECTORY, ctx.key, 'register', definition.name);
        await carryOut(ctx, outcome);
        return ok(outcome.agent.toJSON());
      },
      send: async (ctx: restate.ObjectContext, value: unknown): Promise<Answer> => {
        const answer = await signalStep(ctx, value, false);
        // Nobody waits for a send: its failure goes to the service's log (and stays the
        // invocation's answer in Restate), never nowhere.
        if (!answer.ok) ctx.console.warn(`skillstate: signal to agent '${ctx.key}' failed (${answer.error.code}): ${answer.error.message}`);
        return answer;
      },
      call: async (ctx: restate.ObjectContext, value: unknown): Promise<Answer> => signalStep(ctx, value, true),
      mount: async (ctx: restate.ObjectContext, request: MountRequest): Promise<Answer> =>
        step(ctx, () => {
          const skill = skills.get(request.skill);
          return skill ? { kind: 'mount', skill, config: request.config } : errorInfo('unknown_skill', `cannot mount skill '${request.skill}' on agent '${ctx.key}': the host does not know it (pass it in restateAgents({ skills }))`, { skill: request.skill });
        }),
      unmount: async (ctx: restate.ObjectContext, skill: string): Promise<Answer> => step(ctx, { kind: 'unmount', skill }),
      subscribe: async (ctx: restate.ObjectContext, target: { definition: string; id: string }): Promise<Answer> => {
        const subscribers = (await ctx.get<{ definition: string; id: string }[]>(SUBSCRIBERS_KEY)) ?? [];
        if (!subscribers.some((known) => known.id === target.id)) ctx.set(SUBSCRIBERS_KEY, [...subscribers, target]);
        return ok(null);
      },
      stop: async (ctx: restate.ObjectContext): Promise<Answer> => {
        const agent = await load(ctx);
        if (!(agent instanceof Agent)) return failed(agent);
        stop(ctx);
        return ok(null);
      },
      snapshot: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext): Promise<Answer> => {
        const data = await ctx.get<AgentData<object>>(STATE_KEY);
        return data === null ? failed(errorInfo('unknown_agent', `no agent '${ctx.key}' of definition '${definition.name}'`, { subject: ctx.key })) : ok(data);
      }),
    },
  });
}

function sendTo(ctx: restate.ObjectContext, service: string, key: string, method: string, parameter: unknown, delay?: number) {
  ctx.genericSend({ service, method, key, parameter, inputSerde: restate.serde.json, ...(delay !== undefined && delay > 0 ? { delay } : {}) });
}
