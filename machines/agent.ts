/**
 * The agent machine: one XState actor per agent. Its context holds the agent value — the
 * namespaced skill state, visible as is in the inspector — and it processes one mailbox item
 * at a time: a `signal`, a `run` of instructions (a model's tool calls), a `mount` or an
 * `unmount`.
 *
 * States, as the inspector draws them:
 *
 *   starting ──(mount hooks done)──▶ idle ◀──▶ stepping
 *   any of them ──▶ stopping (it asked to stop itself) ──▶ stopped
 *   idle ──▶ passivated (idle long enough: written to its store and dropped from memory)
 *
 * `starting` while the `mount` hooks of the skills an agent was spawned with have not run (agents
 * whose skills have none start `idle`); `idle` between items; `stepping` while an async step is
 * pending. A sync step (the common case) is done within the item's own transition — no promise,
 * no extra event — so the agent stays `idle` through it. An async step sets `busy`, runs as a
 * promise child (`step`), and is committed when the child is done. Items reach the machine through
 * the host's mailbox, one at a time; an item event the host did not hand over (sent to the actor
 * directly, or while busy) is handed back to it.
 *
 * A step is one `assign`, which runs it, tells the host and commits the new agent. In `idle`,
 * a sync step that leaves the mounted skills as they were (nearly every step) is taken directly:
 * the machine stays where it is and its next snapshot is the current one with the new agent, what
 * XState's statechart algorithm would work out at several times the cost (see `directly`).
 * Only an async step, the first item, and a step that changed the mounted skills send the machine
 * an event of their own (`step.pending`, `step.started`, `step.reconcile`). Stopping is
 * `actor.stop()` (the system stops children first).
 *
 * Each mounted skill has a lifecycle child (`machines/skill-lifecycle.ts`), spawned by name,
 * whose systemId names the agent and the skill. After a step that changed the mounted skills the
 * machine reconciles them with those skills, before the host hears of the step: new skills get an
 * active lifecycle, unmounted ones go inactive. A remounted skill's inactive lifecycle is
 * activated again, unless it runs children: then a fresh one starts the children of the skill
 * and config now mounted. The children are the ones the step checked
 * (`src/engine/skill-checks.ts`): no user code runs in a transition here.
 *
 * The step itself (`src/engine/`) never throws, so no user code can stop this actor.
 * What the step asks of the outside world (answering the caller, effects for the system actor,
 * the next mailbox item) is handed to the agent's host once the step's outcome is known, in the
 * same transition; an event the host sends the agent meanwhile waits for the transition to end.
 */
import { assign, enqueueActions, fromPromise, setup, type ActorRefFrom, type AnyActorLogic, type AnyActorRef } from 'xstate';
import { catalogOf, type Agent } from '../src/core/agent-value.js';
import type { InstructionObject } from '../src/core/instruction.js';
import type { ActiveSkill } from '../src/core/catalog.js';
import type { ErrorInfo } from '../src/core/errors.js';
import type { AnySkill } from '../src/core/skill.js';
import type { Signal } from '../src/core/signal.js';
import { isThenable, type MaybePromise } from '../src/core/maybe-async.js';
import { childSpecs, failedOutcome, stepAgent, unknownSkillOutcome, type StepOptions, type StepOutcome, type WorkItem } from '../src/engine/index.js';
import {
  lifecycleMachines,
  lifecycleSystemId,
  planChildren,
  type LifecycleContext,
  type LifecycleInput,
  type LifecycleReport,
  type LifecycleState,
} from './skill-lifecycle.js';
import { actionHandoff, persistedWithout, unguardedTransition, withDirectTransitions } from './xstate-internals.js';

/** Items as events: plain data, so the inspector and traces show them as they are. */
export type AgentItemEvent =
  | { type: 'signal'; signal: Signal }
  | { type: 'run'; instructions: InstructionObject[]; record?: InstructionObject }
  | { type: 'mount'; skill: string; config?: Record<string, unknown> }
  | { type: 'unmount'; skill: string }
  /** The first item of a spawned agent whose skills have `mount` hooks: it runs them. */
  | { type: 'start' };

type StepResult = { event: AgentItemEvent; outcome: StepOutcome };

