/** One signal at a time per agent, in arrival order; bounded; sync work stays sync. */
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeError, type AgentSystem } from '../../src/index.js';
import { NotesAgent, createSignal, quietSystem, thrown } from './fixtures.js';

let system: AgentSystem;
afterEach(async () => {
  await system?.shutdown();
});

const items = (system: AgentSystem, id: string) => (system.get(id)!.getSnapshot().state as { notebook: { items: string[] } }).notebook.items;

describe('the mailbox', () => {
  it('processes a sync signal before send returns: no promise, no queue', () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'n' });
    agent.send(createSignal('notes.add_now', { item: 'a' }));
    expect(items(system, 'n')).toEqual(['a']);
    expect(agent.getSnapshot()).toMatchObject({ status: 'idle', mailbox: 0 });
  });

  it('keeps arrival order when an async action is running: the next signal waits, it is not dropped', async () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'n' });
    const slow = agent.call(createSignal('notes.add', { item: 'slow', delay: 30 }));
    agent.send(createSignal('notes.add_now', { item: 'fast' }));
    expect(agent.getSnapshot()).toMatchObject({ status: 'working', mailbox: 1 });
    expect(items(system, 'n')).toEqual([]);
    await expect(slow).resolves.toEqual({ count: 1 });
    expect(items(system, 'n')).toEqual(['slow', 'fast']);
  });

  // 10,000 signals take well under a second on a quiet machine; the bound is for a loaded one.
  it('keeps order across a 10,000-signal burst with async actions in between, losing nothing', { timeout: 120_000 }, async () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'n' });
    const expected: string[] = [];
    const pending: Promise<unknown>[] = [];
    for (let i = 0; i < 10_000; i++) {
      const item = String(i);
      expected.push(item);
      if (i % 1000 === 0) pending.push(agent.call(createSignal('notes.add', { item, delay: 1 })));
      else agent.send(createSignal('notes.add_now', { item }));
    }
    await Promise.all(pending);
    await expect(agent.call(createSignal('notes.list'))).resolves.toEqual({ items: expected });
  });

  it('answers calls in order with each call its own result', async () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    const answers = await Promise.all([
      agent.call(createSignal('notes.add', { item: 'a', delay: 5 })),
      agent.call(createSignal('notes.add_now', { item: 'b' })),
      agent.call(createSignal('notes.add', { item: 'c', delay: 1 })),
    ]);
    expect(answers).toEqual([{ count: 1 }, { count: 2 }, { count: 3 }]);
  });

  it('refuses an item over its capacity with mailbox_full to the sender, keeping what it holds', async () => {
    system = quietSystem({ mailboxLimit: 3 });
    const agent = system.spawn(NotesAgent, { id: 'n' });
    const busy = agent.call(createSignal('notes.add', { item: 'busy', delay: 10 }));
    for (const item of ['1', '2', '3']) agent.send(createSignal('notes.add_now', { item }));
    const overflow = thrown(() => agent.send(createSignal('notes.add_now', { item: '4' })));
    expect(overflow).toBeInstanceOf(RuntimeError);
    expect(overflow).toMatchObject({ code: 'mailbox_full', agentId: 'n' });
    expect((overflow as Error).message).toBe("agent 'n' has 3 items waiting; its mailbox is full");
    await expect(agent.call(createSignal('notes.list'))).rejects.toMatchObject({ code: 'mailbox_full' });
    await busy;
    await expect(agent.call(createSignal('notes.list'))).resolves.toEqual({ items: ['busy', '1', '2', '3'] });
  });

  it('refuses an invalid signal at the door with a SignalError naming the type', async () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    expect(() => agent.send({ type: 'bad..type' })).toThrow(expect.objectContaining({ code: 'invalid_signal', subject: 'bad..type' }));
    await expect(agent.call({ type: '' })).rejects.toMatchObject({ code: 'invalid_signal' });
    // Untyped callers (plain JavaScript, JSON off the wire) can pass anything at all.
    expect(() => agent.send(null as never)).toThrow(expect.objectContaining({ name: 'SignalError', code: 'invalid_signal' }));
    await expect(agent.call(undefined as never)).rejects.toMatchObject({ name: 'SignalError', code: 'invalid_signal' });
    await expect(agent.call(createSignal('notes.list'))).resolves.toEqual({ items: [] });
  });
});

describe('call timeouts', () => {
  it('rejects with a typed timeout error and leaves nothing pending; the signal is still processed in order', async () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'n' });
    const error = await agent.call(createSignal('notes.add', { item: 'late', delay: 40 }), { timeout: 5 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({ code: 'timeout', agentId: 'n' });
    expect((error as Error).message).toBe("call 'notes.add' to agent 'n' got no answer within 5 ms");
    await expect(agent.call(createSignal('notes.list'))).resolves.toEqual({ items: ['late'] });
    expect(agent.getSnapshot()).toMatchObject({ status: 'idle', mailbox: 0 });
  });

  it('a run that times out is named by its actions', async () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'n' });
    const error = await agent.run([{ action: 'append', params: { item: 'late', delay: 40 } }, 'list_items'], { timeout: 5 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'timeout', agentId: 'n' });
    expect((error as Error).message).toBe("run of 'append', 'list_items' to agent 'n' got no answer within 5 ms");
    await expect(agent.call(createSignal('notes.list'))).resolves.toEqual({ items: ['late'] });
  });
});

