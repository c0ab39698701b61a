/**
 * The name a slip meant: among known names (options, fields, actions, routes), the one within a
 * typo of a name that is not known, so an error can say "did you mean 'increment'?".
 *
 * Pure: no I/O, no XState.
 */

/** The name among `names` nearest to `name` (case aside), if it is near enough to be a slip: at most one edit in four letters. */
export function closestName(name: string, names: Iterable<string>): string | undefined {
  const wanted = name.toLowerCase();
  const limit = Math.max(1, Math.floor(name.length / 4));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of names) {
    // Names whose lengths differ by more than the limit are further apart than it: skipped
    // without counting, so a huge name (a hostile instruction) costs nothing.
    if (Math.abs(candidate.length - name.length) > limit) continue;
    const distance = editDistance(wanted, candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

/** Levenshtein distance, with a swap of two neighbouring letters counted as one edit. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/** `; did you mean 'increment'?` for the name a slip likely meant, to end an error's message; empty when there is none. */
export function didYouMean(meant: string | undefined): string {
  return meant === undefined ? '' : `; did you mean '${meant}'?`;
}
