/**
 * What users hold of a running agent: the `AgentRef` interface, the read-only view it gives and
 * the reports of its calls. Types only; `process-ref.ts` implements them. The snapshot it
 * persists to is defined with the rest of persistence (`persistence.ts`).
 */
import type { SkillConfigInput } from '../core/agent-definition.js';
import type { Agent, MountedSkill } from '../core/agent-value.js';
import type { Diagnostic } from '../core/diagnostics.js';
import type { Effect } from '../core/effects.js';
import type { Instruction } from '../core/instruction.js';
import type { Signal, SignalLike } from '../core/signal.js';
import type { AnySkill } from '../core/skill.js';
import type { Toolset } from '../core/toolset.js';
import type { AgentActor } from '../../machines/agent.js';
import type { LifecycleState } from '../../machines/skill-lifecycle.js';
import type { AgentSnapshot } from './persistence.js';

export type { AgentSnapshot, ScheduledSignal } from './persistence.js';

/**
 * Options of `ref.call`, `ref.run`, `ref.callTool`, `ref.mount` and `ref.unmount`: how long the
 * caller waits. A caller that stops waiting (timed out or cancelled) leaves its item queued: it
 * still runs, or is applied, in its turn.
 */
export interface CallOptions {
  /** Milliseconds to wait for the answer; default the system's `callTimeout` (5000). */
  timeout?: number;
  /**
   * Cancels the wait: the promise rejects with `cancelled`. A step already under way still
   * finishes; a call whose answer was deferred (a model turn) gets a `skillstate.call.aborted`
   * signal, so the skill answering it can stop its work.
   */
  signal?: AbortSignal;
}

/** What `mount` and `unmount` resolve with. */
export interface MountReport {
  skill: string;
  /** False when the skill was already mounted (or already not). */
  changed: boolean;
  effects: Effect[];
  diagnostics: Diagnostic[];
}

/**
 * An agent's status: idle, working on an async step, stopped, or passivated (written to the
 * system's store and out of memory until its next use; see `createAgentSystem({ passivate })`).
 */
export type AgentStatus = 'idle' | 'working' | 'stopped' | 'passivated';

/** A read-only view of a running agent. */
export interface AgentView<TState extends object = Record<string, unknown>> {
  id: string;
  definition: string;
  status: AgentStatus;
  /** The agent value (plain data plus its link to the code): usable with `cmd`, `toolsForAgent`... */
  agent: Agent<TState>;
  state: TState;
  mounted: MountedSkill[];
  /** Each skill's lifecycle state, by skill name. */
  lifecycles: Record<string, LifecycleState>;
  /** Actions the system has registered for the agent (`skill/action`, or `action` for its own). */
  registeredActions: string[];
  /** Items waiting in the mailbox. */
  mailbox: number;
  parent: string | undefined;
  children: string[];
}

/** A running agent, as users hold it. */
export interface AgentRef<TState extends object = Record<string, unknown>> {
  readonly id: string;
  /** The name of the agent's definition. */
  readonly definition: string;
  readonly parent: string | undefined;
  /**
   * The XState actor, for users who want to subscribe to it or inspect it. Watch it; do not send
   * it events: they would pass by the mailbox, the checks and the bookkeeping that `send`,
   * `call`, `mount` and `stop` go through (a forged lifecycle report would be taken as true).
   */
  readonly actor: AgentActor;
  /**
   * The agent's status, read without waking it: `'passivated'` while it is out of memory (every
   * other use of the ref wakes it, `getSnapshot()` included).
   */
  readonly status: AgentStatus;
  /** Fire and forget. Throws `SignalError` for an invalid signal, `RuntimeError` (`mailbox_full`, `agent_stopped`). */
  send(signal: Signal | SignalLike | string): void;
  /** Resolves with the result (after `transformResult`); rejects with a `RuntimeError` carrying the code. */
  call(signal: Signal | SignalLike | string, options?: CallOptions): Promise<unknown>;
  /**
   * Runs instructions on the agent, in mailbox order, like a signal's step but without routing:
   * this is how a language model's tool calls reach a running agent. Resolves with the last
   * action's output (or the reply); rejects with a `RuntimeError`. Atomic, like every step.
   */
  run(instructions: Instruction | readonly Instruction[], options?: CallOptions): Promise<unknown>;
  /**
   * The agent's toolset for a language model, as `agentToolset` builds it for its current skills:
   * `{ tools, bindings, diagnostics, toInstruction }` — `tools` is the list of function tools.
   * Throws `invalid_options` for an option it does not take (a misspelled `strict`).
   */
  toolset(options?: { strict?: boolean }): Toolset;
  /** @deprecated Renamed `toolset()`: it returns a `Toolset`, whose `tools` is the list. */
  tools(options?: { strict?: boolean }): Toolset;
  /** Runs a model's tool call (arguments as an object or JSON text) through `run`. */
  callTool(name: string, args: unknown, options?: CallOptions): Promise<unknown>;
  /**
   * Mounts a skill at run time, in mailbox order. A skill given by name is looked up in the
   * system. Waited for as a `call` is (`options`: `timeout`, default the system's `callTimeout`,
   * and `signal`): a mount whose caller timed out or cancelled is still applied in its turn.
   */
  mount<S extends AnySkill>(skill: S, config?: SkillConfigInput<S>, options?: CallOptions): Promise<MountReport>;
  mount(skill: string, config?: Record<string, unknown>, options?: CallOptions): Promise<MountReport>;
  /** Unmounts a skill, in mailbox order; waited for as `mount` is (`options`: `timeout`, `signal`). */
  unmount(skill: AnySkill | string, options?: CallOptions): Promise<MountReport>;
  getSnapshot(): AgentView<TState>;
  /** A JSON-serialisable snapshot of the last committed state. */
  persist(): AgentSnapshot;
  /** Ids of the agent's child agents. */
  children(): string[];
  /** Stops the agent and its children. */
  stop(): Promise<void>;
}
