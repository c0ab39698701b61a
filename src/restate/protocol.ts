/**
 * What the Restate host and its client exchange: handler inputs and the answer envelope. Plain
 * JSON only; no SDK, no I/O.
 */
import type { ErrorInfo } from '../core/errors.js';

/** The virtual object mapping agent ids to definition names. */
export const DIRECTORY = 'skillstate_agents';
/** The Restate state key holding the agent value (its JSON form). */
export const STATE_KEY = 'agent';
/** The Restate state key holding the agents that receive this agent's `emit`s. */
export const SUBSCRIBERS_KEY = 'subscribers';

/** Every handler's answer: a value, or the typed error of a step that changed nothing. */
export type Answer = { ok: true; value: unknown } | { ok: false; error: ErrorInfo };

/** Input of an agent object's `spawn` handler. */
export interface SpawnRequest {
  definition: string;
  state?: Record<string, unknown>;
}

/** Input of an agent object's `mount` handler: a skill the host knows, by name. */
export interface MountRequest {
  skill: string;
  config?: Record<string, unknown>;
}
