/**
 * Wildcard patterns, matched in time proportional to the pattern's length times the text's,
 * whatever the pattern: a skill writes the pattern and a model writes the text (a script's path),
 * so neither may make a match take exponential time, as a backtracking regular expression built
 * from `a*a*a*…b` does.
 *
 * Pure: no I/O.
 */

type Token = { kind: 'char'; char: string } | { kind: 'one' } | { kind: 'any'; crossesSeparator: boolean };

/**
 * A matcher for `glob`, read one of two ways:
 * - `name` (tool names): `*` matches any run of characters, every other character itself;
 * - `path` (script paths): `**` matches any run of characters, `*` a run without `/`, `?` one
 *   character other than `/`; a leading `./` is dropped.
 */
export function globMatcher(glob: string, kind: 'name' | 'path'): (text: string) => boolean {
  const tokens = kind === 'name' ? nameTokens(glob) : pathTokens(glob.replace(/^(\.\/)+/, ''));
  return (text) => matchTokens(tokens, text);
}

function nameTokens(glob: string): Token[] {
  return [...glob].map((char): Token => (char === '*' ? { kind: 'any', crossesSeparator: true } : { kind: 'char', char }));
}

function pathTokens(glob: string): Token[] {
  const tokens: Token[] = [];
  const chars = [...glob];
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i]!;
    if (char === '*' && chars[i + 1] === '*') {
      tokens.push({ kind: 'any', crossesSeparator: true });
      i++;
    } else if (char === '*') tokens.push({ kind: 'any', crossesSeparator: false });
    else if (char === '?') tokens.push({ kind: 'one' });
    else tokens.push({ kind: 'char', char });
  }
  return tokens;
}

/** Runs the pattern as a set of positions in it, one step per character of `text`. */
function matchTokens(tokens: readonly Token[], text: string): boolean {
  let at = new Uint8Array(tokens.length + 1);
  at[0] = 1;
  close(tokens, at);
  for (const char of text) {
    const next = new Uint8Array(tokens.length + 1);
    let any = false;
    for (let i = 0; i < tokens.length; i++) {
      if (!at[i]) continue;
      const token = tokens[i]!;
      // A wildcard stays where it is after matching the character; anything else moves past it.
      const to = token.kind === 'any' ? (token.crossesSeparator || char !== '/' ? i : -1) : (token.kind === 'one' ? char !== '/' : token.char === char) ? i + 1 : -1;
      if (to < 0) continue;
      next[to] = 1;
      any = true;
    }
    if (!any) return false;
    close(tokens, next);
    at = next;
  }
  return at[tokens.length] === 1;
}

/** Adds the positions reachable by letting wildcards match nothing. */
function close(tokens: readonly Token[], at: Uint8Array): void {
  for (let i = 0; i < tokens.length; i++) if (at[i] && tokens[i]!.kind === 'any') at[i + 1] = 1;
}
