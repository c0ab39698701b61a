/**
 * The lifecycle of one skill on one agent, as a child machine of the agent:
 *
 *   inactive ──activate──▶ activating ──▶ active ──deactivate──▶ deactivating ──▶ inactive
 *                                           │ a child crashes past its restart budget
 *                                           ▼
 *                                         failed ──activate──▶ activating (a remount starts afresh)
 *
 * `activating` starts the skill's children and `deactivating` stops them; both pass on at once
 * (the skill's `mount` and `unmount` hooks run in the agent's step), so a lifecycle rests only in
 * `inactive`, `active` or `failed` — what snapshots record — while the inspector shows every step.
 * A lifecycle spawned for a skill just mounted starts in `activating`.
 *
 * While `active` it runs the skill's children (actor logic from `skill.children(config)`) and
 * supervises them: a crashed child is restarted under its policy — `permanent` (always),
 * `transient` (only after a failure), `temporary` (never) — at most `maxRestarts` times within
 * `withinMs`; past that the lifecycle goes to `failed`, stops every child and tells the agent
 * (`skill.lifecycle`), instead of looping. Restarts are reported the same way; activation and
 * deactivation come from the agent, which records them itself.
 *
 * A skill's child logic is provided to its lifecycle under names (`provide({ actors })`) and
 * spawned by name, which is what lets XState inspect and persist it.
 */
import { assign, enqueueActions, sendParent, setup, type AnyActorLogic } from 'xstate';
import type { ErrorInfo } from '../src/core/errors.js';
import type { ChildSpec, RestartPolicy } from '../src/core/skill.js';
import { withSharedInitialSnapshot } from './xstate-internals.js';

/** The lifecycle state of a skill on a running agent: active while mounted, inactive once unmounted, failed when its children gave up. */
export type LifecycleState = 'inactive' | 'active' | 'failed';

/** Every state of a lifecycle machine: the resting ones, and the two it passes through. */
export type LifecycleMachineState = LifecycleState | 'activating' | 'deactivating';

/** A child as the lifecycle runs it: plain data; its logic is provided under `actor`. */
export interface ChildPlan {
  id: string;
  /** The name its logic is provided under. */
  actor: string;
  input: unknown;
  restart: RestartPolicy;
  maxRestarts: number;
  withinMs: number;
}

export interface LifecycleInput {
  agentId: string;
  skill: string;
  children: ChildPlan[];
  /** Where to start (a restored agent resumes its skills where they were). */
  start: LifecycleState;
}

export interface LifecycleContext {
  agentId: string;
  skill: string;
  children: ChildPlan[];
  /** Restart times per child, within the current window. */
  restarts: Record<string, number[]>;
  failure: ErrorInfo | null;
}

export type LifecycleEvent =
  | { type: 'activate' }
  | { type: 'deactivate' }
  | { type: `xstate.error.actor.${string}`; error: unknown }
  | { type: `xstate.done.actor.${string}`; output: unknown };

/** What the lifecycle tells its agent on every state change. */
export interface LifecycleReport {
  type: 'skill.lifecycle';
  skill: string;
  state: LifecycleState;
  error?: ErrorInfo;
  /** A child that crashed and was restarted (with the reason), when that is what happened. */
  restarted?: { child: string; reason: string };
}

export const DEFAULT_MAX_RESTARTS = 3;
export const DEFAULT_RESTART_WINDOW_MS = 5_000;

/** The systemId of a skill's lifecycle: stable, naming the agent and the skill. */
export function lifecycleSystemId(agentId: string, skill: string): string {
  return `${agentId}/skills/${skill}`;
}

/** The systemId of a skill's child actor. */
export function childSystemId(agentId: string, skill: string, child: string): string {
  return `${agentId}/skills/${skill}/${child}`;
}

