/**
 * The fast front-matter reader agrees with the YAML parser: whatever it reads, it reads as
 * `yaml` does; whatever it is unsure of, it leaves to `yaml` (undefined).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { readSimpleFrontMatter } from '../../src/manifest/simple-yaml.js';

const viaYaml = (text: string) => {
  const doc = parseDocument(text, { uniqueKeys: true });
  return doc.errors.length ? 'error' : doc.toJS();
};

const word = fc.stringMatching(/^[a-z][a-z0-9_-]{0,8}$/);
/** Values meant to stress the edge: numbers, booleans, nulls, indicators, colons, hashes, quotes. */
const value = fc.oneof(
  fc.stringMatching(/^[A-Za-z][A-Za-z0-9 .,'"()/é技-]{0,30}$/),
  fc.constantFrom('1.0', '1.0.0', '2', '-3', '+4', '0x1F', '0o17', '.5', '1e3', '.inf', '.NaN', 'true', 'False', 'NULL', '~', 'null', 'yes', 'on'),
  fc.constantFrom('a: b', 'a #c', 'C#', 'x:', ':x', '-x', '[a]', '{a: 1}', '"q"', "'q'", '&a', '*a', '!t', '|', '>', '%x', '@x', '`x`', 'a\tb', 'a, b', 'a [b] {c}'),
);
const line = fc.oneof(
  fc.tuple(word, value).map(([k, v]) => `${k}: ${v}`),
  fc.tuple(word, fc.array(value, { maxLength: 3 })).map(([k, vs]) => `${k}: [${vs.join(', ')}]`),
  fc.tuple(word, fc.array(fc.tuple(word, value), { minLength: 1, maxLength: 3 }), fc.constantFrom(2, 4)).map(([k, entries, n]) => [`${k}:`, ...entries.map(([s, v]) => `${' '.repeat(n)}${s}: ${v}`)].join('\n')),
  fc.tuple(word, fc.array(value, { minLength: 1, maxLength: 3 })).map(([k, vs]) => [`${k}:`, ...vs.map((v) => `  - ${v}`)].join('\n')),
  fc.constantFrom('', '# comment', '  indented: x', 'key: |', '  continued text', 'k:', '__proto__: x', 'a: b\n  c: d'),
);

describe('readSimpleFrontMatter', () => {
  it('reads exactly what the YAML parser reads, or leaves the text to it', () => {
    let read = 0;
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 6 }), (lines) => {
        const text = `${lines.join('\n')}\n`;
        const fast = readSimpleFrontMatter(text);
        if (fast === undefined) return;
        read++;
        expect(fast).toEqual(viaYaml(text));
      }),
      { numRuns: 3000 },
    );
    // The comparison is not vacuous: a good share of the generated texts take the fast path.
    expect(read).toBeGreaterThan(50);
  });

  it('reads the usual front matter and leaves the rest', () => {
    const usual = 'name: pdf-tools\ndescription: Reads PDF files. Use it when the user sends a PDF.\nlicense: MIT\nmetadata:\n  author: someone\n  homepage: https://example.com/x\ntriggers:\n  keywords: [pdf, document]\nallowed-tools:\n  - Read\n  - Bash(git:*)\n';
    expect(readSimpleFrontMatter(usual)).toEqual(viaYaml(usual));
    for (const other of ['version: 1.0\n', 'description: "quoted"\n', 'a: 1\na: 2\n', 'd: x # note\n', '', 'scripts:\n  - name: a\n    path: a.sh\n', 'k:\n', 'description: >\n  folded\n']) {
      expect(readSimpleFrontMatter(other)).toBeUndefined();
    }
  });
});
