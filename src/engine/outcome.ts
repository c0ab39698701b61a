/**
 * What one step of an agent produces, as plain data: the agent after it, the effects for the
 * host to carry out, the reply for a caller, the error when it failed, diagnostics. And the
 * builders of a failed outcome, which leaves the agent exactly as it was.
 *
 * Pure: no XState, no timers, no I/O.
 */
import type { Agent } from '../core/agent-value.js';
import type { Diagnostic } from '../core/diagnostics.js';
import { errorEffect, type Effect } from '../core/effects.js';
import { describeThrown, errorInfo, type ErrorInfo } from '../core/errors.js';
import type { Signal } from '../core/signal.js';

/** The outcome of one step. */
export interface StepOutcome {
  /** The agent after the step; the agent before it when the step failed. */
  agent: Agent<object>;
  /** Effects for the host to carry out (never `run`: those were carried out in the step). */
  effects: Effect[];
  /** For a call: the reply, or the last action's output, after `transformResult`. */
  result: unknown;
  error: ErrorInfo | undefined;
  diagnostics: Diagnostic[];
  /** The signal as the router saw it, after rewrites. */
  signal: Signal | undefined;
}

/** A step that failed with `error`: the agent unchanged, the error as the one effect. */
export function failedOutcome(agent: Agent<object>, error: ErrorInfo, diagnostics: Diagnostic[] = [], signal?: Signal): StepOutcome {
  return { agent, effects: [errorEffect(error)], result: undefined, error, diagnostics, signal };
}

/**
 * A mount of a skill nobody could provide: the host does not know it (`cause` undefined) or
 * loading it failed with `cause`.
 */
export function unknownSkillOutcome(agent: Agent<object>, skill: string, cause?: unknown): StepOutcome {
  const reason =
    cause === undefined
      ? 'the system does not know it (pass the skill itself, register it, or give the system a resolver that knows it)'
      : `loading it failed: ${describeThrown(cause)}`;
  return failedOutcome(agent, errorInfo('unknown_skill', `cannot mount skill '${skill}' on agent '${agent.id}': ${reason}`, { skill }));
}