export type AgentEvent =
  | AgentItemEvent
  | { type: 'xstate.done.actor.step'; output: StepResult }
  | { type: 'xstate.error.actor.step'; error: unknown }
  /** Raised by the machine itself: a step went async, or the first item (mount hooks) was done at once. */
  | { type: 'step.pending' }
  | { type: 'step.started' }
  /** Raised by the machine itself: a sync step changed the mounted skills, so lifecycles follow. */
  | { type: 'step.reconcile' }
  /** From its host: the agent takes no more items (it asked to stop itself), or it is stopped now. */
  | { type: 'agent.stopping' }
  | { type: 'agent.stopped' }
  /** From its host: the agent is passivated (its actor stops next; it wakes as a new actor of the same id). */
  | { type: 'agent.passivated' }
  | LifecycleReport;

/** What the agent machine needs from the runtime around it. */
export interface AgentHost {
  readonly id: string;
  /** Whether the item being processed was a call (so `transformResult` runs). */
  isCall(event: AgentItemEvent): boolean;
  /** Whether `event` is the item the host handed over (anything else goes back through its mailbox). */
  owns(event: AgentItemEvent): boolean;
  /** The skill a `mount` event mounts: found, failed to be found (a resolver threw), or unknown (undefined: try loading it). */
  resolveSkill(event: Extract<AgentItemEvent, { type: 'mount' }>): { skill: AnySkill } | { error: ErrorInfo } | undefined;
  /** Loads a skill known by name but not loaded yet (a document skill); undefined when nobody knows it. */
  loadSkill(name: string): Promise<AnySkill | undefined>;
  /** Lifecycle states to resume, for an agent restored from a snapshot. */
  resumeState(skill: string): LifecycleState | undefined;
  /** Skills a restored agent had unmounted when its snapshot was taken: their lifecycles start inactive. */
  unmountedSkills(): readonly string[];
  /** The step for `event` is over: answer its caller, interpret effects, move to the next item. */
  finished(event: AgentItemEvent, outcome: StepOutcome): void;
  /** A step went async; items arriving meanwhile wait in the mailbox. */
  began(): void;
  /** An item event the host did not hand over (sent to the actor directly): it goes through the mailbox. */
  received(event: AgentItemEvent): void;
  /** An async step's promise rejected (the step never rejects; this is a last line of defence). */
  crashed(error: unknown): void;
  lifecycle(report: LifecycleReport): void;
  /** What the host hands the step engine (how user code is called), when it has anything to: read at each step. */
  readonly stepOptions: StepOptions | undefined;
  /** Kept small for the inspector: the host is not data. */
  toJSON(): unknown;
}

export interface AgentContext {
  agent: Agent<object>;
  host: AgentHost;
  /** An async step is running; items wait in the mailbox. */
  busy: boolean;
}

export interface AgentInput {
  agent: Agent<object>;
  host: AgentHost;
}

/** The lifecycle child's id under the agent. */
export function lifecycleId(skill: string): string {
  return `skill:${skill}`;
}

/** The work an item event asks for; `load` when a mounted skill must be loaded first; `refused` when it cannot be found. */
function toItem(event: AgentItemEvent, host: AgentHost): WorkItem | { load: string } | { refused: ErrorInfo } {
  switch (event.type) {
    case 'signal':
      return { kind: 'signal', signal: event.signal, call: host.isCall(event) };
    case 'run':
      return { kind: 'instructions', instructions: event.instructions, record: event.record };
    case 'mount': {
      const found = host.resolveSkill(event);
      if (found === undefined) return { load: event.skill };
      if ('error' in found) return { refused: found.error };
      return { kind: 'mount', skill: found.skill, config: event.config };
    }
    case 'unmount':
      return { kind: 'unmount', skill: event.skill };
    case 'start':
      return { kind: 'start' };
  }
}

/**
 * The part of XState's action enqueuer that committing a step uses. XState's own enqueuer type
 * is tied to the machine being set up, which a function shared by two of its actions cannot
 * name; this structural view keeps that function typed.
 */
