/**
 * The package as users get it: `npm run build` compiles to dist/, and a plain Node program — no
 * tsx, no `skillstate-source` condition — imports `skillstate` and its subpaths from the build,
 * runs an agent, loads a bundled document skill whose TypeScript toolset imports `skillstate`
 * too, and the `skillstate` command runs.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const scratch = `${root}.package-check`;
/** The environment of a user's process: whatever this one has, minus the repository's source condition. */
const userEnv = { ...process.env, NODE_OPTIONS: (process.env.NODE_OPTIONS ?? '').replace('--conditions=skillstate-source', '').trim() };

const program = `
import assert from 'node:assert/strict';
import { createAgentSystem, createSignal, createSkillTools, defineAgent, discoverSkills } from 'skillstate';
import { EXAMPLE_SKILLS_DIR, parseSkillManifest } from 'skillstate/documents';
import { counter } from 'skillstate/skills';
import { createAgentTestModel } from 'skillstate/testing';
import { toolsForAgent } from 'skillstate/tools';

assert.match(import.meta.resolve('skillstate'), /\\/dist\\/src\\/index\\.js$/);
assert.equal(typeof createAgentTestModel, 'function');
const mcp = await import('skillstate/mcp');
assert.equal(typeof mcp.serveMcp, 'function');
assert.equal(typeof mcp.mcpSkill, 'function');
const registry = await discoverSkills({ examples: ['csv-tools', 'hello-extended'] });
assert.deepEqual(registry.entries().map((entry) => entry.name), ['csv-tools', 'hello-extended']);
assert.equal(registry.entry('hello-extended').rootPath, EXAMPLE_SKILLS_DIR + '/hello-extended');
assert.equal(parseSkillManifest('---\\nname: tiny\\ndescription: A tiny skill.\\n---\\nBody.').manifest.name, 'tiny');
assert.deepEqual(toolsForAgent(defineAgent({ name: 'tools', skills: [counter] }).new()).map((tool) => tool.function.name).sort(), ['decrement', 'get_count', 'increment', 'reset']);

const system = createAgentSystem({ resolvers: [registry] });
const agent = system.spawn(defineAgent({ name: 'assistant', skills: [counter, createSkillTools(registry)] }), { id: 'a1' });
agent.send(createSignal('counter.increment'));
assert.deepEqual(await agent.call(createSignal('counter.get')), { count: 1 });
await agent.callTool('load_skill', { name: 'hello-extended' });
const greeted = await agent.callTool('say_hello', { name: 'Ada' });
assert.match(JSON.stringify(greeted), /Hello, Ada/);
await system.shutdown();

// The local viewer's page and its Mermaid are found from the build too.
const { startInspector } = await import('skillstate/inspect');
const inspector = await startInspector({ viewer: 'local' });
for (const file of ['', 'viewer.js', 'mermaid.min.js']) assert.equal((await fetch(inspector.localUrl + file)).status, 200, file);
await inspector.stop();
console.log('ok');
`;

function node(args: string[]) {
  return spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', env: userEnv, timeout: 60_000 });
}

