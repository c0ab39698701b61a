/**
 * A step of an agent as an OpenTelemetry span, on either host: made only while a tracer provider
 * is registered (the host checks `tracing()` before anything else), started as the item reaches
 * the agent and ended once its outcome is carried out. Its parent is the trace a signal carries in its
 * `traceparent`, or else the context the item was sent in; signals the step emits or schedules
 * carry the step's own `traceparent`, so a trace follows work from agent to agent.
 */
import type { Context, Span } from '@opentelemetry/api';
import type { Effect } from '../core/effects.js';
import { describeThrown } from '../core/errors.js';
import type { Signal } from '../core/signal.js';
import type { StepOutcome, WorkItem } from '../engine/index.js';
import type { LifecycleReport } from '../../machines/skill-lifecycle.js';
import { stepFinished } from './metrics.js';
import { otel, tracer } from './otel.js';
import { contextOf, traceHeaders } from './traceparent.js';
import { endPendingUserCode } from './user-code.js';

/** A lifecycle transition's attributes: the skill, its new state, and a restart or error. */
function lifecycleAttributes(report: LifecycleReport): Record<string, string> {
  const attributes: Record<string, string> = { 'skillstate.skill.name': report.skill, 'skillstate.lifecycle.state': report.state };
  if (report.restarted) {
    attributes['skillstate.lifecycle.restarted_child'] = report.restarted.child;
    attributes['skillstate.lifecycle.restart_reason'] = report.restarted.reason;
  }
  if (report.error) attributes['error.type'] = report.error.code;
  return attributes;
}

/**
 * A lifecycle transition outside any step (a supervised restart, a child failing on its own): a
 * span of its own, with the transition as its one event.
 */
export function lifecycleSpan(agent: StepAgent, report: LifecycleReport): void {
  const api = otel();
  const spans = tracer();
  if (!api || !spans) return;
  const span = spans.startSpan(`lifecycle ${report.skill}`, { attributes: { 'skillstate.agent.id': agent.id, 'skillstate.agent.definition': agent.definition } }, api.ROOT_CONTEXT);
  span.addEvent('skillstate.lifecycle', lifecycleAttributes(report));
  if (report.state === 'failed') span.setStatus({ code: api.SpanStatusCode.ERROR, message: report.error?.message ?? `skill '${report.skill}' failed` });
  span.end();
}

/** What the span says of the agent whose step it is. */
export interface StepAgent {
  readonly id: string;
  readonly definition: string;
}

/** What a step takes, as its span names it: an agent's mailbox items, and the Restate host's work, are all of these. */
export type StepSubject =
  | { readonly type: 'signal'; readonly signal: Signal }
  | { readonly type: 'run'; readonly instructions: readonly { readonly action: unknown }[] }
  | { readonly type: 'mount' | 'unmount'; readonly skill: string }
  | { readonly type: 'start' };

/** The span name of a step: its item and what it names (a signal's type, a skill, the actions run). */
function spanName(event: StepSubject): string {
  switch (event.type) {
    case 'signal':
      return `step ${event.signal.type}`;
    case 'run':
      return `step run ${event.instructions.map((instruction) => String(instruction.action)).join(',')}`;
    case 'mount':
    case 'unmount':
      return `step ${event.type} ${event.skill}`;
    case 'start':
      return 'step start';
  }
}

declare const sentInBrand: unique symbol;

/**
 * The context an item was sent in, captured while tracing: the parent of its step's span. An
 * OpenTelemetry `Context`, opaque outside this file, so that the runtime's types never name the
 * optional API.
 */
export type SentIn = { readonly [sentInBrand]: true };

/** The active context, to be the parent of the step of an item sent now. */
export function sentIn(): SentIn | undefined {
  return otel()?.context.active() as SentIn | undefined;
}

/** The parent of a step asked for from another process, which sent its trace along with the request. */
export function sentWith(trace: { traceparent?: string | undefined; tracestate?: string | undefined } | undefined): SentIn | undefined {
  const api = otel();
  return api && trace?.traceparent !== undefined ? (contextOf(trace.traceparent, trace.tracestate, api.ROOT_CONTEXT) as unknown as SentIn) : undefined;
}

/** What a step of the engine takes, as a step span names it. */
export function subjectOf(work: WorkItem): StepSubject {
  switch (work.kind) {
    case 'signal':
      return { type: 'signal', signal: work.signal };
    case 'instructions':
      return { type: 'run', instructions: work.instructions };
    case 'mount':
      return { type: 'mount', skill: work.skill.name };
    case 'unmount':
      return { type: 'unmount', skill: work.skill };
    case 'start':
      return { type: 'start' };
  }
}

/**
 * One step, observed: its span while a tracer provider is registered, and its duration for the
 * step metrics while a meter provider is.
 */
