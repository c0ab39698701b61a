/**
 * What the Agent Skills reference validator's YAML loader refuses. skills-ref reads front matter
 * with strictyaml, whose reader (ruamel.yaml's) first refuses any character outside YAML's
 * printable set — control characters such as U+0000, U+0007 or ESC, DEL, C1 controls but NEL,
 * U+FFFE and U+FFFF — and which then loads a subset of YAML: it refuses flow collections (`[a, b]`,
 * `{a: b}`), anchors (`&a`), tags (`!str`), tabs anywhere but inside quotes, comments and
 * block-scalar text, an alias to nothing (`*a`, since no anchor can exist), and a key given twice.
 * `referenceYamlRefusal` finds the first such construct in a front matter and returns it with
 * the loader's error text, character for character (the reference prefixes it with `Invalid YAML
 * in frontmatter: `), so that strict validation says what the reference says and lenient loading
 * can warn that the reference refuses what it loaded.
 *
 * The positions are the reference's: the YAML it loads starts right after the opening `---`, so
 * its line numbers are the SKILL.md's, and columns count code points.
 *
 * Pure: no I/O.
 */
import { isMap, isScalar, isSeq, Lexer, parseDocument, type Node } from 'yaml';

/** The constructs the reference's YAML loader refuses. */
export type RefusedConstruct = 'a non-printable character' | 'flow style' | 'an anchor' | 'a tag' | 'an alias' | 'a tab' | 'a duplicate key';

/** The first construct of a front matter that the reference refuses, where it is, and the reference's words. */
export interface ReferenceYamlRefusal {
  construct: RefusedConstruct;
  /** SKILL.md line (1-based). */
  line: number;
  /** Column (1-based, in code points). */
  column: number;
  /** The loader's error as the reference prints it after `Invalid YAML in frontmatter: `. */
  message: string;
  /** For `a non-printable character`: which one, as `U+0007`. */
  character?: string;
}

/**
 * What ruamel.yaml's reader refuses before it reads any YAML (its `NON_PRINTABLE`): every code point
 * but tab, LF, CR, U+0020–U+007E, NEL (U+0085), U+00A0–U+D7FF, U+E000–U+FFFD and U+10000–U+10FFFF.
 */
