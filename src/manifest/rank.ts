/**
 * Relevance ranking of skills against the conversation, for skills that declare no triggers
 * (most published skills have only a name and a description). Each skill is indexed once per
 * registry version over three fields — its name split on hyphens, its description, and the
 * headings of its body once the body has been read — and a query is scored by BM25F (BM25 with
 * per-field weights), with case folding, English stop words removed and words reduced to their
 * Porter stem (the `stemmer` package), so "merging PDFs" meets "merge PDF files".
 *
 * The scoring is written here rather than taken from a search library: MiniSearch answered a
 * query over 1,000 skills in about 1 ms and wink-bm25-text-search in about 0.35 ms (its index
 * also took 400 ms to build and cannot take a document once built, which headings need), against
 * a 0.2 ms target for the whole disclosure decision.
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
import { stemmer } from 'stemmer';
import type { SkillEntry } from './skill-entry.js';

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

/** Each word seen so far → its term, or '' for a word that is left out (the vocabulary is small). */
const termCache = new Map<string, string>();

function termOf(word: string): string {
  let term = termCache.get(word);
  if (term === undefined) {
    term = STOP_WORDS.has(word) || (word.length === 1 && !/\d/.test(word)) ? '' : stemmer(word);
    if (termCache.size < 100_000) termCache.set(word, term);
  }
  return term;
}

const ASCII = /^[\x00-\x7f]*$/;

/**
 * The terms relevance is computed on: words (runs of letters and digits, so hyphenated names
 * split), case-folded, stop words removed, stemmed.
 */
export function relevanceTerms(text: string): string[] {
  const lower = text.toLowerCase();
  const words = ASCII.test(lower) ? lower.match(/[a-z0-9]+/g) : lower.match(/[\p{L}\p{N}]+/gu);
  const out: string[] = [];
  for (const word of words ?? []) {
    const term = termOf(word);
    if (term) out.push(term);
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
    const heading = headingText(line);
    if (heading) out.push(heading);
  }
  return out.join('\n');
}

const HEADING_START = /^\s{0,3}#{1,6}\s+/;

/**
 * An ATX heading's text: after the `#`s and the space, without closing `#`s and trailing space.
 * Trimmed by walking back from the end: a regular expression with a lazy text and optional trailing
 * space backtracks over every space of a long line, for minutes on a hostile body.
 */
function headingText(line: string): string | undefined {
  const start = HEADING_START.exec(line);
  if (!start) return undefined;
  let text = line.slice(start[0].length).trimEnd();
  let end = text.length;
  while (end > 0 && text[end - 1] === '#') end--;
  text = text.slice(0, end).trimEnd();
  // A line break other than `\n` inside the text does not make a heading.
  return text && !/[\r\u2028\u2029]/.test(text) ? text : undefined;
}

/** One skill's relevance to a query. */
export interface RelevanceScore {
  name: string;
  /** The BM25 score (above 0: only skills sharing a term with the query are scored). */
  score: number;
  /** The query terms (stems) the skill matched (frozen: skills that matched the same terms share it). */
  terms: readonly string[];
}

/** Field weights: a word of the name says more than a word of the description. */
export const RELEVANCE_BOOST = { name: 3, description: 1, headings: 0.5 } as const;

/** How much a term of an earlier turn weighs against one of the latest message. */
export const RECENT_TURN_WEIGHT = 0.4;

/** BM25's parameters: term-frequency saturation and length normalisation. */
const K1 = 1.2;
const B = 0.75;
const FIELDS = 3;
const BOOSTS = [RELEVANCE_BOOST.name, RELEVANCE_BOOST.description, RELEVANCE_BOOST.headings];

/** A term's postings, compiled for scoring: skill ids, and their occurrences per field (3 per id). */
interface Compiled {
  ids: Int32Array;
  counts: Float64Array;
}

/**
 * A BM25F index over skills' names, descriptions and (once read) body headings: per term, the
 * skills containing it and how often in each field. Scoring a query walks only the postings of
 * its terms, so its cost follows the skills that share a word with it, not the registry's size.
 */
