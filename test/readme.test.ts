/** The README's code runs: every ```ts run block is executed as a program, as a newcomer would paste it. */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const scratch = `${root}.readme-blocks`;
const readme = readFileSync(`${root}README.md`, 'utf8');
const blocks = [...readme.matchAll(/```ts run\n([\s\S]*?)```/g)].map((match) => match[1]!);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('README', () => {
  it('has runnable blocks', () => expect(blocks.length).toBeGreaterThanOrEqual(3));

  it.each(blocks.map((code, i) => [i + 1, code] as const))('block %i runs and exits 0', (index, code) => {
    mkdirSync(scratch, { recursive: true });
    const file = `${scratch}/block-${index}.ts`;
    writeFileSync(file, code);
    const outcome = spawnSync(process.execPath, ['--import', 'tsx', file], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    expect(outcome.stderr).toBe('');
    expect(outcome.status).toBe(0);
  });
});
