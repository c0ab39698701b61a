/**
 * Passivation: 1,000,000 agents created on an SQLite store with `passivate: { idleMs }`, then a
 * round-robin load on 1% of them (every 100th agent called in turn, round after round) while the
 * others rest. Reported:
 * - resident memory and heap once the load has run for several `idleMs` (target: RSS ≤ 1 GiB),
 *   against the anchor, the heap an agent takes in memory without passivation (measured on
 *   `ANCHOR_AGENTS` agents, times the count: what the same million would need);
 * - the time to wake a passivated agent (`getSnapshot()` on its ref, which reads its row and
 *   starts it): p50 and p99 over `WAKES` agents picked at random among the resting ones.
 *
 * `SKILLSTATE_BENCH_AGENTS` scales the count down for a quick run.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createAgentSystem, createSqliteStore, type AgentRef, type TraceRecord } from '../src/index.js';
import { CounterAgent } from './durable.bench.js';
import { formatBytes, retainedBytes, type ReportRow } from './harness.js';

const AGENTS = Number(process.env.SKILLSTATE_BENCH_AGENTS ?? 1_000_000);
const ACTIVE_EVERY = 100;
/** Longer than a round of the load takes (10,000 calls at 1,000,000 agents), so the active agents stay in memory. */
const IDLE_MS = 3_000;
/** Agents spawned between two turns of the event loop (when the store writes and the sweep runs). */
const CHUNK = 2_000;
/** Agents in memory at most while spawning: spawning waits for the sweep beyond it. */
const LIVE_CAP = 30_000;
const ANCHOR_AGENTS = Math.min(20_000, AGENTS);
const WAKES = 1_000;
const GIB = 2 ** 30;

const gc = () => {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error('run the benchmarks with node --expose-gc (npm run bench does)');
  collect();
  collect();
};
const turn = () => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

/** Heap bytes an agent takes in memory, in a system without a store. */
async function anchorPerAgent(): Promise<number> {
  const system = createAgentSystem({ onUnhandledDiagnostic: () => {} });
  const { perItem } = await retainedBytes(ANCHOR_AGENTS, (i) => system.spawn(CounterAgent, { id: `m${i}` }));
  await system.shutdown();
  return perItem;
}

export async function run(): Promise<ReportRow[]> {
  const perAgentInMemory = await anchorPerAgent();
  gc();
  const dir = mkdtempSync(join(tmpdir(), 'skillstate-passivation-bench-'));
  const path = join(dir, 'agents.db');
  let live = 0;
  const trace = (record: TraceRecord) => {
    if (record.kind === 'spawn' || record.kind === 'wake') live++;
    else if (record.kind === 'passivate') live--;
  };
  const system = createAgentSystem({ onUnhandledDiagnostic: () => {}, callTimeout: Infinity, store: createSqliteStore({ path }), passivate: { idleMs: IDLE_MS }, trace });
  try {
    const refs: AgentRef[] = new Array(AGENTS);
    const spawnStarted = performance.now();
    for (let i = 0; i < AGENTS; i++) {
      refs[i] = system.spawn(CounterAgent, { id: `a${i}` });
      if (i % CHUNK !== CHUNK - 1) continue;
      if ((i + 1) % 100_000 === 0) process.stderr.write(`passivation: ${(i + 1).toLocaleString('en')} agents created, ${live.toLocaleString('en')} in memory\n`);
      await turn();
      while (live > LIVE_CAP) await sleep(20);
    }
    const spawnMs = performance.now() - spawnStarted;

    // The load: every 100th agent called in turn, round after round (the first wakes those that
    // rested while the others were created), for several idleMs, so that every other agent has
    // rested long enough to leave memory; memory is read between two rounds.
    const active = refs.filter((_, i) => i % ACTIVE_EVERY === 0);
    let calls = 0;
    let rounds = 0;
    const loadStarted = performance.now();
    const round = async () => {
      await Promise.all(active.map((ref) => ref.call('counter.increment')));
      calls += active.length;
      rounds++;
    };
    while (rounds < 4 || performance.now() - loadStarted < 3 * IDLE_MS) await round();
    const loadMs = performance.now() - loadStarted;
    gc();
    const memory = process.memoryUsage();
    const liveAtMeasure = live;
    await round();
    const peakRss = process.resourceUsage().maxRSS * 1024;

    // Waking: resting agents picked at random (never the active ones), one at a time.
    const wakes: number[] = [];
    for (let n = 0; n < WAKES; n++) {
      let i = Math.floor(Math.random() * AGENTS);
      if (i % ACTIVE_EVERY === 0) i++;
      const ref = refs[i % AGENTS]!;
      if (ref.status !== 'passivated') continue;
      const started = performance.now();
      ref.getSnapshot();
      wakes.push(performance.now() - started);
    }
    wakes.sort((a, b) => a - b);
    const databaseBytes = statSync(path).size;
    await system.shutdown();

    const rss = memory.rss;
    const count = AGENTS.toLocaleString('en');
    const anchorTotal = perAgentInMemory * AGENTS;
    return [
      {
        suite: 'passivation',
        name: `${count} agents, 1% active round-robin (${active.length.toLocaleString('en')} agents, ${rounds} rounds, ${calls.toLocaleString('en')} calls in ${(loadMs / 1000).toFixed(1)} s): resident memory`,
        value: `RSS ${formatBytes(rss)}, heap ${formatBytes(memory.heapUsed)} (${formatBytes(memory.heapUsed / AGENTS)} an agent; ${liveAtMeasure.toLocaleString('en')} in memory); peak RSS of the run ${formatBytes(peakRss)}`,
        anchor: `without passivation: ${formatBytes(perAgentInMemory)} of heap an agent (${ANCHOR_AGENTS.toLocaleString('en')} measured) → ${(anchorTotal / GIB).toFixed(1)} GiB for ${count}`,
        ratio: memory.heapUsed / anchorTotal,
        target: 'RSS ≤ 1 GiB',
        pass: rss <= GIB,
      },
      {
        suite: 'passivation',
        name: `wake a passivated agent (getSnapshot() on its ref), ${wakes.length} agents of ${count}`,
        value: `p50 ${(percentile(wakes, 0.5) * 1000).toFixed(0)} µs, p99 ${(percentile(wakes, 0.99) * 1000).toFixed(0)} µs`,
        target: 'reported',
      },
      {
        suite: 'passivation',
        name: `create ${count} agents on SQLite, passivated as they rest`,
        value: `${(spawnMs / 1000).toFixed(1)} s (${((spawnMs * 1000) / AGENTS).toFixed(0)} µs an agent; database ${formatBytes(databaseBytes)})`,
        target: 'reported',
      },
    ];
  } finally {
    await system.shutdown();
    rmSync(dir, { recursive: true, force: true });
  }
}
