/**
 * The few metrics cheap enough to keep: steps and their errors, model turn durations, tokens.
 * Recorded only while a meter provider is registered; the instruments are made on first use and
 * remade when another provider is registered.
 *
 * Token usage and operation durations follow the OpenTelemetry GenAI metrics
 * (`gen_ai.client.token.usage`, `gen_ai.client.operation.duration`).
 */
import type { Attributes, Counter, Histogram, Meter } from '@opentelemetry/api';
import { telemetryFailed } from './guarded.js';
import { INSTRUMENTATION_SCOPE, metering, otel } from './otel.js';

interface Instruments {
  readonly provider: unknown;
  readonly steps: Counter;
  readonly stepDuration: Histogram;
  readonly tokens: Histogram;
  readonly operationDuration: Histogram;
  readonly turnDuration: Histogram;
}

let instruments: Instruments | undefined;

function made(): Instruments | undefined {
  if (!metering()) return undefined;
  const api = otel();
  if (!api) return undefined;
  const provider = api.metrics.getMeterProvider();
  if (instruments?.provider === provider) return instruments;
  const meter: Meter = provider.getMeter(INSTRUMENTATION_SCOPE);
  instruments = {
    provider,
    steps: meter.createCounter('skillstate.steps', { description: 'Steps agents took, by item and error code', unit: '{step}' }),
    stepDuration: meter.createHistogram('skillstate.step.duration', { description: 'How long an agent step took', unit: 's' }),
    tokens: meter.createHistogram('gen_ai.client.token.usage', { description: 'Tokens used by a model call', unit: '{token}' }),
    operationDuration: meter.createHistogram('gen_ai.client.operation.duration', { description: 'How long a model call took', unit: 's' }),
    turnDuration: meter.createHistogram('skillstate.turn.duration', { description: 'How long a model turn took', unit: 's' }),
  };
  return instruments;
}

/** Counts a finished step (`error`: its error code) and records its duration in ms. */
export function stepFinished(definition: string, item: string, error: string | undefined, ms: number): void {
  guarded((at) => {
    const attributes: Attributes = { 'skillstate.agent.definition': definition, 'skillstate.step.item': item };
    if (error !== undefined) attributes['error.type'] = error;
    at.steps.add(1, attributes);
    at.stepDuration.record(ms / 1000, attributes);
  });
}

/** Records a model call: its duration in ms and the tokens it used, with the GenAI attributes of its span. */
export function modelCallFinished(attributes: Attributes, ms: number, usage: { input?: number | undefined; output?: number | undefined }): void {
  guarded((at) => {
    at.operationDuration.record(ms / 1000, attributes);
    if (usage.input !== undefined) at.tokens.record(usage.input, { ...attributes, 'gen_ai.token.type': 'input' });
    if (usage.output !== undefined) at.tokens.record(usage.output, { ...attributes, 'gen_ai.token.type': 'output' });
  });
}

/** Records a model turn's duration in ms (`error`: the code it failed with). */
export function turnFinished(attributes: Attributes, ms: number): void {
  guarded((at) => at.turnDuration.record(ms / 1000, attributes));
}

/** Records with the instruments, if a meter provider is registered: a meter that throws loses the record, never the work. */
function guarded(record: (at: Instruments) => void): void {
  try {
    const at = made();
    if (at) record(at);
  } catch (error) {
    telemetryFailed(error);
  }
}
