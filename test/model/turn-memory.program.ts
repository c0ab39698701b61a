/**
 * Run by turn-memory.test.ts in a process of its own, started with `--expose-gc`: one agent
 * answers thousands of turns from the AI SDK's `MockLanguageModelV3` (a scripted model: the
 * model is not under test), its history reset before each turn so the state it keeps stays the
 * same size, and the heap is read after forced collections before and after two windows of
 * turns. Prints, as JSON, the bytes retained per turn in the window that retained less. Argument: `stream` or `generate`.
 */
import { simulateReadableStream } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { chatMessage, conversation, createAgentSystem, createSignal, defineAgent } from '../../src/index.js';

const stream = process.argv[2] === 'stream';
const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
const finish = { unified: 'stop' as const, raw: undefined };
const model = new MockLanguageModelV3({
  doGenerate: async () => ({ content: [{ type: 'text', text: 'hello there' }], finishReason: finish, usage, warnings: [] }),
  doStream: async () => ({
    stream: simulateReadableStream({
      chunks: [
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'hello ' },
        { type: 'text-delta', id: 't', delta: 'there' },
        { type: 'text-end', id: 't' },
        { type: 'finish', finishReason: finish, usage },
      ],
    }),
  }),
});
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const system = createAgentSystem({ models: { default: model } });
const agent = system.spawn(defineAgent({ name: 'talker', skills: [[conversation, { stream }]] }), { id: 'talker' });

async function turns(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    agent.send(createSignal('chat.reset'));
    const answer = await agent.call(chatMessage(`turn ${i}`));
    if (answer !== 'hello there') throw new Error(`unexpected answer ${JSON.stringify(answer)}`);
    // The mock keeps every request it was sent: that is the mock's memory, not the agent's.
    model.doGenerateCalls.length = 0;
    model.doStreamCalls.length = 0;
  }
}

async function settledHeap(): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 20));
  for (let i = 0; i < 6; i++) gc!();
  return process.memoryUsage().heapUsed;
}

const WINDOW = Number(process.argv[3] ?? 1000);
await turns(500); // warm-up: the code the turns run is compiled, caches fill
const first = await settledHeap();
await turns(WINDOW);
const second = await settledHeap();
await turns(WINDOW);
const third = await settledHeap();
await system.shutdown();
// A leak shows in both windows alike; code compiled late, or a cache filling, in one of them.
const bytesPerTurn = Math.min(second - first, third - second) / WINDOW;
console.log(JSON.stringify({ stream, window: WINDOW, bytesPerTurn }));
