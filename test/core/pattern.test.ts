/**
 * The one matcher: `matches(type, pattern)`. It runs the shared case table, agrees with the
 * trie router and with an obviously correct reference on random inputs, and never throws.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRouter, matches, RouteError } from '../../src/index.js';
import { compilePattern, matchesAny, patternProblem } from '../../src/core/pattern.js';
import { PATTERN_CASES } from './pattern.cases.js';
import { thrownBy } from './support.js';

/**
 * The reference matcher: a direct recursive reading of the rules. `**` tries every number of
 * segments (exponential in the worst case, fine for small inputs); `*` takes exactly one; an
 * exact segment takes itself.
 */
function referenceMatch(type: readonly string[], pattern: readonly string[]): boolean {
  if (pattern.length === 0) return type.length === 0;
  const [head, ...rest] = pattern;
  if (head === '**') {
    for (let taken = 0; taken <= type.length; taken++) if (referenceMatch(type.slice(taken), rest)) return true;
    return false;
  }
  if (type.length === 0) return false;
  return (head === '*' || head === type[0]) && referenceMatch(type.slice(1), rest);
}

/** Pattern validity, stated independently: non-empty segments of [A-Za-z0-9_-], `*` or `**`, and no `**.**`. */
function referenceValidPattern(pattern: string): boolean {
  const parts = pattern.split('.');
  return (
    pattern.length > 0 &&
    pattern.length <= 2048 &&
    parts.every((part) => part === '*' || part === '**' || /^[A-Za-z0-9_-]+$/.test(part)) &&
    parts.every((part, i) => !(part === '**' && parts[i - 1] === '**'))
  );
}

const patternSegment = fc.constantFrom('a', 'b', 'c', '*', '**');
const randomPattern = fc.array(patternSegment, { minLength: 1, maxLength: 6 }).map((segments) => segments.join('.'));
const randomType = fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 7 }).map((segments) => segments.join('.'));

describe('matches(type, pattern): the shared case table', () => {
  it.each(PATTERN_CASES.map((c) => [c.pattern.length > 40 ? `${c.pattern.slice(0, 40)}…` : c.pattern, c.type.length > 40 ? `${c.type.slice(0, 40)}…` : c.type, c.expected, c.why, c]))(
    'pattern %s, type %s → %s (%s)',
    (_p, _t, expected, _why, c) => {
      expect(matches(c.type, c.pattern)).toBe(expected);
    },
  );

  it('marks as invalid exactly the patterns the table calls invalid', () => {
    for (const c of PATTERN_CASES) expect(patternProblem(c.pattern) !== undefined, c.pattern).toBe(c.invalidPattern === true);
  });
});

describe('matches(type, pattern): never throws, never matches garbage', () => {
  it.each([
    [null, '**'],
    [undefined, '**'],
    [42, '**'],
    [{ type: 'a' }, '**'],
    ['a', null],
    ['a', 42],
    ['a', ['a']],
    ['a', undefined],
  ])('matches(%j, %j) is false', (type, pattern) => {
    expect(matches(type as string, pattern as string)).toBe(false);
  });

  it('returns a boolean for any pair of strings (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (type, pattern) => {
        expect(typeof matches(type, pattern)).toBe('boolean');
      }),
    );
  });

  it('a valid type used as a pattern matches itself, and each segment may be replaced by `*` (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[A-Za-z0-9_-]{1,5}$/), { minLength: 1, maxLength: 8 }), fc.nat(), (segments, pick) => {
        const type = segments.join('.');
        expect(matches(type, type)).toBe(true);
        expect(matches(type, '**')).toBe(true);
        const starred = segments.map((segment, i) => (i === pick % segments.length ? '*' : segment)).join('.');
        expect(matches(type, starred)).toBe(true);
      }),
    );
  });
});

describe('matches(type, pattern) agrees with the router and with the reference matcher', () => {
  it('on random patterns over a small alphabet with `*` and `**`, and random types (property)', () => {
    fc.assert(
      fc.property(randomPattern, randomType, (pattern, type) => {
        const valid = referenceValidPattern(pattern);
        expect(patternProblem(pattern) === undefined).toBe(valid);
        const expected = valid && referenceMatch(type.split('.'), pattern.split('.'));
        expect(matches(type, pattern)).toBe(expected);
        if (!valid) {
          expect(() => createRouter([{ path: pattern, target: pattern }])).toThrow(RouteError);
          return;
        }
        const routed = createRouter([{ path: pattern, target: pattern }]).route(type);
        expect(routed.ok).toBe(expected);
        if (routed.ok) expect(routed.matches.map((m) => m.target)).toEqual([pattern]);
      }),
      { numRuns: 2000 },
    );
  });

  it('a router holding many random patterns returns exactly those the reference matches (property)', () => {
    fc.assert(
      fc.property(fc.array(randomPattern, { minLength: 1, maxLength: 12 }), randomType, (patterns, type) => {
        const valid = patterns.filter(referenceValidPattern);
        const router = createRouter(valid.map((path, i) => ({ path, target: i })));
        const routed = router.route(type);
        const expected = valid.map((path, i) => [path, i] as const).filter(([path]) => referenceMatch(type.split('.'), path.split('.')));
        const found = routed.ok ? routed.matches.map((m) => m.target).sort((x, y) => x - y) : [];
        expect(found).toEqual(expected.map(([, i]) => i));
        for (const path of valid) expect(matches(type, path)).toBe(referenceMatch(type.split('.'), path.split('.')));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('patternProblem and compilePattern', () => {
  it.each([
    ['', 'a pattern must not be empty'],
    ['a..b', "pattern 'a..b' has an empty segment at position 2"],
    ['**.**', "pattern '**.**' has '**.**'; one '**' already matches any number of segments"],
    ['a**', "pattern 'a**' has 'a**': '*' and '**' must be whole segments"],
    ['a*b', "pattern 'a*b' has 'a*b': '*' and '**' must be whole segments"],
    ['a.b c', "pattern 'a.b c' has an invalid segment 'b c' (allowed: ASCII letters, digits, '_', '-', '*' and '**')"],
  ])('explains why %j is invalid', (pattern, problem) => {
    expect(patternProblem(pattern)).toBe(problem);
  });

  it.each([[5], [null], [undefined], [{}]])('refuses a non-string pattern (%j)', (pattern) => {
    expect(patternProblem(pattern)).toBe(`a pattern must be a string, got ${typeof pattern}`);
  });

  it('compiles a valid pattern into its segments', () => {
    expect(compilePattern('a.*.**').segments).toEqual([
      { kind: 'exact', value: 'a' },
      { kind: 'star', value: '*' },
      { kind: 'globstar', value: '**' },
    ]);
    expect(compilePattern('a.b').exact).toBe(true);
    expect(compilePattern('a.*').exact).toBe(false);
  });

  it('throws a RouteError with code invalid_pattern naming an invalid pattern', () => {
    const error = thrownBy(() => compilePattern('a..b'), RouteError, 'invalid_pattern');
    expect(error.subject).toBe('a..b');
    expect(error.message).toContain("'a..b'");
  });
});

describe('matchesAny', () => {
  it('is true when at least one pattern matches', () => {
    expect(matchesAny('user.created', ['billing.*', 'user.*'])).toBe(true);
    expect(matchesAny('user.created', ['billing.*', 'user'])).toBe(false);
    expect(matchesAny('user.created', [])).toBe(false);
    expect(matchesAny('user.created', ['a..b', '**'])).toBe(true);
  });
});
