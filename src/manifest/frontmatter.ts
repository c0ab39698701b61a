/**
 * Front matter: finding the YAML block at the top of a SKILL.md and loading it. The block must
 * open the file with a `---` line and close with the next `---` (or `...`) line; everything after
 * it is the body, `---` horizontal rules included. A UTF-8 byte-order mark and CRLF line ends are
 * accepted and reported. YAML is loaded with alias expansion bounded, and a front matter that is
 * invalid only because a plain value holds `: ` (common in hand-written descriptions) is repaired
 * by quoting that value, with a warning naming the field. Keys that could reach a prototype
 * (`__proto__`, `constructor`, `prototype`) are dropped at any depth and listed, and scalars YAML
 * would reinterpret keep their source text where the specification wants strings.
 *
 * Pure: no I/O. Never evaluates anything but YAML.
 */
import { isMap, isScalar, isSeq, parseDocument, type Document, type YAMLError, type YAMLMap } from 'yaml';
import { isPlainObject, isSafeKey } from '../core/plain.js';
import { readSimpleFrontMatter } from './simple-yaml.js';

/** The reference validator's wording for a file that does not open with front matter. */
export const NO_FRONT_MATTER = 'SKILL.md must start with YAML frontmatter (---)';
/** The reference validator's wording for front matter that is never closed. */
export const UNCLOSED_FRONT_MATTER = 'SKILL.md frontmatter not properly closed with ---';
/** The reference validator's wording for front matter that is not a mapping. */
export const NOT_A_MAPPING = 'SKILL.md frontmatter must be a YAML mapping';

/** The reference validator's prefix for front matter its YAML loader refuses. */
export const INVALID_YAML = 'Invalid YAML in frontmatter: ';

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
/** The reference validator ends front matter at the next `---`; YAML's `...` does not close it. */
const REFERENCE_CLOSE = /^---[ \t]*$/;

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
export function frontMatterEnd(text: string, close = CLOSE): number {
  const firstBreak = text.indexOf('\n');
  if (firstBreak < 0 || !OPEN.test(text.slice(0, firstBreak))) return -1;
  let start = firstBreak + 1;
  while (start <= text.length) {
    const next = text.indexOf('\n', start);
    const line = text.slice(start, next < 0 ? text.length : next);
    if (close.test(line)) return next < 0 ? text.length : next + 1;
    if (next < 0) return -1;
    start = next + 1;
  }
  return -1;
}

/**
 * Splits a SKILL.md into its YAML and its body, or says why it cannot (reference wording). With
 * `reference`, the file is read as the reference validator reads it: a BOM is a character before
 * the `---` (so the file does not start with front matter), and only `---` closes the block.
 */
export function splitFrontMatter(raw: string, options: { reference?: boolean } = {}): { ok: true; value: FrontMatterSplit } | { ok: false; message: string } {
  const { text, bom, crlf } = normalizeText(raw);
  if (bom && options.reference) return { ok: false, message: NO_FRONT_MATTER };
  const firstBreak = text.indexOf('\n');
  const firstLine = firstBreak < 0 ? text : text.slice(0, firstBreak);
  if (!OPEN.test(firstLine)) return { ok: false, message: NO_FRONT_MATTER };
  const end = frontMatterEnd(text, options.reference ? REFERENCE_CLOSE : CLOSE);
  if (end < 0) return { ok: false, message: UNCLOSED_FRONT_MATTER };
  const block = text.slice(firstBreak + 1, end);
  const yaml = block.slice(0, block.lastIndexOf('\n', block.length - 2) + 1);
  return { ok: true, value: { yaml, body: text.slice(end), bom, crlf } };
}

export interface LoadedYaml {
  /** The front matter as plain data; keys that could reach a prototype are left out (see `dropped`). */
  data: Record<string, unknown>;
  /** Top-level fields whose plain value held `: ` and were quoted to make the YAML valid. */
  repaired: string[];
  /**
   * The source text of top-level scalars that YAML reads as something other than a string
   * (so `version: 1.0` stays "1.0" and `name: 2024` is the name "2024").
   */
  sources: Record<string, string>;
  /** Paths (`metadata.__proto__`) of keys named `__proto__`, `constructor` or `prototype`, dropped. */
  dropped: string[];
  /** Keys given more than once (dotted paths for nested ones); the last value was kept. */
  duplicates: string[];
}

/**
 * Loads front matter YAML into a mapping. Returns the reference wording on failure
 * (`Invalid YAML in frontmatter: ...`, `SKILL.md frontmatter must be a YAML mapping`).
 * The mapping and every mapping in it are fresh plain objects without `__proto__`,
 * `constructor` or `prototype` keys (their paths are listed in `dropped`), and scalar `metadata`
 * values are strings as written in the source (`version: 1.0` is "1.0", `beta: yes` is "yes").
 */
