/**
 * The host of one running agent's machine: its XState actor, its mailbox (`mailbox.ts`), its
 * skill lifecycles (`lifecycles.ts`), its registered actions and scheduled signals. It is the
 * `AgentHost` the agent machine talks to and the owner of the mailbox, it carries out each
 * finished step (commits the agent, answers the caller, hands over the effects), and it stops
 * the agent. It reaches its system only through `ProcessHost`.
 *
 * Users never hold it: they hold its `ref` (`process-ref.ts`). Callers waiting for a deferred
 * answer are kept by `deferred-replies.ts`, and snapshots are taken by `persistence.ts`.
 *
 * An item event sent to the actor directly (`ref.actor.send`) is handed back here and takes its
 * turn in the mailbox like any other: there is one way in.
 *
 * The agent users see (`getSnapshot`, `persist`, `tools`) is the last committed one, recorded
 * when a step finishes: subscribers and listeners called while the step's effects are carried
 * out already see the state the step produced.
 *
 * It is also its steps' `StepOptions`: the abort signal of a step's actions (`ctx.abortSignal`)
 * is made here when one first reads it, and aborted when the agent stops while the step is
 * under way or the mailbox says the step is no longer wanted.
 */
import type { AgentDefinition } from '../core/agent-definition.js';
import { catalogOf, type Agent } from '../core/agent-value.js';
import type { Blueprint } from '../core/catalog.js';
import { diagnostic } from '../core/diagnostics.js';
import { describeThrown, errorInfo, reworded, toErrorInfo, withCause, type ErrorInfo } from '../core/errors.js';
import { plainInstructions } from '../core/instruction.js';
import { deepFreeze } from '../core/plain.js';
import { toSignal } from '../core/signal.js';
import type { AnySkill } from '../core/skill.js';
import type { InvokeUserCode } from '../core/invoke.js';
import type { StepOptions, StepOutcome } from '../engine/index.js';
import type { AgentActor, AgentHost, AgentItemEvent } from '../../machines/agent.js';
import type { LifecycleReport, LifecycleState } from '../../machines/skill-lifecycle.js';
import { stopActor } from '../../machines/xstate-internals.js';
import type { AgentRef, MountReport } from './agent-ref.js';
import { DeferredReplies, lateResult, type ReplyOwner } from './deferred-replies.js';
import type { HeldAnswer } from './durability.js';
import { RuntimeError } from '../core/runtime-error.js';
import { SkillLifecycles } from './lifecycles.js';
import { itemName, Mailbox, type MailboxItem, type MailboxOwner, type Ticket } from './mailbox.js';
import type { RowCache, ScheduledSignal, SnapshotSource } from './persistence.js';
import type { ProcessHost } from './process-host.js';
import { clearTimer, MAX_TIMER_DELAY, type Timer } from './timers.js';
import { traceCause } from './trace.js';
import { callUnmountHooks } from '../engine/unmount-hooks.js';
import { observing, tracing } from '../telemetry/otel.js';
import { TRACED_STEP } from '../telemetry/user-code.js';
import { lifecycleSpan, StepSpan } from '../telemetry/step-span.js';

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

