/**
 * The agent machine: one XState actor per agent. Its context holds the agent value — the
 * namespaced skill state, visible as is in the inspector — and it processes one mailbox item
 * at a time: a `signal`, a `mount` or an `unmount`.
 *
 *   idle ──item (sync step)──▶ idle          (the common case: no promise, no extra event)
 *   idle ──item (async step)──▶ working ──step done──▶ idle
 *   any ──stop──▶ stopped
 *
 * Each mounted skill has a lifecycle child (`machines/skill-lifecycle.ts`), spawned by name,
 * whose systemId names the agent and the skill. After every step the machine reconciles them
 * with the mounted skills: new skills get an active lifecycle, unmounted ones go inactive.
 *
 * The step itself (`src/runtime/step.ts`) never throws, so no user code can stop this actor.
 * What the step asks of the outside world (answering the caller, effects for the system actor,
 * the next mailbox item) is handed to the agent's host as actions, after the transition.
 */
import { enqueueActions, fromPromise, setup, type ActorRefFrom, type AnyActorLogic, type AnyActorRef } from 'xstate';
import type { Agent } from '../src/core/catalog.js';
import type { AnySkill } from '../src/core/skill.js';
import type { Signal } from '../src/core/signal.js';
import { isThenable } from '../src/runtime/hooks.js';
import { runStep, type StepOutcome, type WorkItem } from '../src/runtime/step.js';
import { lifecycleMachines, lifecycleSystemId, planChildren, type LifecycleInput, type LifecycleReport, type LifecycleState } from './skill-lifecycle.js';

/** Items as events: plain data, so the inspector and traces show them as they are. */
export type AgentItemEvent =
  | { type: 'signal'; signal: Signal }
  | { type: 'mount'; skill: string; config?: Record<string, unknown> }
  | { type: 'unmount'; skill: string };

export type AgentEvent =
  | AgentItemEvent
  | { type: 'step.async'; pending: Promise<{ event: AgentItemEvent; outcome: StepOutcome }> }
  | LifecycleReport
  | { type: 'stop' };

/** What the agent machine needs from the runtime around it. */
export interface AgentHost {
  readonly id: string;
  /** Whether the item being processed was a call (so `transformResult` runs). */
  isCall(event: AgentItemEvent): boolean;
  /** The spec of a skill named in a `mount` event. */
  resolveSkill(name: string): AnySkill | undefined;
  /** Lifecycle states to resume, for an agent restored from a snapshot. */
  resumeState(skill: string): LifecycleState | undefined;
  /** The step for `event` is over: answer its caller, interpret effects, move to the next item. */
  finished(event: AgentItemEvent, outcome: StepOutcome): void;
  /** A step went async; items arriving meanwhile wait in the mailbox. */
  began(): void;
  /** An item event arrived while a step was running (sent to the actor directly). */
  deferred(event: AgentItemEvent): void;
  /** An async step's promise rejected (the step never rejects; this is a last line of defence). */
  crashed(error: unknown): void;
  lifecycle(report: LifecycleReport): void;
  /** Kept small for the inspector: the host is not data. */
  toJSON(): unknown;
}

export interface AgentContext {
  agent: Agent<object>;
  host: AgentHost;
}

export interface AgentInput {
  agent: Agent<object>;
  host: AgentHost;
}

/** The lifecycle child's id under the agent. */
export function lifecycleId(skill: string): string {
  return `skill:${skill}`;
}

function toItem(event: AgentItemEvent, host: AgentHost): WorkItem | { error: string } {
  switch (event.type) {
    case 'signal':
      return { kind: 'signal', signal: event.signal, call: host.isCall(event) };
    case 'mount': {
      const skill = host.resolveSkill(event.skill);
      if (!skill) return { error: event.skill };
      return { kind: 'mount', skill, config: event.config };
    }
    case 'unmount':
      return { kind: 'unmount', skill: event.skill };
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
  sendTo(target: AnyActorRef, event: { type: 'activate' | 'deactivate' }): void;
  spawnChild(src: LifecycleActorName | AnyActorLogic, options: { id: string; systemId: string; input: LifecycleInput }): void;
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
      for (const op of reconcile(context.host, children, before, after)) applyLifecycleOp(enqueue, op);
    }
  }
  enqueue(() => context.host.finished(event, outcome));
}

function applyLifecycleOp(enqueue: CommitEnqueuer, op: LifecycleOp): void {
  if (op.op === 'spawn') enqueue.spawnChild(op.src, { id: op.id, systemId: op.systemId, input: op.input });
  else enqueue.sendTo(op.child, { type: op.op });
}

/** What reconciling lifecycles with the mounted skills asks the machine to do. */
type LifecycleOp =
  | { op: 'spawn'; id: string; systemId: string; input: LifecycleInput; src: LifecycleActorName | AnyActorLogic }
  | { op: 'activate' | 'deactivate'; child: AnyActorRef };

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
function reconcile(host: AgentHost, children: Record<string, AnyActorRef | undefined>, before: Agent<object>, after: Agent<object>): LifecycleOp[] {
  const ops: LifecycleOp[] = [];
  const was = new Set(before.mounted.map((record) => record.name));
  const now = new Set(after.mounted.map((record) => record.name));
  for (const record of after.mounted) {
    if (was.has(record.name)) continue;
    const child = children[lifecycleId(record.name)];
    ops.push(child ? { op: 'activate', child } : lifecycleSpawn(host, after.id, record.name, record.config, 'active'));
  }
  for (const record of before.mounted) {
    if (now.has(record.name)) continue;
    const child = children[lifecycleId(record.name)];
    if (child) ops.push({ op: 'deactivate', child });
  }
  return ops;
}

