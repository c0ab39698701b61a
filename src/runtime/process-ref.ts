/**
 * The `AgentRef` users hold: a thin face over an agent's process. It checks what users hand it
 * (signals, instructions, options) and submits items to the agent's mailbox; what it shows (the
 * view, the snapshot, the toolset) it reads from the process each time, so it keeps no agent
 * state of its own. One ref per incarnation: once its agent is stopped, every use is
 * `agent_stopped`, even after an agent of the same id is spawned again. A passivated agent
 * (`passivation.ts`) is the same incarnation: the ref lets go of its process, and its next use
 * wakes the agent from the store first, synchronously, so what it sends keeps its order.
 */
import { catalogOf, type Agent } from '../core/agent-value.js';
import { errorInfo, type ErrorInfo } from '../core/errors.js';
import { plainInstructions, type Instruction, type InstructionObject } from '../core/instruction.js';
import { toSignal, type Signal, type SignalLike } from '../core/signal.js';
import type { AnySkill } from '../core/skill.js';
import { agentToolOptionsProblem, agentToolset, type Toolset } from '../core/toolset.js';
import type { AgentActor, AgentItemEvent } from '../../machines/agent.js';
import type { AgentProcess } from './agent-process.js';
import type { StepInterrupt } from './mailbox.js';
import type { AgentRef, AgentStatus, AgentView, CallOptions, MountReport } from './agent-ref.js';
import { RuntimeError } from '../core/runtime-error.js';
import { unknownOption } from '../core/options.js';
import { takeSnapshot, type AgentSnapshot } from './persistence.js';

const toolsets = new WeakMap<object, { plain?: Toolset; strict?: Toolset }>();

/** The toolset of an agent value, built once per set of mounted skills (its catalog). */
function toolsetFor(agent: Agent<object>, strict: boolean): Toolset {
  const catalog = catalogOf(agent);
  if (!catalog) return agentToolset(agent, { strict });
  let cached = toolsets.get(catalog);
  if (!cached) toolsets.set(catalog, (cached = {}));
  const key = strict ? 'strict' : 'plain';
  return (cached[key] ??= agentToolset(agent, { strict }));
}

/** The options `call`, `run`, `callTool`, `mount` and `unmount` take: one entry per key of `CallOptions`. */
const CALL_OPTIONS = { timeout: true, signal: true } as const satisfies Record<keyof CallOptions, true>;

/**
 * The timeout of a call, a run, a mount or an unmount (`where` names it): the option, else the
 * system's default. A timeout is a number of milliseconds above 0, or Infinity; anything else (0,
 * negative, NaN, not a number) is refused, and so is an option `CallOptions` does not have (a
 * misspelled `timeout` would be ignored).
 */
function callTimeout(options: CallOptions, fallback: number, where = 'call'): number | ErrorInfo {
  if (typeof options !== 'object' || options === null) return errorInfo('invalid_options', `${where} options must be an object such as { timeout: 5000 }`);
  const unknown = unknownOption(where, options, CALL_OPTIONS);
  if (unknown) return unknown;
  const timeout: unknown = options.timeout;
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    return errorInfo('invalid_options', 'signal must be an AbortSignal (for example from new AbortController().signal)', { subject: 'signal' });
  }
  if (timeout === undefined) return fallback;
  if (typeof timeout === 'number' && timeout > 0) return timeout;
  return errorInfo('invalid_options', `timeout must be a number of milliseconds above 0, or Infinity for none; got ${typeof timeout === 'number' ? String(timeout) : typeof timeout}`, {
    subject: 'timeout',
  });
}

/** What a ref needs from its system: the default call timeout, and waking or stopping its agent while it is passivated. */
export interface RefHost {
  /** Default `call` timeout in milliseconds. */
  readonly callTimeout: number;
  /**
   * Brings the passivated agent behind `ref` back from the store, under the same ref, and returns
   * its process. Throws `agent_stopped` for a ref that reaches no agent, and the error that kept
   * it from waking (its row gone, its definition unknown) naming the agent.
   */
  wake(ref: AgentRef<object>): AgentProcess<object>;
  /** Whether `ref` is the ref of an agent passivated now (not one stopped or dropped meanwhile, nor of a system shut down). */
  isPassivated(ref: AgentRef<object>): boolean;
  /** Stops an agent and its children. */
  stopAgent(id: string, reason: string): Promise<void>;
}

/** A running agent, as users hold it. */
export class ProcessRef<TState extends object = Record<string, unknown>> implements AgentRef<TState> {
  readonly id: string;
  readonly definition: string;
  readonly parent: string | undefined;
  /** The agent's process; undefined while the agent is passivated. */
  private current: AgentProcess<TState> | undefined;
  private readonly host: RefHost;