/** The host of a running agent's machine. */
export class AgentProcess<TState extends object = Record<string, unknown>> implements AgentHost, MailboxOwner, ReplyOwner, SnapshotSource, StepOptions {
  actor!: AgentActor;
  /** The ref users hold (one per process: a stopped agent's ref never reaches a later one). */
  ref!: AgentRef<TState>;
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
  /**
   * Signals scheduled for this agent that have not fired yet, or fired and wait for their step, by
   * timer (made on first use). A fired signal stays until its step is over, so the snapshot taken
   * meanwhile keeps it: a process that dies before that step fires it again once restored.
   */
  scheduled: Map<Timer, ScheduledSignal> | undefined;
  /** The timers of `scheduled` that fired: their signals were sent and their steps are not over. */
  private firing: Set<Timer> | undefined;
  /** Patterns this agent is indexed under for emitted signals (the system's index keeps them). */
  patterns: readonly string[] = [];
  /** Callers waiting for a deferred answer, and the calls not answered yet (made on the first call or deferred answer). */
  private deferredReplies: DeferredReplies | undefined;
  /**
   * A step's outcome is being carried out (effects, listeners, the caller's answer): the actor is
   * still in the transition that ran the step, so stopping it must wait for that to end.
   */
  private finishing = 0;
  /** The span of the step under way, while a tracer provider is registered. */
  private stepSpan: StepSpan | undefined;
  /** The controller of the step under way's `ctx.abortSignal`: made when an action reads it, or when the step is aborted. */
  private stepAbort: AbortController | undefined;
  /** Steps ended (finished or crashed): which step an action's context belongs to, so one read after its step never gets a later step's signal. */
  steps = 0;
  /** The system's sweep count when the agent last finished a step (or started): how long it has been idle (`passivation.ts`). */
  lastActive: number;
  /** What its last durable row shares with its next one (`storedRow`). */
  rowCache: RowCache | undefined = undefined;

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
    this.lastActive = system.sweeps;
  }

  /** Whether a call of the agent is not answered yet (its answer deferred, or held until its step is written). */
  get hasWaitingCallers(): boolean {
    return this.deferredReplies?.waiting ?? false;
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

  /** Callers waiting for a deferred answer, and the calls not answered yet. */
  get replies(): DeferredReplies {
    return (this.deferredReplies ??= new DeferredReplies(this));
  }

  /** Ids of the agent's child agents. */
  children(): string[] {
    return this.childIds ? [...this.childIds] : [];
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
      const message = `agent '${this.id}': its step for ${itemName(event)} has been running for ${Date.now() - started} ms, longer than a call waits; the agent takes nothing else until it ends`;
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
    this.stepAbort = undefined;
    this.steps++;
    const item = this.mailbox.current;
    if (this.stepSpan) {
      if (item) this.stepSpan.crashed(this, item.event, error);
      this.stepSpan = undefined;
    }
    if (item) this.mailbox.finished(item.event);
    const info = withCause(errorInfo('signal_failed', `agent '${this.id}': a step failed unexpectedly: ${describeThrown(error)}`), error);
    this.system.report(this.id, info);
    if (item?.ticket) this.mailbox.settle(item.ticket, new RuntimeError(info, this.id));
    this.mailbox.drain();
  }

  finished(event: AgentItemEvent, outcome: StepOutcome): void {
    this.unwatchStep();
    this.stepAbort = undefined;
    this.steps++;
    this.lastActive = this.system.sweeps;
    const item = this.mailbox.finished(event);
    const span = this.stepSpan;
    this.stepSpan = undefined;
    // Stopped while the step ran (user code stopped it): its caller has had agent_stopped, and the
    // step's state and effects are dropped, exactly as for an async step cut short by a stop.
    if (this.mailbox.stopped) {
      span?.end(this, event, outcome);
      return;
    }
    const before = this.committed as Agent<object>;
    this.committed = outcome.agent as Agent<TState>;
    // A first step (mount hooks) ends `starting`, and a fired signal's step ends its schedule: the
    // snapshot changes even when the agent's value does not.
    const firedOver = this.firing !== undefined && event.type === 'signal' && this.firedStepped(event.signal.id);
    if (outcome.agent !== before || outcome.effects.length > 0 || firedOver || event.type === 'start') this.system.changed(this);
    this.system.inStep++;
    try {
      this.finishing++;
      try {
        if (span) {
          const carried: StepOutcome = { ...outcome, effects: span.carried(outcome.effects) };
          try {
            span.within(() => this.complete(event, carried, item, before));
          } finally {
            span.end(this, event, carried);
          }
        } else this.complete(event, outcome, item, before);
      } finally {
        this.finishing--;
      }
      if (item) this.mailbox.drain();
    } finally {
      this.system.inStep--;
    }
  }

  /** The scheduled signal of `timer` fell due and is sent: kept until its step is over. */
  fired(timer: Timer): void {
    if (this.scheduled?.has(timer)) (this.firing ??= new Set()).add(timer);
  }

  /** The scheduled signal of `timer` fell due and could not be sent: it is dropped (its failure is reported). */
  unsent(timer: Timer): void {
    this.firing?.delete(timer);
    if (this.scheduled?.delete(timer)) this.system.changed(this);
  }

  /** A step for the signal `id` is over: when a fired scheduled signal, it leaves the schedule (true). */
  private firedStepped(id: string): boolean {
    for (const timer of this.firing!) {
      if (this.scheduled?.get(timer)?.signal.id !== id) continue;
      this.firing!.delete(timer);
      this.scheduled!.delete(timer);
      if (this.firing!.size === 0) this.firing = undefined;
      return true;
    }
    return false;
  }

  lifecycle(report: LifecycleReport): void {
    this.lifecycles.reported(report);
    if (!this.mailbox.stopped) this.system.changed(this);
    if (observing()) {
      if (this.stepSpan) this.stepSpan.lifecycle(report);
      else lifecycleSpan(this, report);
    }
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

  /** The process itself: how its steps call user code, and where their abort signal comes from. */
  get stepOptions(): StepOptions {
    return this;
  }

  /** With a tracer provider registered, each call of user code in a step is a span of its own. */
  get invoke(): InvokeUserCode | undefined {
    return tracing() ? TRACED_STEP.invoke : undefined;
  }

  /**
   * The step under way's abort signal, made on its first read (a step whose actions never read
   * it costs nothing). Born aborted when the step's caller gave up before it began. Read for a
   * step that has ended (`steps` behind the count), a signal never aborted: that step's work is
   * over, and the step under way now, or the next, is not its business.
   */
  abortSignal(steps?: number): AbortSignal {
    if (steps !== undefined && steps !== this.steps) return new AbortController().signal;
    let controller = this.stepAbort;
    if (controller === undefined) {
      controller = this.stepAbort = new AbortController();
      const abandoned = this.mailbox.current?.ticket?.abandoned;
      if (abandoned !== undefined) controller.abort(abandoned);
    }
    return controller.signal;
  }

  /** Aborts the step under way's signal with `reason` (made aborted if nothing read it yet, so a later read sees it). */
  private abortStep(reason: RuntimeError): void {
    (this.stepAbort ??= new AbortController()).abort(reason);
  }

  unwanted(reason: RuntimeError): void {
    this.abortStep(reason);
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
      if (left.length) {
        callUnmountHooks(before, left, (error) => this.system.report(this.id, error));
        this.replies.left(left);
      }
    }
    const answered = item?.ticket !== undefined && !item.ticket.settled;
    if (answered && outcome.error) this.system.markAnswered(outcome.error);
    if (outcome.effects.length) this.system.interpret(this.id, outcome.effects, answered);

    const ticket = item?.ticket;
    if (outcome.effects.length && !outcome.error && this.replies.carryOut(event, ticket, outcome.effects)) return;
    if (!ticket) return;
    if (ticket.settled) {
      lateResult(this, `the answer to ${event.type} came after its caller gave up`);
      return;
    }
    if (outcome.error) {
      this.answer(ticket, new RuntimeError(outcome.error, this.id));
      return;
    }
    if (event.type === 'signal' || event.type === 'run' || event.type === 'start') this.answer(ticket, undefined, outcome.result);
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
      this.answer(ticket, undefined, report);
    }
  }

  /**
   * Gives a step's answer to its caller: at once, or, in a system whose steps are durable before
   * they are answered, once the step is written (a failed write is the caller's error instead).
   */
  answer(ticket: Ticket, error: unknown, value?: unknown): void {
    if (!this.system.mayHoldAnswers || !this.system.holdAnswer(new HeldReply(this.id, this.mailbox, ticket, error, value))) this.mailbox.settle(ticket, error, value);
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
    this.end(reason, () => this.stoppedError(reason), true);
  }

  /**
   * A write of the agent failed and it goes back to its last durable state: this process ends and
   * one restored from the store takes over its ref. Not a stop: no unmount hook runs (the agent
   * keeps its skills, as when it is passivated). Every caller still waiting on this process (a
   * step under way, an item queued, a deferred answer) gets `failure()`: what it asked went back
   * with the agent.
   */
  revert(reason: string, failure: () => RuntimeError): void {
    this.end(reason, failure, false);
  }

  /**
   * Ends the process: its timers cancelled, its waiting callers answered with `error()`, its
   * actor stopped. `leaving`: the agent is stopped, and its skills' unmount hooks run.
   */
  private end(reason: string, error: () => RuntimeError, leaving: boolean): void {
    if (this.mailbox.stopped) return;
    this.unwatchStep();
    // A step still under way (waiting on user code) never commits: its span ends here.
    const current = this.mailbox.current;
    if (this.stepSpan && current) this.stepSpan.stopped(this, current.event, reason);
    this.stepSpan = undefined;
    if (this.scheduled) for (const timer of this.scheduled.keys()) clearTimer(timer);
    this.scheduled = undefined;
    this.firing = undefined;
    // Stopping an actor from inside its own step, or while its outcome is carried out, would cut
    // the transition short (and drop the `agent.stopped` queued behind it): wait for it to end.
    const inOwnStep = this.mailbox.phase === 'processing' || this.finishing > 0;
    const stepPending = this.mailbox.phase === 'working';
    this.mailbox.stop(error);
    this.deferredReplies?.stopped(error);
    // The async step under way never commits: what its actions started is told to stop.
    if (stepPending) this.abortStep(error());
    if (leaving) {
      // Its skills leave with it: their unmount hooks see the last committed state.
      const agent = this.committed as Agent<object>;
      callUnmountHooks(agent, agent.mounted.map((record) => record.name), (failure) => this.system.report(this.id, failure));
    }
    // The machine shows `stopped` as its last state (queued behind the step when inside one).
    if (this.actor.getSnapshot().status === 'active') this.actor.send({ type: 'agent.stopped' });
    const stop = () => stopActor(this.actor);
    if (inOwnStep) queueMicrotask(stop);
    else stop();
  }

  /**
   * Passivation: the agent leaves memory, its snapshot written. Its actor stops and its timers
   * are cancelled, quietly: it is not stopped (no unmount hook runs, nobody waits for an answer),
   * and the agent woken from the store arms its scheduled signals again. Returns the due time of
   * its soonest scheduled signal, if any.
   */
  passivate(): number | undefined {
    let soonest: number | undefined;
    if (this.scheduled) {
      for (const [timer, entry] of this.scheduled) {
        clearTimer(timer);
        const due = Date.parse(entry.due);
        if (soonest === undefined || due < soonest) soonest = due;
      }
    }
    this.scheduled = undefined;
    this.firing = undefined;
    this.unwatchStep();
    // Whatever still holds this process finds it stopped; its lifecycles report nothing more.
    this.mailbox.stop(() => this.deadRef());
    // Its last state says why it went: an inspector watching it draws the agent passivated.
    if (this.actor.getSnapshot().status === 'active') this.actor.send({ type: 'agent.passivated' });
    stopActor(this.actor);
    return soonest;
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
      if (observing()) this.deliverTraced(item);
      else this.actor.send(item.event);
    } finally {
      this.system.inStep--;
    }
    if (this.system.inStep === 0) this.system.stepsOver();
  }

  /** `deliver`, with the step as a span: what its user code starts runs inside it. */
  private deliverTraced(item: MailboxItem): void {
    const span = StepSpan.start(this, item.event, item.sentIn);
    this.stepSpan = span;
    if (span) span.within(() => this.actor.send(item.event));
    else this.actor.send(item.event);
  }
}

/** A step's answer held until the step is durable: given as it was, or as the write's error. */
class HeldReply implements HeldAnswer {
  constructor(
    readonly agentId: string,
    private readonly mailbox: Mailbox,
    private readonly ticket: Ticket,
    private readonly error: unknown,
    private readonly value: unknown,
  ) {}

  settle(failure: RuntimeError | undefined): void {
    if (failure) this.mailbox.settle(this.ticket, failure);
    else this.mailbox.settle(this.ticket, this.error, this.value);
  }

  awaited(): boolean {
    return !this.ticket.settled;
  }
}
