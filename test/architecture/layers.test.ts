/**
 * The layering of the package, as docs/architecture.md draws it: every folder of `src/` (and its
 * top-level files), `machines/` and `skills/` is a layer that imports only the layers below it;
 * no import cycles between files (type-only imports included); and the pure layers free of
 * XState and of Node's modules.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importCycles, importGraph } from './imports.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const graph = importGraph(root, ['src', 'machines', 'skills']);

/**
 * The layers from the bottom up, each with the layers it may import (besides itself): only layers
 * listed before it. The order of docs/architecture.md.
 */
const LAYERS: ReadonlyArray<readonly [layer: string, imports: readonly string[]]> = [
  ['src/core/', []],
  ['src/engine/', ['src/core/']],
  ['src/manifest/', ['src/core/']],
  ['src/viewer/', ['src/core/']],
  ['machines/', ['src/core/', 'src/engine/']],
  // OpenTelemetry, loaded only once a provider is registered: both hosts, the model loop and MCP
  // record through it.
  ['src/telemetry/', ['src/core/', 'src/engine/', 'machines/']],
  // Document skills reach the runtime as skill resolvers, a core interface.
  ['src/runtime/', ['src/core/', 'src/telemetry/', 'src/engine/', 'src/viewer/', 'machines/']],
  ['src/model/', ['src/core/', 'src/telemetry/', 'src/engine/', 'src/manifest/', 'machines/', 'src/runtime/']],
  // The Restate host runs model turns, and never the in-process runtime.
  ['src/restate/', ['src/core/', 'src/telemetry/', 'src/engine/', 'src/manifest/', 'machines/', 'src/model/']],
  ['src/system.ts', ['src/core/', 'src/telemetry/', 'src/runtime/', 'src/model/']],
  ['src/index.ts', ['src/core/', 'src/telemetry/', 'src/engine/', 'src/manifest/', 'src/viewer/', 'machines/', 'src/runtime/', 'src/model/', 'src/system.ts']],
  // A served agent is followed through the runtime's internal hook (`ref-changes.ts`), not exported.
  ['src/mcp/', ['src/core/', 'src/telemetry/', 'src/manifest/', 'machines/', 'src/runtime/', 'src/index.ts']],
  ['src/testing/', ['src/core/', 'src/telemetry/', 'src/engine/', 'src/manifest/', 'machines/', 'src/runtime/', 'src/model/', 'src/system.ts', 'src/index.ts']],
  ['skills/', ['src/index.ts']],
  ['src/cli/', ['src/core/', 'src/telemetry/', 'src/engine/', 'src/manifest/', 'src/viewer/', 'machines/', 'src/runtime/', 'src/model/', 'src/restate/', 'src/system.ts', 'src/index.ts', 'src/mcp/', 'src/testing/', 'skills/']],
];

/** The layer of a file: the entry of `LAYERS` it is in. */
function layerOf(file: string): string | undefined {
  return LAYERS.find(([layer]) => (layer.endsWith('/') ? file.startsWith(layer) : file === layer))?.[0];
}

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

  it('places every folder and top-level file of src/, and machines/ and skills/, in a layer', () => {
    const entries = readdirSync(join(root, 'src'), { withFileTypes: true }).map((entry) => (entry.isDirectory() ? `src/${entry.name}/` : `src/${entry.name}`));
    const layers = LAYERS.map(([layer]) => layer);
    expect([...entries, 'machines/', 'skills/'].filter((entry) => !layers.includes(entry))).toEqual([]);
    expect([...graph.files.keys()].filter((file) => layerOf(file) === undefined)).toEqual([]);
  });

  it('orders the layers one way: each imports only layers below it', () => {
    const upward = LAYERS.flatMap(([layer, imports], index) => imports.filter((target) => !LAYERS.slice(0, index).some(([below]) => below === target)).map((target) => `${layer} → ${target}`));
    expect(upward).toEqual([]);
  });

  it('loads the `ai` package only when a model turn runs: statically, its types only', () => {
    const loadsAi = [...graph.files].flatMap(([file, { loaded = [] }]) => loaded.filter((name) => name === 'ai' || name.startsWith('ai/')).map((name) => `${file} → ${name}`));
    expect(loadsAi).toEqual([]);
    expect(graph.files.get('src/model/ai-sdk.ts')?.external).toContain('ai');
  });

  it('loads @opentelemetry/api only when a provider is registered: statically, its types only', () => {
    const loadsOtel = [...graph.files].flatMap(([file, { loaded = [] }]) => loaded.filter((name) => name.startsWith('@opentelemetry/')).map((name) => `${file} → ${name}`));
    expect(loadsOtel).toEqual([]);
    expect(graph.files.get('src/telemetry/otel.ts')?.external).toContain('@opentelemetry/api');
  });

  it('reaches src/mcp/ from outside only through its entry point, from the CLI\'s mcp command when it runs', () => {
    const intoMcp = [...graph.files]
      .filter(([file]) => !file.startsWith('src/mcp/'))
      .flatMap(([file, { local, loaded = [] }]) => local.filter((target) => target.startsWith('src/mcp/')).map((target) => `${file} → ${target}${loaded.includes(target) ? '' : ' (when it runs)'}`));
    expect(intoMcp).toEqual(['src/cli/commands/mcp.ts → src/mcp/index.ts (when it runs)']);
  });

  it.each(LAYERS.map(([layer, imports]) => [layer, imports] as const))('%s imports only from itself and %j', (layer, allowed) => {
    const permitted = (target: string) => layerOf(target) === layer || allowed.includes(layerOf(target) ?? target);
    const outside = [...graph.files]
      .filter(([file]) => layerOf(file) === layer)
      .flatMap(([file, { local }]) => local.filter((target) => !permitted(target)).map((target) => `${file} → ${target}`));
    expect(outside).toEqual([]);
  });
});

describe('the import scanner', () => {
  it('tells the imports that load a module from `import type` and `import()`', () => {
    const dir = mkdtempSync(join(tmpdir(), 'skillstate-imports-'));
    try {
      mkdirSync(join(dir, 'src'));
      const source = [
        "import type { A } from 'types-only';",
        "import { type B } from 'loaded-for-b';",
        "export type { C } from './c.js';",
        "import './side-effect.js';",
        "const lazy = () => import('lazy-package');",
        "export { d } from './d.js';",
      ].join('\n');
      writeFileSync(join(dir, 'src', 'a.ts'), source);
      const imports = importGraph(dir, ['src']).files.get('src/a.ts')!;
      expect(imports.external).toEqual(['types-only', 'loaded-for-b', 'lazy-package']);
      expect(imports.loaded).toEqual(['loaded-for-b', 'src/side-effect.ts', 'src/d.ts']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

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