export class StepSpan {
  private readonly started = performance.now();

  private constructor(
    private readonly span: Span | undefined,
    private readonly context: Context | undefined,
  ) {}

  /** Starts observing `event`'s step on `agent`; undefined when the API cannot be loaded. */
  static start(agent: StepAgent, event: StepSubject, parent: SentIn | undefined): StepSpan | undefined {
    const api = otel();
    if (!api) return undefined;
    const spans = tracer();
    if (!spans) return new StepSpan(undefined, undefined);
    const base = (parent as Context | undefined) ?? api.ROOT_CONTEXT;
    const within = event.type === 'signal' ? contextOf(event.signal.traceparent, event.signal.tracestate, base) : base;
    const attributes: Record<string, string> = { 'skillstate.agent.id': agent.id, 'skillstate.agent.definition': agent.definition, 'skillstate.step.item': event.type };
    if (event.type === 'signal') {
      attributes['skillstate.signal.type'] = event.signal.type;
      attributes['skillstate.signal.id'] = event.signal.id;
      attributes['skillstate.signal.source'] = event.signal.source;
    } else if (event.type === 'mount' || event.type === 'unmount') attributes['skillstate.skill.name'] = event.skill;
    else if (event.type === 'run') attributes['skillstate.step.actions'] = event.instructions.map((instruction) => String(instruction.action)).join(',');
    const span = spans.startSpan(spanName(event), { kind: api.SpanKind.INTERNAL, attributes }, within);
    return new StepSpan(span, api.trace.setSpan(within, span));
  }

  /** Runs `work` with the step's span active: what user code starts there is its child. */
  within<T>(work: () => T): T {
    return this.context ? otel()!.context.with(this.context, work) : work();
  }

  /** The effects, with every signal they emit or schedule carrying the step's trace. */
  carried(effects: Effect[]): Effect[] {
    const headers = this.context && traceHeaders(this.context);
    if (!headers) return effects;
    let copied: Effect[] | undefined;
    for (let i = 0; i < effects.length; i++) {
      const effect = effects[i]!;
      if ((effect.type !== 'emit' && effect.type !== 'schedule') || effect.signal.traceparent !== undefined) continue;
      copied ??= effects.slice();
      copied[i] = { ...effect, signal: { ...effect.signal, ...headers } };
    }
    return copied ?? effects;
  }

  /** Records a skill lifecycle transition of the agent, as it happens during the step. */
  lifecycle(report: LifecycleReport): void {
    this.span?.addEvent('skillstate.lifecycle', lifecycleAttributes(report));
  }

  /** Ends the span with the step's outcome. */
  end(agent: StepAgent, event: StepSubject, outcome: StepOutcome): void {
    const api = otel()!;
    const span = this.span;
    stepFinished(agent.definition, event.type, outcome.error?.code, performance.now() - this.started);
    if (!span) return;
    if (event.type === 'signal' && outcome.signal && outcome.signal.type !== event.signal.type) span.setAttribute('skillstate.signal.routed_type', outcome.signal.type);
    if (outcome.effects.length) span.setAttribute('skillstate.step.effects', outcome.effects.map((effect) => effect.type));
    const error = outcome.error;
    span.setAttribute('skillstate.step.outcome', error ? 'error' : 'ok');
    if (error) {
      span.setAttribute('error.type', error.code);
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: error.message });
      if (error.cause instanceof Error) span.recordException(error.cause);
    }
    for (const diagnostic of outcome.diagnostics) span.addEvent('skillstate.diagnostic', { 'skillstate.diagnostic.code': diagnostic.code, 'skillstate.diagnostic.level': diagnostic.level });
    span.end();
  }

  /** Ends the span of a step the agent's stop cut short: its outcome is dropped. */
  stopped(agent: StepAgent, event: StepSubject, reason: string): void {
    stepFinished(agent.definition, event.type, 'agent_stopped', performance.now() - this.started);
    const span = this.span;
    if (!span) return;
    span.setAttribute('skillstate.step.outcome', 'stopped');
    span.setAttribute('error.type', 'agent_stopped');
    const message = `the agent stopped (${reason}) before the step ended`;
    span.setStatus({ code: otel()!.SpanStatusCode.ERROR, message });
    endPendingUserCode(span, message);
    span.end();
  }

  /** Ends the span of a step that failed unexpectedly. */
  crashed(agent: StepAgent, event: StepSubject, thrown: unknown): void {
    const api = otel()!;
    stepFinished(agent.definition, event.type, 'signal_failed', performance.now() - this.started);
    const span = this.span;
    if (!span) return;
    span.setAttribute('skillstate.step.outcome', 'error');
    span.setAttribute('error.type', 'signal_failed');
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: describeThrown(thrown) });
    if (thrown instanceof Error) span.recordException(thrown);
    span.end();
  }
}
