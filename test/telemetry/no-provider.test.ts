/**
 * Without a tracer or meter provider: every step works as before, signals carry no trace, and
 * `@opentelemetry/api` is never even loaded (this file imports nothing of OpenTelemetry itself).
 */
import { createRequire } from 'node:module';
import { afterEach, expect, it } from 'vitest';
import type { AgentSystem } from '../../src/index.js';
import { createSignal, defineAction, defineAgent, Effects, quietSystem, result, z } from '../runtime/fixtures.js';

let system: AgentSystem;
afterEach(async () => {
  await system?.shutdown();
});

const emit = defineAction({
  name: 'emit_done',
  description: 'Emit done',
  input: z.object({}),
  run: () => result('emitted', { effects: [Effects.emit(createSignal('done'))] }),
});

it('records nothing, stamps no traceparent and never loads the OpenTelemetry API', async () => {
  system = quietSystem();
  const heard: unknown[] = [];
  system.subscribe('done', (signal) => heard.push(signal));
  const agent = system.spawn(defineAgent({ name: 'emitter', actions: [emit], routes: [{ path: 'go', target: { action: 'emit_done' } }] }));
  await expect(agent.call(createSignal('go'))).resolves.toBe('emitted');
  expect(heard).toHaveLength(1);
  expect(heard[0]).not.toHaveProperty('traceparent');
  expect((globalThis as Record<symbol, unknown>)[Symbol.for('opentelemetry.js.api.1')]).toBeUndefined();
  const loaded = Object.keys(createRequire(import.meta.url).cache);
  expect(loaded.filter((file) => file.includes('@opentelemetry'))).toEqual([]);
});
