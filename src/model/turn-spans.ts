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
import { observing, otel, tracer } from '../telemetry/otel.js';
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

/**
 * Starts observing (one stretch of work on) a turn: its span while a tracer provider is
 * registered, its durations and tokens for the metrics while a meter provider is; undefined
 * when neither is.
 */
export function startTurnSpan(turn: TurnOf, content: ContentRecorder): TurnSpan | undefined {
  if (!observing()) return undefined;
  const api = otel();
  if (!api) return undefined;
  const spans = tracer();
  if (!spans) return new TurnSpan(undefined, undefined, turn, content);
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

/** A span of the turn's, open while its work runs (no span, only the time, while only metrics are recorded). */
class OpenSpan {
  protected readonly started = performance.now();

  constructor(
    protected readonly span: Span | undefined,
    protected readonly context: Context | undefined,
  ) {}

  within<T>(work: () => T): T {
    return this.context ? otel()!.context.with(this.context, work) : work();
  }

  /** Ends the span; with `error`, failed with its code. */
  end(error?: SpanError): void {
    if (!this.span) return;
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
    span: Span | undefined,
    context: Context | undefined,
    private readonly turn: TurnOf,
    private readonly content: ContentRecorder,
  ) {
    super(span, context);
  }

  /** A child span of the turn's, with the context it is active in; none while only metrics are recorded. */
  private child(name: string, kind: 'CLIENT' | 'INTERNAL', attributes: Attributes): [Span | undefined, Context | undefined] {
    if (!this.context) return [undefined, undefined];
    const api = otel()!;
    const span = tracer()!.startSpan(name, { kind: api.SpanKind[kind], attributes }, this.context);
    return [span, api.trace.setSpan(this.context, span)];
  }

  /** Starts the span of one model call (one attempt). */
  modelCall(model: ChatModel, asked: AskedWith): ModelCallSpan {
    const attributes: Attributes = { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': model.provider, 'gen_ai.request.model': model.modelId };
    if (asked.temperature !== undefined) attributes['gen_ai.request.temperature'] = asked.temperature;
    if (asked.maxOutputTokens !== undefined) attributes['gen_ai.request.max_tokens'] = asked.maxOutputTokens;
    // What was said goes on the span, never on the metrics: a measurement's attributes are few and fixed.
    const metricAttributes = { ...attributes };
    this.recordContent(attributes, 'gen_ai.system_instructions', asked.system);
    this.recordContent(attributes, 'gen_ai.input.messages', asked.messages);
    const [span, context] = this.child(`chat ${model.modelId}`, 'CLIENT', attributes);
    return new ModelCallSpan(span, context, metricAttributes, this.content);
  }

  /** Starts the span of one tool call the turn runs. */
  toolCall(toolCallId: string, tool: string, args: unknown): ToolCallSpan {
    const attributes: Attributes = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool, 'gen_ai.tool.call.id': toolCallId, 'gen_ai.tool.type': 'function' };
    this.recordContent(attributes, 'gen_ai.tool.call.arguments', args);
    const [span, context] = this.child(`execute_tool ${tool}`, 'INTERNAL', attributes);
    return new ToolCallSpan(span, context, this.content);
  }

  /** Starts the span of a compaction of the history. */
  compaction(strategy: string, remove: number, tokens: number): OpenSpan {
    const attributes: Attributes = { 'skillstate.compaction.strategy': strategy, 'skillstate.compaction.messages_removed': remove, 'skillstate.compaction.history_tokens': tokens };
    return new OpenSpan(...this.child(`compact ${this.turn.definition}`, 'INTERNAL', attributes));
  }

  /** The turn stops to wait for approval of these calls. */
  waitsForApproval(calls: readonly { toolCallId: string; tool: string }[]): void {
    this.span?.addEvent('skillstate.approval.waiting', { 'gen_ai.tool.name': calls.map((call) => call.tool), 'gen_ai.tool.call.id': calls.map((call) => call.toolCallId) });
  }

  /** A call the user denied: answered without running. */
  denied(toolCallId: string, tool: string): void {
    this.span?.addEvent('skillstate.approval.denied', { 'gen_ai.tool.name': tool, 'gen_ai.tool.call.id': toolCallId });
  }

  /** Ends the turn's span with where the turn is (`answered`, `failed`, `awaiting approval`…). */
  finish(phase: string, error?: SpanError): void {
    this.span?.setAttribute('skillstate.turn.phase', phase);
    const attributes: Attributes = { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': this.turn.definition };
    if (error) attributes['error.type'] = error.code;
    turnFinished(attributes, performance.now() - this.started);
    this.end(error);
  }

  private recordContent(attributes: Attributes, kind: TelemetryContentKind, value: unknown): void {
    if (this.content === undefined || value === undefined || this.span === undefined) return;
    const recorded = this.content(value, kind);
    if (recorded !== undefined) attributes[kind] = recorded;
  }
}

/** The span of one model call. */
export class ModelCallSpan extends OpenSpan {
  constructor(
    span: Span | undefined,
    context: Context | undefined,
    private readonly attributes: Attributes,
    private readonly content: ContentRecorder,
  ) {
    super(span, context);
  }

  /** Ends the span with the model's answer: tokens, finish reason, response, and (opted in) the completion. */
  answered(answer: ModelAnswer): void {
    modelCallFinished(this.attributes, performance.now() - this.started, { input: answer.usage.inputTokens, output: answer.usage.outputTokens });
    const span = this.span;
    if (!span) return;
    span.setAttribute('gen_ai.usage.input_tokens', answer.usage.inputTokens);
    span.setAttribute('gen_ai.usage.output_tokens', answer.usage.outputTokens);
    if (answer.finishReason !== undefined) span.setAttribute('gen_ai.response.finish_reasons', [answer.finishReason]);
    if (answer.response?.id !== undefined) span.setAttribute('gen_ai.response.id', answer.response.id);
    if (answer.response?.modelId !== undefined) span.setAttribute('gen_ai.response.model', answer.response.modelId);
    const output = this.content?.([{ role: 'assistant', parts: answer.content }], 'gen_ai.output.messages');
    if (output !== undefined) span.setAttribute('gen_ai.output.messages', output);
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
    span: Span | undefined,
    context: Context | undefined,
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
    const result = this.span && this.content?.(outcome.output, 'gen_ai.tool.call.result');
    if (result !== undefined) this.span?.setAttribute('gen_ai.tool.call.result', result);
    this.end();
  }
}
