/**
 * The counter skill (a skill with internal state): a count and a step kept in the
 * agent's state under `counter`, the initial values taken from the config.
 */
import { z } from 'zod';
import { defineAction, defineSkill, result } from '../src/index.js';

/** The counter's state schema. */
export const counterState = z.object({
  count: z.number().int().default(0),
  step: z.number().int().default(1),
});

/** Increments the count (an action of `counter`). */
export const increment = defineAction({
  name: 'increment',
  description: 'Add the step (or the given amount) to the count',
  input: z.object({ by: z.number().int().optional().describe('Amount to add instead of the step') }),
  state: counterState,
  run: ({ by }, { skillState }) => {
    const count = skillState.count + (by ?? skillState.step);
    return result({ count }, { state: { count } });
  },
});

/** Decrements the count (an action of `counter`). */
export const decrement = defineAction({
  name: 'decrement',
  description: 'Subtract the step from the count',
  input: z.object({}),
  state: counterState,
  run: (_params, { skillState }) => {
    const count = skillState.count - skillState.step;
    return result({ count }, { state: { count } });
  },
});

/** Resets the count (an action of `counter`). */
export const reset = defineAction({
  name: 'reset',
  description: 'Set the count back to a value (default 0)',
  input: z.object({ to: z.number().int().default(0) }),
  state: counterState,
  run: ({ to }) => result({ count: to }, { state: { count: to } }),
});

/** Reads the count (an action of `counter`). */
export const getCount = defineAction({
  name: 'get_count',
  description: 'Read the current count',
  input: z.object({}),
  state: counterState,
  run: (_params, { skillState }) => ({ count: skillState.count }),
});

/** The counter skill: a count and a step kept in its state. */
export const counter = defineSkill({
  name: 'counter',
  description: 'A counter with a configurable step.',
  category: 'state',
  vsn: '1.0.0',
  tags: ['example', 'state'],
  schema: counterState,
  configSchema: z.object({
    initial: z.number().int().default(0),
    step: z.number().int().default(1),
  }),
  initialState: (config) => ({ count: config.initial, step: config.step }),
  actions: [increment, decrement, reset, getCount],
  signalPatterns: ['counter.*'],
  routes: [
    { path: 'counter.increment', target: { action: 'increment' } },
    { path: 'counter.decrement', target: { action: 'decrement' } },
    { path: 'counter.reset', target: { action: 'reset' } },
    { path: 'counter.get', target: { action: 'get_count' } },
  ],
});
