/**
 * The layering of the package, as docs/architecture.md draws it: `core` ← `engine` ← `machines`
 * ← `runtime`, no import cycles between files (type-only imports included), and the pure
 * layers free of XState and of Node's modules.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importCycles, importGraph } from './imports.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const graph = importGraph(root, ['src', 'machines', 'skills']);

/** Files of `folder` and what of the listed layers they import. */
function importsOf(folder: string): Array<{ file: string; local: string[]; external: string[] }> {
  return [...graph.files].filter(([file]) => file.startsWith(folder)).map(([file, imports]) => ({ file, ...imports }));
}

describe('layers', () => {
  it('reads the files it checks', () => {
    expect(importsOf('src/core/').length).toBeGreaterThan(10);
    expect(importsOf('src/engine/').length).toBeGreaterThan(3);
    expect(graph.files.get('src/engine/step.ts')?.local).toContain('src/core/agent-value.ts');
  });

  it('no file imports, through any chain, a file that imports it', () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it('core and engine import neither XState nor Node modules', () => {
    const impure = [...importsOf('src/core/'), ...importsOf('src/engine/')].flatMap(({ file, external }) =>
      external.filter((name) => name === 'xstate' || name.startsWith('xstate/') || name.startsWith('node:')).map((name) => `${file} → ${name}`),
    );
    expect(impure).toEqual([]);
  });

  it.each([
    ['src/core/', ['src/core/']],
    ['src/engine/', ['src/core/', 'src/engine/']],
    ['machines/', ['src/core/', 'src/engine/', 'machines/']],
  ])('%s imports only from %j', (folder, allowed) => {
    const outside = importsOf(folder).flatMap(({ file, local }) => local.filter((target) => !allowed.some((prefix) => target.startsWith(prefix))).map((target) => `${file} → ${target}`));
    expect(outside).toEqual([]);
  });
});

describe('the import scanner', () => {
  it('finds cycles, type-only imports included', () => {
    const files = new Map([
      ['a.ts', { local: ['b.ts'], external: [] }],
      ['b.ts', { local: ['c.ts'], external: [] }],
      ['c.ts', { local: ['a.ts'], external: [] }],
      ['d.ts', { local: ['a.ts'], external: [] }],
    ]);
    expect(importCycles({ files })).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });
});
