/**
 * Model-testing your own agent definition with `skillstate/testing`: xstate/graph walks every
 * combination of optional skills, mounting, unmounting, sending signals and injecting faults,
 * and each path is replayed against a real agent with the runtime's invariants checked after
 * every step. In a vitest file, give each path its own test:
 *
 *   for (const path of model.shortestPaths()) it(path.description, () => model.run(path));
 *
 * Run: npm run example examples/model-test.ts
 */
import { z } from 'zod';
import { createSignal, defineAgent, defineSkill } from 'skillstate';
import { arithmetic, counter } from 'skillstate/skills';
import { createAgentTestModel } from 'skillstate/testing';

const audit = defineSkill({ name: 'audit', schema: z.object({ enabled: z.boolean().default(true) }), requires: ['arithmetic'] });
const Accountant = defineAgent({ name: 'accountant', skills: [counter] });

export async function modelTestTour(log: (line: string) => void = console.log): Promise<number> {
  const model = createAgentTestModel(Accountant, {
    skills: [arithmetic, audit],
    signals: {
      count: { signal: createSignal('counter.increment'), expect: (outcome) => { if (!outcome.ok) throw outcome.error; } },
      add: {
        signal: createSignal('arithmetic.add', { a: 1, b: 2 }),
        expect: (outcome, mounted) => {
          const answered = outcome.ok ? 'ok' : outcome.error.code;
          const wanted = mounted.includes('arithmetic') ? 'ok' : 'no_route';
          if (answered !== wanted) throw new Error(`add answered ${answered}, expected ${wanted}`);
        },
      },
    },
  });
  const paths = [...model.shortestPaths(), ...model.simplePaths({ max: 10 })];
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
  return failed;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = (await modelTestTour()) ? 1 : 0;
