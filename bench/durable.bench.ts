/**
 * Durable agents on SQLite, in `'step'` durability: 100 agents, each answering 1,000 calls one
 * after another (all 100 at once), each call's step written before it is answered. Against:
 * - the same agents in memory (no store): durable steps per second ≥ 50% of that;
 * - the floor: the rows the durable run wrote (its very snapshot texts), in the transactions it
 *   wrote them in, written by the same driver, set up as the store sets it up, on a worker thread
 *   of their own as the store's are, and nothing else: no agents, no snapshots, no messages (the
 *   batches are handed to the worker before its clock starts). The durable run ≤ 1.5× its time.
 *   The rows are recorded by an untimed run of the same calls just before the timed one: kept
 *   until the floor writes them, 100,000 rows cost the timed run a tenth more in garbage
 *   collection, a cost of the measuring, not of durability. The timed run counts the rows of each
 *   of its batches, and the floor writes the recorded rows, in their order, cut into transactions
 *   of those sizes: a system's batches vary from run to run by a few rows (where one ends depends
 *   on when the commit before it is heard of), and the recorded rows are the same texts (the same
 *   agents at the same counts) whichever batch each fell in. The report says in how many rounds
 *   the recorded run's batches were the timed run's anyway.
 *
 * And the CPU time of the whole process (every thread) during the durable run, against the
 * in-memory run's plus the raw writes': what durability costs beyond the two kinds of work it
 * joins, whether or not a free core lets them overlap (on a busy machine, none does).
 *
 * Rounds interleave the three runs, after untimed rounds of the first two; each ratio is the median
 * of the rounds' own ratios.
 *
 * And the same calls while another process keeps a core busy (a loop in a child process): durable
 * steps per second against the same agents in memory under the same load. The agents' run needs
 * one core, the durable run two (the agents' thread and the database's), so on a machine with two
 * the durable run shares a core with that process: what a busy machine leaves of durability.
 *
 * And recovery: the time `createAgentSystem` takes to open a database holding 100,000 agents,
 * each with a state of its own, and restore them all; against spawning the same agents anew
 * (what a system costs to start without a store).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { z } from 'zod';
import { createAgentSystem, createSignal, createSqliteStore, defineAction, defineAgent, defineSkill, result, type AgentSystemOptions, type DurableStore, type StoreBatch } from '../src/index.js';
import { formatRate, type ReportRow } from './harness.js';

const AGENTS = 100;
const CALLS = 1_000;
const ROUNDS = 5;
/**
 * Untimed rounds of each run first. V8 goes on optimizing the code of a step for some hundred
 * thousand steps (the durable run's main-thread CPU time fell from 900 to 730 ms a round over its
 * first eight rounds in one process): without them, the first rounds measure that, not the steps.
 */
const WARMUP_ROUNDS = 2;
const STORED = 100_000;
/** Rounds of the runs beside a busy process. */
const CROWDED_ROUNDS = 3;

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

/** A run's wall time and the CPU time of the whole process (every thread) meanwhile, in milliseconds. */
interface Timed {
  ms: number;
  cpu: number;
}

/** CPU milliseconds the process (all its threads) used since `from`. */
const cpuSince = (from: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1000;
};

/** 100 agents × 1,000 calls, each agent's calls one after another, in a system with `options`. */
async function callsRun(options: AgentSystemOptions): Promise<Timed> {
  const system = createAgentSystem({ onUnhandledDiagnostic: () => {}, callTimeout: Infinity, ...options });
  const agents = Array.from({ length: AGENTS }, (_, i) => system.spawn(CounterAgent, { id: `c${i}` }));
  await system.flush();
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    agents.map(async (agent) => {
      for (let i = 0; i < CALLS; i++) await agent.call(createSignal('counter.increment'));
    }),
  );
  const timed = { ms: performance.now() - started, cpu: cpuSince(cpu) };
  await system.shutdown();
  return timed;
}

