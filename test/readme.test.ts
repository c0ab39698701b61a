/**
 * The README's code runs, and so does the code in docs/: every ```ts run block is executed as a
 * program, as a newcomer would paste it. Running goes through tsx, which strips types without
 * checking them, so every ```ts run block, and every ```ts check block (a whole program that needs
 * a service to run: a Restate server, an MCP host), is also type-checked under the repository's
 * strict compiler options, as a user's strict project would.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const scratch = `${root}.readme-blocks`;
const blocks = (file: string, marker: RegExp) => [...readFileSync(`${root}${file}`, 'utf8').matchAll(new RegExp(`\`\`\`ts ${marker.source}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((match) => match[1]!);
const runnable = (file: string) => blocks(file, /run/);
const allPages = ['README.md', ...readdirSync(`${root}docs`).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
const pages = allPages.filter((page) => runnable(page).length > 0);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function runs(name: string, code: string): void {
  mkdirSync(scratch, { recursive: true });
  const file = `${scratch}/${name.replace(/[^a-z0-9]+/gi, '-')}.ts`;
  writeFileSync(file, code);
  const outcome = spawnSync(process.execPath, ['--import', 'tsx', file], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  expect(outcome.stderr).toBe('');
  expect(outcome.status).toBe(0);
}

describe('README', () => {
  it('has runnable blocks', () => expect(runnable('README.md').length).toBeGreaterThanOrEqual(3));

  it("the list of system methods names every member of a system, system.register() included", async () => {
    const { createAgentSystem } = await import('../src/index.js');
    const bullet = /^- \*\*The system\*\* —([\s\S]*?)\n- /m.exec(readFileSync(`${root}README.md`, 'utf8'))?.[1] ?? '';
    const named = new Set([...bullet.matchAll(/`(\w+)/g)].map((match) => match[1]));
    const system = createAgentSystem();
    try {
      expect(Object.keys(system).filter((member) => !named.has(member))).toEqual([]);
    } finally {
      await system.shutdown();
    }
  });
});

describe('code blocks of the README and docs/', () => {
  it('type-check under strict TypeScript: every ts run and ts check block', () => {
    const dir = `${scratch}/typecheck`;
    mkdirSync(dir, { recursive: true });
    const files = allPages.flatMap((page) =>
      blocks(page, /(?:run|check)/).map((code, i) => {
        const name = `${page.replace(/[^a-z0-9]+/gi, '-')}-${i + 1}.ts`;
        writeFileSync(`${dir}/${name}`, code);
        return name;
      }),
    );
    expect(files.length).toBeGreaterThanOrEqual(19);
    writeFileSync(`${dir}/tsconfig.json`, JSON.stringify({ extends: '../../tsconfig.json', compilerOptions: { noEmit: true, rootDir: '../..' }, include: [], files }));
    const checked = spawnSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-p', dir], { cwd: root, encoding: 'utf8', timeout: 120_000 });
    expect(checked.stdout + checked.stderr).toBe('');
    expect(checked.status).toBe(0);
  });
});

describe.each(pages)('%s', (page) => {
  it.each(runnable(page).map((code, i) => [i + 1, code] as const))('block %i runs and exits 0', (index, code) => runs(`${page}-${index}`, code));
});
