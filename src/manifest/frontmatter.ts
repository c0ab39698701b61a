/**
 * Front matter: finding the YAML block at the top of a SKILL.md and loading it. The block must
 * open the file with a `---` line and close with the next `---` (or `...`) line; everything after
 * it is the body, `---` horizontal rules included. A UTF-8 byte-order mark and CRLF line ends are
 * accepted and reported. YAML is loaded with alias expansion bounded, and a front matter that is
 * invalid only because a plain value holds `: ` (common in hand-written descriptions) is repaired
 * by quoting that value, with a warning naming the field.
 *
 * Pure: no I/O. Never evaluates anything but YAML.
 */
import { isMap, parseDocument, type Document, type YAMLError } from 'yaml';
import { readSimpleFrontMatter } from './simple-yaml.js';

/** The reference validator's wording for a file that does not open with front matter. */
export const NO_FRONT_MATTER = 'SKILL.md must start with YAML frontmatter (---)';
/** The reference validator's wording for front matter that is never closed. */
export const UNCLOSED_FRONT_MATTER = 'SKILL.md frontmatter not properly closed with ---';
/** The reference validator's wording for front matter that is not a mapping. */
export const NOT_A_MAPPING = 'SKILL.md frontmatter must be a YAML mapping';

/** Alias expansions allowed when loading front matter (a "billion laughs" document needs thousands). */
export const DEFAULT_MAX_ALIAS_COUNT = 100;

export interface FrontMatterSplit {
  /** The YAML between the delimiters, LF line ends. */
  yaml: string;
  /** Everything after the closing delimiter line, LF line ends. */
  body: string;
  /** The file started with a UTF-8 byte-order mark (removed). */
  bom: boolean;
  /** The file used CRLF (or CR) line ends (normalised to LF). */
  crlf: boolean;
}

const OPEN = /^---[ \t]*$/;
const CLOSE = /^(?:---|\.\.\.)[ \t]*$/;

/** Removes a BOM and normalises line ends; reports what it changed. */
export function normalizeText(text: string): { text: string; bom: boolean; crlf: boolean } {
  const bom = text.charCodeAt(0) === 0xfeff;
  let out = bom ? text.slice(1) : text;
  const crlf = out.includes('\r');
  if (crlf) out = out.replace(/\r\n?/g, '\n');
  return { text: out, bom, crlf };
}

/**
 * Where the front matter ends in normalised text: the index just past the closing delimiter line,
 * or -1 when the text does not (yet) contain a closed block. Used to read just enough bytes.
 */
export function frontMatterEnd(text: string): number {
  const firstBreak = text.indexOf('\n');
  if (firstBreak < 0 || !OPEN.test(text.slice(0, firstBreak))) return -1;
  let start = firstBreak + 1;
  while (start <= text.length) {
    const next = text.indexOf('\n', start);
    const line = text.slice(start, next < 0 ? text.length : next);
    if (CLOSE.test(line)) return next < 0 ? text.length : next + 1;
    if (next < 0) return -1;
    start = next + 1;
  }
  return -1;
}

/** Splits a SKILL.md into its YAML and its body, or says why it cannot (reference wording). */
export function splitFrontMatter(raw: string): { ok: true; value: FrontMatterSplit } | { ok: false; message: string } {
  const { text, bom, crlf } = normalizeText(raw);
  const firstBreak = text.indexOf('\n');
  const firstLine = firstBreak < 0 ? text : text.slice(0, firstBreak);
  if (!OPEN.test(firstLine)) return { ok: false, message: NO_FRONT_MATTER };
  const end = frontMatterEnd(text);
  if (end < 0) return { ok: false, message: UNCLOSED_FRONT_MATTER };
  const block = text.slice(firstBreak + 1, end);
  const yaml = block.slice(0, block.lastIndexOf('\n', block.length - 2) + 1);
  return { ok: true, value: { yaml, body: text.slice(end), bom, crlf } };
}

export interface LoadedYaml {
  data: Record<string, unknown>;
  /** Top-level fields whose plain value held `: ` and were quoted to make the YAML valid. */
  repaired: string[];
  /** The original source text of top-level scalars (so `version: 1.0` stays "1.0"). */
  sources: Record<string, string>;
}