/** A row as the store writes it: id, parent, definition, snapshot text. */
type Row = [string, string | null, string, string];

/**
 * `store`, recording each batch it commits, in order, as `record` takes it; it commits them as it
 * would, and says `inOrder` as the store does, so the system hands it the next batch while one is
 * written.
 */
function recording<T>(store: DurableStore, batches: T[], record: (rows: StoreBatch['save']) => T): DurableStore {
  return {
    ...store,
    commit(batch: StoreBatch) {
      batches.push(record(batch.save));
      return store.commit(batch);
    },
  };
}

/** A batch as the untimed run keeps it: its list of rows as it is (rows are values, never changed once made). */
const rowsOf = (rows: StoreBatch['save']) => rows;
/** A batch as the timed run keeps it: how many rows it holds. */
const sizeOf = (rows: StoreBatch['save']) => rows.length;

/**
 * The rows of the recorded batches as the floor writes them: in their order, in transactions of
 * `sizes` rows (the timed run's batches); the rows left when the sizes add up to fewer go last, one
 * transaction.
 */
function floorRows(batches: ReadonlyArray<StoreBatch['save']>, sizes: readonly number[]): Row[][] {
  const rows: Row[] = [];
  for (const batch of batches) for (const agent of batch) rows.push([agent.id, agent.parent ?? null, agent.definition, agent.snapshot]);
  const cut: Row[][] = [];
  let at = 0;
  for (const size of sizes) {
    if (at >= rows.length) break;
    cut.push(rows.slice(at, (at += size)));
  }
  if (at < rows.length) cut.push(rows.slice(at));
  return cut;
}

