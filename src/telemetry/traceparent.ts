/**
 * The W3C Trace Context `traceparent` header (https://www.w3.org/TR/trace-context/#traceparent-header),
 * as CloudEvents' distributed tracing extension carries it on a signal and MCP carries it in a
 * request's `_meta`: `00-<32 hex trace id>-<16 hex span id>-<2 hex flags>`.
 */
import type { Context, SpanContext } from '@opentelemetry/api';
import { otel, tracing } from './otel.js';

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/;

/** The `traceparent` of a span context. */
export function formatTraceparent(span: SpanContext): string {
  return `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/**
 * The span context a `traceparent` names, or undefined when it is not one (a malformed value,
 * version `ff`, or an all-zero id are ignored, as the specification says a receiver must).
 */
export function parseTraceparent(value: unknown, tracestate?: unknown): SpanContext | undefined {
  if (typeof value !== 'string') return undefined;
  const match = TRACEPARENT.exec(value);
  if (!match || match[1] === 'ff' || (match[1] === '00' && value.length !== 55)) return undefined;
  const [, , traceId, spanId, flags] = match as unknown as [string, string, string, string, string];
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  const context: SpanContext = { traceId, spanId, traceFlags: Number.parseInt(flags, 16), isRemote: true };
  const api = otel();
  if (api && typeof tracestate === 'string' && tracestate.length > 0) context.traceState = api.createTraceState(tracestate);
  return context;
}

/** `parent` as an OpenTelemetry context to start spans in: the remote span a `traceparent` names, or `otherwise`. */
export function contextOf(traceparent: unknown, tracestate: unknown, otherwise: Context): Context {
  const api = otel();
  const remote = parseTraceparent(traceparent, tracestate);
  return api && remote ? api.trace.setSpanContext(otherwise, remote) : otherwise;
}

/** The `traceparent` (and `tracestate`) of the span active in `context`, or undefined without one. */
export function traceHeaders(context: Context): { traceparent: string; tracestate?: string } | undefined {
  const span = otel()?.trace.getSpanContext(context);
  if (!span || !otel()!.isSpanContextValid(span)) return undefined;
  const headers: { traceparent: string; tracestate?: string } = { traceparent: formatTraceparent(span) };
  const state = span.traceState?.serialize();
  if (state) headers.tracestate = state;
  return headers;
}

/** The trace of the active span, to send along with a request; undefined while not tracing (or outside any span). */
export function activeTraceHeaders(): { traceparent: string; tracestate?: string } | undefined {
  if (!tracing()) return undefined;
  const api = otel();
  return api ? traceHeaders(api.context.active()) : undefined;
}
