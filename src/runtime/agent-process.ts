/**
 * One running agent: its XState actor, its mailbox (`mailbox.ts`), its skill lifecycles
 * (`lifecycles.ts`), its registered actions and scheduled signals. It is both the host the agent
 * machine talks to (`AgentHost`) and the `AgentRef` users hold, and it reaches its system only
 * through `ProcessHost`.
 *
 * An item event sent to the actor directly (`ref.actor.send`) is handed back here and takes its
 * turn in the mailbox like any other: there is one way in.
 *
 * The agent users see (`getSnapshot`, `persist`, `tools`) is the last committed one, recorded
 * when a step finishes: subscribers and listeners called while the step's effects are carried
 * out already see the state the step produced.
 */
import type { AgentDefinition } from '../core/agent-definition.js';
import { catalogOf, type Agent } from '../core/agent-value.js';
import type { Blueprint } from '../core/catalog.js';
import { diagnostic } from '../core/diagnostics.js';
import type { Effect } from '../core/effects.js';
import { describeThrown, errorInfo, reworded, toErrorInfo, withCause, type ErrorInfo } from '../core/errors.js';
import { plainInstructions, type Instruction, type InstructionObject } from '../core/instruction.js';
import { deepFreeze } from '../core/plain.js';
import { toSignal, type Signal, type SignalLike } from '../core/signal.js';
import type { AnySkill } from '../core/skill.js';
import { agentToolset, type Toolset } from '../core/toolset.js';
import type { StepOutcome } from '../engine/index.js';
import type { AgentActor, AgentHost, AgentItemEvent } from '../../machines/agent.js';
import type { LifecycleReport, LifecycleState } from '../../machines/skill-lifecycle.js';
import type { AgentRef, AgentSnapshot, AgentView, CallOptions, MountReport, ScheduledSignal } from './agent-ref.js';
import { RuntimeError } from './errors.js';
import { SkillLifecycles } from './lifecycles.js';
import { Mailbox, type MailboxItem, type MailboxOwner, type Ticket } from './mailbox.js';
import { unknownOption } from './options.js';
import { CALL_ABORTED_SIGNAL } from './broadcast.js';
import { snapshotCopy, unpersistableError } from './persistence.js';
import type { ProcessHost } from './process-host.js';
import { clearTimer, MAX_TIMER_DELAY, type Timer } from './timers.js';
import { traceCause } from './trace.js';
import { callUnmountHooks } from '../engine/unmount-hooks.js';

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

/** What a step record in the trace names: the signal's type, the actions run, or the skill. */
function traceSubject(event: AgentItemEvent, outcome: StepOutcome): string {
  switch (event.type) {
    case 'signal':
      return (outcome.signal ?? event.signal).type;
    case 'run': {
      const actions = event.instructions.map((instruction) => String(instruction.action)).join(',');
      return event.record === undefined ? actions : `${actions},${String(event.record.action)}`;
    }
    case 'mount':
    case 'unmount':
      return event.skill;
    case 'start':
      return 'mount hooks';
  }
}

/** The options `call`, `run` and `callTool` take: one entry per key of `CallOptions`. */
const CALL_OPTIONS = { timeout: true, signal: true } as const satisfies Record<keyof CallOptions, true>;

/**
 * The timeout of a call or a run: the option, else the system's default. A timeout is a number of
 * milliseconds above 0, or Infinity; anything else (0, negative, NaN, not a number) is refused,
 * and so is an option `CallOptions` does not have (a misspelled `timeout` would be ignored).
 */
