/**
 * Run by durable-rows-fast-path.test.ts in a process of its own, started with `--expose-gc`: a
 * durable system on a SQLite file in a temporary folder writes the row of an agent whose state is
 * keyed by sixteen texts of a megabyte each, then of the same agent with those keys gone. The heap
 * is read after forced collections before and after. Prints, as JSON, the bytes retained and the
 * length of the row that held the keys.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { createAgentSystem, createSignal, createSqliteStore, defineAction, defineAgent, defineSkill, result } from '../../src/index.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const index = z.object({ entries: z.record(z.string(), z.number()).default({}) });
const fill = defineAction({
  name: 'fill',
  description: 'Index sixteen long texts',
  input: z.object({}),
  run: () => result(null, { state: { entries: Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`${i}: ${'text '.repeat(2 ** 20 / 5)}`, i])) } }),
});
const clear = defineAction({ name: 'clear', description: 'Forget every text', input: z.object({}), run: () => result(null, { state: { entries: {} } }) });
const Indexer = defineAgent({
  name: 'indexer',
  skills: [defineSkill({ name: 'index', schema: index, actions: [fill, clear], routes: [{ path: 'index.fill', target: { action: 'fill' } }, { path: 'index.clear', target: { action: 'clear' } }] })],
});

async function settledHeap(): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 20));
  for (let i = 0; i < 6; i++) gc!();
  return process.memoryUsage().heapUsed;
}

const folder = await mkdtemp(join(tmpdir(), 'skillstate-durable-rows-memory-'));
try {
  const system = createAgentSystem({ definitions: [Indexer], store: createSqliteStore({ path: join(folder, 'agents.db') }), durability: 'step' });
  const agent = system.spawn(Indexer, { id: 'indexer' });
  // Warm-up: the code a write runs is compiled, the store's thread started.
  await agent.call(createSignal('index.clear'));
  await agent.call(createSignal('index.clear'));
  const before = await settledHeap();
  await agent.call(createSignal('index.fill'));
  const written = JSON.stringify(agent.persist()).length;
  await agent.call(createSignal('index.clear'));
  const after = await settledHeap();
  await system.shutdown();
  process.stdout.write(JSON.stringify({ retained: after - before, written }));
} finally {
  await rm(folder, { recursive: true, force: true });
}
