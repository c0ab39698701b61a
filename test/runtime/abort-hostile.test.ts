/**
 * `ctx.abortSignal` used the way a careless action uses it: read after its step ended (kept
 * `ctx` in a closure), or given listeners that are never removed, run after run. A signal belongs
 * to its own step: a step that ended never sees the cancellation of a later one, and what one
 * run hangs on its signal is not carried into the next.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cmd, createSignal, defineAction, defineAgent, defineSkill, fail, result, type ActionContext } from '../../src/index.js';
import { systemPerTest } from './fixtures.js';

const systems = systemPerTest();

/** Resolves once `signal` aborts. */
function aborted(signal: AbortSignal): Promise<void> {
  return signal.aborted ? Promise.resolve() : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/**
 * An agent whose `keep` action (sync) keeps its context without reading its signal, and whose
 * `wait` action (async) waits until its own signal aborts.
 */
function keeper() {
  const kept: ActionContext[] = [];
  let started!: () => void;
  const waiting = new Promise<void>((resolve) => (started = resolve));
  const skill = defineSkill({
    name: 'keeper',
    actions: [
      defineAction({
        name: 'keep',
        description: 'Keeps its context for later',
        input: z.object({}),
        run: (_params, ctx) => {
          kept.push(ctx);
          return result('kept');
        },
      }),
      defineAction({
        name: 'wait',
        description: 'Waits until its work is no longer wanted',
        input: z.object({}),
        run: async (_params, ctx) => {
          started();
          await aborted(ctx.abortSignal);
          return fail('aborted', 'no longer wanted');
        },
      }),
    ],
    routes: [
      { path: 'keep', target: { action: 'keep' } },
      { path: 'wait', target: { action: 'wait' } },
    ],
  });
  return { definition: defineAgent({ name: 'keeper', skills: [skill] }), kept, waiting };
}

describe('an abortSignal read after its step ended', () => {
  it("is not the signal of the step under way then: that step's cancellation does not reach it", async () => {
    const system = systems.start();
    const { definition, kept, waiting } = keeper();
    const agent = system.spawn(definition, { id: 'keeper' });
    await agent.call(createSignal('keep'));
    const controller = new AbortController();
    const pending = agent.call(createSignal('wait'), { signal: controller.signal, timeout: Infinity }).catch((error: unknown) => error);
    await waiting;
    const late = kept[0]!.abortSignal;
    controller.abort(new Error('the user gave up'));
    expect(await pending).toMatchObject({ code: 'cancelled' });
    expect(late.aborted).toBe(false);
  });

  it("read while the agent is idle, is not handed to the next step: the next step's cancellation does not reach it", async () => {
    const system = systems.start();
    const { definition, kept, waiting } = keeper();
    const agent = system.spawn(definition, { id: 'keeper' });
    await agent.call(createSignal('keep'));
    const late = kept[0]!.abortSignal;
    const controller = new AbortController();
    const pending = agent.call(createSignal('wait'), { signal: controller.signal, timeout: Infinity }).catch((error: unknown) => error);
    await waiting;
    controller.abort(new Error('the user gave up'));
    expect(await pending).toMatchObject({ code: 'cancelled' });
    expect(late.aborted).toBe(false);
  });
});

describe('an abortSignal under cmd', () => {
  it('does not pile up the listeners of every run: each run has a signal of its own', async () => {
    const listening = defineSkill({
      name: 'listening',
      actions: [
        defineAction({
          name: 'listen',
          description: 'Listens to its signal and never stops listening',
          input: z.object({}),
          run: (_params, ctx) => {
            ctx.abortSignal.addEventListener('abort', () => {});
            return result(ctx.abortSignal.aborted);
          },
        }),
      ],
    });
    const agent = defineAgent({ name: 'listener', skills: [listening] }).new({ id: 'listener' });
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => void warnings.push(warning);
    process.on('warning', onWarning);
    try {
      for (let run = 0; run < 20; run++) {
        const done = await cmd(agent, { action: 'listen', params: {} });
        expect(done.results[0]).toMatchObject({ ok: true, output: false });
      }
      // Node says so on the next turn when a signal has more listeners than it expects of one.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning')).toEqual([]);
  });
});