/**
 * How to spawn a skill's lifecycle. Skills without children (most) share the plain lifecycle
 * machines, referenced by name; a skill with children gets the supervising machine with their
 * logic provided under names, so its own children are referenced by name inside it.
 */
function lifecycleSpawn(host: AgentHost, agentId: string, skillName: string, config: Record<string, unknown>, start: LifecycleState): LifecycleOp {
  const skill = host.resolveSkill(skillName);
  const { plans, actors } = planChildren(skillName, skill?.children?.(config) ?? []);
  return {
    op: 'spawn',
    id: lifecycleId(skillName),
    systemId: lifecycleSystemId(agentId, skillName),
    input: { agentId, skill: skillName, children: plans, start },
    src: plans.length ? lifecycleMachines.supervising[start].provide({ actors: actors as never }) : PLAIN_BY_STATE[start],
  };
}

export const agentMachine = setup({
  types: {} as {
    context: AgentContext;
    events: AgentEvent;
    input: AgentInput;
  },
  actors: {
    ...PLAIN_LIFECYCLES,
    pendingStep: fromPromise<{ event: AgentItemEvent; outcome: StepOutcome }, Promise<{ event: AgentItemEvent; outcome: StepOutcome }>>(({ input }) => input),
  },
  actions: {
    startLifecycles: enqueueActions(({ context, enqueue }) => {
      for (const record of context.agent.mounted) {
        const start = context.host.resumeState(record.name) ?? 'active';
        applyLifecycleOp(enqueue as unknown as CommitEnqueuer, lifecycleSpawn(context.host, context.agent.id, record.name, record.config, start));
      }
    }),
    process: enqueueActions(({ context, event, enqueue, self }) => {
      const itemEvent = event as AgentItemEvent;
      const item = toItem(itemEvent, context.host);
      if ('error' in item) {
        const outcome = unknownSkillOutcome(context.agent, item.error);
        enqueue(() => context.host.finished(itemEvent, outcome));
        return;
      }
      const stepped = runStep(context.agent, item);
      if (isThenable(stepped)) {
        const pending = (stepped as Promise<StepOutcome>).then((outcome) => ({ event: itemEvent, outcome }));
        enqueue(() => context.host.began());
        enqueue.raise({ type: 'step.async', pending });
        return;
      }
      commit(enqueue as unknown as CommitEnqueuer, context, children(self), itemEvent, stepped as StepOutcome);
    }),
    commitAsync: enqueueActions(({ context, event, enqueue, self }) => {
      const { event: itemEvent, outcome } = (event as unknown as { output: { event: AgentItemEvent; outcome: StepOutcome } }).output;
      commit(enqueue as unknown as CommitEnqueuer, context, children(self), itemEvent, outcome);
    }),
    defer: ({ context, event }) => context.host.deferred(event as AgentItemEvent),
    stepCrashed: ({ context, event }) => context.host.crashed((event as unknown as { error: unknown }).error),
    reportLifecycle: ({ context, event }) => context.host.lifecycle(event as LifecycleReport),
  },
}).createMachine({
  id: 'agent',
  context: ({ input }) => ({ agent: input.agent, host: input.host }),
  entry: 'startLifecycles',
  initial: 'idle',
  on: {
    'skill.lifecycle': { actions: 'reportLifecycle' },
    stop: { target: '.stopped' },
  },
  states: {
    idle: {
      on: {
        signal: { actions: 'process' },
        mount: { actions: 'process' },
        unmount: { actions: 'process' },
        'step.async': { target: 'working' },
      },
    },
    working: {
      invoke: {
        src: 'pendingStep',
        input: ({ event }) => (event as Extract<AgentEvent, { type: 'step.async' }>).pending,
        onDone: { target: 'idle', actions: 'commitAsync' },
        onError: { target: 'idle', actions: 'stepCrashed' },
      },
      on: {
        signal: { actions: 'defer' },
        mount: { actions: 'defer' },
        unmount: { actions: 'defer' },
      },
    },
    stopped: { type: 'final' },
  },
});

function children(self: AnyActorRef): Record<string, AnyActorRef | undefined> {
  return self.getSnapshot().children as Record<string, AnyActorRef | undefined>;
}

function unknownSkillOutcome(agent: Agent<object>, skill: string): StepOutcome {
  const error = {
    code: 'unknown_skill' as const,
    message: `cannot mount skill '${skill}' on agent '${agent.id}': the system does not know it (pass the skill itself, or register it)`,
    skill,
  };
  return { agent, effects: [{ type: 'error', error, meta: { skill } }], result: undefined, error, diagnostics: [], signal: undefined };
}

export type AgentActor = ActorRefFrom<typeof agentMachine>;