beforeAll(() => {
  // What `npm run build` does: the compiler, then Mermaid's one file for the local viewer.
  const built = spawnSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-p', 'tsconfig.build.json'], { cwd: root, encoding: 'utf8', timeout: 120_000 });
  expect(built.stdout + built.stderr).toBe('');
  expect(built.status).toBe(0);
  const vendored = spawnSync(process.execPath, [`${root}scripts/vendor-viewer.mjs`], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  expect(vendored.stdout + vendored.stderr).toBe('');
  expect(vendored.status).toBe(0);
  mkdirSync(scratch, { recursive: true });
}, 180_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * An application folder outside the repository, where tsx cannot be resolved: skillstate is a
 * copy of the build (and its command), its dependencies are links to the repository's installed ones.
 */
function appWithoutTsx(): string {
  const app = mkdtempSync(path.join(os.tmpdir(), 'skillstate-no-tsx-'));
  const installed = path.join(app, 'node_modules', 'skillstate');
  mkdirSync(installed, { recursive: true });
  for (const item of ['package.json', 'dist', 'skills', 'bin']) cpSync(`${root}${item}`, path.join(installed, item), { recursive: true });
  const manifest = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as {
    dependencies: Record<string, string>;
    peerDependencies: Record<string, string>;
    peerDependenciesMeta: Record<string, { optional?: boolean }>;
  };
  // What an application has: skillstate's dependencies and the peers it must install (zod), not the optional tsx.
  const peers = Object.keys(manifest.peerDependencies).filter((name) => !manifest.peerDependenciesMeta[name]?.optional);
  for (const name of [...Object.keys(manifest.dependencies), ...peers]) {
    mkdirSync(path.dirname(path.join(app, 'node_modules', name)), { recursive: true });
    symlinkSync(`${root}node_modules/${name}`, path.join(app, 'node_modules', name));
  }
  return app;
}

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
    const outcome = node([`${root}bin/skillstate.js`, 'list', '--no-user', '--no-project', '--bundled', `${root}skills`]);
    expect(outcome.stderr).toBe('');
    expect(outcome.stdout).toMatch(/^hello-extended +bundled +1\.0\.0/m);
    expect(outcome.status).toBe(0);
  });

  it('declares tsx and the Restate SDK optional peer dependencies, not dependencies', () => {
    const manifest = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as Record<string, Record<string, unknown>>;
    expect(Object.keys(manifest.dependencies!)).not.toContain('tsx');
    expect(Object.keys(manifest.dependencies!)).not.toContain('@restatedev/restate-sdk');
    expect(manifest.peerDependencies).toMatchObject({ tsx: expect.any(String), '@restatedev/restate-sdk': expect.any(String) });
    expect(manifest.peerDependenciesMeta).toMatchObject({ tsx: { optional: true }, '@restatedev/restate-sdk': { optional: true } });
  });

  it('declares the AI SDK an optional peer dependency of both majors a user may have (6 on Node 20, 7 on Node 22)', () => {
    const manifest = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as Record<string, Record<string, unknown>>;
    expect(Object.keys(manifest.dependencies!)).not.toContain('ai');
    expect(manifest.peerDependencies).toMatchObject({ ai: '^6.0.0 || ^7.0.0' });
    expect(manifest.peerDependenciesMeta).toEqual({ ai: { optional: true }, tsx: { optional: true }, '@restatedev/restate-sdk': { optional: true }, '@opentelemetry/api': { optional: true } });
  });

  it('declares the OpenTelemetry API an optional peer dependency, never a dependency', () => {
    const manifest = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as Record<string, Record<string, unknown>>;
    expect(Object.keys(manifest.dependencies!).filter((name) => name.startsWith('@opentelemetry/'))).toEqual([]);
    expect(manifest.peerDependencies).toMatchObject({ '@opentelemetry/api': '^1.9.0' });
  });

  it('runs without tsx: JavaScript toolsets load, a TypeScript toolset or script fails saying how to install tsx', () => {
    const app = appWithoutTsx();
    try {
      const skill = path.join(app, 'skills', 'mixed');
      mkdirSync(skill, { recursive: true });
      writeFileSync(path.join(skill, 'SKILL.md'), '---\nname: mixed\ndescription: Tools in JavaScript.\ntoolsets:\n  - "tools:Tools"\n---\nBody\n');
      writeFileSync(path.join(skill, 'tools.mjs'), "import { z } from 'zod';\nexport const Tools = { ping: { description: 'Ping', parameters: z.object({}), execute: () => 'pong' } };\n");
      writeFileSync(path.join(skill, 'run.ts'), "console.log('typed');\n");
      writeFileSync(
        path.join(app, 'app.mjs'),
        `
import assert from 'node:assert/strict';
import { discoverSkills } from 'skillstate';
import { runSkillScript } from 'skillstate/documents';
await assert.rejects(import('tsx/esm/api'), { code: 'ERR_MODULE_NOT_FOUND' });
const registry = await discoverSkills({ bundled: './skills', examples: ['hello-extended'] });
assert.deepEqual((await registry.activate('mixed')).spec.actions.map((action) => action.name), ['ping']);
const typed = await registry.activate('hello-extended').then(() => undefined, (error) => error);
assert.equal(typed?.code, 'toolset_failed');
assert.equal(typed.details.reason, 'tsx_missing');
console.log(typed.message);
const script = await runSkillScript(registry.entry('mixed'), 'run.ts').then(() => undefined, (error) => error);
assert.equal(script?.code, 'script_failed');
console.log(script.message);
`,
      );
      const outcome = spawnSync(process.execPath, ['app.mjs'], { cwd: app, encoding: 'utf8', env: userEnv, timeout: 60_000 });
      expect(outcome.stderr).toBe('');
      expect(outcome.stdout).toBe(
        "skill 'hello-extended': toolset 'toolsets/index:HelloToolset': index.ts is TypeScript, which needs tsx, an optional peer dependency of skillstate that is not installed: run 'npm install tsx' in your application (or ship the toolset as .js)\n" +
          "skill 'mixed': script 'run.ts' cannot run: run.ts is TypeScript, which needs tsx, an optional peer dependency of skillstate that is not installed: run 'npm install tsx' in your application (or ship the script as .js)\n",
      );
      expect(outcome.status).toBe(0);
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });

  it('imports every entry without the optional peers, and skillstate/restate without the Restate SDK says what to install and which Node', () => {
    const app = appWithoutTsx();
    try {
      const { exports } = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { exports: Record<string, unknown> };
      const entries = Object.keys(exports).map((key) => (key === '.' ? 'skillstate' : `skillstate/${key.slice(2)}`));
      writeFileSync(
        path.join(app, 'app.mjs'),
        `
import assert from 'node:assert/strict';
for (const peer of ['@restatedev/restate-sdk', 'ai', 'tsx', '@opentelemetry/api']) await assert.rejects(import(peer), { code: 'ERR_MODULE_NOT_FOUND' });
for (const entry of ${JSON.stringify(entries.filter((entry) => entry !== 'skillstate/restate'))}) await import(entry);
const failure = await import('skillstate/restate').then(() => undefined, (error) => error);
assert.equal(failure?.code, 'invalid_options');
assert.deepEqual(failure.details, { reason: 'peer_missing', package: '@restatedev/restate-sdk' });
console.log(failure.message);
`,
      );
      const outcome = spawnSync(process.execPath, ['app.mjs'], { cwd: app, encoding: 'utf8', env: userEnv, timeout: 60_000 });
      expect(outcome.stderr).toBe('');
      expect(outcome.stdout).toBe(
        "skillstate/restate needs the Restate SDK, an optional peer dependency of skillstate that is not installed: run 'npm install @restatedev/restate-sdk' in your application " +
          `(the SDK needs Node 20.19 or later; this is Node ${process.versions.node})\n`,
      );
      expect(outcome.status).toBe(0);
      // The CLI's Restate command says it once, with the server it needs too.
      writeFileSync(path.join(app, 'agent.mjs'), "import { defineAgent } from 'skillstate';\nexport const Agent = defineAgent({ name: 'plain', skills: [] });\n");
      const cli = spawnSync(process.execPath, ['node_modules/skillstate/bin/skillstate.js', 'restate', 'dev', '--agent', './agent.mjs:Agent'], { cwd: app, encoding: 'utf8', env: userEnv, timeout: 60_000 });
      expect(cli.stderr.split("run 'npm install @restatedev/restate-sdk").length).toBe(3);
      expect(cli.stderr).toMatch(/^skillstate restate: skillstate\/restate needs the Restate SDK, .*; 'restate dev' also needs the Restate server: run 'npm install @restatedev\/restate-sdk @restatedev\/restate-server'\n$/);
      expect(cli.status).toBe(1);
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });

  it('skillstate mcp --agent ./agent.ts without tsx: the tsx_missing error with the install line, not a raw import failure', () => {
    const app = appWithoutTsx();
    try {
      writeFileSync(path.join(app, 'agent.ts'), "import { defineAgent } from 'skillstate';\nexport const Agent = defineAgent({ name: 'typed' });\n");
      const outcome = spawnSync(process.execPath, ['node_modules/skillstate/bin/skillstate.js', 'mcp', '--no-user', '--no-project', '--agent', './agent.ts:Agent'], {
        cwd: app,
        encoding: 'utf8',
        env: userEnv,
        timeout: 60_000,
      });
      // A Node that strips TypeScript's types itself (22.18 and later) imports the module without tsx,
      // and the server runs until its input ends; an older one needs tsx and says how to install it.
      if ((process.features as { typescript?: unknown }).typescript) {
        expect(outcome.stderr).toBe('');
        expect(outcome.status).toBe(0);
        return;
      }
      expect(outcome.stderr).toBe(
        "skillstate mcp: --agent: cannot import './agent.ts': agent.ts is TypeScript, which needs tsx, an optional peer dependency of skillstate that is not installed: " +
          "run 'npm install tsx' in your application (or ship the module as .js) [invalid_options]\n",
      );
      expect(outcome.stdout).toBe('');
      expect(outcome.status).toBe(1);
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });
});

/** npm as a user runs it in their own folder: none of the settings npm gives the scripts it runs for this repository. */
function npm(args: string[], cwd: string) {
  const env = Object.fromEntries(Object.entries(userEnv).filter(([name]) => !/^npm_/i.test(name) || /^npm_config_(cache|registry|userconfig)$/i.test(name)));
  const outcome = spawnSync('npm', args, { cwd, env, encoding: 'utf8', timeout: 240_000 });
  if (outcome.error) throw new Error(`could not run npm ${args[0]}: ${outcome.error.message}`);
  return outcome;
}

describe("a contributor's install", () => {
  it(`npm ci of the lockfile on this Node (${process.version}; CI runs 20 and 22) prints no engine warning (EBADENGINE)`, { timeout: 120_000 }, () => {
    // A dry run reads the lockfile's engines and installs nothing, so it needs no network.
    const clone = mkdtempSync(path.join(os.tmpdir(), 'skillstate-ci-'));
    try {
      for (const file of ['package.json', 'package-lock.json']) cpSync(`${root}${file}`, path.join(clone, file));
      const outcome = npm(['ci', '--dry-run', '--ignore-scripts', '--offline', '--no-audit', '--no-fund'], clone);
      expect(outcome.status, outcome.stderr).toBe(0);
      expect(outcome.stderr.split('\n').filter((line) => /EBADENGINE.*package:/.test(line))).toEqual([]);
    } finally {
      rmSync(clone, { recursive: true, force: true });
    }
  });
});

describe('packed and installed into an empty application: the install path before skillstate is on the registry', () => {
  const app = mkdtempSync(path.join(os.tmpdir(), 'skillstate-installed-'));
  afterAll(() => rmSync(app, { recursive: true, force: true }));

  beforeAll(() => {
    // The build is this file's (above); packing does not build again.
    const packed = npm(['pack', '--ignore-scripts', '--json', '--pack-destination', app], root);
    expect(packed.status, packed.stderr).toBe(0);
    const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    // From npm's cache where it can: the registry is asked only for what the cache lacks.
    const installed = npm(['install', '--prefer-offline', '--no-audit', '--no-fund', `./${filename}`, 'zod@^4'], app);
    expect(installed.status, installed.stderr).toBe(0);
  }, 300_000);

  it('README install: npm install <tarball> zod@^4 gives an application that imports skillstate and its subpaths from plain Node', { timeout: 60_000 }, () => {
    writeFileSync(
      path.join(app, 'app.mjs'),
      `
import assert from 'node:assert/strict';
import { createAgentSystem, createSignal, defineAgent, discoverSkills } from 'skillstate';
import { counter } from 'skillstate/skills';
import { scriptedModel } from 'skillstate/testing';
import { serveMcp } from 'skillstate/mcp';
import { disclose } from 'skillstate/documents';
import { toolsForAgent } from 'skillstate/tools';
import { startInspector } from 'skillstate/inspect';

assert.match(import.meta.resolve('skillstate'), /\\/node_modules\\/skillstate\\/dist\\/src\\/index\\.js$/);
assert.match(import.meta.resolve('skillstate/documents'), /\\/node_modules\\/skillstate\\/dist\\/src\\/manifest\\/index\\.js$/);
assert.match(import.meta.resolve('skillstate/tools'), /\\/node_modules\\/skillstate\\/dist\\/src\\/core\\/tools\\.js$/);
assert.match(import.meta.resolve('skillstate/inspect'), /\\/node_modules\\/skillstate\\/dist\\/src\\/runtime\\/inspect\\.js$/);
assert.equal(typeof scriptedModel, 'function');
assert.equal(typeof serveMcp, 'function');
assert.equal(typeof startInspector, 'function');
const registry = await discoverSkills({ examples: ['csv-tools', 'hello-extended'] });
assert.deepEqual(registry.entries().map((entry) => entry.name), ['csv-tools', 'hello-extended']);
assert.match((await disclose(registry, 'say hello')).text, /hello-extended/);
const definition = defineAgent({ name: 'assistant', skills: [counter] });
assert.ok(toolsForAgent(definition.new()).some((tool) => tool.function.name === 'increment'));
const system = createAgentSystem({ resolvers: [registry] });
const agent = system.spawn(definition, { id: 'a1' });
agent.send(createSignal('counter.increment'));
assert.deepEqual(await agent.call(createSignal('counter.get')), { count: 1 });
await system.shutdown();
console.log('ok');
`,
    );
    const outcome = spawnSync(process.execPath, ['app.mjs'], { cwd: app, encoding: 'utf8', env: userEnv, timeout: 60_000 });
    expect(outcome.stderr).toBe('');
    expect(outcome.stdout).toBe('ok\n');
    expect(readFileSync(path.join(app, 'node_modules', 'skillstate', 'package.json'), 'utf8')).toBe(readFileSync(`${root}package.json`, 'utf8'));
  });

  it('README: a CommonJS program requires skillstate and every subpath but skillstate/restate, which Node says to import()', { timeout: 60_000 }, () => {
    const { exports } = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { exports: Record<string, unknown> };
    const entries = Object.keys(exports).map((key) => (key === '.' ? 'skillstate' : `skillstate/${key.slice(2)}`));
    writeFileSync(
      path.join(app, 'app.cjs'),
      `
const assert = require('node:assert/strict');
for (const entry of ${JSON.stringify(entries.filter((entry) => entry !== 'skillstate/restate'))}) assert.ok(Object.keys(require(entry)).length > 0, entry);
const { createSignal, defineAgent } = require('skillstate');
const { counter } = require('skillstate/skills');
assert.equal(defineAgent({ name: 'required', skills: [counter] }).new().state.counter.count, 0);
assert.equal(createSignal('counter.get').type, 'counter.get');
assert.throws(() => require('skillstate/restate'), { code: 'ERR_REQUIRE_ASYNC_MODULE', message: /top-level await\\. Use import/ });
console.log('ok');
`,
    );
    const outcome = spawnSync(process.execPath, ['app.cjs'], { cwd: app, encoding: 'utf8', env: userEnv, timeout: 60_000 });
    expect(outcome.stderr).toBe('');
    expect(outcome.stdout).toBe('ok\n');
  });

  it('README install: npx skillstate --version runs the installed command', { timeout: 60_000 }, () => {
    const { version } = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { version: string };
    const outcome = npm(['exec', '--offline', '--', 'skillstate', '--version'], app);
    expect(outcome.stderr).toBe('');
    expect(outcome.stdout.trim()).toBe(version);
    expect(outcome.status).toBe(0);
  });

  it('TypeScript without ai installed: the shipped types compile with skipLibCheck false, every subpath', { timeout: 120_000 }, () => {
    expect(existsSync(path.join(app, 'node_modules', 'ai'))).toBe(false);
    // An application's own type packages; `skillstate/restate` needs its optional peer, the Restate SDK.
    for (const name of ['@types/node', '@restatedev/restate-sdk']) {
      mkdirSync(path.dirname(path.join(app, 'node_modules', name)), { recursive: true });
      symlinkSync(`${root}node_modules/${name}`, path.join(app, 'node_modules', name));
    }
    writeFileSync(
      path.join(app, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2023', module: 'nodenext', moduleResolution: 'nodenext', strict: true, skipLibCheck: false, noEmit: true, types: ['node'] }, files: ['check.ts'] }),
    );
    writeFileSync(
      path.join(app, 'check.ts'),
      `import { createAgentSystem, type ChatModel } from 'skillstate';
import * as skillstate from 'skillstate';
import * as skills from 'skillstate/skills';
import * as testing from 'skillstate/testing';
import * as mcp from 'skillstate/mcp';
import * as cli from 'skillstate/cli';
import * as restate from 'skillstate/restate';
import * as documents from 'skillstate/documents';
import * as tools from 'skillstate/tools';
import * as inspect from 'skillstate/inspect';

const model: ChatModel = testing.scriptedModel([{ text: 'hi' }]);
export const system = createAgentSystem({ models: { scripted: model } });
export type Everything = [typeof skillstate, typeof skills, typeof testing, typeof mcp, typeof cli, typeof restate, typeof documents, typeof tools, typeof inspect];
`,
    );
    const outcome = spawnSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-p', app], { cwd: app, encoding: 'utf8', timeout: 120_000 });
    expect(outcome.stdout + outcome.stderr).toBe('');
    expect(outcome.status).toBe(0);
  });
});
