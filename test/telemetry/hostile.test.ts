/**
 * Telemetry that misbehaves never fails the work it records: a span processor, a tracer or a
 * meter of the program's that throws loses its record, the agents answer as they would without
 * it, and the failure is said once on stderr.
 */
import { context, metrics, trace, type Meter, type MeterProvider, type TracerProvider } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SpanStatusCode } from '@opentelemetry/api';
import type { AgentSystem } from '../../src/index.js';
import { createSignal, defineAction, defineAgent, defineSkill, notebook, quietSystem, z } from '../runtime/fixtures.js';

const NotesAgent = defineAgent({ name: 'notes_agent', skills: [notebook] });

let system: AgentSystem | undefined;
let shutdown: (() => Promise<void>) | undefined;
afterEach(async () => {
  await system?.shutdown();
  system = undefined;
  trace.disable();
  metrics.disable();
  context.disable();
  await shutdown?.();
  shutdown = undefined;
  vi.restoreAllMocks();
});

/** A span processor that throws where `where` says. */
function throwing(where: 'onStart' | 'onEnd'): SpanProcessor {
  const fail = () => {
    throw new Error(`${where} failed`);
  };
  return { onStart: where === 'onStart' ? fail : () => {}, onEnd: where === 'onEnd' ? fail : () => {}, forceFlush: async () => {}, shutdown: async () => {} };
}

/** Registers the SDK's tracer provider with `processors`; its in-memory exporter records what reaches it. */
function tracedWith(...processors: SpanProcessor[]): InMemorySpanExporter {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), ...processors] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  shutdown = () => provider.shutdown();
  return exporter;
}

/** Two notes added and counted: what an agent answers whatever the telemetry does. */
async function twoNotes(): Promise<void> {
  system = quietSystem();
  const agent = system.spawn(NotesAgent, { id: 'keeper' });
  for (const item of ['one', 'two']) await agent.call(createSignal('notes.add', { item }));
  expect(agent.getSnapshot().state.notebook).toEqual({ items: ['one', 'two'] });
  expect(agent.getSnapshot().status).not.toBe('stopped');
}

describe('telemetry that throws', () => {
  it('a span processor that throws as a span starts: the agent answers, and the failure is said once', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    tracedWith(throwing('onStart'));
    await twoNotes();
    const said = stderr.mock.calls.map(([text]) => String(text)).filter((text) => text.includes('OpenTelemetry'));
    expect(said).toEqual([expect.stringMatching(/^\[skillstate\] the registered OpenTelemetry tracer or meter threw; .*: onStart failed\n$/)]);
  });

  it('a span processor that throws as a span ends: the agent keeps running, and the spans reach the processors before it', async () => {
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const exporter = tracedWith(throwing('onEnd'));
    await twoNotes();
    expect(exporter.getFinishedSpans().filter((span) => span.name === 'step notes.add')).toHaveLength(2);
  });

  it('a tracer provider whose tracer throws, and a meter whose instruments throw', async () => {
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const fail = () => {
      throw new Error('broken');
    };
    trace.setGlobalTracerProvider({ getTracer: () => ({ startSpan: fail, startActiveSpan: fail }) } as unknown as TracerProvider);
    const meter = { createCounter: () => ({ add: fail }), createHistogram: () => ({ record: fail }) } as unknown as Meter;
    metrics.setGlobalMeterProvider({ getMeter: () => meter } as MeterProvider);
    await twoNotes();
  });
});

describe("spans of work an agent's stop cuts short", () => {
  it("an action whose promise never settles: its span ends with the step's when the agent stops", async () => {
    const exporter = tracedWith();
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const hang = defineAction({
      name: 'hang',
      description: 'Starts and never finishes',
      input: z.object({}),
      run: () => {
        started();
        return new Promise<never>(() => {});
      },
    });
    const hanger = defineSkill({ name: 'hanger', schema: z.object({}), actions: [hang], routes: [{ path: 'hang', target: { action: 'hang' } }] });
    system = quietSystem();
    const agent = system.spawn(defineAgent({ name: 'hanging', skills: [hanger] }), { id: 'h' });
    const answer = agent.call(createSignal('hang', {})).catch((error: { code?: string }) => error.code);
    await running;
    await agent.stop();
    expect(await answer).toBe('agent_stopped');
    const [step] = exporter.getFinishedSpans().filter((span) => span.name === 'step hang');
    const [action] = exporter.getFinishedSpans().filter((span) => span.name === "action 'hang'");
    expect(step?.attributes['skillstate.step.outcome']).toBe('stopped');
    expect(action?.parentSpanContext?.spanId).toBe(step?.spanContext().spanId);
    expect(action?.status).toEqual({ code: SpanStatusCode.ERROR, message: step?.status.message });
  });
});
