/**
 * MCP tool calls as OpenTelemetry spans, both sides, following the semantic conventions for MCP
 * (span `tools/call {tool}`, `mcp.method.name`, `gen_ai.tool.name`): the client's span travels in
 * the request's `params._meta` as W3C `traceparent` (and `tracestate`), and the server continues
 * it, so a tool call between two processes is one trace. Nothing is done, and nothing added to
 * requests, while no tracer provider is registered.
 */
import type { Span } from '@opentelemetry/api';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { otel, tracer, tracing } from '../telemetry/otel.js';
import { contextOf, traceHeaders } from '../telemetry/traceparent.js';

const METHOD = 'tools/call';

/** What a span records of a call's result: an error result is `error.type` `tool_error`, as the conventions say. */
function ended(span: Span, result: CallToolResult | undefined, thrown?: unknown): void {
  const api = otel()!;
  if (thrown !== undefined) {
    const code = typeof (thrown as { code?: unknown })?.code === 'string' ? (thrown as { code: string }).code : 'mcp_failed';
    span.setAttribute('error.type', code);
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: thrown instanceof Error ? thrown.message : String(thrown) });
  } else if (result?.isError === true) {
    span.setAttribute('error.type', 'tool_error');
    span.setStatus({ code: api.SpanStatusCode.ERROR });
  }
  span.end();
}

/**
 * Calls a tool on an MCP server (`server` names it) inside a client span; `call` is given the
 * `_meta` to send with the request (undefined while not tracing).
 */
export async function tracedToolCall(server: string, tool: string, call: (meta: Record<string, string> | undefined) => Promise<CallToolResult>): Promise<CallToolResult> {
  if (!tracing()) return call(undefined);
  const api = otel();
  const spans = tracer();
  if (!api || !spans) return call(undefined);
  const parent = api.context.active();
  const span = spans.startSpan(
    `${METHOD} ${tool}`,
    { kind: api.SpanKind.CLIENT, attributes: { 'mcp.method.name': METHOD, 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool, 'server.address': server } },
    parent,
  );
  const within = api.trace.setSpan(parent, span);
  try {
    const result = await api.context.with(within, () => call(traceHeaders(within)));
    ended(span, result);
    return result;
  } catch (error) {
    ended(span, undefined, error);
    throw error;
  }
}

/** Serves a tool call inside a server span continuing the client's trace from the request's `_meta`. */
export async function servedToolCall(tool: string, meta: Record<string, unknown> | undefined, serve: () => Promise<CallToolResult>): Promise<CallToolResult> {
  if (!tracing()) return serve();
  const api = otel();
  const spans = tracer();
  if (!api || !spans) return serve();
  const parent = contextOf(meta?.traceparent, meta?.tracestate, api.context.active());
  const span = spans.startSpan(`${METHOD} ${tool}`, { kind: api.SpanKind.SERVER, attributes: { 'mcp.method.name': METHOD, 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool } }, parent);
  try {
    const result = await api.context.with(api.trace.setSpan(parent, span), serve);
    ended(span, result);
    return result;
  } catch (error) {
    ended(span, undefined, error);
    throw error;
  }
}