export const NON_PRINTABLE = /[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u;

/** The name strictyaml gives a string it loads, printed in every position. */
const LABEL = '<unicode string>';
const BREAKS = '\0\r\n\x85\u2028\u2029';

/** Positions in the text the reference loads (`\n` + the front matter), in code points, as its marks print them. */
class Marks {
  readonly #points: string[];
  /** UTF-16 offset in the front matter to code-point index in the loaded text. */
  readonly #index: number[] = [];
  constructor(yaml: string) {
    this.#points = ['\n'];
    for (let i = 0; i < yaml.length; ) {
      const point = String.fromCodePoint(yaml.codePointAt(i)!);
      for (let j = 0; j < point.length; j++) this.#index[i + j] = this.#points.length;
      this.#points.push(point);
      i += point.length;
    }
    this.#index[yaml.length] = this.#points.length;
  }

  /** Line and column (0-based) of a front-matter offset. */
  position(offset: number): { line: number; column: number; pointer: number } {
    const pointer = this.#index[offset] ?? this.#points.length;
    let line = 0;
    let column = 0;
    for (let i = 0; i < pointer; i++) {
      if ('\n\x85\u2028\u2029'.includes(this.#points[i]!)) {
        line++;
        column = 0;
      } else column++;
    }
    return { line, column, pointer };
  }

  /** ruamel's `StringMark.__str__`: where, then the line with a caret (a long line is cut around it). */
  describe(offset: number): string {
    const { line, column, pointer } = this.position(offset);
    const points = this.#points;
    const at = (i: number) => (i < points.length ? points[i]! : '\0');
    let head = '';
    let start = pointer;
    while (start > 0 && !BREAKS.includes(at(start - 1))) {
      start--;
      if (pointer - start > 75 / 2 - 1) {
        head = ' ... ';
        start += 5;
        break;
      }
    }
    let tail = '';
    let end = pointer;
    while (end < points.length && !BREAKS.includes(at(end))) {
      end++;
      if (end - pointer > 75 / 2 - 1) {
        tail = ' ... ';
        end -= 5;
        break;
      }
    }
    const snippet = `    ${head}${points.slice(start, end).join('')}${tail}\n${' '.repeat(4 + pointer - start + head.length)}^ (line: ${line + 1})`;
    return `  in "${LABEL}", line ${line + 1}, column ${column + 1}:\n${snippet}`;
  }
}

/** ruamel's `MarkedYAMLError.__str__`: the context mark is left out when it is the problem's. */
function markedError(marks: Marks, context: string | undefined, contextAt: number | undefined, problem: string, problemAt: number): string {
  const lines: string[] = [];
  if (context !== undefined) lines.push(context);
  if (contextAt !== undefined) {
    const a = marks.position(contextAt);
    const b = marks.position(problemAt);
    if (a.line !== b.line || a.column !== b.column) lines.push(marks.describe(contextAt));
  }
  lines.push(problem, marks.describe(problemAt));
  return lines.join('\n');
}

/** Python's `repr` of a string, as `%r` prints it (single quotes unless the text holds one and no double quote). */
function pythonRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  const escaped = text.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
  return `${quote}${quote === "'" ? escaped.replace(/'/g, "\\'") : escaped}${quote}`;
}

const SURROUND = "(surround with ' and ' to make text appear literally)";

interface Found {
  construct: RefusedConstruct;
  offset: number;
  message: string;
  character?: string;
}

/**
 * The first character the reference's reader refuses, with the reader's error: the code point in
 * hex and its position, counted in code points from the start of the text the reference loads
 * (the line break after the opening `---` is position 0).
 */
function firstNonPrintable(yaml: string, marks: Marks): Found | undefined {
  const match = NON_PRINTABLE.exec(yaml);
  if (!match) return undefined;
  const point = match[0].codePointAt(0)!;
  const { pointer } = marks.position(match.index);
  return {
    construct: 'a non-printable character',
    offset: match.index,
    message: `unacceptable character #x${point.toString(16).padStart(4, '0')}: special characters are not allowed\n  in "${LABEL}", position ${pointer}`,
    character: `U+${point.toString(16).toUpperCase().padStart(4, '0')}`,
  };
}

/** The first flow collection, anchor, tag, alias or misplaced tab, in document order. */
function firstRefusedToken(yaml: string, marks: Marks): Found | undefined {
  let offset = 0;
  let blockHeader = false;
  let scalarNext = false;
  const tabIn = (token: string, from: number, allowed: (i: number) => boolean): Found | undefined => {
    for (let i = token.indexOf('\t'); i >= 0; i = token.indexOf('\t', i + 1)) {
      if (!allowed(i)) {
        return { construct: 'a tab', offset: from + i, message: markedError(marks, 'while scanning for the next token', undefined, "found character '\\t' that cannot start any token", from + i) };
      }
    }
    return undefined;
  };
  for (const token of new Lexer().lex(yaml)) {
    // The lexer's control characters (document, scalar and flow-end markers) are not source text.
    if (token.length === 1 && token < ' ' && token !== '\t' && token !== '\n') {
      if (token === '\x1f') scalarNext = true;
      continue;
    }
    const at = offset;
    offset += token.length;
    const first = token[0];
    let found: Found | undefined;
    if (scalarNext && blockHeader) {
      found = tabIn(token, at, blockTextTab(token));
      blockHeader = false;
    } else if (first === '[' || first === '{') {
      if (token.length === 1) {
        found = { construct: 'flow style', offset: at, message: markedError(marks, 'While scanning', at, `Found ugly disallowed JSONesque flow mapping ${SURROUND}`, at + 1) };
      }
    } else if (first === '&' && !scalarNext) {
      found = { construct: 'an anchor', offset: at, message: markedError(marks, 'While scanning', at, `Found confusing disallowed anchor token ${SURROUND}`, at + token.length) };
    } else if (first === '!' && !scalarNext) {
      found = { construct: 'a tag', offset: at, message: markedError(marks, 'While scanning', at + token.length, 'Found disallowed tag tokens (do not specify types in markup)', at) };
    } else if (first === '*' && !scalarNext) {
      found = { construct: 'an alias', offset: at, message: markedError(marks, undefined, undefined, `found undefined alias ${pythonRepr(token.slice(1))}`, at) };
    } else if (first === '"' || first === "'" || first === '#') {
      // Tabs inside quotes and comments are text.
    } else {
      if (first === '|' || first === '>') blockHeader = true;
      found = tabIn(token, at, () => false);
    }
    scalarNext = false;
    if (found) return found;
  }
  return undefined;
}

/**
 * Which tabs of a block scalar's text the reference reads as text: those past the block's
 * indentation (set by its first line that is not blank). A tab within it ends the scalar, and
 * the loader then cannot start a token with it.
 */
function blockTextTab(text: string): (i: number) => boolean {
  const firstLine = text.split('\n').find((line) => line.trim() !== '') ?? '';
  const indent = /^ */.exec(firstLine)![0].length;
  // Tabs are asked about in increasing order: the start of the current line is carried along
  // rather than searched back for, which took quadratic time on a long line of tabs.
  let lineStart = 0;
  let scanned = 0;
  return (i) => {
    for (; scanned < i; scanned++) if (text[scanned] === '\n') lineStart = scanned + 1;
    return i - lineStart >= indent || text.slice(lineStart, i).trim() !== '';
  };
}

/**
 * The first key given twice, in the order the reference builds its mappings: a pair's value is
 * built before its key is checked, so a duplicate inside a value comes first.
 */
function firstDuplicateKey(node: unknown, marks: Marks): Found | undefined {
  if (isSeq(node)) {
    for (const item of node.items) {
      const found = firstDuplicateKey(item, marks);
      if (found) return found;
    }
  }
  if (!isMap(node)) return undefined;
  const seen = new Set<string>();
  for (const pair of node.items) {
    const found = firstDuplicateKey(pair.value, marks);
    if (found) return found;
    if (!isScalar(pair.key)) continue;
    const key = pair.key as Node & { value: unknown; source?: string; range: [number, number, number] };
    const text = typeof key.value === 'string' ? key.value : (key.source ?? String(key.value));
    if (seen.has(text)) {
      const [start, end] = key.range;
      return { construct: 'a duplicate key', offset: start, message: markedError(marks, 'While parsing', start, `Duplicate key ${pythonRepr(text)} found`, end) };
    }
    seen.add(text);
  }
  return undefined;
}

/**
 * The first construct of `yaml` (a front matter, without its delimiters) that the reference
 * validator's YAML loader refuses, or undefined when it has none. YAML that is invalid for other
 * reasons is not judged here. `duplicates: false` leaves out keys given twice (loading reports those itself).
 */
export function referenceYamlRefusal(yaml: string, options: { duplicates?: boolean } = {}): ReferenceYamlRefusal | undefined {
  const marks = new Marks(yaml);
  // The reader checks every character before the scanner reads a token.
  let found = firstNonPrintable(yaml, marks) ?? firstRefusedToken(yaml, marks);
  if (!found && options.duplicates !== false) {
    const doc = parseDocument(yaml, { uniqueKeys: false });
    if (!doc.errors.length) found = firstDuplicateKey(doc.contents, marks);
  }
  if (!found) return undefined;
  const { line, column } = marks.position(found.offset);
  return { construct: found.construct, line: line + 1, column: column + 1, message: found.message, ...(found.character ? { character: found.character } : {}) };
}
