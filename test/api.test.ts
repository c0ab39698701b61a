/**
 * The public surface: each entry point exports exactly the names docs/api.md lists under it,
 * every one with TSDoc at its declaration, and what is exported at run time is among them.
 * Adding a public name means adding it to the entry point and a line to docs/api.md.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { declaredExports } from './architecture/imports.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Entry points as users import them, and the file behind each. */
const ENTRY_POINTS: Record<string, string> = {
  skillstate: 'src/index.ts',
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
