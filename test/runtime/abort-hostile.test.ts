/**
 * `ctx.abortSignal` used the way a careless action uses it: read after its step ended (kept
 * `ctx` in a closure), or given listeners that are never removed, run after run. A signal belongs
 * to its own step: a step that ended never sees the cancellation of a later one, and what one
 * run hangs on its signal is not carried into the next.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { chatMessage, ChatSignals, cmd, conversation, createSignal, defineAction, defineAgent, defineSkill, fail, result, type ActionContext } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { next } from '../model/fixtures.js';
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

describe("a model's tool call whose turn is cancelled before its step begins", () => {
  it('finds its abortSignal aborted when its step begins: a chat.cancel queued behind it while the agent was busy', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let toolSignal: AbortSignal | undefined;
    let toolStarted!: () => void;
    const toolRunning = new Promise<void>((resolve) => (toolStarted = resolve));
    const work = defineSkill({
      name: 'work',
      actions: [
        defineAction({
          name: 'busy',
          description: 'Keeps the agent busy until released',
          input: z.object({}),
          run: async () => {
            await released;
            return result('done');
          },
        }),
        defineAction({
          name: 'long_task',
          description: 'Works until its turn no longer wants it',
          input: z.object({}),
          run: async (_params, ctx) => {
            toolSignal = ctx.abortSignal;
            toolStarted();
            await aborted(ctx.abortSignal);
            return fail('aborted', 'no longer wanted');
          },
        }),
      ],
      routes: [{ path: 'busy', target: { action: 'busy' } }],
    });
    const model = scriptedModel([{ toolCalls: [{ tool: 'long_task', args: {}, id: 'task' }], delay: 1 }, { text: 'after' }]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(defineAgent({ name: 'assistant', skills: [conversation, work] }), { id: 'assistant' });
    system.subscribe(ChatSignals.toolCall, () => {
      // The tool call is queued right after this signal: the cancel goes behind it.
      queueMicrotask(() => agent.send(createSignal(ChatSignals.cancel, { reason: 'enough' })));
    });
    const pending = agent.call(chatMessage('do the long task'), { timeout: Infinity }).catch((error: unknown) => error);
    // Busy before the model answers (its answer comes after a timer): the tool call waits behind it.
    const busy = agent.call(createSignal('busy'), { timeout: Infinity });
    await next(system, ChatSignals.toolCall);
    release();
    await busy;
    await toolRunning;
    // Aborted as its step begins: its turn was cancelled while it waited.
    expect(toolSignal!.aborted).toBe(true);
    expect(toolSignal!.reason).toMatchObject({ code: 'cancelled' });
    expect(await pending).toMatchObject({ code: 'cancelled' });
  });
});
