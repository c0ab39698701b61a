/**
 * What a caller hands `call`, `run`, `callTool` and `createAgentSystem` is checked and left as it
 * was: an option they do not have is refused, naming it and the option it probably meant (a
 * misspelled `timeout` would otherwise be ignored), and a caller's `AbortSignal` keeps no
 * listener of the call once the call is answered, however it was answered.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createAgentSystem, DefinitionError, RuntimeError, type AgentRef } from '../../src/index.js';
import { createSignal, Effects, defineAction, defineAgent, defineSkill, itemsOf, NotesAgent, result, systemPerTest, thrown, z } from './fixtures.js';

const systems = systemPerTest();

const abortListeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

/** A skill whose `wait` leaves its call waiting and whose `answer` answers every waiting call. */
const waiting = z.object({ calls: z.array(z.string()).default([]) });
const Waiter = defineAgent({
  name: 'waiter',
  skills: [
    defineSkill({
      name: 'waiter',
      schema: waiting,
      actions: [
        defineAction({
          name: 'wait',
          description: 'Answers later',
          input: z.object({}),
          state: waiting,
          run: (_params: Record<string, never>, { skillState, signal }) => result(null, { state: { calls: [...skillState.calls, signal!.id] }, effects: [Effects.deferReply()] }),
        }),
        defineAction({
          name: 'answer',
          description: 'Answers every waiting call',
          input: z.object({}),
          state: waiting,
          run: (_params: Record<string, never>, { skillState }) => result(null, { state: { calls: [] }, effects: skillState.calls.map((id) => Effects.reply('answered', {}, { to: id })) }),
        }),
      ],
      routes: [
        { path: 'waiter.wait', target: { action: 'wait' } },
        { path: 'waiter.answer', target: { action: 'answer' } },
      ],
    }),
  ],
});

describe("a caller's AbortSignal keeps no listener once its call is answered", () => {
  it('after many calls answered at once, none is left', async () => {
    const agent = systems.start().spawn(NotesAgent);
    const session = new AbortController();
    for (let i = 0; i < 50; i++) await agent.call(createSignal('notes.add_now', { item: String(i) }), { signal: session.signal });
    expect(abortListeners(session.signal)).toBe(0);
  });

  it('nor after calls answered by a later step, refused, timed out, cancelled or stopped', async () => {
    const system = systems.start();
    const agent = system.spawn(Waiter, { id: 'w' });
    const session = new AbortController();
    const deferred = agent.call(createSignal('waiter.wait'), { signal: session.signal });
    await agent.call(createSignal('waiter.answer'), { signal: session.signal });
    await expect(deferred).resolves.toBe('answered');
    await expect(agent.call(createSignal('waiter.nothing'), { signal: session.signal })).rejects.toMatchObject({ code: 'no_route' });
    await expect(agent.call(createSignal('waiter.wait'), { signal: session.signal, timeout: 5 })).rejects.toMatchObject({ code: 'timeout' });
    expect(abortListeners(session.signal)).toBe(0);

    const cancelled = new AbortController();
    const gaveUp = agent.call(createSignal('waiter.wait'), { signal: cancelled.signal });
    cancelled.abort();
    await expect(gaveUp).rejects.toMatchObject({ code: 'cancelled' });
    expect(abortListeners(cancelled.signal)).toBe(0);

    const stopped = agent.call(createSignal('waiter.wait'), { signal: session.signal });
    await agent.stop();
    await expect(stopped).rejects.toMatchObject({ code: 'agent_stopped' });
    expect(abortListeners(session.signal)).toBe(0);
  });

  it('nor after runs and tool calls', async () => {
    const agent = systems.start().spawn(NotesAgent);
    const session = new AbortController();
    await agent.run({ action: 'append_now', params: { item: 'a' } }, { signal: session.signal });
    await agent.callTool('append_now', { item: 'b' }, { signal: session.signal });
    expect(abortListeners(session.signal)).toBe(0);
    expect(itemsOf(agent)).toEqual(['a', 'b']);
  });
});

describe('an option that does not exist is refused, naming it', () => {
  const ENTRIES: [string, (agent: AgentRef, options: object) => Promise<unknown>][] = [
    ['call', (agent, options) => agent.call(createSignal('notes.add_now', { item: 'x' }), options)],
    ['run', (agent, options) => agent.run({ action: 'append_now', params: { item: 'x' } }, options)],
    ['callTool', (agent, options) => agent.callTool('append_now', { item: 'x' }, options)],
  ];
  const TYPOS: [string, object, string | undefined][] = [
    ['timout', { timout: 1 }, 'timeout'],
    ['Timeout', { Timeout: 1 }, 'timeout'],
    ['signl', { signl: new AbortController().signal }, 'signal'],
    ['retries', { retries: 3 }, undefined],
  ];
  for (const [entry, use] of ENTRIES) {
    it.each(TYPOS)(`${entry} with option '%s' is refused with invalid_options, and nothing runs`, async (key, options, meant) => {
      const agent = systems.start().spawn(NotesAgent);
      const error = await use(agent, { timeout: 1_000, ...options }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(RuntimeError);
      expect(error).toMatchObject({
        code: 'invalid_options',
        subject: key,
        message: expect.stringContaining(meant === undefined ? `unknown option '${key}' (call options are: timeout, signal)` : `unknown option '${key}'; did you mean '${meant}'?`),
        details: meant === undefined ? { option: key, known: ['timeout', 'signal'] } : { option: key, known: ['timeout', 'signal'], suggestion: meant },
      });
      expect(itemsOf(agent)).toEqual([]);
    });
  }

  it("spawn with a misspelled option is refused with invalid_options naming it, and no agent starts", () => {
    const system = systems.start();
    const error = thrown(() => system.spawn(NotesAgent, { idd: 'x' } as never));
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({ code: 'invalid_options', subject: 'idd', message: "unknown option 'idd'; did you mean 'id'? (spawn options are: id, state, parent)" });
    expect(system.list()).toEqual([]);
  });

  it('the options that exist are taken', async () => {
    const agent = systems.start().spawn(NotesAgent);
    await expect(agent.call(createSignal('notes.add_now', { item: 'x' }), { timeout: 1_000, signal: new AbortController().signal })).resolves.toEqual({ count: 1 });
  });

  it.each([
    ['callTimout', 'callTimeout'],
    ['mailboxLimt', 'mailboxLimit'],
    ['defintions', 'definitions'],
    ['onUnhandledErrors', 'onUnhandledError'],
    ['colour', undefined],
  ])("createAgentSystem with option '%s' is refused with invalid_options", (key, meant) => {
    const error = thrown(() => createAgentSystem({ [key]: 1 } as never));
    expect(error).toBeInstanceOf(DefinitionError);
    expect(error).toMatchObject({ code: 'invalid_options', subject: key, message: expect.stringContaining(`unknown option '${key}'`) });
    expect((error as DefinitionError).details).toEqual(expect.objectContaining(meant === undefined ? { option: key } : { option: key, suggestion: meant }));
    if (meant === undefined) expect((error as DefinitionError).details).not.toHaveProperty('suggestion');
  });

  it('createAgentSystem takes every option it documents', () => {
    const system = systems.start({
      inspect: () => {},
      trace: () => {},
      mailboxLimit: 10,
      callTimeout: 100,
      definitions: [NotesAgent],
      skills: [],
      resolvers: [],
      models: {},
      compactors: {},
    });
    expect(system.spawn(NotesAgent).id).toEqual(expect.any(String));
  });
});
