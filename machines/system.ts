/**
 * The supervising system actor. Agents hand it the effects their steps produced, and it
 * carries each one out as a named XState action — one per effect kind, named after it — so the
 * inspector shows every effect as what it is. It is not the parent of the agents (XState copies
 * a parent's children map on every spawn, which makes one parent for all agents quadratic); the
 * system keeps a registry of agents beside it instead.
 *
 * Each effect reaches it as an event of its own, whose type is the effect's kind, taken by the
 * action of the same name: no action is made per event (an `enqueueActions` was, and its objects
 * outlived young-generation collections by the megabyte on every step with effects).
 *
 * The events and actions are made from the list of effect kinds: adding a kind adds them here.
 */
import { setup, type ActorRefFrom } from 'xstate';
import { EFFECT_TYPES, type Effect, type EffectType } from '../src/core/effects.js';

/** What the system actor needs from the runtime. */
export interface SystemHost {
  /** Carries out one effect. `answered`: the step's caller already receives its error. */
  carryOut(agentId: string, effect: Effect, answered: boolean): void;
  toJSON(): unknown;
}

/** One effect to carry out, as the system actor receives it: its type is the effect's kind. */
export interface EffectEvent {
  type: EffectType;
  /** The agent whose step produced the effect. */
  agent: string;
  effect: Effect;
  /** A caller waits on the step that produced the effect and receives its error. */
  answered: boolean;
}

type CarryOut = (args: { context: { host: SystemHost }; event: EffectEvent }) => void;

const carryOut: CarryOut = ({ context, event }) => context.host.carryOut(event.agent, event.effect, event.answered);

/** One action per effect kind, each carrying the effect out through the host. */
const effectActions = Object.fromEntries(EFFECT_TYPES.map((type) => [type, carryOut])) as { [K in EffectType]: CarryOut };

/** Each effect kind's event, taken by the action of the same name. */
const effectTransitions = Object.fromEntries(EFFECT_TYPES.map((type) => [type, { actions: type }])) as { [K in EffectType]: { actions: K } };

/** The system actor's logic. */
export const systemMachine = setup({
  types: {} as {
    context: { host: SystemHost };
    events: EffectEvent;
    input: { host: SystemHost };
  },
  actions: effectActions,
}).createMachine({
  id: 'skillstate.system',
  context: ({ input }) => ({ host: input.host }),
  on: effectTransitions,
});

/** A running system actor. */
export type SystemActor = ActorRefFrom<typeof systemMachine>;
