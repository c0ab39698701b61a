/**
 * The README's code runs, and so does the code in docs/: every ```ts run block is executed as a
 * program, as a newcomer would paste it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const scratch = `${root}.readme-blocks`;
const runnable = (file: string) => [...readFileSync(`${root}${file}`, 'utf8').matchAll(/```ts run\n([\s\S]*?)```/g)].map((match) => match[1]!);
const pages = ['README.md', ...readdirSync(`${root}docs`).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)].filter((page) => runnable(page).length > 0);

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

describe.each(pages)('%s', (page) => {
  it.each(runnable(page).map((code, i) => [i + 1, code] as const))('block %i runs and exits 0', (index, code) => runs(`${page}-${index}`, code));
});
