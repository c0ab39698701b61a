/**
 * A deferred answer finds its caller by the id of the signal called with, so a signal id belongs
 * to one waiting call at a time: a second call under an id whose call has not been answered is
 * refused at once (`invalid_signal`, naming the id, `details.reason: 'duplicate_call'`) and never
 * reaches the agent. A deferred answer nobody waits for any more (the caller timed out or gave
 * up) or that names no caller at all is recorded in the trace (`late_result`), as other answers
 * that come too late are.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSignal, defineAction, defineAgent, defineSkill, Effects, result, RuntimeError, type TraceLine } from '../../src/index.js';
import { NotesAgent, systemPerTest } from './fixtures.js';

const systems = systemPerTest();

const desk = z.object({ waiting: z.array(z.string()).default([]) });

/** `ask` waits for an answer; `answer` answers every waiting question, and the extra ids it is given. */
const Desk = defineAgent({
  name: 'desk_agent',
  skills: [
    defineSkill({
      name: 'desk',
      schema: desk,
      actions: [
        defineAction({
          name: 'ask',
          description: 'Asks; the answer comes later',
          input: z.object({}).loose(),
          state: desk,
          run: (_params, { skillState, signal }) => result(null, { state: { waiting: [...skillState.waiting, signal!.id] }, effects: [Effects.deferReply()] }),
        }),
        defineAction({
          name: 'answer',
          description: 'Answers every waiting question',
          input: z.object({ also: z.array(z.string()).default([]) }),
          state: desk,
          run: ({ also }, { skillState }) =>
            result(skillState.waiting.length, { state: { waiting: [] }, effects: [...skillState.waiting, ...also].map((id, i) => Effects.reply(`answer #${i}`, {}, { to: id })) }),
        }),
      ],
      routes: [
        { path: 'desk.ask', target: { action: 'ask' } },
        { path: 'desk.answer', target: { action: 'answer' } },
      ],
    }),
  ],
});

const waitingOf = (agent: { getSnapshot(): { state: unknown } }) => (agent.getSnapshot().state as { desk: { waiting: string[] } }).desk.waiting;

describe('one waiting call per signal id', () => {
  it('a second call with the id of a call waiting for its deferred answer is refused, naming the id; the first is answered', async () => {
    const agent = systems.start().spawn(Desk, { id: 'd' });
    const signal = createSignal('desk.ask', { q: 1 });
    const first = agent.call(signal);
    const second = await agent.call(signal).catch((error: unknown) => error);
    expect(second).toBeInstanceOf(RuntimeError);
    expect(second).toMatchObject({
      code: 'invalid_signal',
      subject: signal.id,
      agentId: 'd',
      message: expect.stringContaining(`is still answering a call with signal id '${signal.id}'`),
      details: { reason: 'duplicate_call', signal: signal.id, type: 'desk.ask' },
    });
    expect(waitingOf(agent)).toEqual([signal.id]);
    await expect(agent.call(createSignal('desk.answer'))).resolves.toBe(1);
    await expect(first).resolves.toBe('answer #0');
  });

  it('once that call is answered, its id may be called with again', async () => {
    const agent = systems.start().spawn(Desk);
    const signal = createSignal('desk.ask');
    const first = agent.call(signal);
    await agent.call(createSignal('desk.answer'));
    await expect(first).resolves.toBe('answer #0');
    const again = agent.call(signal);
    await agent.call(createSignal('desk.answer'));
    await expect(again).resolves.toBe('answer #0');
  });

  it('the same holds for a call still waiting in the mailbox, or in an async step', async () => {
    const agent = systems.start().spawn(NotesAgent);
    const slow = createSignal('notes.add', { item: 'slow', delay: 5 });
    const queued = createSignal('notes.add_now', { item: 'queued' });
    const running = agent.call(slow);
    const waiting = agent.call(queued);
    await expect(agent.call(slow)).rejects.toMatchObject({ code: 'invalid_signal', subject: slow.id });
    await expect(agent.call(queued)).rejects.toMatchObject({ code: 'invalid_signal', subject: queued.id });
    await expect(running).resolves.toEqual({ count: 1 });
    await expect(waiting).resolves.toEqual({ count: 2 });
  });

  it('sending a signal with that id is not a call: it is taken', async () => {
    const agent = systems.start().spawn(Desk);
    const signal = createSignal('desk.ask');
    const first = agent.call(signal);
    agent.send(signal);
    expect(waitingOf(agent)).toEqual([signal.id, signal.id]);
    await agent.call(createSignal('desk.answer'));
    await expect(first).resolves.toBe('answer #0');
  });
});

describe('a deferred answer nobody receives is traced as late_result', () => {
  const lateResults = (lines: TraceLine[]) =>
    lines.flatMap((line) => (line.kind === 'diagnostic' && line.diagnostic.code === 'late_result' ? [{ agent: line.agent, subject: line.diagnostic.subject, message: line.diagnostic.message }] : []));

  it('after its caller timed out', async () => {
    const lines: TraceLine[] = [];
    const agent = systems.start({ trace: (line) => lines.push(line) }).spawn(Desk, { id: 'd' });
    const signal = createSignal('desk.ask');
    await expect(agent.call(signal, { timeout: 5 })).rejects.toMatchObject({ code: 'timeout' });
    await agent.call(createSignal('desk.answer'));
    expect(lateResults(lines)).toEqual([{ agent: 'd', subject: signal.id, message: expect.stringContaining(`the deferred answer to signal '${signal.id}' found no caller waiting for it`) }]);
  });

  it('after its caller cancelled', async () => {
    const lines: TraceLine[] = [];
    const agent = systems.start({ trace: (line) => lines.push(line) }).spawn(Desk, { id: 'd' });
    const signal = createSignal('desk.ask');
    const controller = new AbortController();
    const pending = agent.call(signal, { signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'cancelled' });
    await agent.call(createSignal('desk.answer'));
    expect(lateResults(lines)).toEqual([expect.objectContaining({ subject: signal.id })]);
  });

  it('addressed to a signal id no caller ever waited under', async () => {
    const lines: TraceLine[] = [];
    const agent = systems.start({ trace: (line) => lines.push(line) }).spawn(Desk, { id: 'd' });
    await expect(agent.call(createSignal('desk.answer', { also: ['no-such-call'] }))).resolves.toBe(0);
    expect(lateResults(lines)).toEqual([expect.objectContaining({ agent: 'd', subject: 'no-such-call' })]);
  });

  it('an answer that reaches its caller is not traced as late', async () => {
    const lines: TraceLine[] = [];
    const agent = systems.start({ trace: (line) => lines.push(line) }).spawn(Desk);
    const pending = agent.call(createSignal('desk.ask'));
    await agent.call(createSignal('desk.answer'));
    await expect(pending).resolves.toBe('answer #0');
    expect(lateResults(lines)).toEqual([]);
  });
});