interface CommitEnqueuer {
  (action: () => void): void;
  assign(values: Partial<AgentContext>): void;
  sendTo(target: AnyActorRef | string, event: { type: 'activate' | 'deactivate' }): void;
  spawnChild(src: LifecycleActorName | AnyActorLogic, options: LifecycleSpawnOptions): void;
  stopChild(target: AnyActorRef | string): void;
}

/**
 * Applies a finished step: the new agent into context, lifecycle children reconciled with the
 * mounted skills, then the host told (as an action, so after the transition is computed).
 */
function commit(enqueue: CommitEnqueuer, context: AgentContext, children: Record<string, AnyActorRef | undefined>, event: AgentItemEvent, outcome: StepOutcome): void {
  const before = context.agent;
  const after = outcome.agent;
  if (after !== before) {
    enqueue.assign({ agent: after });
    if (after.mounted !== before.mounted) {
      for (const op of reconcile(children, before, after)) applyLifecycleOp(enqueue, op);
    }
  }
  enqueue(() => context.host.finished(event, outcome));
}

function applyLifecycleOp(enqueue: CommitEnqueuer, op: LifecycleOp): void {
  if (op.op === 'spawn') enqueue.spawnChild(op.src, spawnOptions(op));
  else if (op.op === 'stop') enqueue.stopChild(op.child);
  else enqueue.sendTo(op.child, { type: op.op });
}

/** How a lifecycle is spawned: its id under the agent, its systemId, and input for a supervising one. */
type LifecycleSpawnOptions = { id: string; systemId: string; input?: LifecycleInput };

/** What reconciling lifecycles with the mounted skills asks the machine to do. */
type LifecycleOp =
  /** `input` only for a supervising lifecycle (a plain one takes none). */
  | { op: 'spawn'; id: string; systemId: string; input?: LifecycleInput; src: LifecycleActorName | AnyActorLogic }
  /** `child`: the lifecycle, or the id of one spawned by an earlier op of the same step. */
  | { op: 'activate' | 'deactivate' | 'stop'; child: AnyActorRef | string };

/** The plain lifecycle machines, by the name the agent machine declares them under. */
const PLAIN_LIFECYCLES = {
  skillLifecycle: lifecycleMachines.plain.active,
  skillLifecycleInactive: lifecycleMachines.plain.inactive,
  skillLifecycleFailed: lifecycleMachines.plain.failed,
} as const;
type LifecycleActorName = keyof typeof PLAIN_LIFECYCLES;
const PLAIN_BY_STATE: Record<LifecycleState, LifecycleActorName> = {
  active: 'skillLifecycle',
  inactive: 'skillLifecycleInactive',
  failed: 'skillLifecycleFailed',
};

/** Lifecycle changes between two agent values: spawn or activate new skills, deactivate removed ones. */
function reconcile(children: Record<string, AnyActorRef | undefined>, before: Agent<object>, after: Agent<object>): LifecycleOp[] {
  const ops: LifecycleOp[] = [];
  const was = new Set(before.mounted.map((record) => record.name));
  const now = new Set(after.mounted.map((record) => record.name));
  const catalog = catalogOf(after);
  for (const record of after.mounted) {
    if (was.has(record.name)) continue;
    const active = catalog?.skills.get(record.name);
    const child = children[lifecycleId(record.name)];
    // An inactive lifecycle remembers the children (and their logic) of the skill it was spawned
    // for: reused only when neither it nor the skill mounted now has any.
    if (child && childSpecs(active).length === 0 && !supervises(child)) ops.push({ op: 'activate', child });
    else {
      if (child) ops.push({ op: 'stop', child });
      // Mounted at run time: spawned inactive and activated, so the inspector shows it happen.
      const spawn = lifecycleSpawn(active, after.id, record.name, 'inactive');
      ops.push(spawn, { op: 'activate', child: spawn.id });
    }
  }
  for (const record of before.mounted) {
    if (now.has(record.name)) continue;
    const child = children[lifecycleId(record.name)];
    if (child) ops.push({ op: 'deactivate', child });
  }
  return ops;
}

/** Whether a lifecycle runs children: only a supervising one has a context, and it lists them. */
function supervises(lifecycle: AnyActorRef): boolean {
  const context = (lifecycle.getSnapshot() as { context?: Partial<LifecycleContext> }).context;
  return (context?.children?.length ?? 0) > 0;
}

