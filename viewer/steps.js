// Each agent's recorded steps, for time travel. A live stream gives one step per snapshot of the
// agent's machine: the event that caused it (a signal, a mount...), the effects the system
// reported for the agent since the step before, the agent's state after it and what changed. A
// recorded trace (`skillstate trace view`) has no state: its steps are the trace's step records,
// each with its signal, effects and outcome.

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

/** The steps of every agent, by the agent's session id, as they arrive. */
export class StepLog {
  constructor() {
    /** @type {Map<string, {steps: any[], signal?: any, effects: any[], state?: any}>} */
    this.agents = new Map();
  }

  of(sessionId) {
    let entry = this.agents.get(sessionId);
    if (!entry) this.agents.set(sessionId, (entry = { steps: [], effects: [], signal: undefined, state: undefined }));
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
    entry.steps.push(step);
    if (entry.steps.length > MAX_STEPS) entry.steps.shift();
    if (recorded) entry.state = state;
    entry.effects = [];
    if (trigger.type === 'signal' || trigger.type.startsWith('step.')) entry.signal = undefined;
  }
}
