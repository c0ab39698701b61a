/** The trust gate: project skills run no code until trusted; the model is told why. */
import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cmd, createSkillTools, defineAgent, discoverSkills, type LoadSkillOutput } from '../../src/index.js';
import { disclose, runSkillScript } from '../../src/manifest/index.js';
import { defaultSkillSources, EXAMPLE_SKILLS_DIR } from '../../src/manifest/discover.js';
import { bodyForModel, readTrustFile, trustSkillFolders } from '../../src/manifest/trust.js';
import { simpleSkill, tree } from './tree.js';

const zodUrl = new URL('../../node_modules/zod/index.js', import.meta.url).href;

/** A project with one skill whose toolset leaves a marker file when it is imported, and a script. */
async function project(): Promise<{ cwd: string; skills: string; marker: string }> {
  const cwd = await tree();
  const marker = path.join(cwd, 'imported.txt');
  const skills = path.join(cwd, '.agent', 'skills');
  const { writeTree } = await import('./tree.js');
  await writeTree(skills, {
    'tooly/SKILL.md': simpleSkill('tooly', 'toolsets:\n  - "tools:Tools"\nscripts:\n  - name: hi\n    path: hi.sh', '# Tooly\n\nCall ping.\n'),
    'tooly/tools.mjs': `
      import { writeFileSync } from 'node:fs';
      import { z } from '${zodUrl}';
      writeFileSync(${JSON.stringify(marker)}, 'imported');
      export const Tools = { ping: { description: 'Ping', parameters: z.object({}), execute: () => 'pong' } };
    `,
    'tooly/hi.sh': 'echo hi',
  });
  return { cwd, skills, marker };
}

async function loadTooly(registry: Awaited<ReturnType<typeof discoverSkills>>) {
  const Agent = defineAgent({ name: 'a', skills: [createSkillTools(registry)], registry });
  const loaded = await cmd(Agent.new(), { action: 'load_skill', params: { name: 'tooly' } });
  const first = loaded.results[0]!;
  if (!first.ok) throw new Error(first.error.message);
  return { agent: loaded.agent, output: first.output as LoadSkillOutput };
}

