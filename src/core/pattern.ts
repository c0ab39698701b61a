/**
 * The one signal-pattern semantics of skillstate, used by routes, `signalPatterns` and
 * subscriptions alike:
 *
 * - an exact segment matches that segment only;
 * - `*` matches exactly one segment;
 * - `**` matches zero or more segments, anywhere in the pattern (`audit.**` matches `audit`
 *   and `audit.a.b`; `user.**.created` matches `user.created`).
 *
 * Pure: no I/O, no XState.
 */
import { RouteError } from './errors.js';
import { cachedSignalTypeSegments, MAX_SIGNAL_TYPE_LENGTH } from './signal.js';

export type SegmentKind = 'exact' | 'star' | 'globstar';

export interface PatternSegment {
  kind: SegmentKind;
  /** The literal text, for exact segments. */
  value: string;
}

export interface CompiledPattern {
  source: string;
  segments: PatternSegment[];
  /** True when the pattern has no wildcard, so it matches one type only. */
  exact: boolean;
  /**
   * Orders patterns by specificity: a larger key is more specific. Compared position by
   * position, an exact segment beats `*`, which beats the pattern's end, which beats `**`.
   */
  specificity: string;
}

const SEGMENT = /^[A-Za-z0-9_-]+$/;

const SPECIFICITY_DIGIT: Record<SegmentKind, string> = { exact: '3', star: '2', globstar: '0' };
const END_DIGIT = '1';

/** Why `pattern` is not a valid pattern, or undefined when it is. */
export function patternProblem(pattern: unknown): string | undefined {
  if (typeof pattern !== 'string') return `a pattern must be a string, got ${typeof pattern}`;
  if (pattern.length === 0) return 'a pattern must not be empty';
  if (pattern.length > MAX_SIGNAL_TYPE_LENGTH) {
    return `pattern is ${pattern.length} characters long; the limit is ${MAX_SIGNAL_TYPE_LENGTH}`;
  }
  const parts = pattern.split('.');
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part === '') return `pattern '${pattern}' has an empty segment at position ${i + 1}`;
    if (part === '**') {
      if (parts[i - 1] === '**') return `pattern '${pattern}' has '**.**'; one '**' already matches any number of segments`;
      continue;
    }
    if (part === '*') continue;
    if (part.includes('*')) {
      return `pattern '${pattern}' has '${part}': '*' and '**' must be whole segments`;
    }
    if (!SEGMENT.test(part)) {
      return `pattern '${pattern}' has an invalid segment '${part}' (allowed: ASCII letters, digits, '_', '-', '*' and '**')`;
    }
  }
  return undefined;
}

/** Compiles a pattern, throwing a `RouteError` (code `invalid_pattern`) that names it if invalid. */
export function compilePattern(pattern: string): CompiledPattern {
  const problem = patternProblem(pattern);
  if (problem) throw new RouteError({ code: 'invalid_pattern', message: problem, subject: String(pattern) });
  return compileValid(pattern);
}

function compileValid(pattern: string): CompiledPattern {
  const segments: PatternSegment[] = [];
  let specificity = '';
  let exact = true;
  for (const part of pattern.split('.')) {
    const kind: SegmentKind = part === '**' ? 'globstar' : part === '*' ? 'star' : 'exact';
    if (kind !== 'exact') exact = false;
    segments.push({ kind, value: part });
    specificity += SPECIFICITY_DIGIT[kind];
  }
  return { source: pattern, segments, exact, specificity: specificity + END_DIGIT };
}

/**
 * Matches type segments against pattern segments. `**` behaves like `*` in a glob over
 * characters, `*` like `?`: the classic wildcard walk with one backtracking point, which is
 * linear in practice and never exponential, however many `**` the pattern has.
 */
export function matchSegments(type: readonly string[], pattern: readonly PatternSegment[]): boolean {
  let ti = 0;
  let pi = 0;
  let globstarAt = -1;
  let resumeAt = 0;
  while (ti < type.length) {
    const segment = pattern[pi];
    if (segment !== undefined) {
      if (segment.kind === 'globstar') {
        globstarAt = pi++;
        resumeAt = ti;
        continue;
      }
      if (segment.kind === 'star' || segment.value === type[ti]) {
        ti++;
        pi++;
        continue;
      }
    }
    if (globstarAt < 0) return false;
    pi = globstarAt + 1;
    ti = ++resumeAt;
  }
  while (pi < pattern.length && pattern[pi]!.kind === 'globstar') pi++;
  return pi === pattern.length;
}

const CACHE_LIMIT = 10_000;
const compiledCache = new Map<string, CompiledPattern | null>();

/** Compiles with a bounded cache; returns null for an invalid pattern instead of throwing. */
export function cachedPattern(pattern: string): CompiledPattern | null {
  let compiled = compiledCache.get(pattern);
  if (compiled === undefined) {
    compiled = patternProblem(pattern) === undefined ? compileValid(pattern) : null;
    if (compiledCache.size >= CACHE_LIMIT) compiledCache.clear();
    compiledCache.set(pattern, compiled);
  }
  return compiled;
}

/**
 * True when the signal type `type` matches `pattern`. An invalid type or pattern never
 * matches (returns false, never throws).
 *
 * @example matches('user.profile.updated', 'user.**') // true
 */
export function matches(type: string, pattern: string): boolean {
  if (typeof pattern !== 'string') return false;
  const compiled = cachedPattern(pattern);
  if (compiled === null) return false;
  if (compiled.exact) return type === pattern;
  const segments = cachedSignalTypeSegments(type);
  return segments !== undefined && matchSegments(segments, compiled.segments);
}

/** True when `type` matches at least one of `patterns`. */
export function matchesAny(type: string, patterns: readonly string[]): boolean {
  for (const pattern of patterns) if (matches(type, pattern)) return true;
  return false;
}
