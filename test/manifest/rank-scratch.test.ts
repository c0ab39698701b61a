/**
 * The relevance index keeps its per-query scratch space on the index and shares term lists
 * between results: a result is not changed by later queries on the same index, including after
 * `setHeadings`, and the comparison sort used past 131,072 skills orders as the packed one does.
 */
import { describe, expect, it } from 'vitest';
import { RelevanceIndex, type RelevanceScore } from '../../src/manifest/rank.js';
import type { SkillEntry } from '../../src/manifest/skill-entry.js';

/** The two fields the index reads of an entry. */
const entry = (name: string, description: string) => ({ name, description }) as unknown as SkillEntry;

function expectOrdered(ranked: readonly RelevanceScore[]): void {
  for (let i = 1; i < ranked.length; i++) {
    const [a, b] = [ranked[i - 1]!, ranked[i]!];
    expect(a.score > b.score || (a.score === b.score && a.name < b.name)).toBe(true);
  }
}

describe('RelevanceIndex scratch space', () => {
  it('a result is not altered by later queries, nor by heading changes between them', () => {
    const index = new RelevanceIndex([
      entry('pdf', 'merge split pdf files'),
      entry('sheets', 'chart excel files and tables'),
      entry('slides', 'build slides with notes'),
      entry('audio', 'convert audio files'),
    ]);
    const first = index.rank('merge pdf files');
    const copy = JSON.parse(JSON.stringify(first)) as RelevanceScore[];
    index.rank('chart excel tables slides notes');
    index.setHeadings('audio', '# Merge\n# PDF');
    index.rank('merge audio pdf files notes');
    expect(index.rank('')).toEqual([]);
    expect(index.rank('nothing-matches-this')).toEqual([]);
    expect(JSON.parse(JSON.stringify(first))).toEqual(copy);
    // skills that matched the same terms share a list, and nobody can write into it
    const files = index.rank('files');
    expect(files.length).toBe(3);
    expect(new Set(files.map((r) => r.terms)).size).toBe(1);
    expect(() => (files[0]!.terms as string[]).push('x')).toThrow(TypeError);
  });

  it('past 131,072 skills the comparison sort gives best first, ties by name', () => {
    const count = (1 << 17) + 5;
    const entries: SkillEntry[] = [];
    for (let i = 0; i < count; i++) {
      const name = `s${String((i * 7919) % count).padStart(6, '0')}`;
      entries.push(entry(name, i % 1000 === 0 ? 'zebra zebra quokka' : i % 997 === 0 ? 'zebra' : i % 991 === 0 ? 'quokka zebra' : 'filler'));
    }
    const index = new RelevanceIndex(entries);
    const ranked = index.rank('zebra quokka');
    expect(ranked.length).toBeGreaterThan(100);
    expectOrdered(ranked);
    expect(new Set(ranked.map((r) => r.name)).size).toBe(ranked.length);
    // and the scratch space is clean for the next query
    const again = index.rank('zebra quokka');
    expect(again.map((r) => [r.name, r.score])).toEqual(ranked.map((r) => [r.name, r.score]));
  }, 60_000);
});
