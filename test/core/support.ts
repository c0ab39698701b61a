/**
 * Shared test fixtures: the skills and agents of seeds 000 and 001 that several specification
 * files use, and small helpers for asserting on thrown errors. Not a test file itself.
 */
import { expect } from 'vitest';
import { z } from 'zod';
import { defineAction, defineAgent, defineSkill, result, SkillstateError, type ErrorCode } from '../../src/index.js';
import { calculator } from '../../skills/index.js';

/** A stats skill: a window taken from the config and the samples seen so far. */
export const statsState = z.object({
  window: z.number().int().positive().default(50),
  samples: z.array(z.number()).default([]),
});

export const record = defineAction({
  name: 'record',
  description: 'Record a sample, keeping at most `window` of them',
  input: z.object({ value: z.number() }),
  state: statsState,
  run: ({ value }, { skillState }) => {
    const samples = [...skillState.samples, value].slice(-skillState.window);
    return result({ count: samples.length }, { state: { samples } });
  },
});

export const mean = defineAction({
  name: 'mean',
  description: 'The mean of the recorded samples (0 when there are none)',
  input: z.object({}),
  state: statsState,
  run: (_params, { skillState }) => ({
    mean: skillState.samples.length ? skillState.samples.reduce((sum, x) => sum + x, 0) / skillState.samples.length : 0,
  }),
});

export const stats = defineSkill({
  name: 'stats',
  description: 'Running statistics over a window of samples',
  category: 'math',
  vsn: '0.1.0',
  schema: statsState,
  configSchema: z.object({ window: z.number().int().positive().default(50) }),
  initialState: (config) => ({ window: config.window }),
  actions: [record, mean],
  signalPatterns: ['stats.**'],
});

/** A math agent: its own `mode`, the calculator, and stats with a window of 100. */
export const MathAgent = defineAgent({
  name: 'math_agent',
  description: 'Agent with calculation abilities',
  schema: z.object({ mode: z.enum(['interactive', 'batch']).default('interactive') }),
  skills: [calculator, [stats, { window: 100 }]],
});

/** Skills with dependencies: `search` needs `auth` and `http_client`. */
export const auth = defineSkill({
  name: 'auth',
  schema: z.object({ token: z.string().nullable().default(null) }),
  actions: [
    defineAction({
      name: 'login',
      description: 'Store a token',
      input: z.object({ token: z.string() }),
      run: ({ token }) => result({ ok: true }, { state: { token } }),
    }),
  ],
});

export const httpClient = defineSkill({
  name: 'http_client',
  configSchema: z.object({ timeoutMs: z.number().int().positive().default(5000) }),
  schema: z.object({ requests: z.number().int().default(0) }),
  actions: [
    defineAction({ name: 'fetch_url', description: 'Fetch a URL', input: z.object({ url: z.string() }), run: ({ url }) => ({ url }) }),
  ],
});

export const search = defineSkill({
  name: 'search',
  requires: ['auth', 'http_client'],
  schema: z.object({ last_query: z.string().nullable().default(null) }),
  actions: [
    defineAction({
      name: 'query',
      description: 'Search',
      input: z.object({ q: z.string() }),
      run: ({ q }) => result({ hits: [] as string[] }, { state: { last_query: q } }),
    }),
  ],
});

/**
 * Runs `fn`, expects it to throw an instance of `type` with `code`, and returns the error for
 * further assertions.
 */
export function thrownBy<E extends SkillstateError>(fn: () => unknown, type: abstract new (...args: never[]) => E, code: ErrorCode): E {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught, 'expected a throw').toBeInstanceOf(type);
  const error = caught as E;
  expect(error.code).toBe(code);
  return error;
}

/** A deep copy through JSON: what a snapshot, a log line or another process would see. */
export function viaJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
