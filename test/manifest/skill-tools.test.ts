import { symlink } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cmd, createSkillTools, defineAgent, discoverSkills, isMounted, ManifestError } from '../../src/index.js';
import { toolsForAgent } from '../../src/core/tools.js';
import { EXAMPLE_SKILLS_DIR } from '../../src/manifest/discover.js';
import { simpleSkill, tree } from './tree.js';

async function setup(files: Record<string, string | Buffer> = {}) {
  const root = await tree(files);
  const registry = await discoverSkills({ bundled: EXAMPLE_SKILLS_DIR, extra: [root] });
  const skills = createSkillTools(registry);
  const Agent = defineAgent({ name: 'assistant', skills: [skills], registry });
  return { root, registry, Agent, agent: Agent.new({ id: 'a1' }) };
}

describe('load_skill', () => {
  it('mounts the skill: register_action per toolset tool, the body wrapped, root path and resources', async () => {
    const { agent } = await setup();
    const loaded = await cmd(agent, { action: 'load_skill', params: { name: 'hello-extended' } });
    expect(loaded.effects.map((e) => [e.type, 'action' in e ? e.action : undefined, e.meta.skill])).toEqual([
      ['register_action', 'say_hello', 'hello-extended'],
      ['register_action', 'wave', 'hello-extended'],
    ]);
    const result = loaded.results[0]!;
    if (!result.ok) throw new Error(result.error.message);
    expect(result.output).toMatchObject({
      skill: 'hello-extended',
      version: '1.0.0',
      rootPath: path.join(EXAMPLE_SKILLS_DIR, 'hello-extended'),
      resources: ['examples.md', 'toolsets/index.ts'],
      tools: ['say_hello', 'wave'],
      alreadyLoaded: false,
    });
    const instructions = (result.output as { instructions: string }).instructions;
    expect(instructions.startsWith('<skill_content name="hello-extended">\n# Hello Extended Skill')).toBe(true);
    expect(instructions).not.toContain('toolsets:');
    expect(isMounted(loaded.agent, 'hello-extended')).toBe(true);
    expect(toolsForAgent(loaded.agent).map((t) => t.function.name)).toEqual(['load_skill', 'list_skills', 'read_skill_resource', 'say_hello', 'wave']);
    const hello = await cmd(loaded.agent, { action: 'say_hello', params: { name: 'Ada', style: 'excited' } });
    expect(hello.results[0]).toMatchObject({ ok: true, output: { output: 'Hello, Ada!!' } });
  });

  it('a second load mounts nothing and returns the body again', async () => {
    const { agent } = await setup();
    const first = await cmd(agent, { action: 'load_skill', params: { name: 'hello-extended' } });
    const second = await cmd(first.agent, { action: 'load_skill', params: { name: 'hello-extended' } });
    expect(second.effects).toEqual([]);
    expect(second.results[0]).toMatchObject({ ok: true, output: { alreadyLoaded: true, skill: 'hello-extended' } });
    expect(second.agent.mounted.filter((m) => m.name === 'hello-extended')).toHaveLength(1);
  });

  it('an unknown name fails and lists the available skills', async () => {
    const { agent } = await setup();
    const failed = await cmd(agent, { action: 'load_skill', params: { name: 'nope' } });
    expect(failed.results[0]).toMatchObject({ ok: false, error: { code: 'action_failed', details: { reason: 'unknown_skill', details: { available: ['csv-tools', 'hello-extended'] } } } });
    expect(failed.agent).toBe(agent);
  });

  it('a name whose folder was skipped says why, to the model and to a program asking the registry', async () => {
    const { root, agent, registry } = await setup({ 'broken/SKILL.md': '---\nname: [unclosed\n---\nbody\n' });
    const failed = await cmd(agent, { action: 'load_skill', params: { name: 'broken' } });
    const result = failed.results[0]!;
    expect(result).toMatchObject({ ok: false, error: { details: { reason: 'unknown_skill' } } });
    expect(!result.ok && result.error.message).toContain(`no skill named 'broken' (${path.join(root, 'broken')} skipped: `);
    expect(!result.ok && result.error.message).toContain('Invalid YAML');
    await expect(registry.content('broken')).rejects.toMatchObject({ code: 'skill_not_found', message: expect.stringContaining('Invalid YAML') });
    // A name no folder has is answered as before.
    const nope = await cmd(agent, { action: 'load_skill', params: { name: 'nope' } });
    expect(!nope.results[0]!.ok && nope.results[0]!.error.message).toContain("no skill named 'nope'; available skills:");
  });

  it('a broken toolset fails with toolset_failed and mounts nothing', async () => {
    const { agent } = await setup({ 'broken/SKILL.md': simpleSkill('broken', 'toolsets: ["toolsets/missing:Tools"]') });
    const failed = await cmd(agent, { action: 'load_skill', params: { name: 'broken' } });
    expect(failed.results[0]).toMatchObject({ ok: false, error: { details: { reason: 'toolset_failed' } } });
    expect(isMounted(failed.agent, 'broken')).toBe(false);
  });

  it('an agent restored from JSON resolves its document skills after registry.load', async () => {
    const { agent } = await setup();
    const loaded = await cmd(agent, { action: 'load_skill', params: { name: 'csv-tools' } });
    const json = JSON.parse(JSON.stringify(loaded.agent));
    // Another process: a new registry and a definition that has not loaded anything yet.
    const fresh = await discoverSkills({ bundled: EXAMPLE_SKILLS_DIR });
    const Agent = defineAgent({ name: 'assistant', skills: [createSkillTools(fresh)] });
    expect(Agent.restore(json, { skills: fresh.resolver() }).ok).toBe(false);
    await fresh.load(json.mounted.map((m: { name: string }) => m.name).filter((n: string) => n !== 'skills'));
    const restored = Agent.restore(json, { skills: fresh.resolver() });
    expect(restored.ok && isMounted(restored.value, 'csv-tools')).toBe(true);
  });
});