/**
 * How to spawn a skill's lifecycle. Skills without children (most) share the plain lifecycle
 * machines, referenced by name and given no input; a skill with children gets the supervising
 * machine with their logic provided under names, so its own children are referenced by name
 * inside it.
 */
function lifecycleSpawn(active: ActiveSkill | undefined, agentId: string, skillName: string, start: LifecycleState): Extract<LifecycleOp, { op: 'spawn' }> {
  const specs = childSpecs(active);
  const id = lifecycleId(skillName);
  const systemId = lifecycleSystemId(agentId, skillName);
  if (specs.length === 0) return { op: 'spawn', id, systemId, src: PLAIN_BY_STATE[start] };
  const planned = planChildren(skillName, specs);
  return {
    op: 'spawn',
    id,
    systemId,
    input: { agentId, skill: skillName, children: planned.plans, start },
    src: lifecycleMachines.supervising[start].provide({ actors: planned.actors as never }),
  };
}

/** XState's `spawn`, as the context function uses it. */
type LifecycleSpawner = (src: LifecycleActorName | AnyActorLogic, options: LifecycleSpawnOptions) => AnyActorRef;

/**
 * Spawns a lifecycle per mounted skill, as the agent's context is made (one step less than an
 * entry action): active, or where a restored agent's skills were. A restored agent also gets back
 * the inactive lifecycle of each skill it had unmounted, as it had one before.
 */
function startLifecycles(input: AgentInput, spawn: LifecycleSpawner): void {
  const catalog = catalogOf(input.agent);
  for (const record of input.agent.mounted) {
    const start = input.host.resumeState(record.name) ?? 'active';
    const op = lifecycleSpawn(catalog?.skills.get(record.name), input.agent.id, record.name, start);
    spawn(op.src, spawnOptions(op));
  }
  for (const skill of input.host.unmountedSkills()) {
    // Inactive, it runs nothing: a remount with children replaces it (see `reconcile`).
    spawn(PLAIN_BY_STATE.inactive, { id: lifecycleId(skill), systemId: lifecycleSystemId(input.agent.id, skill) });
  }
}

/** XState's spawn options for a lifecycle: a plain one takes no input. */
function spawnOptions(op: Extract<LifecycleOp, { op: 'spawn' }>): LifecycleSpawnOptions {
  return op.input ? { id: op.id, systemId: op.systemId, input: op.input } : { id: op.id, systemId: op.systemId };
}

const NO_CHANGE = Object.freeze({});

/** Runs the step for an item event: never throws; sync unless the step is async. */
function runItem(context: AgentContext, event: AgentItemEvent): MaybePromise<StepOutcome> {
  const item = toItem(event, context.host);
  if ('load' in item) return loadThenMount(context, event as Extract<AgentItemEvent, { type: 'mount' }>);
  if ('refused' in item) return failedOutcome(context.agent, item.refused);
  return stepAgent(context.agent, item, context.host.stepOptions);
}

/** Steps begun by `directly` that it left to the machine (async, or changing the mounted skills), by their item event. */
const begun = actionHandoff<AgentItemEvent, MaybePromise<StepOutcome>>();

const ITEM_TYPES: ReadonlySet<string> = new Set<AgentItemEvent['type']>(['signal', 'run', 'mount', 'unmount', 'start']);

/** Sync steps that changed the mounted skills, until their `step.reconcile` event is taken. */
const reconciling = actionHandoff<AgentHost, { event: AgentItemEvent; outcome: StepOutcome; before: Agent<object> }>();

