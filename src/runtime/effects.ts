/**
 * The effect interpreter: one handler per effect kind, carrying out what a step asked for. The
 * handlers are a mapped type over the effect kinds, so a kind without its handler does not
 * compile; the system actor (`machines/system.ts`) names one action per kind from the same list
 * and calls back here, so the inspector shows every effect as what it is.
 *
 * Adding an effect kind touches its vocabulary (`src/core/effects.ts`) and its handler here.
 *
 * Handlers never drive another actor from inside a step: work for other agents (spawning,
 * stopping) waits until the step is over (`afterStep`).
 */
import { registeredName, type Effect, type EffectType, type SpawnEffect } from '../core/effects.js';
import { errorInfo, type ErrorInfo } from '../core/errors.js';
import type { Signal } from '../core/signal.js';

/** The agent whose step produced an effect, and whether a caller already receives the step's error. */
export interface EffectOrigin {
  readonly agent: string;
  readonly answered: boolean;
}

/** One handler per effect kind. */
export type EffectHandlers = {
  readonly [K in EffectType]: (effect: Extract<Effect, { type: K }>, origin: EffectOrigin) => void;
};

/** What carrying out effects needs from the agent system. */
export interface EffectHost {
  /** Records an action as registered (true) or deregistered (false) on a running agent. */
  registerAction(agentId: string, name: string, registered: boolean): void;
  /** Delivers an emitted signal to subscribers and to the agents whose patterns match. */
  publish(signal: Signal, from: string): void;
  /** Spawns a child agent as a `spawn` effect asks. */
  spawnChild(parentId: string, effect: SpawnEffect): void;
  isRunning(agentId: string): boolean;
  /** The agent takes nothing more from its mailbox: it stops once its step is over. */
  close(agentId: string, reason: string): void;
  stopAgent(agentId: string, reason: string): void;
  /** Delivers `signal` to the agent after `delay` ms. */
  schedule(agentId: string, delay: number, signal: Signal): void;
  report(agentId: string, error: ErrorInfo, answered: boolean): void;
  /** Whether a waiting caller received this very error (its promise rejected with it). */
  wasAnswered(error: ErrorInfo): boolean;
  /** Runs `work` once no agent step is on the stack. */
  afterStep(work: () => void): void;
}

/** The handlers, carrying out effects on `host`. */
export function effectHandlers(host: EffectHost): EffectHandlers {
  return {
    register_action: (effect, origin) => host.registerAction(origin.agent, registeredName(effect), true),
    deregister_action: (effect, origin) => host.registerAction(origin.agent, registeredName(effect), false),
    // `run` and `reply` are carried out within the step (the engine runs the action, the caller
    // gets the reply); they reach the interpreter to be traced and inspected like the others.
    run: () => {},
    reply: () => {},
    // The process keeps the caller waiting; a later `reply` with `to` answers it.
    defer_reply: () => {},
    emit: (effect, origin) => host.publish(effect.signal, origin.agent),
    spawn: (effect, origin) => host.afterStep(() => host.spawnChild(origin.agent, effect)),
    stop: (effect, origin) => {
      const target = effect.agent ?? origin.agent;
      const reason = effect.reason ?? `stopped by agent '${origin.agent}'`;
      // An agent that stops itself takes nothing more from its mailbox (what waits there gets
      // agent_stopped now); the stop itself comes after the step, in effect order, like any
      // other work for other actors. An agent not running yet may be one a spawn asked for by an
      // earlier effect, of this step or of a step before it: that spawn is carried out by then, and
      // its agent is stopped. One running now may have stopped by then (with its parent, say): its
      // stop is done.
      const runningNow = host.isRunning(target);
      if (target === origin.agent) host.close(target, reason);
      host.afterStep(() => {
        if (host.isRunning(target)) host.stopAgent(target, reason);
        else if (!runningNow) host.report(origin.agent, errorInfo('unknown_agent', `agent '${origin.agent}' asked to stop agent '${target}', which is not running`, { subject: target }), false);
      });
    },
    schedule: (effect, origin) => host.schedule(origin.agent, effect.delay, effect.signal),
    // Only the error the caller received counts as answered; a step's other errors are reported.
    error: (effect, origin) => host.report(origin.agent, effect.error, origin.answered && host.wasAnswered(effect.error)),
  };
}

/** Carries out one effect with its kind's handler. */
export function interpretEffect(handlers: EffectHandlers, effect: Effect, origin: EffectOrigin): void {
  (handlers[effect.type] as (effect: Effect, origin: EffectOrigin) => void)(effect, origin);
}
