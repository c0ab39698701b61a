/**
 * THE table of pattern cases. Every matcher skillstate has — `matches()` and the trie router —
 * runs this same table (pattern.test.ts, router.test.ts), so the two can never disagree.
 *
 * Semantics (as the README states them for `matches`): an exact segment matches itself only; `*`
 * matches exactly one segment; `**` matches zero or more segments, anywhere in the pattern. An
 * invalid pattern or an invalid type never matches, and the router refuses an invalid pattern
 * when it is added.
 */

export interface PatternCase {
  pattern: string;
  type: string;
  expected: boolean;
  /** Set when the pattern itself is invalid: `matches()` is false and `router.add()` refuses it. */
  invalidPattern?: true;
  /** Why the expectation holds. */
  why: string;
}

const hundred = Array.from({ length: 100 }, (_, i) => `s${i}`);
const T100 = hundred.join('.');
const T99 = hundred.slice(0, 99).join('.');
const A40 = Array.from({ length: 40 }, () => 'a').join('.');

export const PATTERN_CASES: readonly PatternCase[] = [
  // exact segments
  { pattern: 'a', type: 'a', expected: true, why: 'one exact segment matches itself' },
  { pattern: 'user.created', type: 'user.created', expected: true, why: 'exact segments match themselves' },
  { pattern: 'user.created', type: 'user.deleted', expected: false, why: 'a different last segment' },
  { pattern: 'user.created', type: 'user', expected: false, why: 'a pattern longer than the type' },
  { pattern: 'user', type: 'user.created', expected: false, why: 'an exact pattern does not match deeper types' },
  { pattern: 'User', type: 'user', expected: false, why: 'segments are case-sensitive' },
  { pattern: 'a-b_c.0', type: 'a-b_c.0', expected: true, why: "'-', '_' and digits are segment characters" },
  { pattern: 'ab', type: 'a', expected: false, why: 'segments compare whole, not by prefix' },

  // `*`: exactly one segment
  { pattern: '*', type: 'a', expected: true, why: '`*` matches one segment' },
  { pattern: '*', type: 'a.b', expected: false, why: '`*` matches exactly one segment, not two' },
  { pattern: 'calculator.*', type: 'calculator.add', expected: true, why: 'calculator.* matches calculator.add' },
  { pattern: 'calculator.*', type: 'calculator', expected: false, why: '`*` does not match zero segments' },
  { pattern: 'calculator.*', type: 'calculator.add.x', expected: false, why: '`*` does not match two segments' },
  { pattern: '*.created', type: 'user.created', expected: true, why: 'leading `*`' },
  { pattern: 'a.*.c', type: 'a.b.c', expected: true, why: 'middle `*`' },
  { pattern: 'a.*.c', type: 'a.c', expected: false, why: 'middle `*` needs a segment' },
  { pattern: '*.*', type: 'a.b', expected: true, why: 'two `*` match two segments' },
  { pattern: '*.*', type: 'a', expected: false, why: 'two `*` need two segments' },

  // `**` at the end
  { pattern: 'audit.**', type: 'audit', expected: true, why: 'trailing `**` matches zero segments' },
  { pattern: 'audit.**', type: 'audit.a', expected: true, why: 'trailing `**` matches one segment' },
  { pattern: 'audit.**', type: 'audit.a.b', expected: true, why: 'trailing `**` matches several segments' },
  { pattern: 'audit.**', type: 'auditing.a', expected: false, why: 'the exact prefix must still match whole' },
  { pattern: 'user.**', type: 'user.profile.updated', expected: true, why: 'user.** matches user.profile.updated' },
  // `**` at the start
  { pattern: '**', type: 'a', expected: true, why: 'a lone `**` matches any one-segment type' },
  { pattern: '**', type: 'a.b.c.d', expected: true, why: 'a lone `**` matches any type' },
  { pattern: '**.created', type: 'created', expected: true, why: 'leading `**` matches zero segments' },
  { pattern: '**.created', type: 'user.profile.created', expected: true, why: 'leading `**` matches several segments' },
  { pattern: '**.created', type: 'user.created.later', expected: false, why: 'the last exact segment must be last' },
  // `**` in the middle
  { pattern: 'user.**.created', type: 'user.created', expected: true, why: 'middle `**` matches zero segments' },
  { pattern: 'user.**.created', type: 'user.a.created', expected: true, why: 'middle `**` matches one segment' },
  { pattern: 'user.**.created', type: 'user.a.b.created', expected: true, why: 'middle `**` matches several segments' },
  { pattern: 'user.**.created', type: 'user.a.b', expected: false, why: 'the segment after `**` must be there' },
  { pattern: 'user.**.created', type: 'admin.created', expected: false, why: 'the segment before `**` must be there' },
  { pattern: 'a.**.b.**.c', type: 'a.b.c', expected: true, why: 'two middle `**` both match zero' },
  { pattern: 'a.**.b.**.c', type: 'a.x.b.y.z.c', expected: true, why: 'two middle `**` match one and two' },
  { pattern: 'a.**.b.**.c', type: 'a.c.b', expected: false, why: 'exact segments keep their order' },
  // several `**`
  { pattern: '**.a.**', type: 'a', expected: true, why: '`**.a.**` matches a type that is just `a`' },
  { pattern: '**.a.**', type: 'x.a.y.z', expected: true, why: '`**.a.**` matches `a` anywhere' },
  { pattern: '**.a.**', type: 'x.b.y', expected: false, why: '`**.a.**` needs an `a` segment' },
  { pattern: '**.a.**', type: 'xa.ay', expected: false, why: '`a` must be a whole segment' },
  { pattern: '**.a.**.a.**', type: 'a', expected: false, why: 'two `a` segments are needed' },
  { pattern: '**.a.**.a.**', type: 'a.a', expected: true, why: 'two adjacent `a` segments' },
  // `*` and `**` together
  { pattern: '*.**', type: 'a', expected: true, why: '`*.**` needs at least one segment' },
  { pattern: '*.**', type: 'a.b.c', expected: true, why: '`*.**` matches any depth from one' },
  { pattern: '**.*', type: 'a', expected: true, why: '`**.*` needs at least one segment' },
  { pattern: '*.**.*', type: 'a', expected: false, why: '`*.**.*` needs at least two segments' },
  { pattern: '*.**.*', type: 'a.b', expected: true, why: '`*.**.*` with `**` matching zero' },
  { pattern: '*.**.*', type: 'a.b.c.d', expected: true, why: '`*.**.*` with `**` matching two' },
  { pattern: 'a.*.**.z', type: 'a.z', expected: false, why: 'the `*` still needs its segment' },
  { pattern: 'a.*.**.z', type: 'a.b.z', expected: true, why: '`*` takes b, `**` takes nothing' },
  { pattern: 'a.**.*', type: 'a', expected: false, why: 'after `a`, `*` needs one segment' },
  { pattern: 'a.**.*', type: 'a.b.c', expected: true, why: '`**` takes b, `*` takes c' },

  // 100-segment types
  { pattern: T100, type: T100, expected: true, why: 'a 100-segment exact pattern matches its type' },
  { pattern: T99, type: T100, expected: false, why: 'a 99-segment exact pattern does not match 100 segments' },
  { pattern: '**', type: T100, expected: true, why: '`**` matches 100 segments' },
  { pattern: 's0.**', type: T100, expected: true, why: 'first segment then `**`' },
  { pattern: '**.s99', type: T100, expected: true, why: '`**` then the last segment' },
  { pattern: '**.s50.**', type: T100, expected: true, why: 'a middle segment found among 100' },
  { pattern: '**.s100.**', type: T100, expected: false, why: 'a segment that is not among them' },
  { pattern: Array.from({ length: 100 }, () => '*').join('.'), type: T100, expected: true, why: '100 `*` match 100 segments' },
  { pattern: Array.from({ length: 99 }, () => '*').join('.'), type: T100, expected: false, why: '99 `*` do not match 100 segments' },
  { pattern: '**.a.**.a.**.a.**.b', type: A40, expected: false, why: 'many `**` over 40 equal segments, with no `b`: no match (and no blow-up)' },
  { pattern: '**.a.**.a.**.a.**', type: A40, expected: true, why: 'many `**` over 40 equal segments' },

  // invalid patterns: never match, refused by the router
  { pattern: '', type: 'a', expected: false, invalidPattern: true, why: 'the empty pattern' },
  { pattern: 'a..b', type: 'a.b', expected: false, invalidPattern: true, why: 'an empty segment' },
  { pattern: '.a', type: 'a', expected: false, invalidPattern: true, why: 'a leading empty segment' },
  { pattern: 'a.', type: 'a', expected: false, invalidPattern: true, why: 'a trailing empty segment' },
  { pattern: '**.**', type: 'a', expected: false, invalidPattern: true, why: '`**.**` is redundant and refused' },
  { pattern: 'a.**.**.b', type: 'a.b', expected: false, invalidPattern: true, why: 'adjacent `**` in the middle' },
  { pattern: 'a**', type: 'a', expected: false, invalidPattern: true, why: '`**` inside a segment' },
  { pattern: '**a', type: 'a', expected: false, invalidPattern: true, why: '`**` inside a segment' },
  { pattern: 'a*b', type: 'a*b', expected: false, invalidPattern: true, why: '`*` inside a segment' },
  { pattern: '***', type: 'a', expected: false, invalidPattern: true, why: 'three stars' },
  { pattern: 'a b', type: 'a', expected: false, invalidPattern: true, why: 'a space' },
  { pattern: 'a.$', type: 'a.x', expected: false, invalidPattern: true, why: 'a character outside [A-Za-z0-9_-]' },
  { pattern: 'a/b', type: 'a.b', expected: false, invalidPattern: true, why: 'a slash' },
  { pattern: 'a'.repeat(2049), type: 'a'.repeat(2049), expected: false, invalidPattern: true, why: 'a pattern over the length limit' },

  // invalid types: never match, even `**`
  { pattern: '**', type: '', expected: false, why: 'the empty type' },
  { pattern: '**', type: 'a..b', expected: false, why: 'a type with an empty segment' },
  { pattern: '**', type: '.a', expected: false, why: 'a type with a leading dot' },
  { pattern: '**', type: 'a b', expected: false, why: 'a type with a space' },
  { pattern: '*', type: '*', expected: false, why: 'a wildcard is not a type' },
  { pattern: 'a.**', type: 'a.**', expected: false, why: 'a pattern is not a type' },
  { pattern: '**', type: 'a'.repeat(2049), expected: false, why: 'a type over the length limit' },
];