const agentSetup = setup({
  types: {} as {
    context: AgentContext;
    events: AgentEvent;
    input: AgentInput;
  },
  actors: {
    ...PLAIN_LIFECYCLES,
    pendingStep: fromPromise<StepResult, Promise<StepResult>>(({ input }) => input),
  },
  guards: {
    // Busy with an async step, or not the item the host handed over: back to the mailbox. A step
    // `directly` began was the host's item when it began: its user code may have stopped the
    // agent since (the host then owns nothing), and the machine takes it all the same.
    notNow: ({ context, event }) => !begun.has(event as AgentItemEvent) && (context.busy || !context.host.owns(event as AgentItemEvent)),
  },
  actions: {
    // The item's step, run as the assign that commits it (or begun by `directly`, which left it
    // here). The host is told from here too, in the same transition: a second action on the hot
    // path costs more than its call (with it, every step's objects outlived young-generation
    // collections by the megabyte once an application's modules filled the heap).
    step: assign(({ context, event, spawn, self }) => {
      const itemEvent = event as AgentItemEvent;
      const stepped = begun.take(itemEvent) ?? runItem(context, itemEvent);
      if (isThenable(stepped)) {
        const pending = (stepped as Promise<StepOutcome>).then((outcome) => ({ event: itemEvent, outcome }));
        spawn('pendingStep', { id: 'step', input: pending });
        context.host.began();
        self.send({ type: 'step.pending' });
        return { busy: true };
      }
      const outcome = stepped as StepOutcome;
      const before = context.agent;
      // Started the agent or changed its skills: the machine moves on by an event of its own first.
      if (itemEvent.type === 'start') self.send({ type: 'step.started' });
      if (outcome.agent.mounted !== before.mounted) {
        reconciling.put(context.host, { event: itemEvent, outcome, before });
        self.send({ type: 'step.reconcile' });
      } else context.host.finished(itemEvent, outcome);
      return outcome.agent === before ? NO_CHANGE : { agent: outcome.agent };
    }),
    // A sync step changed the mounted skills: lifecycles follow, then the host is told.
    reconcile: enqueueActions(({ context, enqueue, self }) => {
      const done = reconciling.take(context.host);
      if (!done) return;
      for (const op of reconcile(children(self), done.before, done.outcome.agent)) applyLifecycleOp(enqueue as unknown as CommitEnqueuer, op);
      enqueue(() => context.host.finished(done.event, done.outcome));
    }),
    commitAsync: enqueueActions(({ context, event, enqueue, self }) => {
      const { event: itemEvent, outcome } = (event as Extract<AgentEvent, { type: 'xstate.done.actor.step' }>).output;
      enqueue.stopChild('step');
      enqueue.assign({ busy: false });
      commit(enqueue as unknown as CommitEnqueuer, context, children(self), itemEvent, outcome);
    }),
    handBack: ({ context, event }) => context.host.received(event as AgentItemEvent),
    stepCrashed: enqueueActions(({ context, event, enqueue }) => {
      enqueue.stopChild('step');
      enqueue.assign({ busy: false });
      enqueue(() => context.host.crashed((event as Extract<AgentEvent, { type: 'xstate.error.actor.step' }>).error));
    }),
    reportLifecycle: ({ context, event }) => context.host.lifecycle(event as LifecycleReport),
  },
});

/** How every live state stops: declared on each, so the diagram draws the way out. */
const STOPPING = { 'agent.stopping': { target: 'stopping' }, 'agent.stopped': { target: 'stopped' } } as const;

/**
 * The mailbox items, declared on every state rather than once on the root: XState looks for an
 * event's transitions in the active state before its parent, and each look is a lookup of its
 * own, so items found in the first place looked cost one lookup a step instead of two.
 */
const ITEMS = {
  signal: [{ guard: 'notNow', actions: 'handBack' }, { actions: 'step' }],
  run: [{ guard: 'notNow', actions: 'handBack' }, { actions: 'step' }],
  mount: [{ guard: 'notNow', actions: 'handBack' }, { actions: 'step' }],
  unmount: [{ guard: 'notNow', actions: 'handBack' }, { actions: 'step' }],
  start: [{ guard: 'notNow', actions: 'handBack' }, { actions: 'step' }],
} as const;

/**
 * The agent machine, starting in `starting` (its first item runs mount hooks) or `idle`. XState's
 * persisted snapshot of an agent's actor (`ref.actor.getPersistedSnapshot()`) leaves out
 * the host: it is the runtime, not data, and it leads back to the actor. The agent value, its
 * lifecycles and the machine's state are all there; `ref.persist()` is what restores an agent.
 */
