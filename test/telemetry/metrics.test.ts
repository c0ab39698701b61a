/** Metrics, recorded only while a meter provider is registered: steps and their errors, model call tokens and durations, turn durations. */
import { afterEach, expect, it } from 'vitest';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { chatMessage, createSignal, type AgentSystem } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { NotesAgent, quietSystem } from '../runtime/fixtures.js';
import { assistant } from '../model/fixtures.js';
import { recordMetrics } from './fixtures.js';

let system: AgentSystem;
afterEach(async () => {
  await system?.shutdown();
});

/** The data points of metric `name`, with their attributes. */
function points(collected: ResourceMetrics[], name: string): { attributes: Record<string, unknown>; value: unknown }[] {
  return collected.flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics.filter((metric) => metric.descriptor.name === name).flatMap((metric) => metric.dataPoints.map((point) => ({ attributes: point.attributes, value: point.value })))));
}

it('counts steps by definition and item, errors by code, without any tracer provider', async () => {
  const metrics = recordMetrics();
  system = quietSystem();
  const agent = system.spawn(NotesAgent, { id: 'n1' });
  await agent.call(createSignal('notes.add_now', { item: 'x' }));
  await agent.call(createSignal('notes.add_now', { item: 'y' }));
  await agent.call(createSignal('notes.refuse')).catch(() => undefined);
  const steps = points(await metrics.collect(), 'skillstate.steps');
  expect(steps).toEqual(
    expect.arrayContaining([
      { attributes: { 'skillstate.agent.definition': 'notes_agent', 'skillstate.step.item': 'signal' }, value: 2 },
      { attributes: { 'skillstate.agent.definition': 'notes_agent', 'skillstate.step.item': 'signal', 'error.type': 'action_failed' }, value: 1 },
    ]),
  );
});

it('records the tokens of each model call as gen_ai.client.token.usage, and the turn duration', async () => {
  const metrics = recordMetrics();
  system = quietSystem({ models: { default: scriptedModel([{ text: 'Hello.' }]) } });
  await system.spawn(assistant({ stream: false }), { id: 'ada' }).call(chatMessage('Hi'));
  // The caller has its answer once the step recording it commits; the turn's work ends right after.
  let collected = await metrics.collect();
  while (points(collected, 'skillstate.turn.duration').length === 0) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    collected = await metrics.collect();
  }
  const tokens = points(collected, 'gen_ai.client.token.usage');
  expect(tokens.map((point) => point.attributes['gen_ai.token.type']).sort()).toEqual(['input', 'output']);
  expect(tokens[0]!.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': expect.any(String), 'gen_ai.request.model': expect.any(String) });
  expect(points(collected, 'gen_ai.client.operation.duration')).toHaveLength(1);
  expect(points(collected, 'skillstate.turn.duration').map((point) => point.attributes)).toEqual([{ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'assistant' }]);
});