export function loadFrontMatterYaml(
  yaml: string,
  options: { maxAliasCount?: number; repair?: boolean } = {},
): { ok: true; value: LoadedYaml } | { ok: false; message: string } {
  // The plainest front matter (most of it) needs no YAML parser; anything else goes to it.
  const simple = readSimpleFrontMatter(yaml);
  if (simple) return { ok: true, value: { data: simple, repaired: [], sources: {}, dropped: [], duplicates: [] } };
  const maxAliasCount = options.maxAliasCount ?? DEFAULT_MAX_ALIAS_COUNT;
  let doc = parseYaml(yaml);
  let repaired: string[] = [];
  if (doc.errors.length && options.repair !== false) {
    const attempt = quotePlainValuesWithColons(yaml);
    if (attempt.fields.length) {
      const second = parseYaml(attempt.yaml);
      if (!second.errors.length) {
        doc = second;
        repaired = attempt.fields;
      }
    }
  }
  const duplicates: string[] = [];
  if (doc.errors.length && options.repair !== false && doc.errors.some((error) => error.code === 'DUPLICATE_KEY')) {
    // Hand-edited skills sometimes give a key twice: read leniently, the last value wins, and say which.
    const again = parseYaml(yaml, true);
    if (!again.errors.length) {
      doc = again;
      duplicates.push(...duplicateKeys(again.contents));
    }
  }
  if (doc.errors.length) return { ok: false, message: `${INVALID_YAML}${describeYamlError(doc.errors[0]!, yaml)}` };
  let loaded: unknown;
  try {
    loaded = doc.toJS({ maxAliasCount });
  } catch (error) {
    return { ok: false, message: `${INVALID_YAML}${(error as Error).message} (more than ${maxAliasCount} alias expansions)` };
  }
  if (typeof loaded !== 'object' || loaded === null || Array.isArray(loaded) || !isMap(doc.contents)) return { ok: false, message: NOT_A_MAPPING };
  const dropped: string[] = [];
  const data = withoutPrototypeKeys(loaded, '', dropped, new Map()) as Record<string, unknown>;
  const sources = scalarSources(doc.contents);
  const metadataNode = doc.contents.get('metadata', true);
  if (isPlainObject(data.metadata) && isMap(metadataNode)) data.metadata = metadataAsStrings(data.metadata, metadataNode);
  return { ok: true, value: { data, repaired, sources, dropped, duplicates } };
}

/**
 * A copy of loaded YAML in fresh plain objects and arrays, leaving out keys that name a
 * prototype slot. Shared (aliased) nodes stay shared and cycles stay cycles.
 */
function withoutPrototypeKeys(value: unknown, at: string, dropped: string[], copies: Map<object, unknown>): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const done = copies.get(value);
  if (done !== undefined) return done;
  if (Array.isArray(value)) {
    const list: unknown[] = [];
    copies.set(value, list);
    value.forEach((item, i) => list.push(withoutPrototypeKeys(item, `${at}[${i}]`, dropped, copies)));
    return list;
  }
  if (!isPlainObject(value)) return value;
  const map: Record<string, unknown> = {};
  copies.set(value, map);
  for (const key of Object.keys(value)) {
    const here = at ? `${at}.${key}` : key;
    if (!isSafeKey(key)) {
      dropped.push(here);
      continue;
    }
    map[key] = withoutPrototypeKeys(value[key], here, dropped, copies);
  }
  return map;
}

/** The source text of a scalar YAML reads as a number, boolean or null (`1.0`, `yes`, `~`, empty). */
function scalarSource(node: unknown): string | undefined {
  if (!isScalar(node) || typeof node.value === 'string') return undefined;
  return typeof node.source === 'string' ? node.source : String(node.value ?? '');
}

/** Source texts of the top-level scalars that did not load as strings. */
function scalarSources(map: YAMLMap): Record<string, string> {
  const sources: Record<string, string> = {};
  for (const pair of map.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
    const source = scalarSource(pair.value);
    if (key !== undefined && isSafeKey(key) && source !== undefined) sources[key] = source;
  }
  return sources;
}

/**
 * The metadata mapping with its scalar keys and values as the strings they are written as — the
 * specification maps string keys to string values, and YAML would turn `1.0` into 1 and `yes`
 * into true. Nested values (lists, mappings) are kept as loaded.
 */
function metadataAsStrings(metadata: Record<string, unknown>, node: YAMLMap): Record<string, unknown> {
  const texts = new Map<string, { key: string; value: string | undefined }>();
  for (const pair of node.items) {
    if (!isScalar(pair.key)) continue;
    const loadedKey = String(pair.key.value);
    texts.set(loadedKey, { key: scalarSource(pair.key) ?? loadedKey, value: scalarSource(pair.value) });
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(metadata)) {
    const text = texts.get(key);
    const name = text && isSafeKey(text.key) ? text.key : key;
    if (value === null || typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
      out[name] = text?.value ?? (value === null ? '' : String(value));
    } else out[name] = value;
  }
  return out;
}

/**
 * Parses YAML. Strictly, a key given twice is an error; leniently (hand-edited community skills
 * do it) it is accepted, the last value wins, and `duplicateKeys` names it for a warning.
 */
function parseYaml(yaml: string, allowDuplicates = false): Document.Parsed {
  return parseDocument(yaml, { prettyErrors: true, uniqueKeys: !allowDuplicates });
}

/** Keys that occur more than once in a mapping, as dotted paths, in document order. */
function duplicateKeys(node: unknown, prefix = ''): string[] {
  const found: string[] = [];
  if (isMap(node)) {
    const seen = new Set<string>();
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      const dotted = prefix ? `${prefix}.${key}` : key;
      if (seen.has(key) && !found.includes(dotted)) found.push(dotted);
      seen.add(key);
      found.push(...duplicateKeys(pair.value, dotted).filter((item) => !found.includes(item)));
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => found.push(...duplicateKeys(item, `${prefix}[${i}]`)));
  }
  return found;
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
