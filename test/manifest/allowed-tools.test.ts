/**
 * allowed-tools: read as the specification defines it (tools the skill pre-approves), never as a
 * restriction. What an entry pre-approves in a conversation is tested in test/model/pre-approval.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cmd, createSkillTools, defineAction, defineAgent, discoverSkills } from '../../src/index.js';
import { parseSkillManifest } from '../../src/manifest/index.js';
import { toolsForAgent } from '../../src/core/tools.js';
import { parseAllowedTools } from '../../src/manifest/allowed-tools.js';
import { documentMetadata } from '../../src/manifest/spec.js';
import { simpleSkill, tree } from './tree.js';

const add = defineAction({ name: 'add', description: 'Adds', input: z.object({ a: z.number(), b: z.number() }), run: ({ a, b }) => a + b });
const wipe = defineAction({ name: 'wipe_disk', description: 'Deletes everything', input: z.object({}), run: () => 'wiped' });

/** The items the manifest holds for an `allowed-tools` string (split at white space) or list. */
const itemsOf = (field: string) => parseSkillManifest(`---\nname: s\ndescription: d\nallowed-tools: ${field}\n---\n`).manifest.allowedTools;

describe('reading allowed-tools', () => {
  it.each([
    ['names', 'Read Grep', [{ entry: 'Read', tool: 'Read' }, { entry: 'Grep', tool: 'Grep' }]],
    ['specifiers', 'Bash(git:*) Read(./docs/**)', [{ entry: 'Bash(git:*)', tool: 'Bash', specifier: 'git:*' }, { entry: 'Read(./docs/**)', tool: 'Read', specifier: './docs/**' }]],
    ['a specifier with spaces, which the string form splits', 'Bash(git diff *) Read', [{ entry: 'Bash(git diff *)', tool: 'Bash', specifier: 'git diff *' }, { entry: 'Read', tool: 'Read' }]],
    ['commas between entries', '"Read, Grep, Bash(git:*),"', [{ entry: 'Read', tool: 'Read' }, { entry: 'Grep', tool: 'Grep' }, { entry: 'Bash(git:*)', tool: 'Bash', specifier: 'git:*' }]],
    ['a list, wildcards and MCP-style names', '[run_skill_script(scripts/*.py), "mcp__linear__*", git_log]', [
      { entry: 'run_skill_script(scripts/*.py)', tool: 'run_skill_script', specifier: 'scripts/*.py' },
      { entry: 'mcp__linear__*', tool: 'mcp__linear__*' },
      { entry: 'git_log', tool: 'git_log' },
    ]],
  ])('%s', (_name, field, entries) => {
    expect(parseAllowedTools('s', itemsOf(field))).toEqual({ entries, diagnostics: [] });
  });

  it('reports each entry it cannot read, by skill and entry, and keeps the others', () => {
    const read = parseAllowedTools('careful', ['Read', 'Bash()', 'a.b', 'Bash(git', 'log']);
    expect(read.entries).toEqual([{ entry: 'Read', tool: 'Read' }]);
    expect(read.diagnostics.map((item) => [item.code, item.skill, item.subject])).toEqual([
      ['allowed_tools_invalid', 'careful', 'Bash()'],
      ['allowed_tools_invalid', 'careful', 'a.b'],
      // An open parenthesis takes the rest of the list with it.
      ['allowed_tools_invalid', 'careful', 'Bash(git log'],
    ]);
    expect(read.diagnostics[0]!.message).toBe("skill 'careful': allowed-tools entry 'Bash()' is neither a tool name nor Tool(specifier); it pre-approves nothing");
  });

  // Joined piece by piece: counting the parentheses of the whole joined text again for each item
  // took 45 s for an unclosed `Bash(` before 20,000 names.
  it('reads an unclosed Tool( before a long list in one pass, as one unreadable entry', () => {
    const items = ['Read', 'Bash(', ...Array.from({ length: 100_000 }, (_, i) => `Tool${i}`)];
    const read = parseAllowedTools('careful', items);
    expect(read.entries).toEqual([{ entry: 'Read', tool: 'Read' }]);
    const swallowed = items.slice(1).join(' ');
    expect(read.diagnostics.map((item) => [item.code, item.subject])).toEqual([['allowed_tools_invalid', `${swallowed.slice(0, 200)}… (${swallowed.length} characters)`]]);
    // The warning shows where the entry starts and how long it is, not the whole rest of the list.
    expect(read.diagnostics[0]!.message.length).toBeLessThan(400);
  });
});

describe('loading a skill with allowed-tools', () => {
  async function registryOf(files: Record<string, string>, trusted: (name: string) => boolean) {
    const root = await tree(files);
    const registry = await discoverSkills({ project: root, user: false, bundled: false }, { trust: (entry) => trusted(entry.name) });
    return { registry, diagnostics: registry.diagnostics };
  }

  it('reads the entries into the spec and reports the unreadable ones when the skill is loaded', async () => {
    const { registry, diagnostics } = await registryOf({ 'careful/SKILL.md': simpleSkill('careful', 'allowed-tools: add Bash(git:*) (oops)') }, () => true);
    expect(diagnostics.filter((item) => item.code.startsWith('allowed_tools'))).toEqual([]);
    const { spec } = await registry.activate('careful');
    expect(documentMetadata(spec)).toMatchObject({
      allowedTools: ['add', 'Bash(git:*)', '(oops)'],
      preApproves: [{ entry: 'add', tool: 'add' }, { entry: 'Bash(git:*)', tool: 'Bash', specifier: 'git:*' }],
      trusted: true,
    });
    expect(diagnostics.filter((item) => item.code.startsWith('allowed_tools'))).toMatchObject([{ code: 'allowed_tools_invalid', level: 'warning', skill: 'careful', subject: '(oops)' }]);
  });

  it('says that an untrusted skill pre-approves nothing', async () => {
    const { registry, diagnostics } = await registryOf({ 'shady/SKILL.md': simpleSkill('shady', 'allowed-tools: add wipe_disk'), 'plain/SKILL.md': simpleSkill('plain') }, () => false);
    await registry.activate('shady');
    await registry.activate('plain');
    expect(diagnostics.filter((item) => item.code === 'allowed_tools_untrusted')).toEqual([
      {
        level: 'info',
        code: 'allowed_tools_untrusted',
        skill: 'shady',
        message: "skill 'shady' is not trusted: its allowed-tools (add wipe_disk) pre-approve nothing until it is trusted (skillstate trust shady)",
      },
    ]);
  });

  it("restricts nothing: with the skill active every action of the agent runs and every tool is offered", async () => {
    const { registry } = await registryOf({ 'careful/SKILL.md': simpleSkill('careful', 'allowed-tools: add') }, () => true);
    const Agent = defineAgent({ name: 'worker', actions: [add, wipe], skills: [createSkillTools(registry)], registry });
    const agent = Agent.new({ id: 'w1' });
    const before = toolsForAgent(agent).map((tool) => tool.function.name);
    const loaded = await cmd(agent, { action: 'load_skill', params: { name: 'careful' } });
    expect(loaded.results[0]).toMatchObject({ ok: true });
    expect(toolsForAgent(loaded.agent).map((tool) => tool.function.name)).toEqual(before);
    expect((await cmd(loaded.agent, { action: 'wipe_disk' })).results[0]).toMatchObject({ ok: true, output: 'wiped' });
    expect((await cmd(loaded.agent, { action: 'add', params: { a: 1, b: 2 } })).results[0]).toMatchObject({ ok: true, output: 3 });
  });
});
