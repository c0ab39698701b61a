/**
 * The import graph of the package's own TypeScript files, read from their import and export
 * statements (type-only ones included), for the layering checks in `layers.test.ts`.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** Every `from '...'`, `import '...'` and `import('...')` specifier, type-only imports included. */
const SPECIFIER = /(?:^|[\s;}])(?:import|export)\b[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;

/** The start of an `import type` or `export type` statement, as `SPECIFIER` matches it. */
const TYPE_ONLY = /^[\s;}]?(?:import|export)\s+type\b/;

/** What one file imports: files (relative to the root) and packages. */
export interface FileImports {
  local: string[];
  external: string[];
  /** The files and packages of `local` and `external` that loading this file loads: neither `import type` nor `import()`. */
  loaded?: string[];
}

export interface ImportGraph {
  /** File (relative to the root) → the files and packages it imports. */
  readonly files: ReadonlyMap<string, FileImports>;
}

function tsFiles(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...tsFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) found.push(path);
  }
  return found;
}

/** Drops comments so an import shown in a doc comment is not taken for one. */
function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

export function importGraph(root: string, folders: readonly string[]): ImportGraph {
  const files = new Map<string, Required<FileImports>>();
  for (const folder of folders) {
    for (const file of tsFiles(join(root, folder))) {
      const local: string[] = [];
      const external: string[] = [];
      const loaded: string[] = [];
      for (const match of withoutComments(readFileSync(file, 'utf8')).matchAll(SPECIFIER)) {
        const specifier = match[1] ?? match[2] ?? match[3]!;
        const target = specifier.startsWith('.') ? relative(root, resolve(dirname(file), specifier.replace(/\.js$/, '.ts'))) : specifier;
        (specifier.startsWith('.') ? local : external).push(target);
        // `import { type A }` still loads the module; `import type` and `import()` do not.
        if (match[3] === undefined && !TYPE_ONLY.test(match[0])) loaded.push(target);
      }
      files.set(relative(root, file), { local, external, loaded });
    }
  }
  return { files };
}

/** The cycles of the graph: each strongly connected component of more than one file (or a file importing itself). */
export function importCycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next++;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.files.get(file)?.local ?? []) {
      if (!graph.files.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.files.get(file)!.local.includes(file)) cycles.push(component.sort());
  };
  for (const file of graph.files.keys()) if (!index.has(file)) visit(file);
  return cycles;
}

/** Where an exported name is declared, and whether a doc comment precedes the declaration. */
export interface ExportDeclaration {
  readonly file: string;
  readonly documented: boolean;
}

const DECLARATION = /^export (?:declare )?(?:abstract )?(?:async )?(?:function\*?|const|let|class|interface|type|enum) ([A-Za-z0-9_$]+)/gm;
const RE_EXPORT = /^export (type )?\{([^}]*)\} from '([^']+)';/gm;
const EXPORT_ALL = /^export \* from '([^']+)';/gm;
const LOCAL_EXPORT = /^export (?:type )?\{([^}]*)\};/gm;
const IMPORT = /^import (?:type )?\{([^}]*)\} from '([^']+)';/gm;

/** The names a module exports (following `export ... from` to each declaration), with where each is declared. */
export function declaredExports(root: string, file: string): Map<string, ExportDeclaration> {
  const path = join(root, file);
  const source = readFileSync(path, 'utf8');
  const found = new Map<string, ExportDeclaration>();
  const target = (specifier: string) => relative(root, resolve(dirname(path), specifier.replace(/\.js$/, '.ts')));
  for (const match of source.matchAll(DECLARATION)) {
    const before = source.slice(0, match.index).trimEnd();
    found.set(match[1]!, { file, documented: before.endsWith('*/') && before.lastIndexOf('/**') > before.lastIndexOf('*/', before.length - 3) });
  }
  for (const match of withoutComments(source).matchAll(RE_EXPORT)) {
    const from = declaredExports(root, target(match[3]!));
    for (const item of match[2]!.split(',').map((part) => part.trim().replace(/^type /, '')).filter(Boolean)) {
      const [original, alias] = item.split(/\s+as\s+/);
      const declaration = from.get(original!);
      if (!declaration) throw new Error(`${file} re-exports '${original}' from ${match[3]}, which does not export it`);
      found.set(alias ?? original!, declaration);
    }
  }
  // `export { name }` of a name imported from another module: declared there.
  const imported = new Map<string, string>();
  for (const match of withoutComments(source).matchAll(IMPORT)) {
    for (const item of match[1]!.split(',').map((part) => part.trim().replace(/^type /, '')).filter(Boolean)) {
      const [original, alias] = item.split(/\s+as\s+/);
      if (match[2]!.startsWith('.')) imported.set(alias ?? original!, `${original}\u0000${match[2]}`);
    }
  }
  for (const match of withoutComments(source).matchAll(LOCAL_EXPORT)) {
    for (const item of match[1]!.split(',').map((part) => part.trim().replace(/^type /, '')).filter(Boolean)) {
      const [local, alias] = item.split(/\s+as\s+/);
      const origin = imported.get(local!);
      if (!origin) continue;
      const [original, specifier] = origin.split('\u0000');
      const declaration = declaredExports(root, target(specifier!)).get(original!);
      if (!declaration) throw new Error(`${file} exports '${local}', which ${specifier} does not export`);
      found.set(alias ?? local!, declaration);
    }
  }
  for (const match of withoutComments(source).matchAll(EXPORT_ALL)) {
    for (const [name, declaration] of declaredExports(root, target(match[1]!))) found.set(name, declaration);
  }
  return found;
}
