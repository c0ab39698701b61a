/**
 * A fast reader for the plainest front matter — the shape nearly every SKILL.md has — so that
 * discovering a thousand skills does not run the full YAML parser a thousand times (it was most
 * of discovery's cost). It reads only lines it is sure of:
 *
 *   key: plain text
 *   key: [plain, items]
 *   key:
 *     sub: plain text            (one level, the same indentation throughout)
 *     sub: [plain, items]
 *   key:
 *     - plain item
 *
 * where every plain value is one that YAML's core schema reads as a string (not a number, a
 * boolean or null) and holds none of YAML's indicators. Anything else — quotes, comments,
 * anchors, block scalars, multi-line values, duplicate keys, deeper nesting, tabs — returns
 * undefined, and the caller uses the YAML parser, whose answers (and error messages) stand.
 *
 * Pure: no I/O.
 */

const KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;
/** Plain scalars the core schema resolves to something other than a string. */
const NOT_A_STRING = [
  /^(?:~|[Nn]ull|NULL)?$/,
  /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/,
  /^[-+]?[0-9]+$/,
  /^0o[0-7]+$/,
  /^0x[0-9a-fA-F]+$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/,
  /^[-+]?\.(?:inf|Inf|INF)$/,
  /^\.(?:nan|NaN|NAN)$/,
];
/** Characters a plain value may not start with (YAML indicators), and sequences it may not hold. */
const BAD_START = /^[-?:,[\]{}#&*!|>'"%@`\s]/;

/** A plain value read as a string, or undefined when only the YAML parser can say what it is. */
function plainString(raw: string, inFlow: boolean): string | undefined {
  const value = raw.trimEnd();
  if (!value || BAD_START.test(value) || value.includes(': ') || value.includes(' #') || value.endsWith(':') || value.includes('\t')) return undefined;
  if (inFlow && /[,[\]{}]/.test(value)) return undefined;
  if (NOT_A_STRING.some((pattern) => pattern.test(value))) return undefined;
  return value;
}

/** `[a, b]` as strings, or undefined. */
function flowSequence(raw: string): string[] | undefined {
  const value = raw.trimEnd();
  if (!value.startsWith('[') || !value.endsWith(']')) return undefined;
  const inner = value.slice(1, -1).trim();
  if (!inner) return [];
  const items: string[] = [];
  for (const part of inner.split(',')) {
    const item = plainString(part.trim(), true);
    if (item === undefined) return undefined;
    items.push(item);
  }
  return items;
}

/** A value after `key: `: a string or a list of strings, or undefined. */
function inlineValue(raw: string): string | string[] | undefined {
  return raw.trimStart().startsWith('[') ? flowSequence(raw.trim()) : plainString(raw, false);
}

/** Splits `key: value` (value possibly empty); undefined when the line is not that. */
function keyLine(line: string): { key: string; rest: string } | undefined {
  const colon = line.indexOf(':');
  if (colon <= 0) return undefined;
  const key = line.slice(0, colon);
  if (!KEY.test(key) || key === '__proto__' || key === 'constructor' || key === 'prototype') return undefined;
  const rest = line.slice(colon + 1);
  if (rest !== '' && !rest.startsWith(' ')) return undefined;
  return { key, rest: rest.trim() };
}

/** Reads front matter of the plain shape above; undefined for anything else. */
export function readSimpleFrontMatter(yaml: string): Record<string, unknown> | undefined {
  const lines = yaml.split('\n');
  const data: Record<string, unknown> = {};
  let i = 0;
  const skipBlank = () => {
    while (i < lines.length && lines[i]!.trim() === '') i++;
  };
  skipBlank();
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.startsWith(' ') || line.includes('\t')) return undefined;
    const head = keyLine(line);
    if (!head || Object.hasOwn(data, head.key)) return undefined;
    i++;
    if (head.rest !== '') {
      const value = inlineValue(head.rest);
      if (value === undefined) return undefined;
      data[head.key] = value;
      skipBlank();
      continue;
    }
    // A nested block: a mapping of plain values, or a sequence of plain items.
    const indent = /^( +)/.exec(lines[i] ?? '')?.[1]?.length;
    if (indent === undefined) return undefined;
    const pad = ' '.repeat(indent);
    if (lines[i]!.slice(indent).startsWith('- ')) {
      const items: string[] = [];
      while (i < lines.length && lines[i]!.startsWith(`${pad}- `)) {
        const item = plainString(lines[i]!.slice(indent + 2), false);
        if (item === undefined) return undefined;
        items.push(item);
        i++;
      }
      data[head.key] = items;
    } else {
      const map: Record<string, unknown> = {};
      while (i < lines.length && lines[i]!.startsWith(pad) && lines[i]!.trim() !== '') {
        const inner = lines[i]!.slice(indent);
        if (inner.startsWith(' ')) return undefined;
        const entry = keyLine(inner);
        if (!entry || entry.rest === '' || Object.hasOwn(map, entry.key)) return undefined;
        const value = inlineValue(entry.rest);
        if (value === undefined) return undefined;
        map[entry.key] = value;
        i++;
      }
      data[head.key] = map;
    }
    skipBlank();
    if (i < lines.length && lines[i]!.startsWith(' ')) return undefined;
  }
  // No key at all is not a mapping: the YAML parser says so in the reference's words.
  return Object.keys(data).length ? data : undefined;
}