export class RelevanceIndex {
  readonly #names: string[] = [];
  readonly #ids = new Map<string, number>();
  /** Each skill's place in name order, to break ties without comparing strings. */
  readonly #order: Int32Array;
  /** The inverse of `#order`: the skill at each place in name order. */
  readonly #byOrder: Int32Array;
  /** term → skill → occurrences per field (name, description, headings). */
  readonly #postings = new Map<string, Map<number, number[]>>();
  readonly #compiled = new Map<string, Compiled>();
  /** Per skill, per field: the number of terms. */
  readonly #lengths: Float64Array;
  readonly #totals = new Float64Array(FIELDS);
  /** Per skill, per field: boost / (1 − b + b · length / average length); recomputed after changes. */
  readonly #norms: Float64Array;
  #normsStale = true;
  /** Per skill: the heading terms indexed (to take them out when they change). */
  readonly #headingTerms: (string[] | undefined)[] = [];
  readonly #headingText: (string | undefined)[] = [];
  /** Scratch space for one query, reset after each. */
  readonly #scores: Float64Array;
  readonly #matched: Uint32Array;
  /** The ids a query scored (its first places), then the same ids best first. */
  readonly #touched: Int32Array;
  readonly #keys: Float64Array;

  constructor(entries: readonly SkillEntry[], headings?: (name: string) => string | undefined) {
    const count = entries.length;
    this.#lengths = new Float64Array(count * FIELDS);
    this.#norms = new Float64Array(count * FIELDS);
    this.#scores = new Float64Array(count);
    this.#matched = new Uint32Array(count);
    this.#touched = new Int32Array(count);
    this.#keys = new Float64Array(count);
    this.#order = new Int32Array(count);
    this.#byOrder = new Int32Array(count);
    entries.forEach((entry, id) => {
      this.#names.push(entry.name);
      this.#ids.set(entry.name, id);
      this.#add(id, 0, relevanceTerms(entry.name));
      this.#add(id, 1, relevanceTerms(entry.description));
      const text = headings?.(entry.name);
      if (text) this.setHeadings(entry.name, text);
    });
    [...this.#names.keys()]
      .sort((a, b) => (this.#names[a]! < this.#names[b]! ? -1 : this.#names[a]! > this.#names[b]! ? 1 : 0))
      .forEach((id, place) => {
        this.#order[id] = place;
        this.#byOrder[place] = id;
      });
  }

  get size(): number {
    return this.#names.length;
  }

  #add(id: number, field: number, terms: readonly string[], sign = 1): void {
    const tally = new Map<string, number>();
    for (const term of terms) tally.set(term, (tally.get(term) ?? 0) + 1);
    for (const [term, n] of tally) {
      let posting = this.#postings.get(term);
      if (!posting) this.#postings.set(term, (posting = new Map()));
      let counts = posting.get(id);
      if (!counts) posting.set(id, (counts = [0, 0, 0]));
      counts[field]! += sign * n;
      if (sign < 0 && counts[0] === 0 && counts[1] === 0 && counts[2] === 0) {
        posting.delete(id);
        if (!posting.size) this.#postings.delete(term);
      }
      if (this.#compiled.size) this.#compiled.delete(term);
    }
    this.#lengths[id * FIELDS + field]! += sign * terms.length;
    this.#totals[field]! += sign * terms.length;
    this.#normsStale = true;
  }

  /** Adds (or replaces) a skill's body headings, once its body has been read. */
  setHeadings(name: string, headings: string): void {
    const id = this.#ids.get(name);
    if (id === undefined || this.#headingText[id] === headings) return;
    const previous = this.#headingTerms[id];
    if (previous) this.#add(id, 2, previous, -1);
    const terms = relevanceTerms(headings);
    this.#add(id, 2, terms);
    this.#headingTerms[id] = terms;
    this.#headingText[id] = headings;
  }

  #compile(term: string): Compiled | undefined {
    let compiled = this.#compiled.get(term);
    if (compiled) return compiled;
    const posting = this.#postings.get(term);
    if (!posting) return undefined;
    const ids = new Int32Array(posting.size);
    const counts = new Float64Array(posting.size * FIELDS);
    let i = 0;
    for (const [id, fields] of posting) {
      ids[i] = id;
      counts.set(fields, i * FIELDS);
      i++;
    }
    this.#compiled.set(term, (compiled = { ids, counts }));
    return compiled;
  }

  #refreshNorms(): void {
    const count = this.#names.length;
    for (let field = 0; field < FIELDS; field++) {
      const average = this.#totals[field]! / count || 1;
      for (let id = 0; id < count; id++) {
        this.#norms[id * FIELDS + field] = BOOSTS[field]! / (1 - B + (B * this.#lengths[id * FIELDS + field]!) / average);
      }
    }
    this.#normsStale = false;
  }

  /**
   * The scored skills' ids, best first, ties in name order. Scores are packed with the name order
   * into one number each (a score to 1/65,536, the order in the low 17 bits) so that a native
   * numeric sort does the work; past 131,072 skills, or for a score of 2^20 or more, a comparison
   * sort takes over. Sorts the first `n` places of `#touched` in place; a query allocates nothing
   * for it.
   */
  #sortTouched(n: number): void {
    const scores = this.#scores;
    const order = this.#order;
    const touched = this.#touched;
    // Exact while scores stay below 2^20 − 1 (a query's BM25 score is in the tens or hundreds):
    // a key then stays below 2^53.
    let packable = this.#names.length < 1 << 17;
    for (let i = 0; packable && i < n; i++) packable = scores[touched[i]!]! < (1 << 20) - 1;
    if (!packable) {
      touched.subarray(0, n).sort((a, b) => scores[b]! - scores[a]! || order[a]! - order[b]!);
      return;
    }
    const keys = this.#keys.subarray(0, n);
    for (let i = 0; i < n; i++) {
      const id = touched[i]!;
      keys[i] = Math.round(scores[id]! * 65536) * 131072 + (131071 - order[id]!);
    }
    keys.sort();
    const byOrder = this.#byOrder;
    for (let i = 0; i < n; i++) touched[i] = byOrder[131071 - (keys[n - 1 - i]! % 131072)]!;
  }

  /**
   * Scores every skill that shares a term with the query, best first (ties by name). `recent`
   * holds earlier turns of the conversation, whose terms count for less than the latest's.
   */
  rank(query: string, recent: readonly string[] = []): RelevanceScore[] {
    const weights = new Map<string, number>();
    for (const term of relevanceTerms(query)) weights.set(term, 1);
    for (const turn of recent) for (const term of relevanceTerms(turn)) if (!weights.has(term)) weights.set(term, RECENT_TURN_WEIGHT);
    const count = this.#names.length;
    if (!weights.size || !count) return [];
    if (this.#normsStale) this.#refreshNorms();
    const scores = this.#scores;
    const matched = this.#matched;
    const norms = this.#norms;
    const touched = this.#touched;
    let n = 0;
    /** Terms past the 32 a bit mask holds, per skill (long queries only). */
    const overflow = new Map<number, string[]>();
    const terms: string[] = [];
    for (const [term, weight] of weights) {
      const posting = this.#compile(term);
      if (!posting) continue;
      const bit = terms.length;
      terms.push(term);
      const { ids, counts } = posting;
      const idf = Math.log(1 + (count - ids.length + 0.5) / (ids.length + 0.5));
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i]!;
        const at = id * FIELDS;
        // BM25F: each field's frequency, normalised by the field's length and weighted, then saturated once.
        const tf = counts[i * FIELDS]! * norms[at]! + counts[i * FIELDS + 1]! * norms[at + 1]! + counts[i * FIELDS + 2]! * norms[at + 2]!;
        if (!(tf > 0)) continue;
        if (scores[id] === 0) touched[n++] = id;
        scores[id]! += (weight * idf * tf * (K1 + 1)) / (tf + K1);
        if (bit < 32) matched[id]! |= 1 << bit;
        else {
          const list = overflow.get(id);
          if (list) list.push(term);
          else overflow.set(id, [term]);
        }
      }
    }
    this.#sortTouched(n);
    const ranked: RelevanceScore[] = new Array(n);
    const limit = Math.min(32, terms.length);
    // Skills that matched the same terms share one frozen list: a query of a few terms has a few
    // dozen combinations, while a large catalog has hundreds of skills sharing a word with it.
    const lists = new Map<number, readonly string[]>();
    for (let i = 0; i < n; i++) {
      const id = touched[i]!;
      const mask = matched[id]!;
      let found = lists.get(mask);
      if (!found) {
        const list: string[] = [];
        for (let bit = 0; bit < limit; bit++) if (mask & (1 << bit)) list.push(terms[bit]!);
        lists.set(mask, (found = Object.freeze(list)));
      }
      const more = overflow.get(id);
      ranked[i] = { name: this.#names[id]!, score: scores[id]!, terms: more ? Object.freeze(found.concat(more)) : found };
    }
    for (let i = 0; i < n; i++) {
      scores[touched[i]!] = 0;
      matched[touched[i]!] = 0;
    }
    return ranked;
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

/** How many times the next skill's score a strong match must reach, by default. */
export const DEFAULT_MARGIN = 1.5;

/**
 * The strong matches among ranked scores: the top k (1 ≤ k ≤ max) such that the k-th score is at
 * least `margin` times the (k+1)-th and at least `floor` times the best; the smallest such k. A
 * group of several also needs a (k+1)-th skill that matched at all. None when no such gap
 * exists: the ranking is then only an order for the catalog.
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
    // A group of several is clear only against a skill that also matched: when the query touches
    // just those skills, equally, nothing says which one is meant.
    if (k > 1 && next === 0) break;
    if (score >= margin * next) return ranked.slice(0, k);
  }
  return [];
}
