/**
 * Triggers: the keywords, verbs and regular-expression patterns that make a skill's
 * full documentation relevant to a query. This file holds what a trigger set is, how words are
 * cut out of text (the word boundaries every keyword and verb match on), and how patterns are
 * vetted when a skill loads so that none can hang the process:
 *
 * - a pattern longer than 256 characters, one that does not compile, or one with a nested
 *   quantifier (`(a+)+`, the classic catastrophic-backtracking shape) is refused;
 * - every accepted pattern runs on V8's linear-time regular-expression engine (the `l` flag,
 *   enabled once with `--enable-experimental-regexp-engine`), so even polynomial shapes such as
 *   `a*a*a*c` finish in time proportional to the query; patterns that engine cannot run
 *   (backreferences, lookaround) are refused;
 * - where that engine is unavailable, the backtracking engine is used with stricter rules
 *   (no quantified alternation, at most two unbounded quantifiers) and a shorter query.
 *
 * Matching is case-insensitive: patterns are lower-cased outside their escapes and run on the
 * lower-cased query. Pure apart from switching on the V8 flag; no I/O.
 */
import { setFlagsFromString } from 'node:v8';

/** What a manifest's `triggers` field holds. */
export interface TriggerSpec {
  keywords: string[];
  verbs: string[];
  patterns: string[];
}

/** A vetted pattern, ready to run. */
export interface TriggerPattern {
  source: string;
  regex: RegExp;
  /** A lower-case literal every match contains, to skip the regex when the query lacks it. */
  literal: string | undefined;
  /** Runs on the lower-cased query (linear engine) or on the original with the `i` flag. */
  lowerCase: boolean;
}

export const MAX_PATTERN_LENGTH = 256;

export type RegexEngine = 'linear' | 'backtracking';

let linearAvailable: boolean | undefined;

/** Whether V8's linear-time engine can be used (switching its flag on the first time). */
export function linearEngineAvailable(): boolean {
  if (linearAvailable !== undefined) return linearAvailable;
  const probe = () => {
    try {
      new RegExp('a', 'l');
      return true;
    } catch {
      return false;
    }
  };
  if (!probe()) {
    try {
      setFlagsFromString('--enable-experimental-regexp-engine');
    } catch {
      // Flags cannot be changed in this process; the backtracking rules apply.
    }
  }
  linearAvailable = probe();
  return linearAvailable;
}

