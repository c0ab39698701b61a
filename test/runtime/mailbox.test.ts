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

  it('keeps order across a 10,000-signal burst with async actions in between, losing nothing', async () => {
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
});
