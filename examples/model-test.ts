/**
 * Model-testing your own agent definition with `skillstate/testing`. You describe what the
 * agent's domain should do as a reference model (a plain reducer over a small state) and what
 * each signal must answer; skillstate then
 *   1. walks the mount topology with xstate/graph (shortest and simple paths, none twice), and
 *   2. draws random interleavings of signals, mounts, unmounts, restarts and persist/restore with
 *      fast-check, shrinking a failure to a minimal sequence printed as code to paste into a test.
 * After every step it checks the answer, the model, and the runtime's invariants (registered
 * actions, slices valid against their schemas, lifecycles, a failed step changing nothing).
 * In a vitest file:
 *
 *   for (const path of model.paths()) it(path.description, () => model.run(path));
 *   it('random interleavings hold', () => model.check({ runs: 100 }));
 *
 * Run: npm run example examples/model-test.ts
 */
import { z } from 'zod';
import { createSignal, defineAction, defineAgent, defineSkill, result } from 'skillstate';
import { arithmetic, counter } from 'skillstate/skills';
import { createAgentTestModel, ModelCheckFailure, type ModelSignal, type ReferenceModel } from 'skillstate/testing';

const audit = defineSkill({ name: 'audit', schema: z.object({ enabled: z.boolean().default(true) }), requires: ['arithmetic'] });
const Accountant = defineAgent({ name: 'accountant', skills: [counter] });

/** What the counter should do: every increment adds one, and the count survives restarts. */
const counting: ReferenceModel<{ count: number }> = {
  initial: { count: 0 },
  reduce: (model, step) => ('signal' in step && step.signal === 'count' ? { count: model.count + 1 } : model),
  agrees: (model, state) => {
    const { count } = state.counter as { count: number };
    return count === model.count ? undefined : `the counter is at ${count}, the model at ${model.count}`;
  },
};

const signals: Record<string, ModelSignal<{ count: number }>> = {
  count: {
    signal: createSignal('counter.increment'),
    expect: (outcome, _mounted, model) => {
      const count = outcome.ok ? (outcome.value as { count: number }).count : outcome.error.code;
      if (count !== model.count + 1) throw new Error(`increment answered ${count}, the model expects ${model.count + 1}`);
    },
  },
  add: {
    signal: createSignal('arithmetic.add', { a: 1, b: 2 }),
    expect: (outcome, mounted) => {
      const answered = outcome.ok ? 'ok' : outcome.error.code;
      const wanted = mounted.includes('arithmetic') ? 'ok' : 'no_route';
      if (answered !== wanted) throw new Error(`add answered ${answered}, expected ${wanted}`);
    },
  },
};

/** A counter with a bug: it answers the new count but never stores it. */
const tally = z.object({ count: z.number().int().default(0) });
const forgetful = defineSkill({
  name: 'counter',
  schema: tally,
  actions: [
    defineAction({
      name: 'increment',
      description: 'Add one (and forget it)',
      input: z.object({}),
      state: tally,
      run: (_params, { skillState }) => result({ count: skillState.count + 1 }),
    }),
  ],
  routes: [{ path: 'counter.increment', target: { action: 'increment' } }],
});

export async function modelTestTour(log: (line: string) => void = console.log): Promise<number> {
  const model = createAgentTestModel(Accountant, { skills: [arithmetic, audit], signals, model: counting });
  const paths = model.paths({ max: 10 });
  let failed = 0;
  for (const path of paths) {
    try {
      await model.run(path);
      log(`✓ ${path.description}`);
    } catch (error) {
      failed++;
      log(`✗ ${path.description}\n  ${(error as Error).message}`);
    }
  }
  log(`${paths.length - failed} of ${paths.length} paths hold`);

  const runs = 25;
  try {
    await model.check({ runs, seed: 2024 });
    log(`${runs} random sequences of signals, mounts, unmounts, restarts and persist/restore hold`);
  } catch (error) {
    failed++;
    log(`✗ ${(error as Error).message}`);
  }

  // The same model against the forgetful counter: the random test finds the bug and shrinks it.
  const buggy = createAgentTestModel(defineAgent({ name: 'accountant', skills: [forgetful] }), { signals: { count: signals.count! }, model: counting });
  try {
    await buggy.check({ runs, seed: 2024 });
    failed++;
    log('✗ the forgetful counter was not caught');
  } catch (error) {
    if (!(error instanceof ModelCheckFailure)) throw error;
    log(`the forgetful counter is caught: ${error.violation}\n  shrunk to ${error.steps.length} step${error.steps.length === 1 ? "" : "s"}: ${error.code}`);
  }
  return failed;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = (await modelTestTour()) ? 1 : 0;
