/**
 * Model-based tests of the agent machine with `skillstate/testing`: sequences of mount,
 * unmount, signal and fault events over optional skills (one requiring another, one with a
 * supervised child), with the agent invariants (docs/architecture.md) checked after every step on a real agent.
 */
import { describe, expect, it } from 'vitest';
import { arithmetic } from '../../skills/index.js';
import { createAgentTestModel } from '../../src/testing/index.js';
import { NotesAgent, createSignal, crashableChild, defineSkill, z } from '../runtime/fixtures.js';

const base = defineSkill({ name: 'base', schema: z.object({ ready: z.boolean().default(true) }) });
const top = defineSkill({ name: 'top', requires: ['base'] });
const worker = defineSkill({ name: 'worker', children: () => [{ id: 'loop', logic: crashableChild({ count: 0 }), maxRestarts: 1, withinMs: 60_000 }] });

const model = createAgentTestModel(NotesAgent, {
  skills: [arithmetic, base, top, worker],
  signals: {
    add: {
      signal: createSignal('arithmetic.add', { a: 2, b: 3 }),
      expect: (outcome, mounted) => {
        if (mounted.includes('arithmetic')) expect(outcome).toEqual({ ok: true, value: { result: 5 } });
        else expect(outcome).toMatchObject({ ok: false, error: { code: 'no_route' } });
      },
    },
    note: { signal: createSignal('notes.add', { item: 'x', delay: 1 }), expect: (outcome) => expect(outcome.ok).toBe(true) },
    explode: {
      signal: createSignal('notes.add', { item: 'boom', explode: true }),
      expect: (outcome) => expect(outcome).toMatchObject({ ok: false, error: { code: 'action_failed' } }),
    },
    garbage: {
      signal: createSignal('notes.add_now', { item: 42 }),
      expect: (outcome) => expect(outcome).toMatchObject({ ok: false, error: { code: 'invalid_params' } }),
    },
  },
  faults: {
    crashWorker: (agent) => agent.actor.system.get(`${agent.id}/skills/worker/loop`)?.send({ type: 'crash' }),
  },
});

describe('the agent machine, model-based', () => {
  it('models only reachable skill sets: top never without base', () => {
    const states = Object.keys((model.machine.config as { states: Record<string, unknown> }).states);
    expect(states).toContain('base+top');
    expect(states.some((state) => state.split('+').includes('top') && !state.split('+').includes('base'))).toBe(false);
    expect(states).toHaveLength(12);
  });

  const shortest = model.shortestPaths();
  it.each(shortest.map((path) => [path.description, path] as const))('shortest path: %s', (_description, path) => model.run(path));

  const simple = model.simplePaths({ max: 40 });
  it('walks long simple paths: every skill mounted at some point, then taken away', () => {
    expect(simple).toHaveLength(40);
    expect(Math.max(...simple.map((path) => path.events.filter((e) => e.type.startsWith('mount.')).length))).toBeGreaterThanOrEqual(4);
  });
  it.each(simple.map((path) => [path.description, path] as const))('simple path: %s', (_description, path) => model.run(path));
});