function childIdOf(eventType: string): string {
  return eventType.slice(eventType.indexOf('.actor.') + '.actor.'.length);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Plans a skill's children and the logic to provide for them. */
export function planChildren(skill: string, specs: readonly ChildSpec[]): { plans: ChildPlan[]; actors: Record<string, AnyActorLogic> } {
  const plans: ChildPlan[] = [];
  const actors: Record<string, AnyActorLogic> = {};
  for (const spec of specs) {
    const actor = `${skill}.${spec.id}`;
    actors[actor] = spec.logic as unknown as AnyActorLogic;
    plans.push({
      id: spec.id,
      actor,
      input: spec.input,
      restart: spec.restart ?? 'permanent',
      maxRestarts: spec.maxRestarts ?? DEFAULT_MAX_RESTARTS,
      withinMs: spec.withinMs ?? DEFAULT_RESTART_WINDOW_MS,
    });
  }
  return { plans, actors };
}

/** True when another restart of `plan` fits in its budget at time `now`. */
function withinBudget(context: LifecycleContext, plan: ChildPlan, now: number): boolean {
  const recent = (context.restarts[plan.id] ?? []).filter((at) => now - at < plan.withinMs);
  return recent.length < plan.maxRestarts;
}

/** Spawn options of a planned child (its logic is provided under `plan.actor`, a name the base machine does not declare). */
function childOptions(context: LifecycleContext, plan: ChildPlan): { id: string; systemId: string; input: unknown } {
  return { id: plan.id, systemId: childSystemId(context.agentId, context.skill, plan.id), input: plan.input };
}

function planFor(context: LifecycleContext, eventType: string): ChildPlan | undefined {
  const id = childIdOf(eventType);
  return context.children.find((plan) => plan.id === id);
}

const supervision = setup({
  types: {} as {
    context: LifecycleContext;
    events: LifecycleEvent;
    input: LifecycleInput;
  },
  guards: {
    mayRestartAfterError: ({ context, event }) => {
      const plan = planFor(context, event.type);
      return plan !== undefined && plan.restart !== 'temporary' && withinBudget(context, plan, Date.now());
    },
    isTemporary: ({ context, event }) => planFor(context, event.type)?.restart === 'temporary',
    mayRestartAfterDone: ({ context, event }) => {
      const plan = planFor(context, event.type);
      return plan !== undefined && plan.restart === 'permanent' && withinBudget(context, plan, Date.now());
    },
    isPermanent: ({ context, event }) => planFor(context, event.type)?.restart === 'permanent',
  },
  actions: {
    startChildren: enqueueActions(({ context, enqueue }) => {
      for (const plan of context.children) enqueue.spawnChild(plan.actor as never, childOptions(context, plan) as never);
    }),
    stopChildren: enqueueActions(({ context, enqueue }) => {
      for (const plan of context.children) enqueue.stopChild(plan.id);
    }),
    respawnChild: enqueueActions(({ context, event, enqueue }) => {
      const plan = planFor(context, event.type)!;
      enqueue.stopChild(plan.id);
      enqueue.spawnChild(plan.actor as never, childOptions(context, plan) as never);
    }),
    countRestart: assign({
      restarts: ({ context, event }) => {
        const plan = planFor(context, event.type)!;
        const now = Date.now();
        const recent = (context.restarts[plan.id] ?? []).filter((at) => now - at < plan.withinMs);
        return { ...context.restarts, [plan.id]: [...recent, now] };
      },
    }),
    reportRestart: sendParent(({ context, event }) => {
      const reason = 'error' in event ? `crashed: ${messageOf(event.error)}` : 'stopped';
      return { type: 'skill.lifecycle', skill: context.skill, state: 'active', restarted: { child: childIdOf(event.type), reason } } satisfies LifecycleReport;
    }),
    forgetChild: enqueueActions(({ context, event, enqueue }) => {
      const plan = planFor(context, event.type);
      if (plan) enqueue.stopChild(plan.id);
    }),
    recordFailure: assign({
      failure: ({ context, event }) => {
        const plan = planFor(context, event.type);
        const what = plan ? `child '${plan.id}'` : `child '${childIdOf(event.type)}'`;
        const cause = 'error' in event ? `crashed: ${messageOf(event.error)}` : 'stopped';
        const budget = plan ? ` (more than ${plan.maxRestarts} restarts within ${plan.withinMs} ms)` : '';
        return {
          code: 'skill_failed',
          message: `skill '${context.skill}' failed: ${what} ${cause}${budget}`,
          skill: context.skill,
        } satisfies ErrorInfo;
      },
    }),
    clearFailure: assign({ failure: null, restarts: {} }),
    reportFailed: sendParent(({ context }) => {
      const report: LifecycleReport = { type: 'skill.lifecycle', skill: context.skill, state: 'failed' };
      if (context.failure) report.error = context.failure;
      return report;
    }),
  },
});

const context = ({ input }: { input: LifecycleInput }): LifecycleContext => ({
  agentId: input.agentId,
  skill: input.skill,
  children: input.children,
  restarts: {},
  failure: null,
});

/** What a plain lifecycle is made with: events only, no input and no context. */
const plainSetup = setup({ types: {} as { events: LifecycleEvent } });

/**
 * The lifecycle of a skill without children: three resting states and nothing to supervise. Most
 * skills are like this, and an agent spawns one per skill, so it is kept as light as a machine
 * can be: no input and no context (its systemId, `<agent>/skills/<skill>`, says whose it is),
 * and one initial snapshot shared by all its actors. The agent records its transitions itself
 * (it is the one sending `activate` and `deactivate`).
 */
function plainLifecycle(initial: LifecycleState) {
  const states = {
    inactive: { on: { activate: { target: 'activating' } } },
    activating: { always: { target: 'active' } },
    active: { on: { deactivate: { target: 'deactivating' } } },
    deactivating: { always: { target: 'inactive' } },
    failed: { on: { activate: { target: 'activating' }, deactivate: { target: 'deactivating' } } },
  } as const;
  // Started only in a resting state: `activating` and `deactivating` would move on at once.
  return withSharedInitialSnapshot(plainSetup.createMachine({ id: 'skillLifecycle', initial, states }));
}

/** The lifecycle of a skill with children: runs them while active and supervises them. */
function supervisingLifecycle(initial: LifecycleMachineState) {
  return supervision.createMachine({
    id: 'skillLifecycle',
    context,
    initial,
    states: {
      inactive: {
        on: { activate: { target: 'activating' } },
      },
      activating: {
        entry: 'startChildren',
        always: { target: 'active' },
      },
      deactivating: {
        always: { target: 'inactive' },
      },
      active: {
        exit: 'stopChildren',
        on: {
          deactivate: { target: 'deactivating' },
          'xstate.error.actor.*': [
            { guard: 'mayRestartAfterError', actions: ['respawnChild', 'countRestart', 'reportRestart'] },
            { guard: 'isTemporary', actions: 'forgetChild' },
            { target: 'failed', actions: 'recordFailure' },
          ],
          'xstate.done.actor.*': [
            { guard: 'mayRestartAfterDone', actions: ['respawnChild', 'countRestart', 'reportRestart'] },
            { guard: 'isPermanent', target: 'failed', actions: 'recordFailure' },
            { actions: 'forgetChild' },
          ],
        },
      },
      failed: {
        entry: 'reportFailed',
        on: {
          activate: { target: 'activating', actions: 'clearFailure' },
          deactivate: { target: 'deactivating', actions: 'clearFailure' },
        },
      },
    },
  });
}

/**
 * The lifecycle machines, by start state and by whether the skill has children. A supervising
 * one starting `active` (its agent just spawned, or resumed) begins in `activating`, which starts
 * the children on its way to `active`.
 */
export const lifecycleMachines = {
  // Without children there is nothing to start: straight to `active` (a spawn costs no step more).
  plain: { active: plainLifecycle('active'), inactive: plainLifecycle('inactive'), failed: plainLifecycle('failed') },
  supervising: { active: supervisingLifecycle('activating'), inactive: supervisingLifecycle('inactive'), failed: supervisingLifecycle('failed') },
} as const;

/** The lifecycle most skills get: no children, starting active. */
export const skillLifecycleMachine = lifecycleMachines.plain.active;
