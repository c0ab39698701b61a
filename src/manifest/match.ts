/**
 * Matching a query against every skill's triggers at once. An index is built from the registry's
 * entries: each keyword, verb and skill name, cut into words, is filed under its first word, so a
 * query costs a lookup per query word rather than a scan of every skill. Keywords made of symbols
 * (`c++`) are searched literally; vetted patterns run on the linear-time engine after a cheap
 * check that the query contains their required literal. The query is cut to `maxQueryChars`
 * (default 4,096) before anything runs on it, so a megabyte of input costs no more than that.
 *
 * Pure: no I/O.
 */
import type { SkillEntry } from './skill-entry.js';
import { compileTriggerPattern, isSymbolic, runTriggerPattern, symbolicRegex, words, type TriggerPattern } from './triggers.js';

export const DEFAULT_MAX_QUERY_CHARS = 4096;

export type TriggerKind = 'name' | 'keyword' | 'verb' | 'pattern';

/** How one skill matched a query. */
export interface TriggerMatch {
  name: string;
  /** The query names the skill (its name, with hyphens or spaces). */
  mentioned: boolean;
  /** Words in the longest trigger phrase the query contains verbatim. */
  phraseWords: number;
  /** What matched, as `kind:text`. */
  matched: string[];
}

interface PhraseRef {
  entry: number;
  words: string[];
  kind: TriggerKind;
  /** What a match reports, `kind:text`, made once here rather than on every hit. */
  label: string;
}

export class TriggerIndex {
  readonly #names: string[];
  readonly #phrases = new Map<string, PhraseRef[]>();
  readonly #literal: { entry: number; regex: RegExp; kind: TriggerKind; label: string }[] = [];
  readonly #patterns: { entry: number; pattern: TriggerPattern; label: string }[] = [];
  /** Entries that declare no trigger at all. */
  readonly untriggered: number;

  constructor(entries: readonly SkillEntry[]) {
    this.#names = entries.map((entry) => entry.name);
    let untriggered = 0;
    entries.forEach((entry, index) => {
      const { keywords, verbs, patterns } = entry.triggers;
      if (!keywords.length && !verbs.length && !patterns.length) untriggered++;
      this.#addPhrase(index, entry.name, 'name');
      for (const keyword of keywords) this.#addPhrase(index, keyword, 'keyword');
      for (const verb of verbs) this.#addPhrase(index, verb, 'verb');
      for (const source of patterns) {
        const compiled = compileTriggerPattern(source);
        if (compiled.ok) this.#patterns.push({ entry: index, pattern: compiled.pattern, label: `pattern:${compiled.pattern.source}` });
      }
    });
    this.untriggered = untriggered;
  }

  #addPhrase(entry: number, text: string, kind: TriggerKind): void {
    if (isSymbolic(text)) {
      this.#literal.push({ entry, regex: symbolicRegex(text), kind, label: `${kind}:${text}` });
      return;
    }
    const phrase = words(text);
    if (!phrase.length) return;
    const list = this.#phrases.get(phrase[0]!);
    const ref = { entry, words: phrase, kind, label: `${kind}:${text}` };
    if (list) list.push(ref);
    else this.#phrases.set(phrase[0]!, [ref]);
  }

  /** The skills whose triggers match `query`, by name. */
  match(query: string, maxQueryChars = DEFAULT_MAX_QUERY_CHARS): { matches: Map<string, TriggerMatch>; truncated: boolean } {
    const truncated = query.length > maxQueryChars;
    const bounded = truncated ? query.slice(0, maxQueryChars) : query;
    const lower = bounded.toLowerCase();
    const matches = new Map<string, TriggerMatch>();
    const hit = (entry: number, kind: TriggerKind, length: number, label: string) => {
      const name = this.#names[entry]!;
      let match = matches.get(name);
      if (!match) matches.set(name, (match = { name, mentioned: false, phraseWords: 0, matched: [] }));
      if (kind === 'name') match.mentioned = true;
      if (length > match.phraseWords) match.phraseWords = length;
      if (!match.matched.includes(label)) match.matched.push(label);
    };
    const tokens = words(bounded);
    for (let i = 0; i < tokens.length; i++) {
      const refs = this.#phrases.get(tokens[i]!);
      if (!refs) continue;
      for (const ref of refs) {
        let k = 1;
        while (k < ref.words.length && tokens[i + k] === ref.words[k]) k++;
        if (k === ref.words.length) hit(ref.entry, ref.kind, k, ref.label);
      }
    }
    for (const literal of this.#literal) if (literal.regex.test(lower)) hit(literal.entry, literal.kind, 1, literal.label);
    for (const { entry, pattern, label } of this.#patterns) {
      const found = runTriggerPattern(pattern, bounded, lower);
      if (found !== undefined) hit(entry, 'pattern', Math.max(1, words(found).length), label);
    }
    return { matches, truncated };
  }
}

/** How recently each skill was used: a larger number is more recent (a timestamp or a counter). */
export type SkillUsage = Readonly<Record<string, number>> | ReadonlyMap<string, number>;

/**
 * Orders matches: skills the query names first, then the longest exact trigger phrase, then the
 * most recently used, then by name.
 */
export function rankMatches(matches: Iterable<TriggerMatch>, usage?: SkillUsage): TriggerMatch[] {
  const used = (name: string): number => {
    if (!usage) return 0;
    const value = usage instanceof Map ? usage.get(name) : (usage as Record<string, number>)[name];
    return typeof value === 'number' ? value : 0;
  };
  return [...matches].sort(
    (a, b) =>
      Number(b.mentioned) - Number(a.mentioned) ||
      b.phraseWords - a.phraseWords ||
      used(b.name) - used(a.name) ||
      (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
}
