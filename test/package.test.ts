/**
 * The package as users get it: `npm run build` compiles to dist/, and a plain Node program — no
 * tsx, no `skillstate-source` condition — imports `skillstate` and its subpaths from the build,
 * runs an agent, loads a bundled document skill whose TypeScript toolset imports `skillstate`
 * too, and the `skillstate` command runs.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const scratch = `${root}.package-check`;
/** The environment of a user's process: whatever this one has, minus the repository's source condition. */
const userEnv = { ...process.env, NODE_OPTIONS: (process.env.NODE_OPTIONS ?? '').replace('--conditions=skillstate-source', '').trim() };

const program = `
import assert from 'node:assert/strict';
import { BUNDLED_SKILLS_DIR, createAgentSystem, createSignal, createSkillTools, defineAgent, discoverSkills } from 'skillstate';
import { counter } from 'skillstate/skills';
import { createAgentTestModel } from 'skillstate/testing';

assert.match(import.meta.resolve('skillstate'), /\\/dist\\/src\\/index\\.js$/);
assert.equal(typeof createAgentTestModel, 'function');
const mcp = await import('skillstate/mcp');
assert.equal(typeof mcp.serveMcp, 'function');
assert.equal(typeof mcp.mcpSkill, 'function');
const registry = await discoverSkills({ bundled: BUNDLED_SKILLS_DIR, project: false, user: false });
assert.deepEqual(registry.entries().map((entry) => entry.name), ['csv-tools', 'hello-extended']);

const system = createAgentSystem({ resolvers: [registry] });
const agent = system.spawn(defineAgent({ name: 'assistant', skills: [counter, createSkillTools(registry)] }), { id: 'a1' });
agent.send(createSignal('counter.increment'));
assert.deepEqual(await agent.call(createSignal('counter.get')), { count: 1 });
await agent.callTool('load_skill', { name: 'hello-extended' });
const greeted = await agent.callTool('say_hello', { name: 'Ada' });
assert.match(JSON.stringify(greeted), /Hello, Ada/);
await system.shutdown();
console.log('ok');
`;

function node(args: string[]) {
  return spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', env: userEnv, timeout: 60_000 });
}

beforeAll(() => {
  const built = spawnSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-p', 'tsconfig.build.json'], { cwd: root, encoding: 'utf8', timeout: 120_000 });
  expect(built.stdout + built.stderr).toBe('');
  expect(built.status).toBe(0);
  mkdirSync(scratch, { recursive: true });
}, 180_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the built package', () => {
  it('has the files every export names', () => {
    const { exports } = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { exports: Record<string, Record<string, string>> };
    const files = Object.values(exports).flatMap((entry) => [entry.types!, entry.default!]);
    expect(files.length).toBe(Object.keys(exports).length * 2);
    expect(files.filter((file) => !existsSync(`${root}${file}`))).toEqual([]);
  });

  it('runs in plain Node: agents, bundled skills, a TypeScript toolset that imports skillstate', () => {
    writeFileSync(`${scratch}/app.mjs`, program);
    const outcome = node([`${scratch}/app.mjs`]);
    expect(outcome.stderr).toBe('');
    expect(outcome.stdout).toBe('ok\n');
    expect(outcome.status).toBe(0);
  });

  it('gives the skillstate command its build', () => {
    const outcome = node([`${root}bin/skillstate.js`, 'list', '--no-user', '--no-project']);
    expect(outcome.stderr).toBe('');
    expect(outcome.stdout).toMatch(/^hello-extended +bundled +1\.0\.0/m);
    expect(outcome.status).toBe(0);
  });
});
