/**
 * Relevance ranking of skills against the conversation, for skills that declare no triggers
 * (most published skills have only a name and a description). Each skill is indexed once per
 * registry version over three fields — its name split on hyphens, its description, and the
 * headings of its body once the body has been read — and a query is scored by BM25 (MiniSearch's
 * BM25+), with case folding, English stop words removed and words reduced to their Porter stem,
 * so "merging PDFs" meets "merge PDF files".
 *
 * Headings need the body, and discovery never reads bodies: a skill's headings enter its index
 * entry when its body is first read through the registry (`DocumentSkillRegistry.content`), so
 * discovery stays as fast as before and a skill that has been used ranks on its headings too.
 *
 * `strongMatches` decides which ranked skills are clear enough winners to show in full: the top
 * k (k ≤ the limit) whose last score stands a margin above the next one.
 *
 * Pure: no I/O.
 */
import MiniSearch from 'minisearch';
import { stemmer } from 'stemmer';
import type { SkillEntry } from './registry.js';

/** Words too common in requests to say anything about which skill is meant. */
const STOP_WORDS = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below between both but by can could did do does doing done down during each ' +
    'either else etc even ever every few for from further get gets getting got had has have having he her here hers herself him himself his how however i if in into is it its itself ' +
    'just let lets like may me might mine more most much must my myself need needs no nor not now of off on once one only or other our ours ourselves out over own per please ' +
    'quite rather really same shall she should so some something such than thank thanks that the their theirs them themselves then there these they this those though through to ' +
    'too under until up upon us use used uses using very via want wants was we were what when where whether which while who whom whose why will with within without would ' +
    'yes yet you your yours yourself yourselves hey hi ok okay pls'
  ).split(' '),
);

const stems = new Map<string, string>();

/** A word's stem (cached: the vocabulary is far smaller than the text). */
function stem(word: string): string {
  let found = stems.get(word);
  if (found === undefined) {
    found = stemmer(word);
    if (stems.size < 50_000) stems.set(word, found);
  }
  return found;
}

/**
 * The terms relevance is computed on: words (runs of letters and digits, so hyphenated names
 * split), case-folded, stop words removed, stemmed.
 */
export function relevanceTerms(text: string): string[] {
  const out: string[] = [];
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (STOP_WORDS.has(word) || (word.length === 1 && !/\d/.test(word))) continue;
    out.push(stem(word));
  }
  return out;
}

/** The text of a markdown body's headings (ATX `#` lines outside fenced code), one per line. */
export function bodyHeadings(body: string): string {
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of body.split('\n')) {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker) {
      if (fence === undefined) fence = marker[0];
      else if (marker[0] === fence) fence = undefined;
      continue;
    }
    if (fence !== undefined) continue;
    const heading = /^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$/.exec(line)?.[1];
    if (heading) out.push(heading);
  }
  return out.join('\n');
}

/** One skill's relevance to a query. */
export interface RelevanceScore {
  name: string;
  /** The BM25 score (0 when nothing matched). */
  score: number;
  /** The query terms (stems) the skill matched. */
  terms: string[];
}

/** Field weights: a word of the name says more than a word of the description. */
export const RELEVANCE_BOOST = { name: 3, description: 1, headings: 0.5 } as const;

/** How much a term of an earlier turn weighs against one of the latest message. */
export const RECENT_TURN_WEIGHT = 0.4;

interface IndexedSkill {
  id: number;
  name: string;
  description: string;
  headings: string;
}

/** A BM25 index over skills' names, descriptions and (once read) body headings. */
export class RelevanceIndex {
  readonly #search: MiniSearch<IndexedSkill>;
  readonly #ids = new Map<string, IndexedSkill>();
  readonly #names: string[] = [];

  constructor(entries: readonly SkillEntry[], headings?: (name: string) => string | undefined) {
    this.#search = new MiniSearch<IndexedSkill>({
      fields: ['name', 'description', 'headings'],
      tokenize: (text) => relevanceTerms(text),
      processTerm: (term) => term,
      searchOptions: { boost: { ...RELEVANCE_BOOST }, prefix: false, fuzzy: false },
    });
    const docs = entries.map((entry, id) => {
      const doc: IndexedSkill = { id, name: entry.name, description: entry.description, headings: headings?.(entry.name) ?? '' };
      this.#ids.set(entry.name, doc);
      this.#names.push(entry.name);
      return doc;
    });
    this.#search.addAll(docs);
  }

  get size(): number {
    return this.#names.length;
  }

  /** Adds a skill's body headings to its entry (when its body has been read). */
  setHeadings(name: string, headings: string): void {
    const doc = this.#ids.get(name);
    if (!doc || doc.headings === headings) return;
    const next = { ...doc, headings };
    this.#search.replace(next);
    this.#ids.set(name, next);
  }

  /**
   * Scores every skill that shares a term with the query, best first (ties by name). `recent`
   * holds earlier turns of the conversation, whose terms count for less than the latest's.
   */
  rank(query: string, recent: readonly string[] = []): RelevanceScore[] {
    const latest = relevanceTerms(query);
    const seen = new Set(latest);
    const earlier: string[] = [];
    for (const turn of recent) for (const term of relevanceTerms(turn)) if (!seen.has(term)) (seen.add(term), earlier.push(term));
    if (!seen.size) return [];
    const terms = [...new Set(latest), ...earlier];
    const cut = new Set(latest).size;
    const results = this.#search.search(terms.join(' '), {
      tokenize: (text) => text.split(' '),
      processTerm: (term) => term,
      boostTerm: (_term, i) => (i < cut ? 1 : RECENT_TURN_WEIGHT),
    });
    return results
      .map((result) => ({ name: this.#names[result.id as number]!, score: result.score, terms: result.terms }))
      .sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}

/** When a ranked skill counts as a strong match (shown in full). */
export interface MarginOptions {
  /** The last skill shown must score at least this many times the next one (default 1.5). */
  margin?: number;
  /** At most this many strong matches (default 3). */
  max?: number;
  /** Skills scoring below this share of the best score are never strong (default 0.5). */
  floor?: number;
}

export const DEFAULT_MARGIN = 1.5;

/**
 * The strong matches among ranked scores: the top k (1 ≤ k ≤ max) such that the k-th score is at
 * least `margin` times the (k+1)-th and at least `floor` times the best; the smallest such k.
 * None when no such gap exists: the ranking is then only an order for the catalog.
 */
export function strongMatches(ranked: readonly RelevanceScore[], options: MarginOptions = {}): RelevanceScore[] {
  const margin = options.margin ?? DEFAULT_MARGIN;
  const max = options.max ?? 3;
  const floor = options.floor ?? 0.5;
  const best = ranked[0]?.score ?? 0;
  if (!(best > 0)) return [];
  for (let k = 1; k <= Math.min(max, ranked.length); k++) {
    const score = ranked[k - 1]!.score;
    if (score < floor * best) break;
    const next = ranked[k]?.score ?? 0;
    if (score >= margin * next) return ranked.slice(0, k);
  }
  return [];
}