function agentMachineFrom(initial: 'starting' | 'idle') {
  return persistedWithout(
    agentSetup.createMachine({
    id: 'agent',
    context: ({ input, spawn }) => {
      startLifecycles(input, spawn as unknown as LifecycleSpawner);
      return { agent: input.agent, host: input.host, busy: false };
    },
    initial,
    states: {
      starting: { on: { ...ITEMS, 'step.pending': 'stepping', 'step.started': 'idle', ...STOPPING } },
      idle: { on: { ...ITEMS, 'step.pending': 'stepping', 'agent.passivated': 'passivated', ...STOPPING } },
      stepping: {
        on: {
          ...ITEMS,
          'xstate.done.actor.step': { target: 'idle', actions: 'commitAsync' },
          'xstate.error.actor.step': { target: 'idle', actions: 'stepCrashed' },
          ...STOPPING,
        },
      },
      // The step that asked to stop finishes here; nothing else is taken from the mailbox.
      stopping: {
        on: {
          ...ITEMS,
          'xstate.done.actor.step': { actions: 'commitAsync' },
          'xstate.error.actor.step': { actions: 'stepCrashed' },
          'agent.stopped': { target: 'stopped' },
        },
      },
      // The last state before the actor is stopped (its snapshot stays here, status 'stopped').
      stopped: { on: ITEMS },
      // The last state of an idle agent's actor before it is dropped from memory; the agent lives
      // on in its store and wakes, on its next use, as a new actor of the same id.
      passivated: { on: ITEMS },
    },
    on: {
      'skill.lifecycle': { actions: 'reportLifecycle' },
      'step.reconcile': { actions: 'reconcile' },
    },
  }),
    'host',
  );
}

/**
 * An idle agent's sync step that leaves its mounted skills as they were (nearly every step) is
 * taken directly: it is the `step` assign of `idle`, and nothing else happens in that transition,
 * so the next snapshot is the current one with the new agent (see `withDirectTransitions`). Any
 * other step is begun here and left to the machine, which takes it where this one stopped.
 */
function directly(machine: ReturnType<typeof agentMachineFrom>): ReturnType<typeof agentMachineFrom> {
  const transitions = new Map([...ITEM_TYPES].map((type) => [type, unguardedTransition(machine, 'idle', type)]));
  return withDirectTransitions(machine, (snapshot, event) => {
    if (snapshot.value !== 'idle' || !ITEM_TYPES.has(event.type) || event.type === 'start') return undefined;
    const context = snapshot.context;
    const itemEvent = event as AgentItemEvent;
    if (context.busy || !context.host.owns(itemEvent)) return undefined;
    const stepped = runItem(context, itemEvent);
    if (isThenable(stepped) || stepped.agent.mounted !== context.agent.mounted) {
      begun.put(itemEvent, stepped);
      return undefined;
    }
    context.host.finished(itemEvent, stepped);
    // Every field named (a spread copy costs several times more, at every step).
    const next: AgentContext = { agent: stepped.agent, host: context.host, busy: context.busy };
    return { context: next, transition: transitions.get(event.type)! };
  });
}

/** The agent machine of an agent that starts `idle`. */
export const agentMachine = directly(agentMachineFrom('idle'));
/** The agent machine of an agent whose first item runs its skills' `mount` hooks. */
export const startingAgentMachine = directly(agentMachineFrom('starting'));

/** A mount of a skill not loaded yet: load it (an async step, so it keeps its place in the mailbox), then mount it. */
function loadThenMount(context: AgentContext, event: Extract<AgentItemEvent, { type: 'mount' }>): Promise<StepOutcome> {
  const agent = context.agent;
  return context.host.loadSkill(event.skill).then(
    (skill) => (skill ? stepAgent(agent, { kind: 'mount', skill, config: event.config }, context.host.stepOptions) : unknownSkillOutcome(agent, event.skill)),
    (error: unknown) => unknownSkillOutcome(agent, event.skill, error),
  );
}

function children(self: AnyActorRef): Record<string, AnyActorRef | undefined> {
  return self.getSnapshot().children as Record<string, AnyActorRef | undefined>;
}

export type AgentActor = ActorRefFrom<typeof agentMachine>;
