import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManifestError } from '../../src/index.js';
import { loadToolsets } from '../../src/manifest/toolsets.js';
import { tree } from './tree.js';

const zodUrl = new URL('../../node_modules/zod/index.js', import.meta.url).href;
const ref = (value: string) => {
  const [p, e] = value.split(':') as [string, string];
  return { ref: value, path: p, exportName: e };
};

async function failure(promise: Promise<unknown>): Promise<ManifestError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(ManifestError);
  expect((error as ManifestError).code).toBe('toolset_failed');
  return error as ManifestError;
}

describe('toolsets', () => {
  it('adapts seed-style tools, Tool.define objects, classes and maps into actions', async () => {
    const root = await tree({
      'toolsets/index.ts': `
        import { z } from '${zodUrl}';
        const echo = { description: 'Echo', parameters: z.object({ text: z.string() }), execute: async (args: { text: string }) => ({ output: args.text }) };
        export const defined = { id: 'shout', init: async () => ({ description: 'Shout', parameters: z.object({ text: z.string() }), execute: (a: { text: string }) => a.text.toUpperCase() }) };
        class Box { tools = [{ name: 'box_tool', description: 'Boxed', parameters: z.object({}), execute: () => 'boxed' }]; }
        export const Tools = [{ echo }, defined, Box];
      `,
    });
    const actions = await loadToolsets(root, [ref('toolsets/index:Tools')], 'demo');
    expect(actions.map((a) => a.name)).toEqual(['echo', 'shout', 'box_tool']);
    expect(await actions[0]!.run({ text: 'hi' }, {} as never)).toEqual({ output: 'hi' });
    expect(await actions[1]!.run({ text: 'hi' }, {} as never)).toBe('HI');
  });

  it('imports plain JavaScript modules too', async () => {
    const root = await tree({ 'tools.mjs': `import { z } from '${zodUrl}'; export const T = { ping: { description: 'Ping', parameters: z.object({}), execute: () => 'pong' } };` });
    expect((await loadToolsets(root, [ref('tools:T')], 'demo')).map((a) => a.name)).toEqual(['ping']);
  });

  it('names the skill, the file and the export when a module is missing', async () => {
    const root = await tree();
    const error = await failure(loadToolsets(root, [ref('toolsets/index:HelloToolset')], 'hello'));
    expect(error.message).toBe(
      `skill 'hello': toolset 'toolsets/index:HelloToolset': no module 'toolsets/index.ts', 'toolsets/index.mts', 'toolsets/index.js', 'toolsets/index.mjs' in ${root}`,
    );
  });

  it('reports an export that does not exist, listing the exports', async () => {
    const root = await tree({ 'index.ts': 'export const A = 1; export const B = 2;' });
    const error = await failure(loadToolsets(root, [ref('index:Missing')], 'demo'));
    expect(error.message).toBe("skill 'demo': toolset 'index:Missing': index.ts has no export 'Missing' (its exports: A, B)");
  });

  it('reports a module that throws while importing', async () => {
    const root = await tree({ 'index.ts': 'throw new Error("boom at import");' });
    const error = await failure(loadToolsets(root, [ref('index:X')], 'demo'));
    expect(error.message).toContain(`importing ${path.join(root, 'index.ts')} failed: boom at import`);
  });

  it('reports an export that holds no tools', async () => {
    const root = await tree({ 'index.ts': 'export const X = 42; export const Y = { run: 1 };' });
    expect((await failure(loadToolsets(root, [ref('index:X')], 'demo'))).message).toContain("'X' is number, not a tool");
    expect((await failure(loadToolsets(root, [ref('index:Y')], 'demo'))).message).toContain("'run' is number, not a tool");
  });

  it('refuses a module outside the root', async () => {
    const root = await tree({ 'inner/x.txt': '', 'evil.ts': 'export const X = []' });
    expect((await failure(loadToolsets(path.join(root, 'inner'), [ref('../evil:X')], 'demo'))).message).toContain("contains '..'");
  });
});