describe('list_skills', () => {
  it('lists enabled skills with their whole descriptions, "use when" included', async () => {
    const { agent } = await setup({ 'off/SKILL.md': simpleSkill('off', 'default_enabled: false') });
    const listed = await cmd(agent, { action: 'list_skills' });
    expect(listed.results[0]).toMatchObject({
      ok: true,
      output: {
        count: 2,
        skills: [
          {
            name: 'csv-tools',
            description:
              'Summarise and inspect CSV files. Use it when the user has a .csv file, a spreadsheet export or comma-separated data and wants row counts, column names or column totals.',
            version: '0.2.0',
            source: 'bundled',
          },
          { name: 'hello-extended', description: 'Extended greeting capabilities. Greets people by name in several styles and waves at them.', version: '1.0.0', source: 'bundled' },
        ],
      },
    });
  });
});

describe('read_skill_resource', () => {
  const read = async (files: Record<string, string | Buffer>, skill: string, file: string, prepare?: (root: string) => Promise<void>) => {
    const env = await setup(files);
    await prepare?.(env.root);
    const outcome = await cmd(env.agent, { action: 'read_skill_resource', params: { skill, path: file } });
    return { result: outcome.results[0]!, root: env.root };
  };

  it('reads a text file by relative path', async () => {
    const { result } = await read({}, 'csv-tools', './reference.md');
    expect(result).toMatchObject({ ok: true, output: { path: 'reference.md', binary: false, truncated: false } });
    expect((result as { output: { content: string } }).output.content).toMatch(/^# CSV reference/);
  });

  it.each([
    ['../secret.txt', "contains '..'"],
    ['/etc/passwd', 'is an absolute path'],
    ['a/../../x', "contains '..'"],
  ])('refuses %s', async (file, message) => {
    const { result } = await read({}, 'csv-tools', file);
    expect(result).toMatchObject({ ok: false, error: { details: { reason: 'resource_refused' } } });
    expect(!result.ok && result.error.message).toContain(message);
  });

  it('refuses a link leaving the root', async () => {
    const { result } = await read({ 'leaky/SKILL.md': simpleSkill('leaky'), 'outside.txt': 'secret' }, 'leaky', 'escape.txt', async (root) => {
      await symlink(path.join(root, 'outside.txt'), path.join(root, 'leaky', 'escape.txt'));
    });
    // the listing never offers the link; asking for it by name is refused, and nothing is read
    expect(result).toMatchObject({ ok: false, error: { details: { reason: 'resource_refused' } } });
    expect(!result.ok && result.error.message).toContain("'escape.txt' leads outside the skill's root");
    expect(!result.ok && result.error.message).not.toContain('secret');
  });

  it('refuses a path through a linked folder that leaves the root', async () => {
    const { result } = await read({ 'leaky/SKILL.md': simpleSkill('leaky'), 'elsewhere/notes.txt': 'secret' }, 'leaky', 'docs/notes.txt', async (root) => {
      await symlink(path.join(root, 'elsewhere'), path.join(root, 'leaky', 'docs'));
    });
    expect(result).toMatchObject({ ok: false, error: { details: { reason: 'resource_refused' } } });
    expect(!result.ok && result.error.message).toContain("'docs/notes.txt' leads outside the skill's root");
  });

  it('refuses a link that leaves the root after the listing was made', async () => {
    const env = await setup({ 'leaky/SKILL.md': simpleSkill('leaky'), 'leaky/data.txt': 'fine', 'outside.txt': 'secret' });
    await env.registry.content('leaky');
    const { rm } = await import('node:fs/promises');
    await rm(path.join(env.root, 'leaky', 'data.txt'));
    await symlink(path.join(env.root, 'outside.txt'), path.join(env.root, 'leaky', 'data.txt'));
    const outcome = await cmd(env.agent, { action: 'read_skill_resource', params: { skill: 'leaky', path: 'data.txt' } });
    expect(outcome.results[0]).toMatchObject({ ok: false, error: { details: { reason: 'resource_refused' } } });
  });

  it('reports binary files instead of dumping them', async () => {
    const { result } = await read({ 'bin/SKILL.md': simpleSkill('bin'), 'bin/image.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]) }, 'bin', 'image.png');
    expect(result).toMatchObject({ ok: true, output: { binary: true, size: 8, content: '[binary file of 8 bytes: not shown]' } });
  });

  it('caps the size and marks the cut', async () => {
    const env = await setup({ 'big/SKILL.md': simpleSkill('big'), 'big/log.txt': 'x'.repeat(5000) });
    const skills = createSkillTools(env.registry, { maxResourceBytes: 1000 });
    const agent = defineAgent({ name: 'small', skills: [skills] }).new();
    const outcome = await cmd(agent, { action: 'read_skill_resource', params: { skill: 'big', path: 'log.txt' } });
    expect(outcome.results[0]).toMatchObject({ ok: true, output: { truncated: true, size: 5000 } });
    expect((outcome.results[0] as { output: { content: string } }).output.content).toHaveLength(1000);
  });

  it('a missing file lists what exists and suggests the case-insensitive match', async () => {
    const { result } = await read({}, 'csv-tools', 'REFERENCE.md');
    expect(!result.ok && result.error.message).toBe(
      "action 'read_skill_resource' failed: skill 'csv-tools' has no resource 'REFERENCE.md'. Did you mean 'reference.md'? Available: data/sample.csv, reference.md, scripts/summarize.py",
    );
  });

  it('unknown skill names are refused with the list', async () => {
    const { result } = await read({}, 'nope', 'x.md');
    expect(!result.ok && result.error.message).toContain("no skill named 'nope'; available skills: csv-tools, hello-extended");
  });
});

describe('ManifestError', () => {
  it('is a typed error with a stable code', async () => {
    const { registry } = await setup();
    const error = await registry.activate('missing').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ManifestError);
    expect((error as ManifestError).code).toBe('skill_not_found');
  });
});

describe('run_skill_script', () => {
  /** Loads the skill `tool` (its scripts given) on an agent offering run_skill_script, and runs `script`. */
  const run = async (files: Record<string, string>, script: string) => {
    const root = await tree({ 'tool/SKILL.md': simpleSkill('tool'), ...Object.fromEntries(Object.entries(files).map(([name, text]) => [`tool/${name}`, text])) });
    const registry = await discoverSkills({ extra: [root] });
    const agent = defineAgent({ name: 'runner', skills: [createSkillTools(registry, { scripts: true })], registry }).new();
    const loaded = await cmd(agent, { action: 'load_skill', params: { name: 'tool' } });
    const ran = await cmd(loaded.agent, { action: 'run_skill_script', params: { skill: 'tool', script } });
    const result = ran.results[0]!;
    if (!result.ok) throw new Error(result.error.message);
    return result.output as Record<string, unknown>;
  };

  it('tells the model that processes the script left running were killed', async () => {
    const output = await run({ 'daemon.sh': 'sleep 300 & echo started' }, 'daemon.sh');
    expect(output).toMatchObject({ exitCode: 0, stdout: 'started\n', strayProcessesKilled: true });
  });

  it('tells the model the signal that ended the script', async () => {
    const output = await run({ 'killed.sh': 'echo going; kill -TERM $$' }, 'killed.sh');
    expect(output).toMatchObject({ exitCode: null, signal: 'SIGTERM', stdout: 'going\n', timedOut: false });
  });

  it('keeps an ordinary result small: no signal, no stray-process field', async () => {
    const output = await run({ 'ok.sh': 'echo ok; exit 3' }, 'ok.sh');
    expect(Object.keys(output).sort()).toEqual(['durationMs', 'exitCode', 'script', 'skill', 'stderr', 'stdout', 'timedOut', 'truncated']);
    expect(output).toMatchObject({ exitCode: 3, stdout: 'ok\n' });
  });

  it('refuses a timeout a timer cannot hold when the tools are made, naming the option', async () => {
    const registry = await discoverSkills({ extra: [await tree({ 'tool/SKILL.md': simpleSkill('tool') })] });
    const made = (() => {
      try {
        return createSkillTools(registry, { scripts: { timeoutMs: 3_000_000_000 } });
      } catch (error) {
        return error;
      }
    })();
    expect(made).toBeInstanceOf(ManifestError);
    expect(made).toMatchObject({ code: 'invalid_options', subject: 'scripts.timeoutMs', message: 'scripts.timeoutMs must be a positive number of milliseconds, at most 2147483647 (about 24.8 days), not 3000000000' });
  });
});