  /** The ref of `process`, or, with none, of an agent that starts passivated (opened from the store without waking). */
  constructor(host: RefHost, id: string, definition: string, parent: string | undefined, process: AgentProcess<TState> | undefined) {
    this.id = id;
    this.definition = definition;
    this.parent = parent;
    this.current = process;
    this.host = host;
  }

  /** The agent's process, woken from the store first when the agent is passivated. */
  private get process(): AgentProcess<TState> {
    return this.current ?? (this.host.wake(this as AgentRef<object>) as AgentProcess<TState>);
  }

  /** The agent left memory (its snapshot is in the store): the next use wakes it. */
  passivated(): void {
    this.current = undefined;
  }

  /** The agent was woken as `process`. */
  woke(process: AgentProcess<TState>): void {
    this.current = process;
  }

  /** `use` of the agent's process, woken first if need be; a wake that fails is the promise's rejection. */
  private reach<T>(use: (process: AgentProcess<TState>) => Promise<T>): Promise<T> {
    let process: AgentProcess<TState>;
    try {
      process = this.process;
    } catch (error) {
      return Promise.reject(error);
    }
    return use(process);
  }

  get status(): AgentStatus {
    const process = this.current;
    // Dropped while passivated (its parent stopped, the system shut down): stopped.
    if (process === undefined) return this.host.isPassivated(this as AgentRef<object>) ? 'passivated' : 'stopped';
    return process.mailbox.stopped ? 'stopped' : process.mailbox.phase === 'working' ? 'working' : 'idle';
  }

  get actor(): AgentActor {
    return this.process.actor;
  }

  send(signal: Signal | SignalLike | string): void {
    const checked = toSignal(signal);
    const process = this.process;
    process.system.trace?.({ kind: 'signal', agent: this.id, id: checked.id, type: checked.type, call: false });
    process.mailbox.enqueue({ event: { type: 'signal', signal: checked }, ticket: undefined, call: false });
  }

  call(signal: Signal | SignalLike | string, options: CallOptions = {}): Promise<unknown> {
    let checked: Signal;
    let process: AgentProcess<TState>;
    try {
      checked = toSignal(signal);
      process = this.process;
    } catch (error) {
      return Promise.reject(error);
    }
    const timeout = callTimeout(options, process.system.callTimeout);
    if (typeof timeout !== 'number') return Promise.reject(new RuntimeError(timeout, this.id));
    const replies = process.replies;
    const duplicate = replies.called(checked);
    if (duplicate) return Promise.reject(new RuntimeError(duplicate, this.id));
    const id = checked.id;
    process.system.trace?.({ kind: 'signal', agent: this.id, id, type: checked.type, call: true });
    return process.mailbox.submit(
      { type: 'signal', signal: checked },
      {
        call: true,
        timeout,
        what: `call '${checked.type}'`,
        abort: options.signal,
        // A deferred answer's work goes on inside the agent: tell it the caller gave up.
        onCancelled: (ticket) => replies.aborted(id, ticket),
        onSettled: () => replies.answered(id),
      },
    );
  }

  run(instructions: Instruction | readonly Instruction[], options: CallOptions = {}): Promise<unknown> {
    return this.runRecorded(instructions, undefined, options);
  }

  /**
   * `run`, with `record` (when given) run right after the instructions in the same step, given
   * their output as its `output` param: both commit, or neither. The conversation runs a model's
   * tool calls this way, so a snapshot never holds a tool call's effect without its record.
   * `interrupt` says which items arriving while the step runs abort its `ctx.abortSignal`.
   */
  runRecorded(instructions: Instruction | readonly Instruction[], record: InstructionObject | undefined, options: CallOptions = {}, interrupt?: StepInterrupt): Promise<unknown> {
    const list = Array.isArray(instructions) ? (instructions as readonly Instruction[]) : [instructions as Instruction];
    const checked = plainInstructions(record === undefined ? list : [...list, record]);
    if (!checked.ok) return Promise.reject(new RuntimeError(checked.error, this.id));
    const plain = checked.value;
    const recorded = record === undefined ? undefined : plain.pop();
    const timeout = callTimeout(options, this.host.callTimeout);
    if (typeof timeout !== 'number') return Promise.reject(new RuntimeError(timeout, this.id));
    // Named only if the run times out or is cancelled: every tool call comes through here.
    const what = () => `run of ${plain.map((i) => `'${String(i.action)}'`).join(', ')}`;
    const event: AgentItemEvent = recorded === undefined ? { type: 'run', instructions: plain } : { type: 'run', instructions: plain, record: recorded };
    return this.reach((process) => process.mailbox.submit(event, { call: true, timeout, what, abort: options.signal, interrupt }));
  }

