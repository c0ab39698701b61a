/**
 * A model turn as OpenTelemetry spans, following the GenAI semantic conventions
 * (https://opentelemetry.io/docs/specs/semconv/gen-ai/): the turn is an `invoke_agent` span;
 * within it each model call is a `chat` span (provider, model, tokens, finish reasons), each tool
 * call an `execute_tool` span, and a compaction a span of its own; an approval waited for is an
 * event on the turn. Prompts, completions and tool arguments and results are recorded only
 * when the user opted in (`telemetry.recordContent`).
 *
 * Both hosts (the in-process driver and the Restate host) record through this file, and only
 * while a tracer provider is registered: `startTurnSpan` answers undefined otherwise.
 */
import type { Attributes, Context, Span } from '@opentelemetry/api';
import type { ContentRecorder, TelemetryContentKind } from '../telemetry/content.js';
import { modelCallFinished, turnFinished } from '../telemetry/metrics.js';
import { otel, tracer, tracing } from '../telemetry/otel.js';
export { within } from '../telemetry/otel.js';
import { contextOf } from '../telemetry/traceparent.js';
import type { ModelAnswer } from './model-step.js';
import type { ChatModel } from './models.js';

/** The turn a span is of: the agent, its definition, the turn's number and the trace it continues. */
export interface TurnOf {
  readonly agentId: string;
  readonly definition: string;
  readonly n: number;
  /** The `traceparent` of the signal that started or resumed the turn. */
  readonly traceparent?: string | undefined;
  readonly tracestate?: string | undefined;
}

/** What a model call is asked with, as its span records it. */
export interface AskedWith {
  readonly system?: string | undefined;
  readonly messages: unknown;
  readonly temperature?: number | undefined;
  readonly maxOutputTokens?: number | undefined;
}

/** What a failed span records of its error: the code (as `error.type`) and the message. */
export interface SpanError {
  readonly code: string;
  readonly message: string;
}

/** Starts the span of (one stretch of work on) a turn; undefined when no tracer provider is registered. */
export function startTurnSpan(turn: TurnOf, content: ContentRecorder): TurnSpan | undefined {
  if (!tracing()) return undefined;
  const api = otel();
  const spans = tracer();
  if (!api || !spans) return undefined;
  const parent = contextOf(turn.traceparent, turn.tracestate, api.context.active());
  const span = spans.startSpan(
    `invoke_agent ${turn.definition}`,
    {
      kind: api.SpanKind.INTERNAL,
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': turn.definition, 'gen_ai.agent.id': turn.agentId, 'skillstate.turn.n': turn.n },
    },
    parent,
  );
  return new TurnSpan(span, api.trace.setSpan(parent, span), turn, content);
}

/** A span of the turn's, open while its work runs. */
class OpenSpan {
  protected readonly started = performance.now();

  constructor(
    protected readonly span: Span,
    protected readonly context: Context,
  ) {}

  within<T>(work: () => T): T {
    return otel()!.context.with(this.context, work);
  }

  /** Ends the span; with `error`, failed with its code. */
  end(error?: SpanError): void {
    if (error) failedWith(this.span, error);
    this.span.end();
  }
}

function failedWith(span: Span, error: SpanError): void {
  span.setAttribute('error.type', error.code);
  span.setStatus({ code: otel()!.SpanStatusCode.ERROR, message: error.message });
}

/** The span of a turn. */
export class TurnSpan extends OpenSpan {
  constructor(
    span: Span,
    context: Context,
    private readonly turn: TurnOf,
    private readonly content: ContentRecorder,
  ) {
    super(span, context);
  }

  /** Starts the span of one model call (one attempt). */
  modelCall(model: ChatModel, asked: AskedWith): ModelCallSpan {
    const api = otel()!;
    const attributes: Attributes = { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': model.provider, 'gen_ai.request.model': model.modelId };
    if (asked.temperature !== undefined) attributes['gen_ai.request.temperature'] = asked.temperature;
    if (asked.maxOutputTokens !== undefined) attributes['gen_ai.request.max_tokens'] = asked.maxOutputTokens;
    this.recordContent(attributes, 'gen_ai.system_instructions', asked.system);
    this.recordContent(attributes, 'gen_ai.input.messages', asked.messages);
    const span = tracer()!.startSpan(`chat ${model.modelId}`, { kind: api.SpanKind.CLIENT, attributes }, this.context);
    return new ModelCallSpan(span, api.trace.setSpan(this.context, span), attributes, this.content);
  }

  /** Starts the span of one tool call the turn runs. */
  toolCall(toolCallId: string, tool: string, args: unknown): ToolCallSpan {
    const api = otel()!;
    const attributes: Attributes = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool, 'gen_ai.tool.call.id': toolCallId, 'gen_ai.tool.type': 'function' };
    this.recordContent(attributes, 'gen_ai.tool.call.arguments', args);
    const span = tracer()!.startSpan(`execute_tool ${tool}`, { kind: api.SpanKind.INTERNAL, attributes }, this.context);
    return new ToolCallSpan(span, api.trace.setSpan(this.context, span), this.content);
  }