/** Lower-case words of `text`: runs of letters and digits, so matching respects word boundaries. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** A keyword or verb that is not plain words (`c++`, `.net`) and needs a literal search instead. */
export function isSymbolic(phrase: string): boolean {
  return /[^\p{L}\p{N}\s'_.-]/u.test(phrase);
}

/** A literal search for a symbolic keyword, bounded by non-word characters on both sides. */
export function symbolicRegex(phrase: string): RegExp {
  const escaped = phrase.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![\\p{L}\\p{N}_])${escaped}(?![\\p{L}\\p{N}_])`, 'u');
}

interface Scan {
  nested: boolean;
  unbounded: number;
  quantifiedAlternation: boolean;
  literal: string;
}

/** Walks a pattern's source: finds nested quantifiers and the longest plain literal run. */
function scanPattern(source: string): Scan {
  const groups: { quantified: boolean; alternation: boolean }[] = [];
  let nested = false;
  let unbounded = 0;
  let quantifiedAlternation = false;
  let best = '';
  let run = '';
  let topAlternation = false;
  const endRun = (dropLast: boolean) => {
    const value = dropLast ? run.slice(0, -1) : run;
    if (groups.length === 0 && value.length > best.length) best = value;
    run = '';
  };
  for (let i = 0; i < source.length; i++) {
    const ch = source[i]!;
    if (ch === '\\') {
      endRun(false);
      i++;
      continue;
    }
    if (ch === '[') {
      endRun(false);
      for (i++; i < source.length && source[i] !== ']'; i++) if (source[i] === '\\') i++;
      continue;
    }
    if (ch === '(') {
      endRun(false);
      groups.push({ quantified: false, alternation: false });
      continue;
    }
    if (ch === ')') {
      endRun(false);
      const group = groups.pop();
      const next = source[i + 1];
      const quantifier = next === '*' || next === '+' || next === '?' || next === '{';
      const isUnbounded = next === '*' || next === '+' || (next === '{' && /^\{\d*,\}/.test(source.slice(i + 1)));
      if (group && quantifier && group.quantified) nested = true;
      if (group && isUnbounded && group.alternation) quantifiedAlternation = true;
      if (group && (group.quantified || quantifier) && groups.length) groups[groups.length - 1]!.quantified = true;
      continue;
    }
    if (ch === '|') {
      endRun(false);
      if (groups.length) groups[groups.length - 1]!.alternation = true;
      else topAlternation = true;
      continue;
    }
    if (ch === '*' || ch === '+' || ch === '?' || ch === '{') {
      if (ch === '*' || ch === '+' || (ch === '{' && /^\{\d*,\}/.test(source.slice(i)))) unbounded++;
      if (groups.length) groups[groups.length - 1]!.quantified = true;
      endRun(true);
      if (ch === '{') while (i < source.length && source[i] !== '}') i++;
      continue;
    }
    if (ch === '^' || ch === '$' || ch === '.') {
      endRun(false);
      continue;
    }
    run += ch;
  }
  endRun(false);
  return { nested, unbounded, quantifiedAlternation, literal: topAlternation ? '' : best.toLowerCase() };
}

/** Lower-cases a pattern's literal letters, leaving escapes (`\W`, `\p{Lu}`, `\u00C9`) intact. */
function lowerCasePattern(source: string): string {
  let out = '';
  for (let i = 0; i < source.length; i++) {
    const ch = source[i]!;
    if (ch !== '\\') {
      out += ch.toLowerCase();
      continue;
    }
    const rest = source.slice(i);
    const escape = /^\\(?:[pPu]\{[^}]*\}|u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|c[A-Za-z]|k<[^>]*>|.)/su.exec(rest)?.[0] ?? '\\';
    out += escape;
    i += escape.length - 1;
  }
  return out;
}

/**
 * Vets and compiles a trigger pattern. Returns the compiled pattern, or the reason it is refused
 * (phrased to follow `Trigger pattern '<source>' `).
 */
export function compileTriggerPattern(
  source: string,
  engine: RegexEngine = linearEngineAvailable() ? 'linear' : 'backtracking',
): { ok: true; pattern: TriggerPattern } | { ok: false; reason: string } {
  if (typeof source !== 'string' || source.length === 0) return { ok: false, reason: 'must be a non-empty string' };
  if (source.length > MAX_PATTERN_LENGTH) return { ok: false, reason: `is longer than ${MAX_PATTERN_LENGTH} characters` };
  try {
    new RegExp(source);
  } catch (error) {
    return { ok: false, reason: `is not a valid regular expression: ${(error as Error).message}` };
  }
  const scan = scanPattern(source);
  if (scan.nested) return { ok: false, reason: 'has a nested quantifier (like (a+)+), which can take exponential time' };
  if (engine === 'linear') {
    try {
      const regex = new RegExp(lowerCasePattern(source), 'l');
      return { ok: true, pattern: { source, regex, literal: scan.literal || undefined, lowerCase: true } };
    } catch {
      return { ok: false, reason: 'uses backreferences or lookaround, which cannot run in linear time' };
    }
  }
  if (scan.quantifiedAlternation) return { ok: false, reason: 'repeats an alternation without bound, which can take exponential time' };
  if (scan.unbounded > 2) return { ok: false, reason: 'has more than two unbounded quantifiers, which can take polynomial time' };
  return { ok: true, pattern: { source, regex: new RegExp(source, 'iu'), literal: scan.literal || undefined, lowerCase: false } };
}

/** Runs a vetted pattern on a query (already bounded in length); returns the matched text. */
export function runTriggerPattern(pattern: TriggerPattern, query: string, lowerQuery: string): string | undefined {
  const subject = pattern.lowerCase ? lowerQuery : query;
  if (pattern.literal !== undefined && !lowerQuery.includes(pattern.literal)) return undefined;
  pattern.regex.lastIndex = 0;
  return pattern.regex.exec(subject)?.[0];
}
