/**
 * The error codes as users read them: docs/errors.md lists exactly the codes of `ErrorCode`, each
 * with every field its `details` can carry, and every code is produced somewhere in the code (a
 * code nothing produces is a promise nobody keeps).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const ERRORS_FILE = join(root, 'src/core/error-info.ts');
const DECLARATION = /export interface ErrorDetailsByCode \{([\s\S]*?)\n\}/;

/** Splits `text` at the `separator`s outside brackets, braces and parentheses. */
function splitTopLevel(text: string, separator: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if ('{[(<'.includes(char)) depth++;
    else if ('}])>'.includes(char)) depth--;
    else if (char === separator && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  return [...parts, text.slice(start)].map((part) => part.trim()).filter(Boolean);
}

/**
 * Each code of `ErrorDetailsByCode` with the names of the fields its details can carry (none for
 * `never`), or `free-form` for details that are whatever user code gave (a `Record`).
 */
function declaredCodes(): Map<string, string[] | 'free-form'> {
  const body = DECLARATION.exec(readFileSync(ERRORS_FILE, 'utf8'))?.[1];
  if (body === undefined) throw new Error('src/core/error-info.ts declares no ErrorDetailsByCode');
  const code = body.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  const codes = new Map<string, string[] | 'free-form'>();
  for (const entry of splitTopLevel(code, ';')) {
    const [, name, type] = /^(\w+):\s*([\s\S]*)$/.exec(entry) ?? [];
    if (name === undefined || type === undefined) throw new Error(`cannot read the entry '${entry}' of ErrorDetailsByCode`);
    if (/^Record</.test(type)) codes.set(name, 'free-form');
    else codes.set(name, [...new Set([...type.matchAll(/(\w+)\??:/g)].map((field) => field[1]!))]);
  }
  return codes;
}

/** The rows of the error-code table of docs/errors.md: code → its details column. */
function documentedCodes(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const line of readFileSync(join(root, 'docs/errors.md'), 'utf8').split('\n')) {
    const row = /^\| `([a-z_]+)` \|(.*)\|(.*)\|$/.exec(line);
    if (row) rows.set(row[1]!, row[3]!.trim());
  }
  return rows;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** The package's code, the declaration of the codes left out (it names every code, produced or not). */
function productionCode(): string {
  return [...sourceFiles(join(root, 'src')), ...sourceFiles(join(root, 'machines'))]
    .map((file) => readFileSync(file, 'utf8'))
    .map((text) => text.replace(DECLARATION, ''))
    .join('\n');
}

const declared = declaredCodes();
const documented = documentedCodes();

describe('error codes', () => {
  it('are read from ErrorDetailsByCode', () => {
    expect(declared.size).toBeGreaterThan(50);
    expect(declared.get('mailbox_full')).toEqual(['capacity']);
    expect(declared.get('no_route')).toEqual([]);
    expect(declared.get('signal_failed')).toBe('free-form');
  });

  it('docs/errors.md lists exactly the codes of ErrorCode', () => {
    expect([...documented.keys()].sort()).toEqual([...declared.keys()].sort());
  });

  it("docs/errors.md names every field of each code's details, and none for a code without details", () => {
    const missing: string[] = [];
    for (const [code, fields] of declared) {
      const column = documented.get(code) ?? '';
      if (fields === 'free-form') {
        if (column === '') missing.push(`${code}: says nothing of its details`);
        continue;
      }
      if (fields.length === 0 && column !== '') missing.push(`${code}: documents details it has none of`);
      for (const field of fields) if (!column.includes(`\`${field}`)) missing.push(`${code}.${field}`);
    }
    expect(missing).toEqual([]);
  });

  it('every code is produced somewhere in the code, not only compared against', () => {
    // Every quoted name that is not the right side of an === or !== comparison.
    const produced = new Set([...productionCode().matchAll(/(.{0,4})'([a-z_]+)'/g)].filter((use) => !/[!=]==\s?$/.test(use[1]!)).map((use) => use[2]));
    expect([...declared.keys()].filter((name) => !produced.has(name))).toEqual([]);
  });
});
