/**
 * What keeping committed state untouchable costs, and why it is done by freezing rather than by
 * copying. A step freezes only the objects it created (the rest of the state is shared with the
 * state before it, frozen already); handing out copies instead would deep-copy the state for
 * every action and hook that receives it. Both are measured on the work one step does:
 * - a counter slice incremented (the routed-signal benchmark's state);
 * - an item appended to a list of 100 and of 1,000 strings (the new array is the step's).
 * The anchor is building the new state with nothing protected. Reading a frozen list by index is
 * measured too: it is where freezing costs user code something.
 */
import { replaceAny } from '../src/core/object-copy.js';
import { deepFreeze } from '../src/core/plain.js';
import { compare, formatNs, pairedRatio, type ReportRow } from './harness.js';

type State = Record<string, unknown>;

/** A committed state: frozen, as the runtime keeps it. */
function committed(size: number): State {
  const items = Array.from({ length: size }, (_, i) => `item ${i}`);
  return deepFreeze({ counter: { count: 0 }, notes: { items }, title: 'bench' });
}

/** The new state a step builds: the counter bumped, or an item appended. */
function nextState(state: State, append: boolean): State {
  if (!append) return replaceAny(state, 'counter', { count: ((state.counter as { count: number }).count + 1) % 1000 });
  const items = (state.notes as { items: string[] }).items;
  return replaceAny(state, 'notes', { items: [...items, 'new'] });
}

export async function run(): Promise<ReportRow[]> {
  const rows: ReportRow[] = [];
  const scenarios: [string, number, boolean][] = [
    ['counter slice incremented', 0, false],
    ['item appended to a list of 100', 100, true],
    ['item appended to a list of 1,000', 1_000, true],
  ];
  for (const [name, size, append] of scenarios) {
    const state = committed(size);
    let sink: unknown;
    const [bare, frozen, copied] = await compare([
      { name: 'unprotected', fn: () => (sink = nextState(state, append)) },
      // What the runtime does: freeze what the step created.
      { name: 'freeze', fn: () => (sink = deepFreeze(nextState(state, append))) },
      // The alternative: a copy of the state for the action (ctx.state, ctx.skillState), then the step.
      { name: 'copy', fn: () => (sink = nextState(structuredClone(state), append)) },
    ]);
    void sink;
    rows.push({
      suite: 'isolation',
      name: `${name}: freeze what the step made`,
      value: formatNs(frozen!.ns - bare!.ns),
      anchor: `copy for the action: ${formatNs(copied!.ns - bare!.ns)}`,
      ratio: (frozen!.ns - bare!.ns) / Math.max(1, copied!.ns - bare!.ns),
      target: 'freeze ≤ copy',
      pass: frozen!.ns <= copied!.ns,
    });
  }
  // Reading: V8 (node 20) reads the items of a frozen array on a slower path than a plain one's.
  // Factories: each list gets its own function, so each is measured monomorphic, as an action's code would be.
  const readers: [string, () => (list: readonly string[]) => number][] = [
    ['by index', () => (list) => {
      let n = 0;
      for (let i = 0; i < list.length; i++) if (list[i]!.length > 6) n++;
      return n;
    }],
    ['with for...of', () => (list) => {
      let n = 0;
      for (const item of list) if (item.length > 6) n++;
      return n;
    }],
  ];
  for (const [how, reader] of readers) {
    const plain = Array.from({ length: 1_000 }, (_, i) => `item ${i}`);
    const frozen = Object.freeze([...plain]);
    const readPlain = reader();
    const readFrozen = reader();
    let sink = 0;
    const [open, closed] = await compare([
      { name: 'plain', fn: () => (sink += readPlain(plain)) },
      { name: 'frozen', fn: () => (sink += readFrozen(frozen)) },
    ]);
    void sink;
    rows.push({
      suite: 'isolation',
      name: `an action reading a frozen list of 1,000 ${how}`,
      value: formatNs(closed!.ns),
      anchor: `not frozen: ${formatNs(open!.ns)}`,
      ratio: pairedRatio(closed!, open!),
      target: 'reported',
    });
  }
  return rows;
}