/** The floor's worker: sets a fresh database up as the store does, then times writing the batches it is given, one transaction each, as the store writes them. */
const RAW_WRITER = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { timeout: 0 });
db.exec('PRAGMA locking_mode = EXCLUSIVE');
db.exec('PRAGMA journal_mode = WAL');
db.exec('PRAGMA synchronous = NORMAL');
db.exec('CREATE TABLE agents (id TEXT PRIMARY KEY, parent TEXT, definition TEXT NOT NULL, snapshot TEXT NOT NULL, saved_at INTEGER NOT NULL) STRICT');
// As the store writes rows: up to 64 by one statement, in powers of two.
const upserts = new Map();
const upsertOf = (rows) => {
  if (!upserts.has(rows)) upserts.set(rows, db.prepare('INSERT INTO agents (id, parent, definition, snapshot, saved_at) VALUES ' + Array(rows).fill('(?, ?, ?, ?, ?)').join(', ') + ' ON CONFLICT (id) DO UPDATE SET parent = excluded.parent, definition = excluded.definition, snapshot = excluded.snapshot, saved_at = excluded.saved_at'));
  return upserts.get(rows);
};
const cpu = process.cpuUsage();
const started = performance.now();
for (const rows of workerData.batches) {
  const now = Date.now();
  db.exec('BEGIN');
  for (let at = 0; at < rows.length; ) {
    let count = 64;
    while (count > rows.length - at) count >>= 1;
    const values = [];
    for (const [id, parent, definition, text] of rows.slice(at, at + count)) values.push(id, parent, definition, text, now);
    upsertOf(count).run(values);
    at += count;
  }
  db.exec('COMMIT');
}
const elapsed = performance.now() - started;
const used = process.cpuUsage(cpu);
db.exec('PRAGMA journal_mode = DELETE');
db.close();
parentPort.postMessage({ ms: elapsed, cpu: (used.user + used.system) / 1000 });
`;

/** The time the floor's worker takes to write `batches` into a fresh database at `path`. */
function rawRun(path: string, batches: readonly Row[][]): Promise<Timed> {
  const worker = new Worker(RAW_WRITER, { eval: true, workerData: { path, batches, driver: createRequire(import.meta.url).resolve('libsql') } });
  return new Promise((resolve, reject) => {
    worker.once('message', (timed: Timed) => {
      resolve(timed);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

/** Each stored agent's own state: its count, from its place. */
const stateOf = (i: number) => ({ counter: { count: (i * 7919) % 100_003 } });

/** Milliseconds to spawn `STORED` agents, each with its own state, in a system without a store. */
async function spawnRun(): Promise<number> {
  const system = createAgentSystem({ onUnhandledDiagnostic: () => {} });
  const started = performance.now();
  for (let i = 0; i < STORED; i++) system.spawn(CounterAgent, { id: `s${i}`, state: stateOf(i) });
  const elapsed = performance.now() - started;
  await system.shutdown();
  return elapsed;
}

/** Milliseconds to open a system on a database of `STORED` agents, every one restored when it returns. */
async function recoveryRun(path: string): Promise<number> {
  const filling = createAgentSystem({ onUnhandledDiagnostic: () => {}, store: createSqliteStore({ path }), durability: 'manual' });
  for (let i = 0; i < STORED; i++) filling.spawn(CounterAgent, { id: `s${i}`, state: stateOf(i) });
  await filling.shutdown();
  const started = performance.now();
  const opened = createAgentSystem({ onUnhandledDiagnostic: () => {}, definitions: [CounterAgent], store: createSqliteStore({ path }), durability: 'manual' });
  const elapsed = performance.now() - started;
  const restored = opened.list();
  const wrong = restored.find((ref, i) => ref.id !== `s${i}` || (ref.getSnapshot().state as { counter: { count: number } }).counter.count !== stateOf(i).counter.count);
  await opened.shutdown();
  if (restored.length !== STORED || wrong) throw new Error(`restored ${restored.length} of ${STORED} agents${wrong ? `, '${wrong.id}' with another state` : ''}`);
  return elapsed;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * A process that keeps a core busy: it computes in spells of 50 ms, and between two it hears
 * whether the bench went (its channel closes as the bench's process ends, however it ends), and
 * then ends too.
 */
const BUSY_PROCESS = `
process.on('disconnect', () => process.exit());
(function spell() {
  for (const until = Date.now() + 50; Date.now() < until; );
  setImmediate(spell);
})();
`;

/** Rounds of the calls in memory and durable (at `dir`) while a child process keeps a core busy. */
async function crowdedRuns(dir: string): Promise<{ memory: Timed[]; durable: Timed[] }> {
  const busy = spawn(process.execPath, ['-e', BUSY_PROCESS], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
  const memory: Timed[] = [];
  const durable: Timed[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      busy.once('spawn', resolve);
      busy.once('error', reject);
    });
    for (let round = 0; round < CROWDED_ROUNDS; round++) {
      memory.push(await callsRun({}));
      durable.push(await callsRun({ store: createSqliteStore({ path: join(dir, `crowded-${round}.db`) }), durability: 'step' }));
    }
  } finally {
    busy.kill('SIGKILL');
  }
  return { memory, durable };
}

export async function run(): Promise<ReportRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'skillstate-durable-bench-'));
  const steps = AGENTS * CALLS;
  const memory: Timed[] = [];
  const durable: Timed[] = [];
  const raw: Timed[] = [];
  const transactions: number[] = [];
  /** Rounds whose timed run wrote batches of the sizes the floor writes (see `recording`). */
  let sameBatches = 0;
  let recovery: number;
  let spawning: number;
  let crowded: { memory: Timed[]; durable: Timed[] };
  try {
    for (let round = 0; round < WARMUP_ROUNDS; round++) {
      await callsRun({});
      await callsRun({ store: createSqliteStore({ path: join(dir, `warmup-${round}.db`) }), durability: 'step' });
    }
    for (let round = 0; round < ROUNDS; round++) {
      memory.push(await callsRun({}));
      const recorded: Array<StoreBatch['save']> = [];
      await callsRun({ store: recording(createSqliteStore({ path: join(dir, `recorded-${round}.db`) }), recorded, rowsOf), durability: 'step' });
      const sizes: number[] = [];
      durable.push(await callsRun({ store: recording(createSqliteStore({ path: join(dir, `durable-${round}.db`) }), sizes, sizeOf), durability: 'step' }));
      if (sizes.length === recorded.length && sizes.every((size, i) => size === recorded[i]!.length)) sameBatches++;
      // The spawns' batch is written before the timed calls, and shutdown's (empty) after: the floor writes the calls' batches.
      const timed = floorRows(
        recorded.slice(1).filter((rows) => rows.length > 0),
        sizes.slice(1).filter((size) => size > 0),
      );
      transactions.push(timed.length);
      raw.push(await rawRun(join(dir, `raw-${round}.db`), timed));
    }
    crowded = await crowdedRuns(dir);
    spawning = await spawnRun();
    recovery = await recoveryRun(join(dir, 'recovery.db'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const ofMemory = median(durable.map((run, round) => memory[round]!.ms / run.ms));
  const overRaw = median(durable.map((run, round) => run.ms / raw[round]!.ms));
  const cpuOver = median(durable.map((run, round) => run.cpu / (memory[round]!.cpu + raw[round]!.cpu)));
  const crowdedOfMemory = median(crowded.durable.map((run, round) => crowded.memory[round]!.ms / run.ms));
  const ms = (runs: Timed[]) => median(runs.map((run) => run.ms));
  const cpu = (runs: Timed[]) => median(runs.map((run) => run.cpu));
  const rate = (ms: number) => formatRate((steps / ms) * 1000);
  return [
    {
      suite: 'durable',
      name: `'step' durability, 100 agents × 1,000 calls: durable steps/s vs in memory`,
      value: `${rate(ms(durable))} (${median(transactions)} transactions, ${Math.round(steps / median(transactions))} steps each)`,
      anchor: `in memory: ${rate(ms(memory))}`,
      ratio: ofMemory,
      target: '≥ 0.5× in memory',
      pass: ofMemory >= 0.5,
    },
    {
      suite: 'durable',
      name: `'step' durability, 100 agents × 1,000 calls: time vs raw SQLite writes of the same rows in the same transactions`,
      value: `${ms(durable).toFixed(0)} ms`,
      anchor: `raw writes: ${ms(raw).toFixed(0)} ms (in the timed run's transactions; the recorded run's batches were the same in ${sameBatches} of ${ROUNDS} rounds)`,
      ratio: overRaw,
      target: '≤ 1.5× raw',
      pass: overRaw <= 1.5,
    },
    {
      suite: 'durable',
      name: `'step' durability, 100 agents × 1,000 calls: CPU time (all threads) vs the in-memory run's plus the raw writes'`,
      value: `${cpu(durable).toFixed(0)} ms`,
      anchor: `${cpu(memory).toFixed(0)} ms + ${cpu(raw).toFixed(0)} ms`,
      ratio: cpuOver,
      target: 'reported',
    },
    {
      suite: 'durable',
      name: `'step' durability, 100 agents × 1,000 calls, while another process keeps a core busy: durable steps/s vs in memory under the same load`,
      value: rate(ms(crowded.durable)),
      anchor: `in memory: ${rate(ms(crowded.memory))}`,
      ratio: crowdedOfMemory,
      target: 'reported',
    },
    {
      suite: 'durable',
      name: `recovery: open a database of ${STORED.toLocaleString('en')} stored agents (each its own state), all restored`,
      value: `${(recovery / 1000).toFixed(2)} s (${((recovery * 1000) / STORED).toFixed(1)} µs an agent)`,
      anchor: `spawning them anew: ${(spawning / 1000).toFixed(2)} s`,
      ratio: recovery / spawning,
      target: 'reported',
    },
  ];
}
