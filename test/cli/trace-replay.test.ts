/**
 * A recorded trace read back for the viewers: every kind of record a system writes — a
 * model-driven agent's turns, a record whose payload JSON could not encode — and a line that is
 * not a record refused with its number and what it lacks.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { parseTrace, traceToMessages } from '../../src/cli/trace-replay.js';
import { chatMessage, conversation, createAgentSystem, defineAction, defineAgent, defineSkill, Effects, createSignal, result } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { z } from 'zod';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});
const machines = { agent: '{}', lifecycle: '{}' };

it("reads back the trace of a model-driven agent (its turns) and a record whose payload JSON could not encode", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'skillstate-trace-replay-'));
  dirs.push(dir);
  const file = join(dir, 'trace.jsonl');
  // A scripted model: the trace, not the model, is under test.
  const system = createAgentSystem({ trace: file, models: { default: scriptedModel([{ text: 'Hello.' }]) }, onUnhandledDiagnostic: () => {} });
  const big = defineAction({ name: 'big', description: 'Emits a BigInt', input: z.object({}), run: () => result(null, { effects: [Effects.emit(createSignal('big.number', { n: 10n }))] }) });
  const agent = system.spawn(defineAgent({ name: 'talker', skills: [conversation, defineSkill({ name: 'big', actions: [big], routes: [{ path: 'big.go', target: { action: 'big' } }] })] }), { id: 't' });
  expect(await agent.call(chatMessage('Hi'), { timeout: 10_000 })).toBe('Hello.');
  await agent.call(createSignal('big.go'));
  await system.shutdown();
  const lines = parseTrace(await readFile(file, 'utf8'), file);
  expect(lines.some((line) => line.kind === 'turn')).toBe(true);
  const events = traceToMessages(lines, machines).flatMap((message) => (message.type === '@xstate.event' ? [(message as { event: { type: string } }).event.type] : []));
  expect(events.filter((type) => type.startsWith('turn.'))).toEqual(['turn.thinking']);
  expect(events).toContain('effect.unencodable');
});

it.each([
  ['{"kind":"gossip"}', 'not a trace record (kind "gossip"; expected one of spawn, stop, signal, step, effect, lifecycle, diagnostic, turn, passivate, wake, revert)'],
  ['{"kind":"effect","agent":"a"}', "an effect record needs 'effect' (object)"],
  ['{"kind":"effect","agent":"a","effect":{}}', "an effect record needs 'effect.type' (string)"],
  ['{"kind":"diagnostic","diagnostic":{"message":"m"}}', "a diagnostic record needs 'diagnostic.code' (string)"],
  ['{"kind":"turn","agent":"a","state":"thinking"}', "a turn record needs 'turn' (number)"],
])('refuses %s, naming the line and what it lacks', (line, what) => {
  expect(() => parseTrace(`${JSON.stringify({ kind: 'spawn', agent: 'a', definition: 'd', time: '2026-01-01T00:00:00.000Z' })}\n${line}\n`, 'trace.jsonl')).toThrow(`trace.jsonl, line 2: ${what}`);
});

it('reads back an agent passivated, woken and brought back to its last durable state as events of the same agent, not a stop', () => {
  const time = '2026-01-01T00:00:00.000Z';
  const trace = [
    { time, kind: 'spawn', agent: 'n1', definition: 'notes' },
    { time, kind: 'passivate', agent: 'n1' },
    { time, kind: 'wake', agent: 'n1' },
    { time, kind: 'revert', agent: 'n1', reason: 'its last write failed; restored to its last durable state' },
  ]
    .map((line) => JSON.stringify(line))
    .join('\n');
  const messages = traceToMessages(parseTrace(trace, 'trace.jsonl'), machines);
  expect(messages.filter((message) => message.type === '@xstate.actor')).toHaveLength(1);
  expect(messages.flatMap((message) => (message.type === '@xstate.event' ? [(message as { event: { type: string } }).event.type] : []))).toEqual(['spawn', 'passivate', 'wake', 'revert']);
  expect(messages.some((message) => message.type === '@xstate.snapshot')).toBe(false);
});
