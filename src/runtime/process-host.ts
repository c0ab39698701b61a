/**
 * What an agent process needs from the system it runs in. The system implements it and hands
 * itself to each process, so a process never imports its system (control goes one way: the
 * system drives processes, a process asks its host).
 */
import type { Agent } from '../core/agent-value.js';
import type { Diagnostic } from '../core/diagnostics.js';
import type { Effect } from '../core/effects.js';
import type { ErrorInfo } from '../core/errors.js';
import type { AnySkill } from '../core/skill.js';
import type { RuntimeError } from '../core/runtime-error.js';
import type { HeldAnswer } from './durability.js';
import type { SnapshotSource } from './persistence.js';
import type { Tracer } from './trace.js';

/** A process's view of its system. */
export interface ProcessHost {
  /** Items an agent's mailbox holds at most. */
  readonly mailboxLimit: number;
  /** Default `call` timeout in milliseconds. */
  readonly callTimeout: number;
  readonly trace: Tracer | undefined;
  /**
   * How many agent steps of this system are on the stack. An item sent from inside a step waits
   * in the mailbox until the stack unwinds, so no actor is driven from inside another's action.
   */
  inStep: number;
  /** No agent step is on the stack any more, after one that was delivered ran. */
  stepsOver(): void;
  /** Reports an error (to the caller's subscribers, or as unhandled). `answered`: the caller receives it. */
  report(agentId: string | undefined, error: ErrorInfo, answered?: boolean): void;
  diagnose(agentId: string | undefined, diagnostic: Diagnostic): void;
  /** A waiting caller received `error`: the system does not report it again. */
  markAnswered(error: ErrorInfo): void;
  /** The agent's mounted skills changed: index it under the patterns it now listens to. */
  reindex(agentId: string, agent: Agent<object>): void;
  /** Hands a step's effects to the system actor. */
  interpret(agentId: string, effects: readonly Effect[], answered: boolean): void;
  /** A skill the system knows by name; throws a `RuntimeError` when a resolver fails. */
  resolveSkill(name: string): AnySkill | undefined;
  /** Asks the resolvers that can load skills to load `name`. */
  loadSkill(name: string): Promise<AnySkill | undefined>;
  /** The agent's snapshot changed (a step, a lifecycle): a durable system writes it with its next batch. */
  changed(process: SnapshotSource): void;
  /**
   * Holds an answer until its step is durable (a system in `'step'` durability) and returns
   * true; false: answer at once. Its `settle` gets the write's error, if any.
   */
  holdAnswer(answer: HeldAnswer): boolean;
  /** False when `holdAnswer` never holds one (a system without a store): answers are given at once, and none is made to be held. */
  readonly mayHoldAnswers: boolean;
  /** Stops an agent and its children. */
  stopAgent(id: string, reason: string): Promise<void>;
  /** Idle sweeps the system has made (0 without passivation): a process records it at each step. */
  readonly sweeps: number;
}
