/**
 * The public surface: each entry point exports exactly the names docs/api.md lists under it,
 * every one with TSDoc at its declaration, and what is exported at run time is among them; the
 * entry points are the package's `exports`, no name is exported by two of them, and the main
 * entry stays small (at most 40 values). Adding a public name means adding it to one entry point
 * and a line to docs/api.md.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { declaredExports } from './architecture/imports.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Entry points as users import them, and the file behind each. */
const ENTRY_POINTS: Record<string, string> = {
  skillstate: 'src/index.ts',
  'skillstate/documents': 'src/manifest/index.ts',
  'skillstate/tools': 'src/core/tools.ts',
  'skillstate/inspect': 'src/runtime/inspect.ts',
  'skillstate/testing': 'src/testing/index.ts',
  'skillstate/skills': 'skills/index.ts',
  'skillstate/mcp': 'src/mcp/index.ts',
  'skillstate/cli': 'src/cli/main.ts',
  'skillstate/restate': 'src/restate/index.ts',
};

/** The names docs/api.md lists under each `## \`entry\`` heading (lines `- \`name\`: ...`). */
function documented(): Map<string, string[]> {
  const listed = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of readFileSync(`${root}docs/api.md`, 'utf8').split('\n')) {
    const heading = /^## `([^`]+)`/.exec(line);
    if (heading) listed.set(heading[1]!, (current = []));
    const item = /^- `([^`]+)`/.exec(line);
    if (item && current) current.push(item[1]!);
  }
  return listed;
}

const docs = documented();

describe.each(Object.entries(ENTRY_POINTS))('%s', (entry, file) => {
  const exported = declaredExports(root, file);

  it('exports exactly the names docs/api.md lists for it', () => {
    expect([...exported.keys()].sort()).toEqual([...(docs.get(entry) ?? [])].sort());
  });

  it('has TSDoc on every exported name', () => {
    expect([...exported].filter(([, declaration]) => !declaration.documented).map(([name, declaration]) => `${name} (${declaration.file})`)).toEqual([]);
  });

  it('exports at run time only names it declares', async () => {
    const module = (await import(`${root}${file}`)) as Record<string, unknown>;
    expect(Object.keys(module).filter((name) => !exported.has(name))).toEqual([]);
  });
});

it('docs/api.md has a section for every entry point and no other', () => {
  expect([...docs.keys()].sort()).toEqual(Object.keys(ENTRY_POINTS).sort());
});

it("the entry points are the package's exports, each pointing at its file in the sources", () => {
  const { exports } = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { exports: Record<string, { 'skillstate-source': string }> };
  const sources = Object.fromEntries(Object.entries(exports).map(([subpath, targets]) => [subpath.replace(/^\./, 'skillstate'), targets['skillstate-source'].replace(/^\.\//, '')]));
  expect(sources).toEqual(ENTRY_POINTS);
});

it('no name is exported by two entry points', () => {
  const owners = new Map<string, string[]>();
  for (const [entry, file] of Object.entries(ENTRY_POINTS)) for (const name of declaredExports(root, file).keys()) owners.set(name, [...(owners.get(name) ?? []), entry]);
  expect([...owners].filter(([, entries]) => entries.length > 1)).toEqual([]);
});

it('the main entry exports at most 40 values at run time', async () => {
  const values = Object.keys(await import(`${root}${ENTRY_POINTS.skillstate}`));
  expect(values.length).toBeGreaterThan(20);
  expect(values.length, values.join(', ')).toBeLessThanOrEqual(40);
});
