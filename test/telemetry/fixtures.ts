/**
 * A real OpenTelemetry SDK for the telemetry tests: a tracer provider whose spans go to an
 * in-memory exporter as they end, registered globally with an AsyncLocalStorage context manager
 * (as a Node program's SDK set-up does), and taken down after each test.
 */
import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach } from 'vitest';

/** The spans recorded, and helpers to read them. */
export interface Recorded {
  readonly exporter: InMemorySpanExporter;
  spans(): ReadableSpan[];
  /** The one span named `name` (fails when there is none or several). */
  one(name: string): ReadableSpan;
  named(name: string): ReadableSpan[];
  /** The span whose parent `span` is. */
  parentOf(span: ReadableSpan): ReadableSpan | undefined;
}

let teardown: (() => Promise<void>) | undefined;

afterEach(async () => {
  await teardown?.();
  teardown = undefined;
});

/** Registers a tracer provider recording into memory for this test. */
export function recordSpans(): Recorded {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  trace.setGlobalTracerProvider(provider);
  const previous = teardown;
  teardown = async () => {
    await previous?.();
    trace.disable();
    context.disable();
    propagation.disable();
    await provider.shutdown();
  };
  const spans = () => exporter.getFinishedSpans();
  const named = (name: string) => spans().filter((span) => span.name === name);
  return {
    exporter,
    spans,
    named,
    one(name) {
      const found = named(name);
      if (found.length !== 1) throw new Error(`expected one span '${name}', found ${found.length}: ${spans().map((span) => span.name).join(', ')}`);
      return found[0]!;
    },
    parentOf(span) {
      const parent = span.parentSpanContext?.spanId;
      return parent === undefined ? undefined : spans().find((candidate) => candidate.spanContext().spanId === parent);
    },
  };
}

/** Registers a meter provider recording into memory; `collect()` reads what was recorded so far. */
export function recordMetrics(): { collect(): Promise<ResourceMetrics[]> } {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(provider);
  const previous = teardown;
  teardown = async () => {
    await previous?.();
    metrics.disable();
    await provider.shutdown();
  };
  return {
    async collect() {
      await reader.forceFlush();
      // Each flush exports every metric so far (cumulative): the last export is all of them.
      return exporter.getMetrics().slice(-1);
    },
  };
}
