/**
 * Telemetry never fails the work it records. The OpenTelemetry API promises not to throw, but
 * what a program registers behind it may: a span processor or exporter of its own, a tracer that
 * is not the SDK's. Through these guards, a tracer or span that throws loses its span (the work
 * goes on without it), and the first such failure is written to stderr, once per process.
 */
import type * as OtelApi from '@opentelemetry/api';
import type { Context, Span, SpanOptions, Tracer } from '@opentelemetry/api';
import { describeThrown } from '../core/errors.js';

let reported = false;

/** Says, the first time only, that telemetry failed and what is lost. */
export function telemetryFailed(error: unknown): void {
  if (reported) return;
  reported = true;
  process.stderr.write(`[skillstate] the registered OpenTelemetry tracer or meter threw; what it was recording is dropped, the work goes on, and later failures are not reported: ${describeThrown(error)}\n`);
}

/** `span` with every method call caught: one that throws answers as a span that records nothing would. */
function guardedSpan(api: typeof OtelApi, span: Span): Span {
  const guard: Span = new Proxy(span, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        try {
          const result: unknown = value.apply(target, args);
          return result === target ? guard : result;
        } catch (error) {
          telemetryFailed(error);
          if (key === 'spanContext') return api.INVALID_SPAN_CONTEXT;
          if (key === 'isRecording') return false;
          return guard;
        }
      };
    },
  });
  return guard;
}

/** `tracer`, its spans started and used through the guards above. */
export function guardedTracer(api: typeof OtelApi, tracer: Tracer): Tracer {
  const startSpan = (name: string, options?: SpanOptions, parent?: Context): Span => {
    try {
      return guardedSpan(api, tracer.startSpan(name, options, parent));
    } catch (error) {
      telemetryFailed(error);
      return api.trace.wrapSpanContext(api.INVALID_SPAN_CONTEXT);
    }
  };
  // The overloads of `startActiveSpan`: (name, fn), (name, options, fn), (name, options, context, fn).
  const startActiveSpan = (name: string, ...args: unknown[]): unknown => {
    const fn = args.pop() as (span: Span) => unknown;
    const [options, parent = api.context.active()] = args as [SpanOptions | undefined, Context | undefined];
    const span = startSpan(name, options, parent);
    return api.context.with(api.trace.setSpan(parent, span), fn, undefined, span);
  };
  return { startSpan, startActiveSpan } as Tracer;
}
