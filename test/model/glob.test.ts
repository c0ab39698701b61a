/**
 * The wildcards of allowed-tools entries: a tool name's `*`, a script pattern's `**`, `*` and `?`.
 * A skill writes the pattern and a model writes the script path, so a match must never take
 * exponential time, whatever either holds.
 */
import { describe, expect, it } from 'vitest';
import { globMatcher } from '../../src/model/glob.js';

describe('globMatcher', () => {
  it.each([
    ['mcp__linear__*', 'mcp__linear__create_issue', true],
    ['mcp__linear__*', 'mcp__github__create_issue', false],
    ['*', '', true],
    ['read_*_file', 'read__file', true],
    ['read_*_file', 'read_a/b_file', true],
    ['a.b', 'axb', false],
    ['git(log)', 'git(log)', true],
    ['[ab]+', 'a', false],
    ['[ab]+', '[ab]+', true],
  ])('tool name %s against %s: %s', (glob, text, expected) => {
    expect(globMatcher(glob, 'name')(text)).toBe(expected);
  });

  it.each([
    ['scripts/*.sh', 'scripts/hello.sh', true],
    ['./scripts/*.sh', 'scripts/hello.sh', true],
    ['scripts/*.sh', 'scripts/sub/hello.sh', false],
    ['scripts/**.sh', 'scripts/sub/hello.sh', true],
    ['scripts/**/*.sh', 'scripts/sub/deeper/hello.sh', true],
    ['scripts/?.sh', 'scripts/a.sh', true],
    ['scripts/?.sh', 'scripts/ab.sh', false],
    ['scripts/?.sh', 'scripts//.sh', false],
    ['scripts/?.sh', 'scripts/é.sh', true],
    ['scripts/(a|b).sh', 'scripts/a.sh', false],
    ['scripts/(a|b).sh', 'scripts/(a|b).sh', true],
  ])('script pattern %s against %s: %s', (glob, text, expected) => {
    expect(globMatcher(glob, 'path')(text)).toBe(expected);
  });

  // Built as a backtracking regular expression, each of these takes longer than anyone waits (the
  // first, a minute for ten stars on a 41-character name); walked as a set of positions, an instant.
  it('answers patterns made to backtrack at once, for tool names and for a script path a model sends', () => {
    expect(globMatcher(`${'*a'.repeat(30)}*b`, 'name')(`${'a'.repeat(60)}c`)).toBe(false);
    expect(globMatcher(`${'**a'.repeat(30)}**b`, 'path')(`${'a'.repeat(60)}c`)).toBe(false);
    expect(globMatcher('scripts/**/*.py', 'path')(`scripts/${'a/'.repeat(50_000)}x.sh`)).toBe(false);
    expect(globMatcher('scripts/**/*.py', 'path')(`scripts/${'a/'.repeat(50_000)}x.py`)).toBe(true);
  });
});
