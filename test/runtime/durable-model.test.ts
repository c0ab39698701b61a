/**
 * A model turn on a durable system, the process dying while a tool runs: the copy of the database
 * files taken at that moment is what a killed process leaves. A system opened on it resumes the
 * turn from its last written step: the model's request for the tool and the tool's run commit
 * together and were never written, so the model is asked again, the tool runs again, once, and
 * the turn answers. An agent brought back to its last written state after a failed write goes on
 * the same way with the turn that state holds, and answers the next message.
 */
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chatMessage, conversation, createSignal, createSqliteStore, defineAction, defineAgent, defineSkill, result, RuntimeError, type ConversationState, type DurableStore, type StoreBatch } from '../../src/index.js';
import { z } from 'zod';
import { scriptedModel } from '../../src/testing/index.js';
import { systemPerTest } from './fixtures.js';
import { assistant, chatOf, next } from '../model/fixtures.js';

const systems = systemPerTest();
let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Runs of the `lookup` tool, and the gate it waits on before answering. */
const runs: string[] = [];
let gate: Promise<void> = new Promise(() => {});

const lookup = defineSkill({
  name: 'lookup',
  schema: z.object({ found: z.array(z.string()).default([]) }),
  actions: [
    defineAction({
      name: 'find',
      description: 'Look a word up (slow)',
      input: z.object({ word: z.string() }),
      state: z.object({ found: z.array(z.string()).default([]) }),
      run: async ({ word }, { skillState }) => {
        runs.push(word);
        await gate;
        return result({ meaning: `${word} means ${word}` }, { state: { found: [...skillState.found, word] } });
      },
    }),
  ],
});
const Assistant = defineAgent({ name: 'durable_assistant', skills: [[conversation, { instructions: 'Answer with the lookup tool.' }], lookup] });
/** Pays with the `pay` tool, which waits for a person's approval. */
const Payer = assistant({}, 'durable_payer');

it('resumes a model turn whose tool was running when the process died, running the tool again once', async () => {
  dir = await mkdtemp(join(tmpdir(), 'skillstate-durable-model-'));
  const path = join(dir, 'agents.db');
  const first = systems.start({ models: { default: scriptedModel([{ toolCalls: [{ tool: 'find', args: { word: 'actor' }, id: 'find-1' }] }]) }, store: createSqliteStore({ path }) });
  const agent = first.spawn(Assistant, { id: 'ada' });
  void agent.call(chatMessage('What is an actor?'), { timeout: Infinity }).catch(() => {});
  while (runs.length === 0) await new Promise((resolve) => setImmediate(resolve));
  // The steps before the tool call are written by now; the tool's step is not.
  await new Promise((resolve) => setImmediate(resolve));
  const crashed = join(dir, 'crashed.db');
  await copyFile(path, crashed);
  if (existsSync(`${path}-wal`)) await copyFile(`${path}-wal`, `${crashed}-wal`);

  gate = Promise.resolve();
  runs.length = 0;
  // The model's answer asking for the tool commits with the tool's step, which was never written:
  // the turn is back before it, and asks the model again.
  const model = scriptedModel([{ toolCalls: [{ tool: 'find', args: { word: 'actor' }, id: 'find-2' }] }, { text: 'An actor is a unit of state and behaviour.' }]);
  const second = systems.start({ models: { default: model }, definitions: [Assistant], store: createSqliteStore({ path: crashed }) });
  const back = second.get('ada')!;
  expect((back.getSnapshot().state as { conversation: ConversationState }).conversation.turn).toMatchObject({ status: 'thinking' });
  await new Promise<void>((resolve) => {
    const check = () => ((back.getSnapshot().state as { conversation: ConversationState }).conversation.turn == null ? resolve() : setTimeout(check, 1));
    check();
  });
  expect(runs).toEqual(['actor']);
  expect(model.calls).toHaveLength(2);
  expect((back.getSnapshot().state as { lookup: { found: string[] } }).lookup.found).toEqual(['actor']);
  const messages = (back.getSnapshot().state as { conversation: ConversationState }).conversation.messages;
  expect(JSON.stringify(messages.at(-1))).toContain('An actor is a unit of state and behaviour.');
});