describe('trust', () => {
  it('an untrusted project skill is disclosed and readable, but its toolset is not imported and its scripts are refused', async () => {
    const { skills, marker, cwd } = await project();
    const registry = await discoverSkills({ project: skills }, { trustFile: path.join(cwd, 'trust.json') });
    expect(registry.entry('tooly')).toMatchObject({ source: 'project', trusted: false });
    expect(registry.diagnostics).toContainEqual(expect.objectContaining({ level: 'info', code: 'skill_untrusted', skill: 'tooly' }));
    const { agent, output } = await loadTooly(registry);
    expect(output).toMatchObject({ skill: 'tooly', tools: [], trusted: false });
    expect(output.notice).toBe("Skill 'tooly' comes from the project folder and is not trusted: its tools were not loaded and its scripts will not run. Follow its instructions without them, or ask the user to trust it (skillstate trust tooly).");
    expect(registry.get('tooly')!.instructions).toBe(`> ${output.notice}\n\n# Tooly\n\nCall ping.\n`);
    expect(existsSync(marker)).toBe(false);
    const read = await cmd(agent, { action: 'read_skill_resource', params: { skill: 'tooly', path: 'hi.sh' } });
    expect(read.results[0]).toMatchObject({ ok: true, output: { content: 'echo hi' } });
    await expect(runSkillScript(registry.entry('tooly')!, 'hi')).rejects.toMatchObject({ code: 'script_refused', details: { reason: 'untrusted' } });
  });

  it('a skill the trust file lists is trusted: its toolset is imported and its scripts run', async () => {
    const { skills, marker, cwd } = await project();
    const trustFile = path.join(cwd, 'home', 'trust.json');
    await trustSkillFolders(trustFile, [{ name: 'tooly', path: path.join(skills, 'tooly') }]);
    expect((await readTrustFile(trustFile)).records).toEqual([expect.objectContaining({ name: 'tooly', path: realpathSync(path.join(skills, 'tooly')) })]);
    const registry = await discoverSkills({ project: skills }, { trustFile });
    const { output } = await loadTooly(registry);
    expect(output).toMatchObject({ tools: ['ping'], trusted: true });
    expect(output.notice).toBeUndefined();
    expect(existsSync(marker)).toBe(true);
    expect((await runSkillScript(registry.entry('tooly')!, 'hi')).stdout).toBe('hi\n');
  });

  it("trust: 'all', 'none' and a function decide instead of the trust file", async () => {
    const { skills, cwd } = await project();
    const trustFile = path.join(cwd, 'trust.json');
    await trustSkillFolders(trustFile, [{ name: 'tooly', path: path.join(skills, 'tooly') }]);
    expect((await discoverSkills({ project: skills }, { trust: 'all' })).entry('tooly')!.trusted).toBe(true);
    expect((await discoverSkills({ project: skills }, { trust: 'none', trustFile })).entry('tooly')!.trusted).toBe(false);
    const seen: string[] = [];
    const registry = await discoverSkills({ project: skills }, { trust: (entry) => (seen.push(entry.name), entry.name === 'tooly') });
    expect(registry.entry('tooly')!.trusted).toBe(true);
    expect(seen).toEqual(['tooly']);
  });

  it('skills of the user, the application and extra paths are trusted; a broken trust file trusts nothing and says so', async () => {
    const { skills, cwd } = await project();
    const user = await discoverSkills({ user: skills });
    expect(user.entry('tooly')!.trusted).toBe(true);
    const { writeFile } = await import('node:fs/promises');
    const trustFile = path.join(cwd, 'broken.json');
    await writeFile(trustFile, '{ not json');
    const registry = await discoverSkills({ project: skills }, { trustFile });
    expect(registry.entry('tooly')!.trusted).toBe(false);
    expect(registry.diagnostics).toContainEqual(expect.objectContaining({ level: 'warning', code: 'trust_file_invalid', subject: trustFile }));
  });

  it('trusting a skill takes effect at the next refresh', async () => {
    const { skills, cwd } = await project();
    const trustFile = path.join(cwd, 'trust.json');
    const registry = await discoverSkills({ project: skills }, { trustFile });
    expect((await registry.activate('tooly')).spec.actions).toEqual([]);
    await trustSkillFolders(trustFile, [{ name: 'tooly', path: path.join(skills, 'tooly') }]);
    await registry.refresh();
    expect((await registry.activate('tooly')).spec.actions.map((action) => action.name)).toEqual(['ping']);
  });
});