  /** Starts the span of a compaction of the history. */
  compaction(strategy: string, remove: number, tokens: number): OpenSpan {
    const api = otel()!;
    const attributes: Attributes = { 'skillstate.compaction.strategy': strategy, 'skillstate.compaction.messages_removed': remove, 'skillstate.compaction.history_tokens': tokens };
    const span = tracer()!.startSpan(`compact ${this.turn.definition}`, { kind: api.SpanKind.INTERNAL, attributes }, this.context);
    return new OpenSpan(span, api.trace.setSpan(this.context, span));
  }

  /** The turn stops to wait for approval of these calls. */
  waitsForApproval(calls: readonly { toolCallId: string; tool: string }[]): void {
    this.span.addEvent('skillstate.approval.waiting', { 'gen_ai.tool.name': calls.map((call) => call.tool), 'gen_ai.tool.call.id': calls.map((call) => call.toolCallId) });
  }

  /** A call the user denied: answered without running. */
  denied(toolCallId: string, tool: string): void {
    this.span.addEvent('skillstate.approval.denied', { 'gen_ai.tool.name': tool, 'gen_ai.tool.call.id': toolCallId });
  }

  /** Ends the turn's span with where the turn is (`answered`, `failed`, `awaiting approval`…). */
  finish(phase: string, error?: SpanError): void {
    this.span.setAttribute('skillstate.turn.phase', phase);
    const attributes: Attributes = { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': this.turn.definition };
    if (error) attributes['error.type'] = error.code;
    turnFinished(attributes, performance.now() - this.started);
    this.end(error);
  }

  private recordContent(attributes: Attributes, kind: TelemetryContentKind, value: unknown): void {
    if (this.content === undefined || value === undefined) return;
    const recorded = this.content(value, kind);
    if (recorded !== undefined) attributes[kind] = recorded;
  }
}

/** The span of one model call. */
export class ModelCallSpan extends OpenSpan {
  constructor(
    span: Span,
    context: Context,
    private readonly attributes: Attributes,
    private readonly content: ContentRecorder,
  ) {
    super(span, context);
  }

  /** Ends the span with the model's answer: tokens, finish reason, response, and (opted in) the completion. */
  answered(answer: ModelAnswer): void {
    const span = this.span;
    span.setAttribute('gen_ai.usage.input_tokens', answer.usage.inputTokens);
    span.setAttribute('gen_ai.usage.output_tokens', answer.usage.outputTokens);
    if (answer.finishReason !== undefined) span.setAttribute('gen_ai.response.finish_reasons', [answer.finishReason]);
    if (answer.response?.id !== undefined) span.setAttribute('gen_ai.response.id', answer.response.id);
    if (answer.response?.modelId !== undefined) span.setAttribute('gen_ai.response.model', answer.response.modelId);
    const output = this.content?.([{ role: 'assistant', parts: answer.content }], 'gen_ai.output.messages');
    if (output !== undefined) span.setAttribute('gen_ai.output.messages', output);
    modelCallFinished(this.attributes, performance.now() - this.started, { input: answer.usage.inputTokens, output: answer.usage.outputTokens });
    span.end();
  }

  /** Ends the span of a call that failed. */
  failed(error: SpanError): void {
    modelCallFinished({ ...this.attributes, 'error.type': error.code }, performance.now() - this.started, {});
    this.end(error);
  }
}

/** The span of one tool call. */
export class ToolCallSpan extends OpenSpan {
  constructor(
    span: Span,
    context: Context,
    private readonly content: ContentRecorder,
  ) {
    super(span, context);
  }

  /** Ends the span with the tool's outcome. */
  ran(outcome: { ok: true; output: unknown } | { ok: false; error: { code: string; message: string } }): void {
    if (!outcome.ok) {
      this.end(outcome.error);
      return;
    }
    const result = this.content?.(outcome.output, 'gen_ai.tool.call.result');
    if (result !== undefined) this.span.setAttribute('gen_ai.tool.call.result', result);
    this.end();
  }
}