/**
 * Loads front matter YAML into a mapping. Returns the reference wording on failure
 * (`Invalid YAML in frontmatter: ...`, `SKILL.md frontmatter must be a YAML mapping`).
 */
export function loadFrontMatterYaml(
  yaml: string,
  options: { maxAliasCount?: number; repair?: boolean } = {},
): { ok: true; value: LoadedYaml } | { ok: false; message: string } {
  // The plainest front matter (most of it) needs no YAML parser; anything else goes to it.
  const simple = readSimpleFrontMatter(yaml);
  if (simple) return { ok: true, value: { data: simple, repaired: [], sources: {} } };
  const maxAliasCount = options.maxAliasCount ?? DEFAULT_MAX_ALIAS_COUNT;
  let doc = parseYaml(yaml);
  let repaired: string[] = [];
  let quoted = yaml;
  if (doc.errors.length && options.repair !== false) {
    const attempt = quotePlainValuesWithColons(yaml);
    if (attempt.fields.length) {
      const second = parseYaml(attempt.yaml);
      if (!second.errors.length) {
        doc = second;
        repaired = attempt.fields;
        quoted = attempt.yaml;
      }
    }
  }
  if (doc.errors.length) return { ok: false, message: `Invalid YAML in frontmatter: ${describeYamlError(doc.errors[0]!, yaml)}` };
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount });
  } catch (error) {
    return { ok: false, message: `Invalid YAML in frontmatter: ${(error as Error).message} (more than ${maxAliasCount} alias expansions)` };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data) || !isMap(doc.contents)) return { ok: false, message: NOT_A_MAPPING };
  // The source text of numeric top-level scalars, so that `version: 1.0` is not read as 1.
  const sources: Record<string, string> = {};
  for (const [key, value] of Object.entries(data)) {
    if (typeof value !== 'number') continue;
    if (!/^[\w-]+$/.test(key)) continue;
    const match = new RegExp(`^${key}:[ \\t]*([^\\s#]+)`, 'm').exec(repaired.length ? quoted : yaml);
    if (match) sources[key] = match[1]!;
  }
  return { ok: true, value: { data: data as Record<string, unknown>, repaired, sources } };
}

function parseYaml(yaml: string): Document.Parsed {
  return parseDocument(yaml, { prettyErrors: true, uniqueKeys: true });
}

/**
 * A YAML error in one line: the parser's sentence, then where it is in the SKILL.md (the front
 * matter starts on its line 2), in place of the parser's trailing "at line L, column C:" and
 * source excerpt.
 */
function describeYamlError(error: YAMLError, yaml: string): string {
  const sentence = error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?\s*$/, '').trim();
  const at = error.linePos?.[0];
  if (!at) return sentence;
  const lines = yaml.endsWith('\n') ? yaml.split('\n').length - 1 : yaml.split('\n').length;
  if (at.line > lines) return `${sentence} (at the end of the front matter, SKILL.md line ${at.line + 1})`;
  return `${sentence} (SKILL.md line ${at.line + 1}, column ${at.col})`;
}

const TOP_LEVEL_PLAIN = /^([A-Za-z_][\w-]*):[ \t]+(.+)$/;

/**
 * Quotes top-level plain values that contain `: ` — valid prose, invalid YAML. Values
 * that start a quoted, flow, block-scalar, anchor or alias form are left alone.
 */
function quotePlainValuesWithColons(yaml: string): { yaml: string; fields: string[] } {
  const fields: string[] = [];
  const lines = yaml.split('\n').map((line) => {
    const match = TOP_LEVEL_PLAIN.exec(line);
    if (!match) return line;
    const [, key, value] = match as unknown as [string, string, string];
    const trimmed = value.trim();
    if (/^["'[{|>&*!]/.test(trimmed)) return line;
    if (!trimmed.includes(': ') && !trimmed.endsWith(':')) return line;
    fields.push(key);
    return `${key}: ${JSON.stringify(trimmed)}`;
  });
  return { yaml: lines.join('\n'), fields };
}
