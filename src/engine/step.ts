/**
 * One step of an agent: what happens to it when it processes one item of its mailbox — a
 * signal, instructions (a model's tool calls), a mount, an unmount, or the start of a spawned
 * agent. `stepAgent` is the engine's entry point; see `index.ts` for its contract.
 *
 * Pure: no XState, no timers, no I/O.
 */
import type { AbortSource } from '../core/action.js';
import { catalogOf, unlinkedError, type Agent } from '../core/agent-value.js';
import { describeThrown, errorInfo, withCause, type ErrorInfo } from '../core/errors.js';
import type { InstructionObject } from '../core/instruction.js';
import type { InvokeUserCode } from '../core/invoke.js';
import type { MaybePromise } from '../core/maybe-async.js';
import { deepFreeze } from '../core/plain.js';
import type { Signal } from '../core/signal.js';
import type { AnySkill } from '../core/skill.js';
import { mountStep, startStep, unmountStep } from './mount-step.js';
import { failedOutcome, type StepOutcome } from './outcome.js';
import { AgentStep } from './signal-step.js';

/** One mailbox item, as the engine takes it. */
export type WorkItem =
  | { kind: 'signal'; signal: Signal; call: boolean }
  | {
      kind: 'instructions';
      instructions: InstructionObject[];
      /** An action run right after them, in the same step, given their output as its `output` param. */
      record?: InstructionObject | undefined;
    }
  | { kind: 'mount'; skill: AnySkill; config: Record<string, unknown> | undefined }
  | { kind: 'unmount'; skill: string }
  | { kind: 'start' };

/** What a host may give the engine. */
export interface StepOptions {
  /** Wraps every call of user code (actions, hooks); by default they are called directly. */
  invoke?: InvokeUserCode | undefined;
  /**
   * The abort signal of the step's actions (`ctx.abortSignal`), asked for when one of them first
   * reads it: a host that can cancel a step under way gives it. Without it, the signal is one
   * that is never aborted.
   */
  abortSignal?(): AbortSignal;
}

/** Processes one mailbox item. Never throws; sync unless user code it calls is async. */
export function stepAgent(agent: Agent<object>, item: WorkItem, options?: StepOptions): MaybePromise<StepOutcome> {
  const catalog = catalogOf(agent);
  if (!catalog) return failedOutcome(agent, unlinkedError(agent));
  const invoke = options?.invoke;
  // The options themselves are the source: `abortSignal` is a method of the host's.
  const abort = options?.abortSignal === undefined ? undefined : (options as AbortSource);
  switch (item.kind) {
    case 'signal':
      // Frozen, data included: every hook, route and action of the step reads the one signal.
      try {
        deepFreeze(item.signal);
      } catch (thrown) {
        return failedOutcome(agent, unreadableSignal(item.signal, thrown));
      }
      return new AgentStep(agent, catalog, item.signal, item.call, invoke, abort).runSignal();
    case 'instructions':
      return new AgentStep(agent, catalog, undefined, false, invoke, abort).runInstructions(item.instructions, item.record);
    case 'mount':
      return mountStep(agent, item.skill, item.config, invoke);
    case 'unmount':
      return unmountStep(agent, item.skill);
    case 'start':
      return startStep(agent, invoke);
  }
}

/** The refusal of a signal that cannot be frozen (a getter that throws, a proxy, nesting too deep). */
function unreadableSignal(signal: Signal, thrown: unknown): ErrorInfo {
  return withCause(errorInfo('invalid_signal', `signal '${String(signal.type)}' cannot be read: ${describeThrown(thrown)}`, { subject: String(signal.type) }), thrown);
}