/** A real SQLite store whose next `failNext` commits fail, as a full disk fails them. */
function failing(store: DurableStore): DurableStore & { failNext: number } {
  const wrapper = {
    ...store,
    failNext: 0,
    commit(batch: StoreBatch) {
      if (wrapper.failNext === 0) return store.commit(batch);
      wrapper.failNext--;
      return Promise.reject(new RuntimeError({ code: 'store_failed', message: 'disk full', details: { reason: 'write_failed', path: 'test' } }));
    },
  };
  return wrapper;
}

describe('a model-driven agent whose write fails during a turn', () => {
  it('is back at the turn its last write holds, and drives it again: the turn answers and the next message is answered', async () => {
    dir = await mkdtemp(join(tmpdir(), 'skillstate-durable-model-'));
    const store = failing(createSqliteStore({ path: join(dir, 'agents.db') }));
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    runs.length = 0;
    const model = scriptedModel([
      { toolCalls: [{ tool: 'find', args: { word: 'actor' }, id: 'find-1' }] },
      // After the revert: the model's request and the tool's run went back with the failed write.
      { toolCalls: [{ tool: 'find', args: { word: 'actor' }, id: 'find-2' }] },
      { text: 'An actor is a unit of state and behaviour.' },
      { text: 'A mailbox queues its signals.' },
    ]);
    const system = systems.start({ models: { default: model }, store });
    const agent = system.spawn(Assistant, { id: 'ada' });
    const first = agent.call(chatMessage('What is an actor?'), { timeout: Infinity });
    while (runs.length === 0) await new Promise((resolve) => setImmediate(resolve));
    // The turn's start is written; the step of the model's request and the tool's run fails to be.
    store.failNext = 1;
    const answered = next(system, 'chat.turn.answered', (signal) => (signal.data as { turn: number }).turn === 1);
    open();
    await expect(first).rejects.toMatchObject({ message: expect.stringContaining("agent 'ada' went back to its last durable state before answering") });
    expect(system.get('ada')).toBe(agent);

    // The turn in flight after the revert goes on, as after a crash: the tool runs again (at least once).
    expect((await answered).data).toMatchObject({ turn: 1, text: 'An actor is a unit of state and behaviour.' });
    expect(runs).toEqual(['actor', 'actor']);
    expect((agent.getSnapshot().state as { lookup: { found: string[] } }).lookup.found).toEqual(['actor']);
    await expect(agent.call(chatMessage('What is a mailbox?'))).resolves.toBe('A mailbox queues its signals.');
    expect(model.calls).toHaveLength(4);
  });

  // The failed step is one of the agent's that is no part of the turn, or the approval itself.
  it.each([
    { failed: 'a step beside the turn', signal: createSignal('calculator.add', { a: 1, b: 2 }) },
    { failed: 'the approval', signal: createSignal('chat.approve', { toolCallId: 'pay-1' }) },
  ])('is back waiting for the approval its last write holds when $failed fails to be written; an approval then runs the tool once and answers', async ({ signal }) => {
    dir = await mkdtemp(join(tmpdir(), 'skillstate-durable-model-'));
    const store = failing(createSqliteStore({ path: join(dir, 'agents.db') }));
    const model = scriptedModel([{ toolCalls: [{ tool: 'pay', args: { to: 'Bob', amount: 5 }, id: 'pay-1' }] }, { text: 'Paid Bob 5.' }, { text: 'You paid 5.' }]);
    const system = systems.start({ models: { default: model }, store });
    const agent = system.spawn(Payer, { id: 'bea' });
    const asked = next(system, 'chat.turn.approval');
    const first = agent.call(chatMessage('Pay Bob 5'), { timeout: Infinity });
    await asked;
    await system.flush();
    store.failNext = 1;
    await expect(agent.call(signal)).rejects.toMatchObject({ code: 'store_failed', message: 'disk full' });
    await expect(first).rejects.toMatchObject({ code: 'store_failed', message: expect.stringContaining("agent 'bea' went back to its last durable state") });
    expect(chatOf(agent).turn).toMatchObject({ status: 'awaiting-approval', pending: [{ toolCallId: 'pay-1', approval: 'needed' }] });

    const answered = next(system, 'chat.turn.answered');
    agent.send(createSignal('chat.approve', { toolCallId: 'pay-1' }));
    expect((await answered).data).toMatchObject({ turn: 1, text: 'Paid Bob 5.' });
    expect((agent.getSnapshot().state as { ledger: { paid: unknown[] } }).ledger.paid).toEqual([{ to: 'Bob', amount: 5 }]);
    await expect(agent.call(chatMessage('How much did I pay?'))).resolves.toBe('You paid 5.');
  });
});
