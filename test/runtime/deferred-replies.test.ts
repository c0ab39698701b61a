/**
 * Deferred replies: a step may leave its call unanswered (`defer_reply`) and a later step answer
 * it (`reply` with `to`), with a value or an error. The caller's AbortSignal reaches the agent as
 * a `skillstate.call.aborted` signal; stopping the agent answers deferred callers.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CALL_ABORTED_SIGNAL, createSignal, defineAction, defineAgent, defineSkill, Effects, result, type ErrorInfo } from '../../src/index.js';
import { systemPerTest } from './fixtures.js';

const systems = systemPerTest();

const desk = z.object({ waiting: z.array(z.string()).default([]), aborted: z.array(z.string()).default([]) });

/** A help desk: `ask` waits for an answer; `answer` and `refuse` reply to the oldest question. */
const helpDesk = defineSkill({
  name: 'desk',
  schema: desk,
  actions: [
    defineAction({
      name: 'ask',
      description: 'Asks a question; the answer comes later',
      input: z.object({}),
      state: desk,
      run: (_params: Record<string, never>, { skillState, signal }) =>
        result({ queued: true }, { state: { waiting: [...skillState.waiting, signal!.id] }, effects: [Effects.deferReply()] }),
    }),
    defineAction({
      name: 'answer',
      description: 'Answers the oldest question',
      input: z.object({ text: z.string() }),
      state: desk,
      run: ({ text }, { skillState }) => {
        const [first, ...rest] = skillState.waiting;
        return result({ answered: first ?? null }, { state: { waiting: rest }, effects: first ? [Effects.reply(text, {}, { to: first })] : [] });
      },
    }),
    defineAction({
      name: 'refuse',
      description: 'Refuses the oldest question',
      input: z.object({}),
      state: desk,
      run: (_params: Record<string, never>, { skillState }) => {
        const [first, ...rest] = skillState.waiting;
        const error: ErrorInfo = { code: 'action_failed', message: 'the desk is closed' };
        return result({}, { state: { waiting: rest }, effects: first ? [Effects.reply(undefined, {}, { to: first, error })] : [] });
      },
    }),
    defineAction({
      name: 'forget',
      description: 'Notes an aborted question',
      input: z.object({ signal: z.string() }),
      state: desk,
      run: ({ signal }, { skillState }) => result({}, { state: { aborted: [...skillState.aborted, signal], waiting: skillState.waiting.filter((id) => id !== signal) } }),
    }),
  ],
  routes: [
    { path: 'desk.ask', target: { action: 'ask' } },
    { path: 'desk.answer', target: { action: 'answer' } },
    { path: 'desk.refuse', target: { action: 'refuse' } },
    { path: CALL_ABORTED_SIGNAL, target: { action: 'forget' } },
  ],
});
const Desk = defineAgent({ name: 'desk_agent', skills: [helpDesk] });

function waitingOf(agent: { getSnapshot(): { state: unknown } }) {
  return (agent.getSnapshot().state as { desk: z.output<typeof desk> }).desk;
}

describe('deferred replies', () => {
  it('a call is answered by a later step, with a value or an error, in order', async () => {
    const agent = systems.start().spawn(Desk);
    const first = agent.call(createSignal('desk.ask'));
    const second = agent.call(createSignal('desk.ask'));
    await agent.call(createSignal('desk.answer', { text: 'forty-two' }));
    await agent.call(createSignal('desk.refuse'));
    await expect(first).resolves.toBe('forty-two');
    await expect(second).rejects.toMatchObject({ code: 'action_failed', message: 'the desk is closed' });
    expect(waitingOf(agent).waiting).toEqual([]);
  });

  it('a sent signal that defers leaves nobody waiting, and its later reply is ignored', async () => {
    const agent = systems.start().spawn(Desk);
    agent.send(createSignal('desk.ask'));
    await expect(agent.call(createSignal('desk.answer', { text: 'to nobody' }))).resolves.toMatchObject({ answered: expect.any(String) });
  });

  it("the caller's AbortSignal rejects it with cancelled and tells the agent which call was aborted", async () => {
    const agent = systems.start().spawn(Desk);
    const controller = new AbortController();
    const ask = createSignal('desk.ask');
    const pending = agent.call(ask, { signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'cancelled' });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(waitingOf(agent)).toEqual({ waiting: [], aborted: [ask.id] });
  });

  it('an already aborted signal sends nothing', async () => {
    const agent = systems.start().spawn(Desk);
    await expect(agent.call(createSignal('desk.ask'), { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'cancelled' });
    expect(waitingOf(agent).waiting).toEqual([]);
  });

  it('refuses a signal option that is not an AbortSignal', async () => {
    const agent = systems.start().spawn(Desk);
    await expect(agent.call(createSignal('desk.ask'), { signal: {} as AbortSignal })).rejects.toMatchObject({ code: 'invalid_options', subject: 'signal' });
  });

  it('stopping the agent answers deferred callers with agent_stopped', async () => {
    const agent = systems.start().spawn(Desk);
    const pending = agent.call(createSignal('desk.ask'));
    await agent.stop();
    await expect(pending).rejects.toMatchObject({ code: 'agent_stopped' });
  });

  it('a caller that timed out is answered by nobody, and the agent goes on', async () => {
    const agent = systems.start().spawn(Desk);
    await expect(agent.call(createSignal('desk.ask'), { timeout: 10 })).rejects.toMatchObject({ code: 'timeout' });
    const next = agent.call(createSignal('desk.ask'));
    await agent.call(createSignal('desk.answer', { text: 'late' }));
    await agent.call(createSignal('desk.answer', { text: 'on time' }));
    await expect(next).resolves.toBe('on time');
  });
});