function callTimeout(options: CallOptions, fallback: number): number | ErrorInfo {
  if (typeof options !== 'object' || options === null) return errorInfo('invalid_options', 'call options must be an object such as { timeout: 5000 }');
  const unknown = unknownOption('call', options, CALL_OPTIONS);
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

/**
 * The error for a call whose signal id is the id of a call to the same agent that has not been
 * answered yet: a deferred answer (`reply` with `to`) finds its caller by that id, so two callers
 * under one id would leave one of them unanswered.
 */
function duplicateCallError(agentId: string, signal: Signal): ErrorInfo {
  return errorInfo(
    'invalid_signal',
    `agent '${agentId}' is still answering a call with signal id '${signal.id}'; a call's signal id must be unique among the calls waiting for an answer (createSignal makes a new id each time)`,
    { subject: signal.id, details: { reason: 'duplicate_call', signal: signal.id, type: signal.type } },
  );
}

/** A running agent. */
export class AgentProcess<TState extends object = Record<string, unknown>> implements AgentHost, AgentRef<TState>, MailboxOwner {
  actor!: AgentActor;
  readonly id: string;
  /** The name of the agent's definition. */
  readonly definition: string;
  /** The ids of its children, made with the first one (most agents have none). */
  childIds: Set<string> | undefined;
  readonly mailbox: Mailbox;
  readonly lifecycles: SkillLifecycles;
  /** The agent as of the last finished step (the actor's context holds the same once its transition is done). */
  private committed: Agent<TState>;
  /** Finds skills mounted by name: the definition's own first. */
  private readonly blueprint: Blueprint;
  /**
   * The actions registered for the agent, kept by `register_action` / `deregister_action`
   * effects. Until the first such effect it is the shared list its catalog started with.
   */
  private registered: Set<string> | undefined;
  registeredAtStart: readonly string[] = [];
  /** The `mount` hooks of the skills it was spawned with have not finished (see `runMountHooks`). */
  starting = false;
  /** Signals scheduled for this agent that have not fired yet, by timer (made on first use). */
  scheduled: Map<Timer, ScheduledSignal> | undefined;
  /** Patterns this agent is indexed under for emitted signals (the system's index keeps them). */
  patterns: readonly string[] = [];
  /** Callers whose answer a step deferred (`defer_reply`), by the id of the signal they called with. */
  private deferred: Map<string, Ticket> | undefined;
  /** Ids of the signals of calls not answered yet: a deferred answer finds its caller by this id, so it is one caller's at a time. */
  private calling: Set<string> | undefined;
  /**
   * A step's outcome is being carried out (effects, listeners, the caller's answer): the actor is
   * still in the transition that ran the step, so stopping it must wait for that to end.
   */
  private finishing = 0;

  constructor(
    initial: Agent<TState>,
    definition: AgentDefinition<TState>,
    readonly system: ProcessHost,
    readonly parent: string | undefined,
    resume: ReadonlyMap<string, LifecycleState> | undefined,
  ) {
    this.id = initial.id;
    this.committed = initial;
    this.definition = definition.name;
    this.blueprint = definition.blueprint;
    this.lifecycles = new SkillLifecycles(initial.id, system.trace, initial.mounted, resume);
    this.mailbox = new Mailbox(this, system.mailboxLimit);
  }

  registeredActions(): string[] {
    return this.registered ? [...this.registered] : [...this.registeredAtStart];
  }

  /** Applies a `register_action` (true) or `deregister_action` (false) effect. */
  registerAction(name: string, registered: boolean): void {
    this.registered ??= new Set(this.registeredAtStart);
    if (registered) this.registered.add(name);
    else this.registered.delete(name);
  }

  // ── AgentRef ──────────────────────────────────────────────────────────────────────────────

  send(signal: Signal | SignalLike | string): void {
    const checked = toSignal(signal);
    this.system.trace?.({ kind: 'signal', agent: this.id, id: checked.id, type: checked.type, call: false });
    this.mailbox.enqueue({ event: { type: 'signal', signal: checked }, ticket: undefined, call: false });
  }

  call(signal: Signal | SignalLike | string, options: CallOptions = {}): Promise<unknown> {
    let checked: Signal;
    try {
      checked = toSignal(signal);
    } catch (error) {
      return Promise.reject(error);
    }
    const timeout = callTimeout(options, this.system.callTimeout);
    if (typeof timeout !== 'number') return Promise.reject(new RuntimeError(timeout, this.id));
    const id = checked.id;
    if (this.calling?.has(id)) return Promise.reject(new RuntimeError(duplicateCallError(this.id, checked), this.id));
    this.system.trace?.({ kind: 'signal', agent: this.id, id, type: checked.type, call: true });
    (this.calling ??= new Set()).add(id);
    return this.mailbox.submit(
      { type: 'signal', signal: checked },
      {
        call: true,
        timeout,
        what: `call '${checked.type}'`,
        abort: options.signal,
        // A deferred answer's work goes on inside the agent: tell it the caller gave up.
        onCancelled: (ticket) => this.deferredAborted(id, ticket),
        onSettled: () => this.calling?.delete(id),
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
   */
  runRecorded(instructions: Instruction | readonly Instruction[], record: InstructionObject | undefined, options: CallOptions = {}): Promise<unknown> {
    const list = Array.isArray(instructions) ? (instructions as readonly Instruction[]) : [instructions as Instruction];
    const checked = plainInstructions(record === undefined ? list : [...list, record]);
    if (!checked.ok) return Promise.reject(new RuntimeError(checked.error, this.id));
    const plain = checked.value;
    const recorded = record === undefined ? undefined : plain.pop();
    const timeout = callTimeout(options, this.system.callTimeout);
    if (typeof timeout !== 'number') return Promise.reject(new RuntimeError(timeout, this.id));
    // Named only if the run times out or is cancelled: every tool call comes through here.
    const what = () => `run of ${plain.map((i) => `'${String(i.action)}'`).join(', ')}`;
    const event: AgentItemEvent = recorded === undefined ? { type: 'run', instructions: plain } : { type: 'run', instructions: plain, record: recorded };
    return this.mailbox.submit(event, { call: true, timeout, what, abort: options.signal });
  }

  toolset(options: { strict?: boolean } = {}): Toolset {
    return toolsetFor(this.agent, options.strict === true);
  }

  tools(options: { strict?: boolean } = {}): Toolset {
    return this.toolset(options);
  }

  callTool(name: string, args: unknown, options?: CallOptions): Promise<unknown> {
    return this.callToolRecorded(name, args, undefined, options);
  }

  /** `callTool`, with a record that commits with the call (see `runRecorded`). */
  callToolRecorded(name: string, args: unknown, record: InstructionObject | undefined, options?: CallOptions): Promise<unknown> {
    const converted = this.toolset().toInstruction(name, args);
    if (!converted.ok) return Promise.reject(new RuntimeError(converted.error, this.id));
    return this.runRecorded(converted.instruction, record, options);
  }

  mount(skill: AnySkill | string, config?: Record<string, unknown>): Promise<MountReport> {
    const name = typeof skill === 'string' ? skill : skill?.name;
    if (typeof name !== 'string') return Promise.reject(new RuntimeError(errorInfo('invalid_skill', 'mount needs a skill or a skill name'), this.id));
    const event: AgentItemEvent = config === undefined ? { type: 'mount', skill: name } : { type: 'mount', skill: name, config };
    return this.mailbox.submit(event, { call: false, what: `mount '${name}'`, skill: typeof skill === 'string' ? undefined : skill }) as Promise<MountReport>;
  }

  unmount(skill: AnySkill | string): Promise<MountReport> {
    const name = typeof skill === 'string' ? skill : skill?.name;
    if (typeof name !== 'string') return Promise.reject(new RuntimeError(errorInfo('invalid_skill', 'unmount needs a skill or a skill name'), this.id));
    return this.mailbox.submit({ type: 'unmount', skill: name }, { call: false, what: `unmount '${name}'` }) as Promise<MountReport>;
  }

  getSnapshot(): AgentView<TState> {
    const agent = this.agent;
    return {
      id: this.id,
      definition: this.definition,
      status: this.mailbox.stopped ? 'stopped' : this.mailbox.phase === 'working' ? 'working' : 'idle',
      agent,
      state: agent.state,
      mounted: agent.mounted,
      lifecycles: this.lifecycles.states(agent.mounted),
      registeredActions: this.registeredActions(),
      mailbox: this.mailbox.size,
      parent: this.parent,
      children: (this.childIds ? [...this.childIds] : []),
    };
  }

  /**
   * The agent as plain JSON, a copy. State (or a mounted skill's config, or a scheduled signal's
   * data) holding something JSON cannot hold — a BigInt, a function, a cycle, a `Map`... — is an
   * `invalid_state` error naming the agent and the path of the first such value.
   */
  persist(): AgentSnapshot {
    const data = this.agent.toJSON();
    const snapshot: AgentSnapshot = {
      format: 'skillstate/agent@1',
      id: this.id,
      definition: this.definition,
      agent: {
        id: data.id,
        definition: data.definition,
        state: this.persistable(data.state, ['state']) as Record<string, unknown>,
        mounted: this.persistable(data.mounted, ['mounted']) as AgentSnapshot['agent']['mounted'],
      },
      lifecycles: this.lifecycles.states(this.agent.mounted),
      children: (this.childIds ? [...this.childIds] : []),
    };
    if (this.parent !== undefined) snapshot.parent = this.parent;
    // The committed state is still the one before the hooks: the restored agent runs them.
    if (this.starting) snapshot.starting = true;
    if (this.scheduled?.size) {
      const entries = [...this.scheduled.values()].sort((a, b) => a.due.localeCompare(b.due));
      snapshot.scheduled = this.persistable(entries, ['scheduled']) as ScheduledSignal[];
    }
    return snapshot;
  }

  /** A JSON copy of part of the snapshot (at `path`), or the `invalid_state` error saying what in it JSON cannot hold. */
  private persistable(value: unknown, path: (string | number)[]): unknown {
    const copied = snapshotCopy(value, path);
    if (!copied.ok) throw new RuntimeError(unpersistableError(this.id, copied.error), this.id);
    return copied.value;
  }

  children(): string[] {
    return (this.childIds ? [...this.childIds] : []);
  }

  stop(): Promise<void> {
    // A ref belongs to one incarnation: once stopped, its id may name a new agent it must not touch.
    if (this.mailbox.stopped) return Promise.reject(this.deadRef());
    return this.system.stopAgent(this.id, 'stopped by request');
  }

  /** The error every use of a stopped agent's ref gets. */
  deadRef(): RuntimeError {
    return new RuntimeError(errorInfo('agent_stopped', `agent '${this.id}' is stopped; this ref no longer reaches any agent, even one spawned later with the same id`), this.id);
  }

  /** The last committed agent value. */
  get agent(): Agent<TState> {
    return this.committed;
  }

  get isStopped(): boolean {
    return this.mailbox.stopped;
  }

  // ── AgentHost (called by the agent machine) ────────────────────────────────────────────────

  isCall(event: AgentItemEvent): boolean {
    return this.mailbox.owns(event) && this.mailbox.current!.call;
  }

  owns(event: AgentItemEvent): boolean {
    return this.mailbox.owns(event);
  }

  resolveSkill(event: Extract<AgentItemEvent, { type: 'mount' }>): { skill: AnySkill } | { error: ErrorInfo } | undefined {
    // The skill given with this very mount comes first: a different skill of the same name already
    // mounted must be refused (skill_conflict), not taken for it.
    if (this.mailbox.owns(event) && this.mailbox.current!.skill) return { skill: this.mailbox.current!.skill };
    const name = event.skill;
    try {
      const skill = catalogOf(this.committed)?.skills.get(name)?.spec ?? this.blueprint.resolveSkill(name) ?? this.system.resolveSkill(name);
      return skill ? { skill } : undefined;
    } catch (error) {
      const info = toErrorInfo(error, (described) => errorInfo('unknown_skill', `finding skill '${name}' failed: ${described}`, { skill: name }));
      return { error: reworded(info, { message: `cannot mount skill '${name}' on agent '${this.id}': ${info.message}` }) };
    }
  }

  loadSkill(name: string): Promise<AnySkill | undefined> {
    return this.system.loadSkill(name);
  }

  resumeState(skill: string): LifecycleState | undefined {
    return this.lifecycles.resumeState(skill);
  }

  unmountedSkills(): readonly string[] {
    return this.lifecycles.unmountedAtStart();
  }

  began(): void {
    this.mailbox.began();
    this.watchStep();
  }

  /** The timer of the async step under way, which says so when the step outlasts a call's wait. */
  private slowStep: ReturnType<typeof setTimeout> | undefined;

  /**
   * A step waiting on user code (a hook or action whose promise has not settled) keeps the agent
   * from taking anything else. Nothing can end it from outside, so when it runs longer than a
   * call waits, a `step_running_long` warning says which item it is; once per step.
   */
  private watchStep(): void {
    const after = this.system.callTimeout;
    const event = this.mailbox.current?.event;
    if (event === undefined || !(after <= MAX_TIMER_DELAY)) return;
    const started = Date.now();
    this.slowStep = setTimeout(() => {
      this.slowStep = undefined;
      const what = event.type === 'signal' ? `signal '${event.signal.type}'` : event.type === 'run' ? 'a run of instructions' : event.type === 'start' ? 'its mount hooks' : `${event.type} of skill '${event.skill}'`;
      const message = `agent '${this.id}': its step for ${what} has been running for ${Date.now() - started} ms, longer than a call waits; the agent takes nothing else until it ends`;
      this.system.diagnose(this.id, diagnostic('warning', 'step_running_long', message, { subject: this.id, details: { item: event.type } }));
    }, after);
    this.slowStep.unref();
  }

  private unwatchStep(): void {
    if (this.slowStep === undefined) return;
    clearTimeout(this.slowStep);
    this.slowStep = undefined;
  }

  received(event: AgentItemEvent): void {
    try {
      this.mailbox.enqueue({ event: this.checked(event), ticket: undefined, call: false });
    } catch (error) {
      const info = toErrorInfo(error, 'invalid_signal');
      this.system.report(this.id, reworded(info, { message: `agent '${this.id}': an event sent to its actor directly was refused: ${info.message}` }));
    }
  }

  /**
   * Queues the agent's first item: the `mount` hooks of the skills it was defined with. Before
   * anything else, so every signal finds them run.
   */
  runMountHooks(): void {
    this.starting = true;
    this.mailbox.enqueue({ event: { type: 'start' }, ticket: undefined, call: false });
  }

  /** An item event from outside the mailbox, checked as `send`, `run`, `mount` and `unmount` check theirs. */
  private checked(event: AgentItemEvent): AgentItemEvent {
    switch (event.type) {
      case 'signal':
        return { type: 'signal', signal: toSignal(event.signal) };
      case 'run': {
        const list: unknown[] = Array.isArray(event.instructions) ? event.instructions : [event.instructions];
        const instructions = plainInstructions(list);
        if (!instructions.ok) throw new RuntimeError(instructions.error, this.id);
        if (event.record === undefined) return { type: 'run', instructions: instructions.value };
        const record = plainInstructions([event.record]);
        if (!record.ok) throw new RuntimeError(record.error, this.id);
        return { type: 'run', instructions: instructions.value, record: record.value[0]! };
      }
      case 'mount':
      case 'unmount':
        if (typeof event.skill !== 'string') throw new RuntimeError(errorInfo('invalid_skill', `${event.type} needs a skill name`), this.id);
        return event;
      case 'start':
        throw new RuntimeError(errorInfo('invalid_signal', "'start' is the runtime's own first item of a spawned agent; it cannot be sent"), this.id);
    }
  }

  crashed(error: unknown): void {
    this.unwatchStep();
    const item = this.mailbox.current;
    if (item) this.mailbox.finished(item.event);
    const info = withCause(errorInfo('signal_failed', `agent '${this.id}': a step failed unexpectedly: ${describeThrown(error)}`), error);
    this.system.report(this.id, info);
    if (item?.ticket) this.mailbox.settle(item.ticket, new RuntimeError(info, this.id));
    this.mailbox.drain();
  }

  finished(event: AgentItemEvent, outcome: StepOutcome): void {
    this.unwatchStep();
    const item = this.mailbox.finished(event);
    // Stopped while the step ran (user code stopped it): its caller has had agent_stopped, and the
    // step's state and effects are dropped, exactly as for an async step cut short by a stop.
    if (this.mailbox.stopped) return;
    const before = this.committed as Agent<object>;
    this.committed = outcome.agent as Agent<TState>;
    this.system.inStep++;
    try {
      this.finishing++;
      try {
        this.complete(event, outcome, item, before);
      } finally {
        this.finishing--;
      }
      if (item) this.mailbox.drain();
    } finally {
      this.system.inStep--;
    }
  }

  lifecycle(report: LifecycleReport): void {
    this.lifecycles.reported(report);
    if (report.restarted) {
      this.system.diagnose(this.id, {
        level: 'warning',
        code: 'child_restarted',
        message: `agent '${this.id}': child '${report.restarted.child}' of skill '${report.skill}' ${report.restarted.reason}; restarted`,
        skill: report.skill,
      });
    }
    if (report.state === 'failed' && report.error) this.system.report(this.id, report.error);
  }

  toJSON(): unknown {
    return { agent: this.id };
  }

  // ── Completing a step ────────────────────────────────────────────────────────────────────

  private complete(event: AgentItemEvent, outcome: StepOutcome, item: MailboxItem | undefined, before: Agent<object>): void {
    if (event.type === 'start') this.starting = false;
    // Frozen before the trace and the listeners see it: the caller's error is made from this very
    // object afterwards, and an observer must not be able to change it.
    if (outcome.error) deepFreeze(outcome.error);
    const trace = this.system.trace;
    if (trace) {
      const record: Parameters<typeof trace>[0] = {
        kind: 'step',
        agent: this.id,
        item: event.type,
        subject: traceSubject(event, outcome),
        ok: outcome.error === undefined,
        effects: outcome.effects.map((effect) => effect.type),
      };
      if (outcome.error) {
        record.error = outcome.error;
        const cause = traceCause(outcome.error.cause);
        if (cause) record.cause = cause;
      }
      trace(record);
    }
    for (const diagnostic of outcome.diagnostics) this.system.diagnose(this.id, diagnostic);
    const left = this.lifecycles.follow(outcome.agent.mounted);
    if (left) {
      this.system.reindex(this.id, outcome.agent);
      if (left.length) callUnmountHooks(before, left, (error) => this.system.report(this.id, error));
    }
    const answered = item?.ticket !== undefined && !item.ticket.settled;
    if (answered && outcome.error) this.system.markAnswered(outcome.error);
    if (outcome.effects.length) this.system.interpret(this.id, outcome.effects, answered);

    const ticket = item?.ticket;
    if (outcome.effects.length && !outcome.error && this.deferReplies(event, ticket, outcome.effects)) return;
    if (!ticket) return;
    if (ticket.settled) {
      this.lateResult(`the answer to ${event.type} came after its caller gave up`);
      return;
    }
    if (outcome.error) {
      this.mailbox.settle(ticket, new RuntimeError(outcome.error, this.id));
      return;
    }
    if (event.type === 'signal' || event.type === 'run' || event.type === 'start') this.mailbox.settle(ticket, undefined, outcome.result);
    else {
      const result = (outcome.result ?? {}) as { mounted?: boolean; unmounted?: boolean };
      const changed = result.mounted ?? result.unmounted ?? false;
      const diagnostics = outcome.diagnostics;
      if (event.type === 'mount' && !changed && this.lifecycles.hasFailed(event.skill)) {
        // Mounting is idempotent, so this mount restarts nothing: say how to restart the skill.
        const note = diagnostic('warning', 'skill_still_failed', `agent '${this.id}': skill '${event.skill}' is already mounted and has failed; unmount it and mount it again to restart its children`, {
          skill: event.skill,
        });
        this.system.diagnose(this.id, note);
        diagnostics.push(note);
      }
      const report: MountReport = { skill: event.skill, changed, effects: outcome.effects, diagnostics };
      this.mailbox.settle(ticket, undefined, report);
    }
  }

  // ── Deferred answers ──────────────────────────────────────────────────────────────────────

  /**
   * Keeps the caller of a step that deferred its answer, and answers the callers that this step's
   * `reply` effects name in `to`. Returns true when the step's own caller now waits for later.
   */
  private deferReplies(event: AgentItemEvent, ticket: Ticket | undefined, effects: readonly Effect[]): boolean {
    let deferred = false;
    for (const effect of effects) {
      if (effect.type === 'defer_reply' && event.type === 'signal' && ticket !== undefined) {
        deferred = true;
        if (ticket.aborted) this.deferredAborted(event.signal.id);
        else if (!ticket.settled) {
          this.deferred ??= new Map();
          // Callers that gave up (timed out) are forgotten here, so a skill that never answers leaks nothing.
          for (const [id, waiting] of this.deferred) if (waiting.settled) this.deferred.delete(id);
          this.deferred.set(event.signal.id, ticket);
        }
      } else if (effect.type === 'reply' && effect.to !== undefined) {
        const waiting = this.deferred?.get(effect.to);
        if (waiting !== undefined) this.deferred!.delete(effect.to);
        if (waiting === undefined || waiting.settled) {
          this.lateResult(`the deferred answer to signal '${effect.to}' found no caller waiting for it (it timed out, was cancelled or answered, or never waited)`, effect.to);
        } else if (effect.error !== undefined) this.mailbox.settle(waiting, new RuntimeError(effect.error, this.id));
        else this.mailbox.settle(waiting, undefined, effect.data);
      }
    }
    return deferred;
  }

  /** Records in the trace an answer nobody receives any more (`late_result`): it is not delivered. */
  private lateResult(what: string, signalId?: string): void {
    this.system.trace?.({
      kind: 'diagnostic',
      agent: this.id,
      diagnostic: diagnostic('info', 'late_result', `agent '${this.id}': ${what}`, signalId === undefined ? {} : { subject: signalId }),
    });
  }

  /**
   * A caller gave up (its `AbortSignal` fired). When its answer was deferred, the agent gets a
   * `skillstate.call.aborted` signal naming the call. `ticket` given: only if that is the caller
   * waiting under `signalId`; none: the caller is known to be the deferred one.
   */
  private deferredAborted(signalId: string, ticket?: Ticket): void {
    if (ticket !== undefined) {
      if (this.deferred?.get(signalId) !== ticket) return;
      this.deferred.delete(signalId);
    }
    if (this.mailbox.stopped) return;
    try {
      this.send({ type: CALL_ABORTED_SIGNAL, data: { signal: signalId } });
    } catch (error) {
      const info = toErrorInfo(error, 'signal_failed');
      this.system.report(this.id, info);
    }
  }

  // ── Stopping ─────────────────────────────────────────────────────────────────────────────

  /**
   * The agent asked to stop itself: it takes nothing more from its mailbox. What waits there,
   * and anything sent from now on, gets `agent_stopped`; the actor stops with `terminate`, once
   * the step that asked is over.
   */
  close(reason: string): void {
    this.mailbox.close(reason, (why) => this.stoppedError(why));
    if (this.actor.getSnapshot().status === 'active') this.actor.send({ type: 'agent.stopping' });
  }

  private stoppedError(reason: string): RuntimeError {
    return new RuntimeError(errorInfo('agent_stopped', `agent '${this.id}' stopped (${reason}) before answering`), this.id);
  }

  /** Stops the actor, answers every waiting caller with `agent_stopped`, cancels timers. */
  terminate(reason: string): void {
    if (this.mailbox.stopped) return;
    this.unwatchStep();
    if (this.scheduled) for (const timer of this.scheduled.keys()) clearTimer(timer);
    this.scheduled = undefined;
    // Stopping an actor from inside its own step, or while its outcome is carried out, would cut
    // the transition short (and drop the `agent.stopped` queued behind it): wait for it to end.
    const inOwnStep = this.mailbox.phase === 'processing' || this.finishing > 0;
    this.mailbox.stop(() => this.stoppedError(reason));
    if (this.deferred) for (const ticket of this.deferred.values()) this.mailbox.settle(ticket, this.stoppedError(reason));
    this.deferred = undefined;
    // Its skills leave with it: their unmount hooks see the last committed state.
    const agent = this.committed as Agent<object>;
    callUnmountHooks(agent, agent.mounted.map((record) => record.name), (error) => this.system.report(this.id, error));
    // The machine shows `stopped` as its last state (queued behind the step when inside one).
    if (this.actor.getSnapshot().status === 'active') this.actor.send({ type: 'agent.stopped' });
    const stop = () => stopActor(this.actor);
    if (inOwnStep) queueMicrotask(stop);
    else stop();
  }

  // ── MailboxOwner (called by the mailbox) ──────────────────────────────────────────────────

  /** Whether any agent step of the system is on the stack. */
  busyElsewhere(): boolean {
    return this.system.inStep > 0;
  }

  /** Hands an item to the actor, counted as a step on the system's stack. */
  deliver(item: MailboxItem): void {
    this.system.inStep++;
    try {
      this.actor.send(item.event);
    } finally {
      this.system.inStep--;
    }
  }
}

/**
 * Stops an agent's actor. One that failed has stopped already, but XState leaves the children
 * of a failed actor running: its skill lifecycles (and their children) are stopped here instead,
 * through `_stop`, the call XState's own `stopChild` makes (the public `stop()` is for root
 * actors only).
 */
function stopActor(actor: AgentActor): void {
  const snapshot = actor.getSnapshot();
  if (snapshot.status !== 'error') {
    actor.stop();
    return;
  }
  for (const child of Object.values(snapshot.children as Record<string, unknown>)) (child as Stoppable | undefined)?._stop();
}

interface Stoppable {
  _stop(): void;
}