  toolset(options: { strict?: boolean } = {}): Toolset {
    // A misspelled `strict` would hand a model the non-strict schemas without a word.
    const unknown = agentToolOptionsProblem('toolset', options);
    if (unknown) throw new RuntimeError(unknown, this.id);
    return toolsetFor(this.process.agent, options.strict === true);
  }

  tools(options: { strict?: boolean } = {}): Toolset {
    return this.toolset(options);
  }

  callTool(name: string, args: unknown, options?: CallOptions): Promise<unknown> {
    return this.callToolRecorded(name, args, undefined, options);
  }

  /** `callTool`, with a record that commits with the call, and what interrupts it (see `runRecorded`). */
  callToolRecorded(name: string, args: unknown, record: InstructionObject | undefined, options?: CallOptions, interrupt?: StepInterrupt): Promise<unknown> {
    const converted = this.toolset().toInstruction(name, args);
    if (!converted.ok) return Promise.reject(new RuntimeError(converted.error, this.id));
    return this.runRecorded(converted.instruction, record, options, interrupt);
  }

  mount(skill: AnySkill | string, config?: Record<string, unknown>, options: CallOptions = {}): Promise<MountReport> {
    const name = typeof skill === 'string' ? skill : skill?.name;
    if (typeof name !== 'string') return Promise.reject(new RuntimeError(errorInfo('invalid_skill', 'mount needs a skill or a skill name'), this.id));
    const event: AgentItemEvent = config === undefined ? { type: 'mount', skill: name } : { type: 'mount', skill: name, config };
    return this.submitChange(event, `mount '${name}'`, options, typeof skill === 'string' ? undefined : skill);
  }

  unmount(skill: AnySkill | string, options: CallOptions = {}): Promise<MountReport> {
    const name = typeof skill === 'string' ? skill : skill?.name;
    if (typeof name !== 'string') return Promise.reject(new RuntimeError(errorInfo('invalid_skill', 'unmount needs a skill or a skill name'), this.id));
    return this.submitChange({ type: 'unmount', skill: name }, `unmount '${name}'`, options, undefined);
  }

  /**
   * Queues a mount or an unmount, waited for as a call is: at most its timeout, until its signal
   * aborts. The caller who stops waiting gets `timeout` or `cancelled`; the item stays queued and
   * is applied in its turn all the same, as a timed-out call's step still runs.
   */
  private submitChange(event: AgentItemEvent & { type: 'mount' | 'unmount' }, what: string, options: CallOptions, skill: AnySkill | undefined): Promise<MountReport> {
    const timeout = callTimeout(options, this.host.callTimeout, event.type);
    if (typeof timeout !== 'number') return Promise.reject(new RuntimeError(timeout, this.id));
    return this.reach((process) => process.mailbox.submit(event, { call: false, timeout, what, skill, abort: options.signal }) as Promise<MountReport>);
  }

  getSnapshot(): AgentView<TState> {
    const process = this.process;
    const agent = process.agent;
    const mailbox = process.mailbox;
    return {
      id: this.id,
      definition: this.definition,
      // Awake by now: the status of its process.
      status: this.status,
      agent,
      state: agent.state,
      mounted: agent.mounted,
      lifecycles: process.lifecycles.states(agent.mounted),
      registeredActions: process.registeredActions(),
      mailbox: mailbox.size,
      parent: this.parent,
      children: process.children(),
    };
  }

  /**
   * The agent as plain JSON, a copy. State (or a mounted skill's config, or a scheduled signal's
   * data) holding something JSON cannot hold — a BigInt, a function, a cycle, a `Map`... — is an
   * `invalid_state` error naming the agent and the path of the first such value.
   */
  persist(): AgentSnapshot {
    return takeSnapshot(this.process);
  }

  children(): string[] {
    return this.process.children();
  }

  stop(): Promise<void> {
    // The system wakes a passivated agent to stop it, or drops one that cannot be woken.
    if (this.current === undefined && this.host.isPassivated(this as AgentRef<object>)) return this.host.stopAgent(this.id, 'stopped by request');
    return this.reach((process) => {
      // A ref belongs to one incarnation: once stopped, its id may name a new agent it must not touch.
      if (process.isStopped) return Promise.reject(process.deadRef());
      return process.system.stopAgent(this.id, 'stopped by request');
    });
  }

  toJSON(): unknown {
    return { agent: this.id };
  }
}
