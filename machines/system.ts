/**
 * The supervising system actor. Agents hand it the effects their steps produced, and it
 * carries each one out as a named XState action — `register_action`, `deregister_action`,
 * `reply`, `emit`, `spawn`, `stop`, `schedule`, `error` — so the inspector shows every effect
 * as what it is. It is not the parent of the agents (XState copies a parent's children map on
 * every spawn, which makes one parent for all agents quadratic); the system keeps a registry
 * of agents beside it instead.
 */
import { enqueueActions, setup, type ActorRefFrom } from 'xstate';
import type { Effect } from '../src/core/effects.js';

/** What the system actor needs from the runtime: one method per effect kind. */
export interface SystemHost {
  /** Carries out one effect. `answered`: the step's caller already receives its error. */
  carryOut(agentId: string, effect: Effect, answered: boolean): void;
  toJSON(): unknown;
}

export interface EffectsEvent {
  type: 'effects';
  /** The agent whose step produced the effects. */
  agent: string;
  effects: readonly Effect[];
  /** A caller waits on the step that produced these effects and receives its error. */
  answered: boolean;
}

interface EffectParams {
  agent: string;
  effect: Effect;
  answered: boolean;
}

const carryOut = ({ context }: { context: { host: SystemHost } }, params: EffectParams) => context.host.carryOut(params.agent, params.effect, params.answered);

export const systemMachine = setup({
  types: {} as {
    context: { host: SystemHost };
    events: EffectsEvent;
    input: { host: SystemHost };
  },
  actions: {
    register_action: carryOut,
    deregister_action: carryOut,
    run: carryOut,
    reply: carryOut,
    emit: carryOut,
    spawn: carryOut,
    stop: carryOut,
    schedule: carryOut,
    error: carryOut,
  },
}).createMachine({
  id: 'skillstate.system',
  context: ({ input }) => ({ host: input.host }),
  on: {
    effects: {
      actions: enqueueActions(({ event, enqueue }) => {
        for (const effect of event.effects) enqueue({ type: effect.type, params: { agent: event.agent, effect, answered: event.answered } });
      }),
    },
  },
});

export type SystemActor = ActorRefFrom<typeof systemMachine>;
