/**
 * The seam through which work that runs beside a system's agents plugs into the system: the
 * model loop (turns driven by a language model) is one such extension. The runtime knows
 * extensions only by this shape, so it imports nothing of them; what composes the two is the
 * public `createAgentSystem` (`src/system.ts`), above both. Types only.
 */
import type { InspectionEvent } from 'xstate';
import type { Agent } from '../core/agent-value.js';
import type { Diagnostic } from '../core/diagnostics.js';
import type { ErrorInfo } from '../core/errors.js';
import type { InstructionObject } from '../core/instruction.js';
import type { Signal } from '../core/signal.js';
import type { SkillResolver } from '../core/skill-registry.js';
import type { AgentRef, CallOptions } from './agent-ref.js';
import type { StepInterrupt } from './mailbox.js';
import type { Tracer } from './trace.js';

/** What a system gives an extension: its agents, its signals, its reports. */
export interface SystemServices {
  /** A running agent by id (a passivated one's ref, not woken: it wakes on use). */
  get(id: string): AgentRef | undefined;
  /**
   * Runs a tool call of the agent behind `ref` (a ref `get` returned), with `record` (an action
   * of the agent) run in the same step, given the call's output: the call's effect and its record
   * commit together, or neither does. An item reaching the agent while the call runs, for which
   * `interrupt` gives a reason, aborts the call's `ctx.abortSignal` (the call still answers).
   */
  callTool(ref: AgentRef, tool: string, args: unknown, record: InstructionObject, options: CallOptions, interrupt?: StepInterrupt): Promise<unknown>;
  /** The last committed agent value of a running agent (undefined once it stopped, or while it is passivated): cheaper than a snapshot view. */
  agent(id: string): Agent<object> | undefined;
  /** Listens to emitted signals whose type matches `pattern`. Returns the unsubscribe function. */
  subscribe(pattern: string, listener: (signal: Signal) => void): () => void;
  /** Publishes a signal as agent `from` emitting it would. */
  publish(signal: Signal, from: string): void;
  /** Whether a signal of `type` would reach anyone. */
  listening(type: string): boolean;
  diagnose(agentId: string, diagnostic: Diagnostic): void;
  report(agentId: string, error: ErrorInfo): void;
  /** The system's inspector, when it has one. */
  readonly inspect: ((event: InspectionEvent) => void) | undefined;
  /** The system's trace, when it has one. */
  readonly trace: Tracer | undefined;
  /** The system's skill resolvers. */
  readonly resolvers: readonly SkillResolver[];
}

/** An extension, once started on a system: what the system tells it. */
export interface SystemExtension {
  /** An agent was restored from a snapshot (by `restore`, `loadAndRestore` or `restoreAll`) and runs. */
  restored?(ref: AgentRef): void;
  /** The system is shutting down: called before its agents stop. */
  stop?(): void;
  /** Whether the extension has work under way for this agent (a model turn in flight): a passivating system keeps it in memory. */
  keeps?(agent: Agent<object>): boolean;
}

/** Starts an extension on a system, given the system's services. */
export type StartExtension = (services: SystemServices) => SystemExtension;
