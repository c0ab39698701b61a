/**
 * Passivation: 1,000,000 agents created on an SQLite store by a system that passivates them as
 * they rest, then the store opened by a second system (every agent left in it, passivated), and a
 * round-robin load on 1% of them (every 100th agent called in turn, round after round, by 100
 * callers at once) while the others rest. Reported:
 * - resident memory under the load once it has run for several `idleMs` (target: RSS ≤ 1 GiB),
 *   and the heap after a collection, against the anchor: the heap an agent takes in memory
 *   without passivation (measured on `ANCHOR_AGENTS` agents), times the count;
 * - the time to wake a passivated agent (`getSnapshot()` on its ref, which reads its row and
 *   starts it): p50 and p99 over `WAKES` agents picked at random among the resting ones;
 * - the time to create the agents, and to open the store again, with the highest resident memory
 *   by the end of each (the process's peak so far: the open's own when above the creating's).
 *
 * `SKILLSTATE_BENCH_AGENTS` scales the count down for a quick run.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createAgentSystem, createSqliteStore, type AgentSystem, type TraceRecord } from '../src/index.js';
import { CounterAgent } from './durable.bench.js';
import { formatBytes, retainedBytes, type ReportRow } from './harness.js';

const AGENTS = Number(process.env.SKILLSTATE_BENCH_AGENTS ?? 1_000_000);
const ACTIVE_EVERY = 100;
/** Longer than a round of the load takes (10,000 calls at 1,000,000 agents), so the active agents stay in memory. */
const IDLE_MS = 3_000;
/** The idle time of the system that creates the agents: short, so that few are in memory at once. */
const CREATE_IDLE_MS = 300;
/** Agents spawned between two turns of the event loop (when the store writes and the sweep runs). */
const CHUNK = 2_000;
/** Agents in memory at most while spawning: spawning waits for the sweep beyond it. */
const LIVE_CAP = 10_000;
const ANCHOR_AGENTS = Math.min(20_000, AGENTS);
const WAKES = 1_000;
/** How many idleMs the load runs: all but the active agents have left memory by the middle. */
const LOAD_IDLE_SPANS = 8;
/** Calls in flight at once during the load, each caller going round its share of the active agents. */
const CALLERS = 100;
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
  const systems: AgentSystem[] = [];
  try {
    // Creating: a system that passivates soon, so that few agents are in memory at once.
    const creating = createAgentSystem({ onUnhandledDiagnostic: () => {}, store: createSqliteStore({ path }), passivate: { idleMs: CREATE_IDLE_MS }, trace });
    systems.push(creating);
    const spawnStarted = performance.now();
    for (let i = 0; i < AGENTS; i++) {
      creating.spawn(CounterAgent, { id: `a${i}` });
      if (i % CHUNK !== CHUNK - 1) continue;
      if ((i + 1) % 100_000 === 0) process.stderr.write(`passivation: ${(i + 1).toLocaleString('en')} agents created, ${live.toLocaleString('en')} in memory\n`);
      await turn();
      while (live > LIVE_CAP) await sleep(10);
    }
    const spawnMs = performance.now() - spawnStarted;
    const peakWhileCreating = process.resourceUsage().maxRSS * 1024;
    await creating.shutdown();
    gc();

    // Opening the store again: every agent is left in it, passivated, until used.
    live = 0;
    const openStarted = performance.now();
    const system = createAgentSystem({ onUnhandledDiagnostic: () => {}, callTimeout: Infinity, definitions: [CounterAgent], store: createSqliteStore({ path }), passivate: { idleMs: IDLE_MS }, trace });
    const openMs = performance.now() - openStarted;
    // The process's highest resident memory so far: the open's peak when above the creating's.
    const peakThroughOpen = process.resourceUsage().maxRSS * 1024;
    systems.push(system);
    const refs = system.list();
    if (refs.length !== AGENTS || live !== 0) throw new Error(`opened ${refs.length} agents, ${live} of them in memory; expected ${AGENTS}, none in memory`);

    // The load: every 100th agent called in turn, round after round (the first round wakes them),
    // for LOAD_IDLE_SPANS × idleMs; resident memory is read after each round of the second half,
    // as it stands under the load (no collection forced).
    const active = refs.filter((ref) => Number(ref.id.slice(1)) % ACTIVE_EVERY === 0);
    let calls = 0;
    let rounds = 0;
    const resident: number[] = [];
    const loadStarted = performance.now();
    for (let elapsed = 0; elapsed < LOAD_IDLE_SPANS * IDLE_MS; elapsed = performance.now() - loadStarted) {
      // One round: CALLERS callers, each calling its share of the active agents one after another.
      await Promise.all(
        Array.from({ length: CALLERS }, async (_, caller) => {
          for (let i = caller; i < active.length; i += CALLERS) await active[i]!.call('counter.increment');
        }),
      );
      calls += active.length;
      rounds++;
      if (elapsed > (LOAD_IDLE_SPANS * IDLE_MS) / 2) resident.push(process.memoryUsage().rss);
    }
    const loadMs = performance.now() - loadStarted;
    const liveAtMeasure = live;
    resident.sort((a, b) => a - b);
    const rss = percentile(resident, 0.5);
    gc();
    const memory = process.memoryUsage();

    // Waking: resting agents picked at random (never the active ones), one at a time.
    const wakes: number[] = [];
    for (let n = 0; n < WAKES; n++) {
      const ref = refs[Math.floor(Math.random() * AGENTS)]!;
      if (ref.status !== 'passivated') continue;
      const started = performance.now();
      ref.getSnapshot();
      wakes.push(performance.now() - started);
    }
    wakes.sort((a, b) => a - b);
    const databaseBytes = statSync(path).size;

    const count = AGENTS.toLocaleString('en');
    const anchorTotal = perAgentInMemory * AGENTS;
    return [
      {
        suite: 'passivation',
        name: `${count} agents, 1% active round-robin (${active.length.toLocaleString('en')} agents, ${rounds} rounds, ${calls.toLocaleString('en')} calls in ${(loadMs / 1000).toFixed(1)} s): resident memory`,
        value: `RSS ${formatBytes(rss)} (median of ${resident.length} rounds, highest ${formatBytes(resident.at(-1)!)}); heap after a collection ${formatBytes(memory.heapUsed)} (${formatBytes(memory.heapUsed / AGENTS)} an agent; ${liveAtMeasure.toLocaleString('en')} in memory)`,
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
        name: `create ${count} agents on SQLite (idleMs ${CREATE_IDLE_MS}), passivated as they rest; then open the store, every agent left passivated`,
        value: `${(spawnMs / 1000).toFixed(1)} s (${((spawnMs * 1000) / AGENTS).toFixed(0)} µs an agent, RSS at most ${formatBytes(peakWhileCreating)}); open ${(openMs / 1000).toFixed(1)} s (${((openMs * 1000) / AGENTS).toFixed(0)} µs an agent, RSS at most ${formatBytes(peakThroughOpen)} by its end); database ${formatBytes(databaseBytes)}`,
        target: 'reported',
      },
    ];
  } finally {
    for (const system of systems) await system.shutdown();
    rmSync(dir, { recursive: true, force: true });
  }
}
