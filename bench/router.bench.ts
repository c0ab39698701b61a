/**
 * Router lookups with 10, 1,000 and 10,000 routes (mixed exact, `*` and `**`):
 * - exact lookups over 1,000 varied keys (every exact route of the set, up to 1,000 of them, in
 *   turn), so the figure is not one key kept hot in cache; a plain `Map.get` over the same keys
 *   is shown as what any lookup structure pays for the larger set;
 * - one key looked up again and again (the old rows, kept for information);
 * - against a linear scan of precompiled micromatch matchers: the cost the trie saves.
 */
import micromatch from 'micromatch';
import { createRouter, type Router } from '../src/index.js';
import { compare, formatNs, formatRate, pairedRatio, type ReportRow } from './harness.js';

/** Route paths: 80% exact, 10% with a `*`, 10% ending in `**`. */
export function routePaths(count: number): string[] {
  const paths: string[] = [];
  for (let i = 0; i < count; i++) {
    const kind = i % 10;
    if (kind < 8) paths.push(`svc${i % 50}.entity${i}.action${i % 7}`);
    else if (kind === 8) paths.push(`svc${i % 50}.*.updated${i}`);
    else paths.push(`audit${i}.**`);
  }
  return paths;
}

/** A type that matches route 8 (`svc8.*.updated8`) through its `*`. */
const WILDCARD_TYPE = 'svc8.anything.updated8';

function buildRouter(paths: string[]): Router<number> {
  return createRouter(paths.map((path, i) => ({ path, target: i })));
}

function buildScan(paths: string[]): (type: string) => number[] {
  const matchers = paths.map((path) => micromatch.matcher(path.replaceAll('.', '/')));
  return (type) => {
    const candidate = type.replaceAll('.', '/');
    const found: number[] = [];
    for (let i = 0; i < matchers.length; i++) if (matchers[i]!(candidate)) found.push(i);
    return found;
  };
}

export async function run(): Promise<ReportRow[]> {
  const rows: ReportRow[] = [];
  const sizes = [10, 1_000, 10_000];
  const routers = new Map(sizes.map((n) => [n, buildRouter(routePaths(n))]));
  let sink = 0;

  // ── exact lookups over varied keys ──
  const keysFor = (n: number) => {
    const exact = routePaths(n).filter((path) => !path.includes('*'));
    const step = Math.max(1, Math.floor(exact.length / 1_000));
    return Array.from({ length: 1_000 }, (_, i) => exact[(i * step) % exact.length]!);
  };
  const varied = await compare(
    sizes.flatMap((n) => {
      const router = routers.get(n)!;
      const keys = keysFor(n);
      const map = new Map(routePaths(n).map((path, i) => [path, i]));
      let i = 0;
      let j = 0;
      return [
        { name: `trie ${n}`, fn: () => { const r = router.route(keys[i++ % 1_000]!); if (r.ok) sink += r.matches.length; } },
        { name: `map ${n}`, fn: () => { sink += map.get(keys[j++ % 1_000]!) ?? 0; } },
      ];
    }),
  );
  const variedBase = varied[0]!;
  const mapBase = varied[1]!;
  for (const [i, n] of sizes.entries()) {
    const result = varied[2 * i]!;
    const map = varied[2 * i + 1]!;
    rows.push({
      suite: 'router',
      name: `exact lookup, 1,000 varied keys, ${n.toLocaleString('en')} routes`,
      value: `${formatRate(result.opsPerSec)} (${formatNs(result.ns)})`,
      anchor: i === 0 ? undefined : `10 routes: ${formatNs(variedBase.ns)}; Map.get: ${pairedRatio(map, mapBase).toFixed(2)}× its 10-key cost`,
      ratio: i === 0 ? undefined : pairedRatio(result, variedBase),
      target: n === 10_000 ? '≥ 1M/s and ≤ 1.5× the 10-route cost' : undefined,
      pass: n === 10_000 ? result.opsPerSec >= 1e6 && pairedRatio(result, variedBase) <= 1.5 : undefined,
    });
  }

  // The exact type looked up: a route in the middle of each set (index 4 is always exact).
  const exactType = (n: number) => routePaths(n)[Math.min(4, n - 1)]!;
  const trie = await compare(
    sizes.map((n) => {
      const router = routers.get(n)!;
      const type = exactType(n);
      return { name: `trie ${n}`, fn: () => { const r = router.route(type); if (r.ok) sink += r.matches.length; } };
    }),
  );
  const base = trie[0]!;
  for (const [i, n] of sizes.entries()) {
    const result = trie[i]!;
    rows.push({
      suite: 'router',
      name: `exact lookup, one key, ${n.toLocaleString('en')} routes`,
      value: `${formatRate(result.opsPerSec)} (${formatNs(result.ns)})`,
      anchor: i === 0 ? undefined : `10 routes: ${formatNs(base.ns)}`,
      ratio: i === 0 ? undefined : pairedRatio(result, base),
      target: n === 10_000 ? 'informational (one hot key)' : undefined,
    });
  }

  const wildcard = await compare(
    sizes.map((n) => {
      const router = routers.get(n)!;
      return { name: `wild ${n}`, fn: () => { const r = router.route(WILDCARD_TYPE); if (r.ok) sink += r.matches.length; } };
    }),
  );
  for (const [i, n] of sizes.entries()) {
    rows.push({ suite: 'router', name: `'*' lookup, ${n.toLocaleString('en')} routes`, value: `${formatRate(wildcard[i]!.opsPerSec)} (${formatNs(wildcard[i]!.ns)})` });
  }

  for (const n of sizes) {
    const router = routers.get(n)!;
    const scan = buildScan(routePaths(n));
    const type = exactType(n);
    const [ours, theirs] = await compare(
      [
        { name: 'trie', fn: () => { const r = router.route(type); if (r.ok) sink += r.matches.length; } },
        { name: 'scan', fn: () => { sink += scan(type).length; } },
      ],
      { rounds: n >= 10_000 ? 7 : 15 },
    );
    rows.push({
      suite: 'router',
      name: `micromatch linear scan, ${n.toLocaleString('en')} routes`,
      value: `${formatRate(theirs!.opsPerSec)} (${formatNs(theirs!.ns)})`,
      anchor: `trie: ${formatNs(ours!.ns)}`,
      ratio: pairedRatio(theirs!, ours!),
      target: 'comparison (scan ÷ trie)',
    });
  }
  if (sink < 0) console.log(sink);
  return rows;
}
