/**
 * User code inside a step (an action, a hook, `transformResult`) as a child span of the step's:
 * named after what runs (`action 'add'`, `handleSignal of skill 'calculator'`), with the skill and
 * the action, ended when the code returns or its promise settles, and marked as an error with
 * the exception when it throws or rejects. The step engine calls user code through this when a
 * tracer provider is registered; without one it is not used at all. (On Restate a call replayed
 * from the journal is a span again, as the step is.)
 */
import type { Span } from '@opentelemetry/api';
import { describeThrown } from '../core/errors.js';
import type { InvokeUserCode, UserCodeCall } from '../core/invoke.js';
import type { StepOptions } from '../engine/index.js';
import { otel, tracer } from './otel.js';

const traced = tracedUserCode();

/** The options a host hands the step engine so that each call of user code is a span. */
export const TRACED_STEP: StepOptions = Object.freeze({ invoke: traced });

/** `invoke` (a host's own way of calling user code: journaled, on Restate) with each call a span around it. */
export function tracedAround(invoke: InvokeUserCode): InvokeUserCode {
  return <T>(call: UserCodeCall, fn: () => T): T => traced(call, () => invoke(call, fn));
}

function tracedUserCode(): InvokeUserCode {
  return <T>(call: UserCodeCall, fn: () => T): T => {
    const spans = tracer();
    if (spans === undefined) return fn();
    const attributes: Record<string, string> = {};
    if (call.skill !== undefined) attributes['skillstate.skill.name'] = call.skill;
    if (call.action !== undefined) attributes['skillstate.action.name'] = call.action;
    const api = otel()!;
    const step = api.trace.getSpan(api.context.active());
    return spans.startActiveSpan(call.what, { attributes }, (span): T => {
      let returned: T;
      try {
        returned = fn();
      } catch (thrown) {
        failed(span, thrown);
        throw thrown;
      }
      if (typeof (returned as { then?: unknown } | null)?.then !== 'function') {
        span.end();
        return returned;
      }
      const pending = step && pendingOf(step);
      pending?.add(span);
      // A span the step's stop already ended (`endPendingUserCode`) is not ended again.
      const settled = () => pending === undefined || pending.delete(span);
      return (returned as PromiseLike<unknown>).then(
        (value) => {
          if (settled()) span.end();
          return value;
        },
        (thrown: unknown) => {
          if (settled()) failed(span, thrown);
          throw thrown;
        },
      ) as T;
    });
  };
}

/** The spans of user code whose promise has not settled yet, by the span of the step that called it. */
const pendingByStep = new WeakMap<Span, Set<Span>>();

function pendingOf(step: Span): Set<Span> {
  let pending = pendingByStep.get(step);
  if (!pending) pendingByStep.set(step, (pending = new Set()));
  return pending;
}

/**
 * Ends, as cut short, the spans of the user code `step` called whose promise has not settled:
 * the agent stopped and will not wait for it, and a span never ended is never exported.
 */
export function endPendingUserCode(step: Span, why: string): void {
  const pending = pendingByStep.get(step);
  if (!pending) return;
  pendingByStep.delete(step);
  const api = otel();
  for (const span of pending) {
    if (api) span.setStatus({ code: api.SpanStatusCode.ERROR, message: why });
    span.end();
  }
}

/** Ends `span` as failed with what was thrown. */
function failed(span: Span, thrown: unknown): void {
  const api = otel();
  if (thrown instanceof Error) span.recordException(thrown);
  if (api) span.setStatus({ code: api.SpanStatusCode.ERROR, message: describeThrown(thrown) });
  span.end();
}