describe('the untrusted notice, wherever a model reads the body', () => {
  const notice = "Skill 'tooly' comes from the project folder and is not trusted: its tools were not loaded and its scripts will not run. Follow its instructions without them, or ask the user to trust it (skillstate trust tooly).";

  it('load_skill: the instructions start with the notice, inside the wrapper', async () => {
    const { skills, cwd } = await project();
    const registry = await discoverSkills({ project: skills }, { trustFile: path.join(cwd, 'trust.json') });
    const { output } = await loadTooly(registry);
    expect(output.instructions).toBe(`<skill_content name="tooly">\n> ${notice}\n\n# Tooly\n\nCall ping.\n</skill_content>`);
    expect(output.notice).toBe(notice);
  });

  it('disclosure: the body shown in full starts with the notice, and a budget cut shortens the body, never the notice', async () => {
    const { skills, cwd } = await project();
    const { writeFile } = await import('node:fs/promises');
    const long = `# Tooly\n\n${'Call ping, then call ping again. '.repeat(60)}\n`;
    await writeFile(path.join(skills, 'tooly', 'SKILL.md'), simpleSkill('tooly', '', long));
    const registry = await discoverSkills({ project: skills }, { trustFile: path.join(cwd, 'trust.json') });
    const shown = await disclose(registry, 'use tooly', { preload: ['tooly'] });
    expect(shown.text).toContain(`<skill_content name="tooly">\n> ${notice}\n\n# Tooly\n`);
    const cut = await disclose(registry, 'use tooly', { preload: ['tooly'], budget: { chars: shown.text.length - 600 } });
    expect(cut.cuts).toContainEqual(expect.objectContaining({ kind: 'body_truncated', skill: 'tooly' }));
    expect(cut.text).toContain(`<skill_content name="tooly">\n> ${notice}\n\n# Tooly\n`);
  });

  it('bodyForModel: the one rule, the notice before an untrusted body and nothing before a trusted one', () => {
    expect(bodyForModel({ name: 'tooly', source: 'project', trusted: false }, '# Body\n')).toBe(`> ${notice}\n\n# Body\n`);
    expect(bodyForModel({ name: 'tooly', source: 'project', trusted: true }, '# Body\n')).toBe('# Body\n');
  });

  it('a trusted skill is shown as it is', async () => {
    const { skills } = await project();
    const registry = await discoverSkills({ project: skills }, { trust: 'all' });
    const { output } = await loadTooly(registry);
    expect(output.instructions).toBe('<skill_content name="tooly">\n# Tooly\n\nCall ping.\n</skill_content>');
    expect((await disclose(registry, 'use tooly', { preload: ['tooly'] })).text).not.toContain('is not trusted');
  });
});

describe('default sources', () => {
  it("are the project and user folders; the application's own folder only when named; examples never", async () => {
    const cwd = await tree({ '.agent/skills/mine/SKILL.md': simpleSkill('mine') });
    const home = await tree({ '.agent/skills/theirs/SKILL.md': simpleSkill('theirs') });
    const app = await tree({ 'shipped/SKILL.md': simpleSkill('shipped') });
    expect(defaultSkillSources({ cwd, home })).toEqual({ project: path.join(cwd, '.agent', 'skills'), user: path.join(home, '.agent', 'skills'), bundled: false, extra: [] });
    const registry = await discoverSkills(defaultSkillSources({ cwd, home, bundled: app }));
    expect(registry.entries().map((entry) => [entry.name, entry.source])).toEqual([['mine', 'project'], ['shipped', 'bundled'], ['theirs', 'user']]);
    expect(registry.entries().some((entry) => entry.rootPath?.startsWith(EXAMPLE_SKILLS_DIR))).toBe(false);
  });

  it('discoverSkills() with no arguments scans the working directory and home only', async () => {
    const { spawnSync } = await import('node:child_process');
    const cwd = await tree({ '.agent/skills/mine/SKILL.md': simpleSkill('mine') });
    const entry = new URL('../../src/index.ts', import.meta.url).pathname;
    const program = `const { discoverSkills } = await import(${JSON.stringify(entry)}); const r = await discoverSkills(); console.log(JSON.stringify(r.entries().map((e) => [e.name, e.source])));`;
    const outcome = spawnSync(process.execPath, ['--import', new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href, '--input-type=module', '-e', program], { cwd, encoding: 'utf8', env: { ...process.env, HOME: path.join(cwd, 'home') }, timeout: 30_000 });
    expect(outcome.stderr).toBe('');
    expect(JSON.parse(outcome.stdout)).toEqual([['mine', 'project']]);
  });

  it('example skills are added by name, last in precedence; an unknown name is a warning listing them', async () => {
    const registry = await discoverSkills({ examples: ['hello-extended', 'nope'] });
    expect(registry.entries().map((entry) => [entry.name, entry.source])).toEqual([['hello-extended', 'example']]);
    expect(registry.diagnostics).toContainEqual(expect.objectContaining({ level: 'warning', code: 'source_missing', message: "no example skill named 'nope'; the examples are: csv-tools, hello-extended" }));
  });
});
