/**
 * Durable agents on SQLite, in `'step'` durability: 100 agents, each answering 1,000 calls one
 * after another (all 100 at once), each call's step written before it is answered. Against:
 * - the same agents in memory (no store): durable steps per second ≥ 50% of that;
 * - the floor: the same rows (the snapshot texts the durable run wrote) written by the same
 *   driver in the same transactions, and nothing else: the durable run ≤ 1.5× its time.
 *
 * Rounds interleave the three runs; each ratio is the median of the rounds' own ratios.
 *
 * And recovery: the time `createAgentSystem` takes to open a database holding 100,000 agents
 * and restore them all (reported; no target yet).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'libsql';
import { z } from 'zod';
import { createAgentSystem, createSignal, createSqliteStore, defineAction, defineAgent, defineSkill, result, type AgentSystemOptions, type DurableStore, type StoreBatch } from '../src/index.js';
import { formatRate, type ReportRow } from './harness.js';

const AGENTS = 100;
const CALLS = 1_000;
const ROUNDS = 3;
const STORED = 100_000;

const counterState = z.object({ count: z.number().int().default(0) });
/** An agent with one counter: `counter.increment` adds one (the passivation bench spawns it too). */
export const CounterAgent = defineAgent({
  name: 'durable_counter',
  skills: [
    defineSkill({
      name: 'counter',
      schema: counterState,
      actions: [
        defineAction({
          name: 'increment',
          description: 'Add one to the count',
          input: z.object({}),
          state: counterState,
          run: (_params, { skillState }) => result({ count: skillState.count + 1 }, { state: { count: skillState.count + 1 } }),
        }),
      ],
      routes: [{ path: 'counter.increment', target: { action: 'increment' } }],
    }),
  ],
});

/** Milliseconds for 100 agents × 1,000 calls, each agent's calls one after another, in a system with `options`. */
async function callsRun(options: AgentSystemOptions): Promise<number> {
  const system = createAgentSystem({ onUnhandledDiagnostic: () => {}, callTimeout: Infinity, ...options });
  const agents = Array.from({ length: AGENTS }, (_, i) => system.spawn(CounterAgent, { id: `c${i}` }));
  await system.flush();
  const started = performance.now();
  await Promise.all(
    agents.map(async (agent) => {
      for (let i = 0; i < CALLS; i++) await agent.call(createSignal('counter.increment'));
    }),
  );
  const elapsed = performance.now() - started;
  await system.shutdown();
  return elapsed;
}

/** The rows of each batch a store committed, as text, in order. */
function recording(store: DurableStore, batches: Array<Array<[string, string | null, string, string]>>): DurableStore {
  return {
    ...store,
    commit(batch: StoreBatch) {
      batches.push(batch.save.map((agent) => [agent.id, agent.parent ?? null, agent.definition, agent.snapshot]));
      store.commit(batch);
    },
  };
}

/** Milliseconds to write `batches` with the driver alone, one transaction each, into a fresh database set up as the store sets its own. */
function rawRun(path: string, batches: ReadonlyArray<ReadonlyArray<[string, string | null, string, string]>>): number {
  const db = new Database(path, { timeout: 0 });
  db.exec('PRAGMA locking_mode = EXCLUSIVE');
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('CREATE TABLE agents (id TEXT PRIMARY KEY, parent TEXT, definition TEXT NOT NULL, snapshot TEXT NOT NULL, saved_at INTEGER NOT NULL) STRICT');
  const upsert = db.prepare('INSERT INTO agents (id, parent, definition, snapshot, saved_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET parent = excluded.parent, definition = excluded.definition, snapshot = excluded.snapshot, saved_at = excluded.saved_at');
  const started = performance.now();
  for (const rows of batches) {
    const now = Date.now();
    db.exec('BEGIN');
    for (const [id, parent, definition, text] of rows) upsert.run(id, parent, definition, text, now);
    db.exec('COMMIT');
  }
  const elapsed = performance.now() - started;
  db.exec('PRAGMA journal_mode = DELETE');
  db.close();
  return elapsed;
}

/** Milliseconds to open a system on a database of `STORED` agents, every one restored when it returns. */
async function recoveryRun(path: string): Promise<number> {
  const filling = createAgentSystem({ onUnhandledDiagnostic: () => {}, store: createSqliteStore({ path }), durability: 'manual' });
  for (let i = 0; i < STORED; i++) filling.spawn(CounterAgent, { id: `s${i}` });
  await filling.shutdown();
  const started = performance.now();
  const opened = createAgentSystem({ onUnhandledDiagnostic: () => {}, definitions: [CounterAgent], store: createSqliteStore({ path }), durability: 'manual' });
  const elapsed = performance.now() - started;
  const restored = opened.list().length;
  await opened.shutdown();
  if (restored !== STORED) throw new Error(`restored ${restored} of ${STORED} agents`);
  return elapsed;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function run(): Promise<ReportRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'skillstate-durable-bench-'));
  const steps = AGENTS * CALLS;
  const memory: number[] = [];
  const durable: number[] = [];
  const raw: number[] = [];
  const transactions: number[] = [];
  let recovery: number;
  try {
    for (let round = 0; round < ROUNDS; round++) {
      memory.push(await callsRun({}));
      const batches: Array<Array<[string, string | null, string, string]>> = [];
      durable.push(await callsRun({ store: recording(createSqliteStore({ path: join(dir, `durable-${round}.db`) }), batches), durability: 'step' }));
      // The spawns' batch is written before the timed calls: the floor writes the calls' batches only.
      const timed = batches.slice(1);
      transactions.push(timed.length);
      raw.push(rawRun(join(dir, `raw-${round}.db`), timed));
    }
    recovery = await recoveryRun(join(dir, 'recovery.db'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const ofMemory = median(durable.map((ms, round) => memory[round]! / ms));
  const overRaw = median(durable.map((ms, round) => ms / raw[round]!));
  const rate = (ms: number) => formatRate((steps / ms) * 1000);
  return [
    {
      suite: 'durable',
      name: `'step' durability, 100 agents × 1,000 calls: durable steps/s vs in memory`,
      value: `${rate(median(durable))} (${median(transactions)} transactions, ${Math.round(steps / median(transactions))} steps each)`,
      anchor: `in memory: ${rate(median(memory))}`,
      ratio: ofMemory,
      target: '≥ 0.5× in memory',
      pass: ofMemory >= 0.5,
    },
    {
      suite: 'durable',
      name: `'step' durability, 100 agents × 1,000 calls: time vs raw SQLite writes of the same rows in the same transactions`,
      value: `${median(durable).toFixed(0)} ms`,
      anchor: `raw writes: ${median(raw).toFixed(0)} ms`,
      ratio: overRaw,
      target: '≤ 1.5× raw',
      pass: overRaw <= 1.5,
    },
    {
      suite: 'durable',
      name: `recovery: open a database of ${STORED.toLocaleString('en')} stored agents, all restored`,
      value: `${(recovery / 1000).toFixed(2)} s (${((recovery * 1000) / STORED).toFixed(1)} µs an agent)`,
      target: 'reported',
    },
  ];
}
