/**
 * An action's `ctx.abortSignal`: aborted, with a `RuntimeError` saying why, when the work it was
 * asked for is no longer wanted while its step is under way — its agent stops, the call that
 * caused the step is cancelled by its caller or times out (or already was when the step began).
 * A sync action's signal is never aborted; nor is any action's under `cmd`, where nothing can
 * cancel it. The agent keeps answering after an aborted step, its state as the step left it.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cmd, createSignal, defineAction, defineAgent, defineSkill, fail, result, RuntimeError } from '../../src/index.js';
import { systemPerTest } from './fixtures.js';

const systems = systemPerTest();

/** A system running a `waiter` agent (id `worker`). */
function spawnWaiter() {
  const system = systems.start();
  const { definition, seen } = waiter();
  return { system, agent: system.spawn(definition, { id: 'worker' }), seen };
}

/** The reason a signal was aborted with, once it is. */
function abortedWith(signal: AbortSignal): Promise<unknown> {
  return signal.aborted ? Promise.resolve(signal.reason) : new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
}

/** What the `wait` action saw of its signal: when it was aborted, and why. */
interface Seen {
  signals: AbortSignal[];
  /** Resolves once `wait` is under way, awaiting its signal. */
  waiting: Promise<void>;
}

/**
 * An agent whose `wait` action (async) waits until its abort signal aborts and then fails with
 * the signal's reason (so its step changes nothing); `note` (sync) counts, and keeps its signal.
 */
function waiter() {
  let started!: () => void;
  const seen: Seen = { signals: [], waiting: new Promise((resolve) => (started = resolve)) };
  const state = z.object({ notes: z.number().default(0) });
  const skill = defineSkill({
    name: 'waiter',
    schema: state,
    actions: [
      defineAction({
        name: 'wait',
        description: 'Waits until its work is no longer wanted',
        input: z.object({}),
        state,
        run: async (_params, ctx) => {
          seen.signals.push(ctx.abortSignal);
          started();
          await abortedWith(ctx.abortSignal);
          return fail('aborted', `stopped: ${(ctx.abortSignal.reason as RuntimeError).code}`);
        },
      }),
      defineAction({
        name: 'note',
        description: 'Counts a note',
        input: z.object({}),
        state,
        run: (_params, ctx) => {
          seen.signals.push(ctx.abortSignal);
          return result({ notes: ctx.skillState.notes + 1 }, { state: { notes: ctx.skillState.notes + 1 } });
        },
      }),
    ],
    routes: [
      { path: 'work.wait', target: { action: 'wait' } },
      { path: 'work.note', target: { action: 'note' } },
    ],
  });
  return { definition: defineAgent({ name: 'worker', skills: [skill] }), seen };
}

describe("an async action's abortSignal", () => {
  it('aborts with agent_stopped when its agent is stopped while the step is under way', async () => {
    const { agent, seen } = spawnWaiter();
    const pending = agent.call(createSignal('work.wait'), { timeout: Infinity }).catch((error: unknown) => error);
    await seen.waiting;
    expect(seen.signals[0]!.aborted).toBe(false);
    await agent.stop();
    const reason = await abortedWith(seen.signals[0]!);
    expect(reason).toBeInstanceOf(RuntimeError);
    expect(reason).toMatchObject({ code: 'agent_stopped', agentId: 'worker' });
    expect(await pending).toMatchObject({ code: 'agent_stopped' });
  });

  it('aborts when the system shuts down', async () => {
    const { system, agent, seen } = spawnWaiter();
    const pending = agent.call(createSignal('work.wait'), { timeout: Infinity }).catch((error: unknown) => error);
    await seen.waiting;
    await system.shutdown();
    expect(await abortedWith(seen.signals[0]!)).toMatchObject({ code: 'agent_stopped' });
    expect(await pending).toMatchObject({ code: 'agent_stopped' });
  });

  it("aborts with cancelled when the call's caller cancels it; the agent answers next, its state unchanged", async () => {
    const { agent, seen } = spawnWaiter();
    await agent.call(createSignal('work.note'));
    const controller = new AbortController();
    const pending = agent.call(createSignal('work.wait'), { signal: controller.signal, timeout: Infinity }).catch((error: unknown) => error);
    await seen.waiting;
    controller.abort(new Error('the user closed the page'));
    expect(await pending).toMatchObject({ code: 'cancelled' });
    const reason = await abortedWith(seen.signals[1]!);
    expect(reason).toBeInstanceOf(RuntimeError);
    // The same error the caller got: what was cancelled, and the caller's own reason.
    expect(reason).toMatchObject({ code: 'cancelled', details: { reason: 'the user closed the page' } });
    expect((reason as RuntimeError).message).toContain("call 'work.wait' to agent 'worker' was cancelled by its caller");
    // The aborted step failed (its action honoured the signal): nothing it did is kept.
    await expect(agent.call(createSignal('work.note'))).resolves.toEqual({ notes: 2 });
    expect(agent.getSnapshot().state).toEqual({ waiter: { notes: 2 } });
  });

  it('aborts with timeout when the call times out: a caller that stopped waiting no longer wants the work', async () => {
    const { agent, seen } = spawnWaiter();
    const pending = agent.call(createSignal('work.wait'), { timeout: 50 }).catch((error: unknown) => error);
    expect(await pending).toMatchObject({ code: 'timeout' });
    await seen.waiting;
    expect(await abortedWith(seen.signals[0]!)).toMatchObject({ code: 'timeout', message: "call 'work.wait' to agent 'worker' got no answer within 50 ms" });
    await expect(agent.call(createSignal('work.note'))).resolves.toEqual({ notes: 1 });
  });

  it('is aborted from the start when its caller gave up while the item waited in the mailbox', async () => {
    const { agent, seen } = spawnWaiter();
    const stopper = new AbortController();
    const first = agent.call(createSignal('work.wait'), { signal: stopper.signal, timeout: Infinity }).catch((error: unknown) => error);
    await seen.waiting;
    // Queued behind the first step, then given up on before it began.
    const controller = new AbortController();
    const second = agent.run({ action: 'wait', params: {} }, { signal: controller.signal, timeout: Infinity }).catch((error: unknown) => error);
    controller.abort();
    expect(await second).toMatchObject({ code: 'cancelled' });
    stopper.abort();
    expect(await first).toMatchObject({ code: 'cancelled' });
    // The second step runs once the first is over, and finds its work unwanted already.
    while (seen.signals.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(seen.signals[1]!.aborted).toBe(true);
    expect(seen.signals[1]!.reason).toMatchObject({ code: 'cancelled' });
    await expect(agent.call(createSignal('work.note'))).resolves.toEqual({ notes: 1 });
  });

  it('is never aborted under cmd, where nothing can cancel the step', async () => {
    const { definition, seen } = waiter();
    const done = await cmd(definition.new({ id: 'plain' }), { action: 'note', params: {} });
    expect(done.results[0]).toMatchObject({ ok: true });
    expect(seen.signals[0]!.aborted).toBe(false);
  });
});

describe("a sync action's abortSignal", () => {
  it('is never aborted: not by its caller cancelling afterwards, nor by its agent stopping', async () => {
    const { agent, seen } = spawnWaiter();
    const controller = new AbortController();
    await expect(agent.call(createSignal('work.note'), { signal: controller.signal })).resolves.toEqual({ notes: 1 });
    await expect(agent.run({ action: 'note', params: {} }, { timeout: 1 })).resolves.toEqual({ notes: 2 });
    controller.abort();
    await agent.stop();
    expect(seen.signals).toHaveLength(2);
    for (const signal of seen.signals) expect(signal.aborted).toBe(false);
  });
});
