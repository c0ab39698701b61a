/**
 * A small benchmark harness built for ratios on a noisy, shared machine. Each comparison runs
 * its cases in interleaved rounds (anchor, subject, anchor, subject...), each round long enough
 * to swamp the timer, and reports the median time per operation. Ratios between cases measured
 * in the same rounds are what BENCHMARKS.md records (`pairedRatio`: the median of the rounds' own
 * ratios, so a slow moment of the machine weighs on both sides of the rounds it falls in);
 * absolute figures are for orientation only.
 */
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

/**
 * Whether the benches run compiled (`npm run bench` compiles them with `tsc` into
 * `.bench-build/`, so they measure the JavaScript the package ships) or from source through a loader.
 */
export const compiled = import.meta.url.endsWith('.js');

/** A path under the bench's source folder (its corpus, its README), wherever the bench runs from. */
export function benchSource(relative: string): string {
  return fileURLToPath(new URL(`${compiled ? '../../bench/' : './'}${relative}`, import.meta.url));
}

export interface BenchCase {
  name: string;
  /** One operation. May return a promise, which is awaited. */
  fn: () => unknown;
  /** Runs once before the case's first round (warm caches, build fixtures). */
  setup?: () => unknown;
  /**
   * Runs after every loop of `fn`, untimed: clears away what the loop built (the agents a spawn
   * bench started), then the garbage collector runs (with `--expose-gc`, as `npm run bench` runs),
   * so the operation is timed alone and neither case's next loop pays for this one's garbage.
   */
  afterLoop?: () => unknown;
}

export interface CaseResult {
  name: string;
  /** Median nanoseconds per operation over the rounds. */
  ns: number;
  /** Operations per second at the median. */
  opsPerSec: number;
  /** Spread: the 25th and 75th percentile of the per-round figures, in ns. */
  p25: number;
  p75: number;
  /** Nanoseconds per operation in each round, in the order the rounds ran. */
  rounds: number[];
  /** Which `compare` call measured it: `pairedRatio` takes ratios within one only. */
  comparison: number;
}

/**
 * `ours` against `anchor`, two cases of one `compare`: the median over the rounds of each round's
 * ratio. Both ran in every round, one right after the other, so what slows the machine for a
 * while slows both in the rounds it lasts, and those rounds' ratios stay near the rest.
 */
export function pairedRatio(ours: CaseResult, anchor: CaseResult): number {
  if (ours.comparison !== anchor.comparison) throw new Error(`pairedRatio: '${ours.name}' and '${anchor.name}' did not run in the same rounds`);
  const ratios = ours.rounds.map((ns, round) => ns / anchor.rounds[round]!).sort((a, b) => a - b);
  return percentile(ratios, 0.5);
}

export interface CompareOptions {
  rounds?: number;
  /** Target duration of one round of one case, in milliseconds. */
  roundMs?: number;
  /** Time each case runs before measuring, so every case is measured once the JIT has settled. */
  warmupMs?: number;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as PromiseLike<unknown>).then === 'function';
}

/** Times `iterations` calls of the case's `fn`, then runs its `afterLoop` untimed. */
async function timeLoop(c: BenchCase, iterations: number): Promise<number> {
  if (!c.afterLoop) return timeCalls(c.fn, iterations);
  try {
    return await timeCalls(c.fn, iterations);
  } finally {
    await c.afterLoop();
    (globalThis as { gc?: () => void }).gc?.();
  }
}

async function timeCalls(fn: () => unknown, iterations: number): Promise<number> {
  const first = fn();
  if (isThenable(first)) {
    await first;
    const start = performance.now();
    for (let i = 0; i < iterations; i++) await fn();
    return performance.now() - start;
  }
  const start = performance.now();
  for (let i = 0; i < iterations; i++) fn();
  return performance.now() - start;
}

