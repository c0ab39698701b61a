/**
 * What the Restate host and its client exchange: handler inputs and the answer envelope. Plain
 * JSON only; no SDK, no I/O.
 */
import type { AgentData } from '../core/agent-value.js';
import type { ErrorInfo } from '../core/errors.js';

/** The virtual object mapping agent ids to definition names. */
export const DIRECTORY = 'skillstate_agents';
/** The Restate state key holding the agent value (its JSON form). */
export const STATE_KEY = 'agent';
/** The Restate state key holding the agents that receive this agent's `emit`s. */
export const SUBSCRIBERS_KEY = 'subscribers';
/** The Restate state key holding the called signals whose answer the agent deferred (signal id → reply key). */
export const DEFERRED_KEY = 'deferred';
/** The Restate state key holding the skill whose step deferred each of those answers (signal id → skill): unmounted, it answers them `cancelled`. */
export const DEFERRED_BY_KEY = 'deferred_by';
/** The Restate state key holding the invocation of the turn object that moves the agent's turn on. */
export const TURN_INVOCATION_KEY = 'turn_invocation';
/** The Restate state key holding the agents this agent spawned (id → definition name). */
export const CHILDREN_KEY = 'children';
/** The Restate state key holding the agent that spawned this one, when one did. */
export const PARENT_KEY = 'parent';

/** An agent as another agent refers to it: its id and the name of its definition. */
export interface AgentAddress {
  id: string;
  definition: string;
}

/**
 * The workflow holding one deferred answer, keyed `<definition>/<agent>/<a fresh id>`: the agent
 * starts it when a step defers the answer to a call, resolves it when a later step replies, and
 * the caller waits on it.
 */
export const REPLIES = 'skillstate_replies';

/** The virtual object that runs model turns, keyed by agent id. */
export const TURNS = 'skillstate_turns';

/** The key of a workflow holding one deferred answer of agent `agent`: its parts escaped, so no two agents share one. */
export function replyKey(definition: string, agent: string, deferral: string): string {
  return [definition, agent, deferral].map(encodeURIComponent).join('/');
}

/** A handler's answer: a value, or the typed error of a step that changed nothing. */
export type Answer = { ok: true; value: unknown } | { ok: false; error: ErrorInfo };

/** What `call` answers: an answer, or where the answer a step deferred will be (see `REPLIES`). */
export type CallAnswer = Answer | { ok: 'deferred'; reply: string };

/** What an agent object's `turnStep` handler answers: the step's answer, and the agent after it (null once it is gone). */
export interface TurnStepAnswer {
  answer: Answer;
  agent: AgentData<object> | null;
}

/** Input of the turn object's `run` handler: which agent's turn to move on. */
export interface TurnRequest {
  definition: string;
  turn: number;
  /** The turn's id (its `chat.turn.started` signal's): `turn` numbers start again for an agent spawned anew. */
  turnId?: string;
  /** The W3C trace of the step that started or resumed the turn, continued by the turn's spans. */
  traceparent?: string;
  tracestate?: string;
}

/** A progress signal to be made and sent by the agent: its type and data. */
export interface Announcement {
  type: string;
  data: Record<string, unknown>;
}

/** Input of an agent object's `turnStep` handler: instructions of the turn object, for the turn it runs. */
export interface TurnStepRequest {
  instructions: unknown;
  /** The turn whose step this is: refused (`no_turn`) when the agent's turn in flight is another. */
  turnId?: string;
  /** The W3C trace of the turn's work that asks for the step, continued by the step's span. */
  traceparent?: string;
  tracestate?: string;
  /**
   * Progress signals (`chat.tool.call`, `chat.tool.result`), by type and data, that the agent
   * sends to its subscribers before it runs the step. They ride on the step, and are made (a
   * journal entry) only when the agent has subscribers, so progress nobody follows costs nothing.
   */
  announce?: Announcement[];
}

/** Input of an agent object's `spawn` handler. */
export interface SpawnRequest {
  definition: string;
  state?: Record<string, unknown>;
  /** The agent whose step spawned this one: stopping it stops this one. */
  parent?: AgentAddress;
}

/** Input of an agent object's `stop` handler (a client sends nothing). */
export interface StopRequest {
  reason?: string;
  /** Sent by a parent: the agent stops only if that agent is still its parent. */
  parent?: string;
}

/** Input of an agent object's `mount` handler: a skill the host knows, by name. */
export interface MountRequest {
  skill: string;
  config?: Record<string, unknown>;
}
