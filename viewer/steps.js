// Each agent's recorded steps, for time travel. A live stream gives one step per snapshot of the
// agent's machine: the event that caused it (a signal, a mount...), the effects the system
// reported for the agent since the step before, the agent's state after it and what changed. A
// recorded trace (`skillstate trace view`) has no state: its steps are the trace's step records,
// each with its signal, effects and outcome, and the agent's skills as the trace tells them (those
// of the agent at its start and those its mount steps added, less the ones it unmounted, each with
// its lifecycle state).

import { changes } from './state.js';

/** Steps kept per agent: past this, the oldest are dropped (numbers go on counting). */
const MAX_STEPS = 5000;

/** The agent's state in a snapshot's context: its skills' slices, or `[redacted]` as the stream sent it. */
export function agentStateOf(snapshot) {
  const context = snapshot?.context;
  if (context === undefined) return undefined;
  if (typeof context === 'string') return context;
  return context?.agent?.state;
}

/** The skills mounted in a snapshot's context, or `[redacted]` as the stream sent it. */
function mountedOf(snapshot) {
  const context = snapshot?.context;
  if (typeof context === 'string') return context;
  return Array.isArray(context?.agent?.mounted) ? context.agent.mounted : undefined;
}

/** What went wrong in a step: `{ code, message }`, or the stream's `[redacted]`, or undefined. */
function errorIn(effects, trigger) {
  for (const effect of effects) {
    if (effect.type !== 'error') continue;
    return effect.error ?? { code: 'error', message: '[redacted]' };
  }
  if (trigger && trigger.ok === false) return { code: typeof trigger.error === 'string' ? trigger.error : 'failed', message: `${trigger.type} ${trigger.subject ?? trigger.skill ?? ''}`.trim() };
  return undefined;
}

/**
 * A trace's skills of the agent after step `n`, each with its lifecycle state then. A trace has no
 * snapshot of the agent: a skill is mounted after its last mount step up to `n` and not after an
 * unmount; one with no such step was mounted from the start unless its first step mounts it.
 */
function traceSkills(entry, n) {
  const moves = entry.steps.filter((step) => !step.recorded && step.trigger.ok === true && (step.trigger.type === 'mount' || step.trigger.type === 'unmount'));
  const names = new Set([...entry.lifecycles.keys(), ...moves.map((step) => step.trigger.skill)]);
  const skills = [];
  for (const name of names) {
    const own = moves.filter((step) => step.trigger.skill === name);
    const last = own.filter((step) => step.n <= n).at(-1);
    if (last ? last.trigger.type !== 'mount' : own[0]?.trigger.type === 'mount') continue;
    let lifecycle;
    for (const known of entry.lifecycles.get(name) ?? []) if (known.n <= n && (lifecycle === undefined || known.n >= lifecycle.n)) lifecycle = known;
    skills.push({ name, lifecycle: lifecycle?.state ?? 'mounted' });
  }
  return skills;
}

/** The steps of every agent, by the agent's session id, as they arrive. */
export class StepLog {
  constructor() {
    /** @type {Map<string, {steps: any[], signal?: any, effects: any[], state?: any, lifecycles: Map<string, {n: number, state: string}[]>}>} */
    this.agents = new Map();
  }

  of(sessionId) {
    let entry = this.agents.get(sessionId);
    if (!entry) this.agents.set(sessionId, (entry = { steps: [], effects: [], signal: undefined, state: undefined, lifecycles: new Map() }));
    return entry;
  }

  steps(sessionId) {
    return this.agents.get(sessionId)?.steps ?? [];
  }

  /** An event the agent received: a signal is remembered for the step it starts; a trace's step record is a step, its effects (which a trace writes after it) are its. */
  event(sessionId, event, time) {
    const entry = this.of(sessionId);
    if (event.type === 'signal') entry.signal = event.signal;
    else if (event.type.startsWith('effect.')) {
      const effect = { ...(typeof event.effect === 'object' ? event.effect : {}), type: event.type.slice('effect.'.length) };
      // A trace writes a step's effects after the step.
      const last = entry.steps.at(-1);
      if (last && !last.recorded) {
        last.effects.push(effect);
        last.error = errorIn(last.effects, last.trigger);
      } else entry.effects.push(effect);
    }
    else if ('ok' in event && (event.type.startsWith('step.') || event.type === 'mount' || event.type === 'unmount')) this.push(entry, event, undefined, undefined, time);
  }

  /**
   * A skill's lifecycle actor of the agent is in `state`: from the step last recorded on (its
   * lifecycle record comes after the step that caused it), or, when the actor is `created`, from
   * the start (a page that connects late is told of every actor before the steps). True when it
   * changed.
   */
  lifecycle(sessionId, skill, state, created = false) {
    const entry = this.of(sessionId);
    const states = entry.lifecycles.get(skill) ?? [];
    // Kept when it changes only (an actor's snapshots repeat its state at every event it takes).
    if (!created && states.at(-1)?.state === state) return false;
    states.push({ n: created ? 0 : (entry.steps.at(-1)?.n ?? 0), state });
    entry.lifecycles.set(skill, states);
    return true;
  }

  /** An effect the system reported for the agent (live: the system actor's events name the agent). */
  effect(sessionId, effect) {
    this.of(sessionId).effects.push(effect);
  }

  /** A snapshot of the agent's machine: one step. */
  snapshot(sessionId, message) {
    const event = message.event ?? { type: 'snapshot' };
    this.push(this.of(sessionId), event, agentStateOf(message.snapshot), message.snapshot?.value, Number(message.createdAt) || Date.now(), mountedOf(message.snapshot));
  }

  push(entry, trigger, state, value, time, mounted) {
    const before = entry.state;
    const signal = trigger.type === 'signal' ? trigger.signal : entry.signal;
    const effects = entry.effects;
    const recorded = state !== undefined;
    const step = {
      n: (entry.steps.at(-1)?.n ?? 0) + 1,
      mounted,
      trigger,
      signal: trigger.type === 'signal' || trigger.type.startsWith('step.signal') ? signal : undefined,
      effects,
      state: recorded ? state : before,
      recorded,
      value,
      changes: recorded && before !== undefined && typeof state === 'object' && typeof before === 'object' ? changes(before, state) : [],
      error: errorIn(effects, trigger),
      time,
    };
    // A trace's skills are worked out when shown: a later record can tell what an earlier step had.
    if (!recorded && mounted === undefined) Object.defineProperty(step, 'mounted', { get: () => traceSkills(entry, step.n), enumerable: true });
    entry.steps.push(step);
    if (entry.steps.length > MAX_STEPS) entry.steps.shift();
    if (recorded) entry.state = state;
    entry.effects = [];
    if (trigger.type === 'signal' || trigger.type.startsWith('step.')) entry.signal = undefined;
  }
}
