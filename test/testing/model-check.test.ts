/**
 * Model tests that reach domain behaviour: a tickets skill with a reference model, and one
 * planted bug per variant. Random interleavings (fast-check commands) must catch each bug and
 * shrink it to a handful of steps, printed as a `model.replay([...])` call that reproduces it.
 */
import { describe, expect, it } from 'vitest';
import { createAgentTestModel, createSignal, defineAction, defineAgent, defineSkill, ModelCheckFailure, ModelViolation, result } from './support.js';
import { z } from 'zod';
import { Desk, ticketModel, ticketSignals, ticketsSkill, type Bug } from './tickets.js';

const modelFor = (bug: Bug) => createAgentTestModel(Desk, { skills: [ticketsSkill(bug)], signals: ticketSignals, model: ticketModel });

async function failureOf(run: Promise<void>): Promise<ModelCheckFailure> {
  const failure = await run.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(failure).toBeInstanceOf(ModelCheckFailure);
  return failure as ModelCheckFailure;
}

describe('a correct skill and its reference model agree', () => {
  it('random interleavings of signals, mounts, unmounts, restarts and persist/restore all hold', async () => {
    await expect(modelFor('none').check({ runs: 40, seed: 7 })).resolves.toBeUndefined();
  });

  it('graph paths through the mount topology hold, none of them twice', async () => {
    const model = modelFor('none');
    const paths = model.paths();
    expect(new Set(paths.map((path) => path.description)).size).toBe(paths.length);
    for (const path of paths) await model.run(path);
  });
});

describe('each planted bug is caught and shrunk to a minimal sequence that reproduces it', () => {
  const cases: [Bug, object[], RegExp][] = [
    ['ids never increment', [{ mount: 'tickets' }, { signal: 'open' }, { signal: 'open' }], /opened ticket 1, the model expects 2/],
    ['action fails its schema', [{ mount: 'tickets' }, { signal: 'open' }], /opening failed: invalid_state_update/],
    // Whether the runtime hands actions live state or frozen state, a mutation is caught:
    // live, the snapshot taken before the step changes; frozen, the push throws inside the step.
    ['in-place mutation', [{ mount: 'tickets' }, { signal: 'open' }], /mutated in place|opening failed: action_failed/],
    ['slice overwritten with garbage', [{ mount: 'tickets' }, { signal: 'list' }], /does not match its schema|signal 'list' failed with invalid_state_update/],
  ];
  it.each(cases)('%s', async (bug, minimal, reason) => {
    const model = modelFor(bug);
    const failure = await failureOf(model.check({ runs: 100, seed: 42 }));
    expect(failure.steps).toEqual(minimal);
    expect(failure.violation).toMatch(reason);
    expect(failure.code).toBe(`await model.replay([${minimal.map((step) => `{ ${Object.keys(step)[0]}: '${Object.values(step)[0]}' }`).join(', ')}]);`);
    expect(failure.message).toContain(failure.code);
    // The printed sequence, pasted into a test, fails the same way.
    const replayed = await model.replay(failure.steps).then(() => undefined, (error: unknown) => error);
    expect(replayed).toBeInstanceOf(ModelViolation);
    expect((replayed as ModelViolation).message).toMatch(reason);
  });
});

describe('signals without expect', () => {
  it('a routed signal must succeed: an action failing its schema is caught without any expectation', async () => {
    const model = createAgentTestModel(Desk, { skills: [ticketsSkill('action fails its schema')], signals: { open: { signal: ticketSignals.open.signal } } });
    const failure = await failureOf(model.check({ runs: 50, seed: 3, restarts: false, persistence: false }));
    expect(failure.steps).toEqual([{ mount: 'tickets' }, { signal: 'open' }]);
    expect(failure.violation).toMatch(/signal 'open' failed with invalid_state_update: .*a routed signal without expect must succeed/);
  });

  it('mayFail accepts a typed error, and the failed step must still change nothing', async () => {
    const model = createAgentTestModel(Desk, { skills: [ticketsSkill('action fails its schema')], signals: { open: { signal: ticketSignals.open.signal, mayFail: true } } });
    await expect(model.check({ runs: 30, seed: 3 })).resolves.toBeUndefined();
  });

  it('an unrouted signal may answer no_route', async () => {
    const model = createAgentTestModel(Desk, { skills: [ticketsSkill()], signals: { list: ticketSignals.list } });
    await expect(model.replay([{ signal: 'list' }, { mount: 'tickets' }, { signal: 'list' }, { unmount: 'tickets' }, { signal: 'list' }])).resolves.toBeUndefined();
  });
});

describe('replay', () => {
  it('restarts and persist/restore keep the domain going: ids continue where they were', async () => {
    const model = modelFor('none');
    await expect(model.replay([{ mount: 'tickets' }, { signal: 'open' }, { restart: true }, { signal: 'open' }, { persist: true }, { signal: 'open' }, { signal: 'list' }])).resolves.toBeUndefined();
  });

  it('a remount starts the skill afresh, as the reference model says', async () => {
    const model = modelFor('none');
    await expect(model.replay([{ mount: 'tickets' }, { signal: 'open' }, { unmount: 'tickets' }, { mount: 'tickets' }, { signal: 'open' }])).resolves.toBeUndefined();
    // A model that forgets the reset disagrees as soon as the skill is mounted again.
    const stale = createAgentTestModel(Desk, { skills: [ticketsSkill()], signals: ticketSignals, model: { ...ticketModel, reduce: (m, step) => ('mount' in step ? m : ticketModel.reduce(m, step)) } });
    await expect(stale.replay([{ mount: 'tickets' }, { signal: 'open' }, { unmount: 'tickets' }, { mount: 'tickets' }, { signal: 'open' }])).rejects.toThrow(/step 4 \(mount tickets\): the agent disagrees with the reference model: 0 tickets open, the model has 1/);
  });

  it('refuses a step the model does not have, naming it', async () => {
    await expect(modelFor('none').replay([{ signal: 'close' }])).rejects.toMatchObject({ code: 'invalid_skill', subject: 'signal close' });
  });
});

describe('steps that do not settle, and async checks', () => {
  const answer = defineAction({ name: 'answer', description: 'The answer', input: z.object({}), run: () => result(41) });
  const oracle = defineSkill({ name: 'oracle', actions: [answer], routes: [{ path: 'oracle.ask', target: { action: 'answer' } }] });

  it('an async expect that rejects fails its step, as a sync one that throws does', async () => {
    const model = createAgentTestModel(defineAgent({ name: 'desk' }), {
      skills: [oracle],
      signals: {
        ask: {
          signal: createSignal('oracle.ask'),
          expect: async (outcome, mounted) => {
            await Promise.resolve();
            if (mounted.includes('oracle') && (!outcome.ok || outcome.value !== 42)) throw new Error(`expected 42, got ${outcome.ok ? String(outcome.value) : outcome.error.code}`);
          },
        },
      },
    });
    await expect(model.replay([{ mount: 'oracle' }, { signal: 'ask' }])).rejects.toThrow(/step 2 \(signal ask\): the answer is not the expected one: expected 42, got 41/);
  });

  it('a mount whose hook never settles fails its step instead of hanging the test', async () => {
    const stuck = defineSkill({ name: 'stuck', mount: () => new Promise<never>(() => {}) });
    const model = createAgentTestModel(defineAgent({ name: 'desk' }), { skills: [stuck], signals: {} });
    await expect(model.replay([{ mount: 'stuck' }])).rejects.toThrow(/step 1 \(mount stuck\): [\s\S]*mount of 'stuck' did not settle within 5000 ms/);
  }, 20_000);
});

