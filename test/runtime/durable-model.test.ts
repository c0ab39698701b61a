/**
 * A model turn on a durable system, the process dying while a tool runs: the copy of the database
 * files taken at that moment is what a killed process leaves. A system opened on it resumes the
 * turn from its last written step: the model's request for the tool and the tool's run commit
 * together and were never written, so the model is asked again, the tool runs again, once, and
 * the turn answers.
 */
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { chatMessage, conversation, createSqliteStore, defineAction, defineAgent, defineSkill, result, type ConversationState } from '../../src/index.js';
import { z } from 'zod';
import { scriptedModel } from '../../src/testing/index.js';
import { systemPerTest } from './fixtures.js';

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