describe('items sent to the actor directly (ref.actor.send)', () => {
  it('take their turn in the mailbox: an async one does not wedge the agent, and arrival order holds', async () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'n' });
    agent.actor.send({ type: 'signal', signal: createSignal('notes.add', { item: 'direct async', delay: 5 }) });
    agent.send(createSignal('notes.add_now', { item: 'queued' }));
    agent.actor.send({ type: 'signal', signal: createSignal('notes.add_now', { item: 'direct sync' }) });
    expect(agent.getSnapshot()).toMatchObject({ status: 'working', mailbox: 2 });
    await expect(agent.call(createSignal('notes.list'))).resolves.toEqual({ items: ['direct async', 'queued', 'direct sync'] });
    expect(agent.getSnapshot()).toMatchObject({ status: 'idle', mailbox: 0 });
  });

  it('a sync one sent while idle is done before send returns, like ref.send', () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'n' });
    agent.actor.send({ type: 'run', instructions: [{ action: 'append_now', params: { item: 'ran' } }] });
    expect(items(system, 'n')).toEqual(['ran']);
  });

  it('are checked like ref.send: an invalid one is reported, naming the agent, and the agent goes on', async () => {
    const errors: string[] = [];
    system = quietSystem();
    system.onError((error, agentId) => errors.push(`${agentId}: ${error.code}: ${error.message}`));
    const agent = system.spawn(NotesAgent, { id: 'n' });
    agent.actor.send({ type: 'signal', signal: { type: 'bad..type' } as never });
    agent.actor.send({ type: 'mount', skill: 42 as never });
    expect(errors).toEqual([
      "n: invalid_signal: agent 'n': an event sent to its actor directly was refused: signal type 'bad..type' has an empty segment",
      "n: invalid_skill: agent 'n': an event sent to its actor directly was refused: mount needs a skill name",
    ]);
    await expect(agent.call(createSignal('notes.list'))).resolves.toEqual({ items: [] });
  });

  it('overflowing the mailbox is reported as mailbox_full, never dropped silently', async () => {
    const errors: string[] = [];
    system = quietSystem({ mailboxLimit: 1 });
    system.onError((error) => errors.push(error.code));
    const agent = system.spawn(NotesAgent, { id: 'n' });
    const busy = agent.call(createSignal('notes.add', { item: 'busy', delay: 5 }));
    agent.actor.send({ type: 'signal', signal: createSignal('notes.add_now', { item: 'fits' }) });
    agent.actor.send({ type: 'signal', signal: createSignal('notes.add_now', { item: 'overflows' }) });
    expect(errors).toEqual(['mailbox_full']);
    await busy;
    await expect(agent.call(createSignal('notes.list'))).resolves.toEqual({ items: ['busy', 'fits'] });
  });
});

describe('call timeouts at the edges', () => {
  it('1 ms: a sync answer still arrives (it is ready before the timer runs); an async one times out and is still processed', async () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'n' });
    await expect(agent.call(createSignal('notes.add_now', { item: 'a' }), { timeout: 1 })).resolves.toEqual({ count: 1 });
    await expect(agent.call(createSignal('notes.add', { item: 'b', delay: 20 }), { timeout: 1 })).rejects.toMatchObject({
      code: 'timeout',
      message: "call 'notes.add' to agent 'n' got no answer within 1 ms",
    });
    await expect(agent.call(createSignal('notes.list'))).resolves.toEqual({ items: ['a', 'b'] });
  });

  it('Infinity: waits as long as the answer takes', async () => {
    system = quietSystem({ callTimeout: 1 });
    const agent = system.spawn(NotesAgent);
    await expect(agent.call(createSignal('notes.add', { item: 'slow', delay: 10 }), { timeout: Infinity })).resolves.toEqual({ count: 1 });
  });


  it('longer than a timer can hold (2^31 ms, about 25 days): it does not go off at once', async () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    await expect(agent.call(createSignal('notes.add', { item: 'slow', delay: 15 }), { timeout: 3_000_000_000 })).resolves.toEqual({ count: 1 });
  });

  it('a system callTimeout that is not a number of milliseconds >= 0 is refused when the system is made', () => {
    expect(() => quietSystem({ callTimeout: -1 })).toThrow(expect.objectContaining({ code: 'invalid_options', message: 'callTimeout must be a number of milliseconds above 0 (or Infinity), got -1' }));
  });
});