/** How many iterations make one round last about `roundMs`. */
async function calibrate(c: BenchCase, roundMs: number): Promise<number> {
  let iterations = 1;
  for (;;) {
    const elapsed = await timeLoop(c, iterations);
    if (elapsed >= roundMs / 4 || iterations >= 1 << 26) {
      return Math.max(1, Math.round((iterations * roundMs) / Math.max(elapsed, 0.001)));
    }
    iterations *= 4;
  }
}

function percentile(sorted: number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.round((sorted.length - 1) * p)));
  return sorted[index]!;
}

/** Measures the cases side by side, interleaving their rounds. */
let comparisons = 0;

export async function compare(cases: BenchCase[], options: CompareOptions = {}): Promise<CaseResult[]> {
  const comparison = ++comparisons;
  const rounds = options.rounds ?? 15;
  const roundMs = options.roundMs ?? 40;
  const warmupMs = options.warmupMs ?? 300;
  for (const c of cases) await c.setup?.();
  for (const c of cases) {
    const until = performance.now() + warmupMs;
    let batch = 16;
    while (performance.now() < until) {
      await timeLoop(c, batch);
      batch = Math.min(batch * 2, 4096);
    }
  }
  const iterations: number[] = [];
  for (const c of cases) iterations.push(await calibrate(c, roundMs));
  const samples: number[][] = cases.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < cases.length; k++) {
      const i = (k + round) % cases.length; // rotate who goes first
      const elapsed = await timeLoop(cases[i]!, iterations[i]!);
      samples[i]!.push((elapsed * 1e6) / iterations[i]!);
    }
  }
  return cases.map((c, i) => {
    const sorted = [...samples[i]!].sort((a, b) => a - b);
    const ns = percentile(sorted, 0.5);
    return { name: c.name, ns, opsPerSec: 1e9 / ns, p25: percentile(sorted, 0.25), p75: percentile(sorted, 0.75), rounds: samples[i]!, comparison };
  });
}

/** One line of the report: a figure, its anchor, the ratio and the target it is held to. */
export interface ReportRow {
  suite: string;
  name: string;
  value: string;
  anchor?: string;
  ratio?: number;
  target?: string;
  pass?: boolean;
}

export function formatNs(ns: number): string {
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(2)} ms`;
  if (ns >= 1e3) return `${(ns / 1e3).toFixed(2)} µs`;
  return `${ns.toFixed(0)} ns`;
}

export function formatRate(opsPerSec: number): string {
  if (opsPerSec >= 1e6) return `${(opsPerSec / 1e6).toFixed(2)} M/s`;
  if (opsPerSec >= 1e3) return `${(opsPerSec / 1e3).toFixed(1)} k/s`;
  return `${opsPerSec.toFixed(0)} /s`;
}

export function formatBytes(bytes: number): string {
  if (Math.abs(bytes) >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(2)} MiB`;
  if (Math.abs(bytes) >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes.toFixed(0)} B`;
}

/** Heap bytes retained per item after building `count` items with `build` (needs --expose-gc). */
export async function retainedBytes<T>(count: number, build: (i: number) => T | Promise<T>): Promise<{ perItem: number; keep: T[] }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run the benchmarks with node --expose-gc (npm run bench does)');
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  const keep: T[] = [];
  for (let i = 0; i < count; i++) keep.push(await build(i));
  gc();
  gc();
  const after = process.memoryUsage().heapUsed;
  return { perItem: (after - before) / count, keep };
}

/** Renders report rows as a markdown table. */
export function renderTable(rows: ReportRow[]): string {
  const header = ['suite', 'measure', 'value', 'anchor', 'ratio', 'target', 'ok'];
  const lines = rows.map((row) => [
    row.suite,
    row.name,
    row.value,
    row.anchor ?? '',
    row.ratio === undefined ? '' : `${row.ratio.toFixed(2)}×`,
    row.target ?? '',
    row.pass === undefined ? '' : row.pass ? 'yes' : 'NO',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((line) => line[i]!.length)));
  const format = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  return [format(header), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...lines.map(format)].join('\n');
}
