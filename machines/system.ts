/**
 * The supervising system actor. Agents hand it the effects their steps produced, and it
 * carries each one out as a named XState action — one per effect kind, named after it — so the
 * inspector shows every effect as what it is. It is not the parent of the agents (XState copies
 * a parent's children map on every spawn, which makes one parent for all agents quadratic); the
 * system keeps a registry of agents beside it instead.
 *
 * The actions are made from the list of effect kinds: adding a kind adds its action here.
 */
import { enqueueActions, setup, type ActorRefFrom } from 'xstate';
import { EFFECT_TYPES, type Effect, type EffectType } from '../src/core/effects.js';

/** What the system actor needs from the runtime. */
export interface SystemHost {
  /** Carries out one effect. `answered`: the step's caller already receives its error. */
  carryOut(agentId: string, effect: Effect, answered: boolean): void;
  toJSON(): unknown;
}

/** The effects of one step, for the system actor. */
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

type CarryOut = (args: { context: { host: SystemHost } }, params: EffectParams) => void;

const carryOut: CarryOut = ({ context }, params) => context.host.carryOut(params.agent, params.effect, params.answered);

/** One action per effect kind, each carrying the effect out through the host. */
const effectActions = Object.fromEntries(EFFECT_TYPES.map((type) => [type, carryOut])) as { [K in EffectType]: CarryOut };

/** The system actor's logic. */
export const systemMachine = setup({
  types: {} as {
    context: { host: SystemHost };
    events: EffectsEvent;
    input: { host: SystemHost };
  },
  actions: effectActions,
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

/** A running system actor. */
export type SystemActor = ActorRefFrom<typeof systemMachine>;
