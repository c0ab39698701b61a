import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { simpleSkill, skillMd, tree } from '../manifest/tree.js';

const BIN = fileURLToPath(new URL('../../bin/skillstate.js', import.meta.url));
const BUNDLED = fileURLToPath(new URL('../../skills', import.meta.url));

/** Runs the real command as a subprocess, in `cwd`, with no user or project skills unless given. */
function skillstate(args: string[], cwd: string) {
  const result = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', timeout: 30_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('skillstate CLI', () => {
  it('prints help for the program and for every command', async () => {
    const cwd = await tree();
    const top = skillstate(['--help'], cwd);
    expect(top.code).toBe(0);
    expect(top.stdout).toContain('Usage: skillstate <command> [options]');
    for (const command of ['validate', 'list', 'disclose', 'read', 'run', 'mcp']) {
      const help = skillstate([command, '--help'], cwd);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^Usage: skillstate ${command}`));
    }
  });

  it('fails on unknown commands and bad usage with a non-zero exit and a message on stderr', async () => {
    const cwd = await tree();
    expect(skillstate(['frobnicate'], cwd)).toMatchObject({ code: 2, stdout: '' });
    const missing = skillstate(['validate'], cwd);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('validate needs at least one skill folder');
    expect(skillstate(['list', '--bogus'], cwd).code).toBe(2);
  });

  it('validate: exit 0 for valid folders, 1 with the reference wording otherwise', async () => {
    const root = await tree({ 'good/SKILL.md': simpleSkill('good'), 'bad/SKILL.md': skillMd('name: Bad_Name\ndescription: x') });
    const ok = skillstate(['validate', path.join(root, 'good'), path.join(BUNDLED, 'hello-extended')], root);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe(`Valid skill: ${path.join(root, 'good')}\nValid skill: ${path.join(BUNDLED, 'hello-extended')}\n`);
    const bad = skillstate(['validate', path.join(root, 'bad')], root);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("  - Skill name 'Bad_Name' must be lowercase\n");
    expect(bad.stderr).toContain("  - Directory name 'bad' must match skill name 'Bad_Name'\n");
    const spec = skillstate(['validate', '--spec', 'agentskills', path.join(BUNDLED, 'csv-tools')], root);
    expect(spec.code).toBe(1);
    expect(spec.stderr).toContain('Unexpected fields in frontmatter: scripts, triggers, version.');
  });

  it('list: skills with source and path, shadowed duplicates and warnings', async () => {
    const home = await tree({ '.agent/skills/csv-tools/SKILL.md': simpleSkill('csv-tools'), '.agent/skills/broken/SKILL.md': 'no front matter' });
    const listed = skillstate(['list', '--user', path.join(home, '.agent', 'skills'), '--no-project'], home);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`csv-tools\\s+user\\s+-\\s+${path.join(home, '.agent', 'skills', 'csv-tools')}`));
    expect(listed.stdout).toMatch(new RegExp(`hello-extended\\s+bundled\\s+1\\.0\\.0\\s+${path.join(BUNDLED, 'hello-extended')}`));
    expect(listed.stdout).toContain(`Shadowed:\n  csv-tools: bundled ${path.join(BUNDLED, 'csv-tools')} is shadowed by user ${path.join(home, '.agent', 'skills', 'csv-tools')}`);
    expect(listed.stdout).toContain('SKILL.md must start with YAML frontmatter (---)');
    const json = JSON.parse(skillstate(['list', '--json', '--no-user', '--no-project'], home).stdout);
    expect(json.skills.map((s: { name: string }) => s.name)).toEqual(['csv-tools', 'hello-extended']);
  });

  it('reads project skills from ./.agent/skills of the working directory', async () => {
    const cwd = await tree({ '.agent/skills/local-skill/SKILL.md': simpleSkill('local-skill') });
    const listed = skillstate(['list', '--no-user', '--no-bundled'], cwd);
    expect(listed.stdout).toMatch(/local-skill\s+project/);
  });

  it('disclose: the tier, the size and the exact text', async () => {
    const cwd = await tree();
    const shown = skillstate(['disclose', '--no-user', '--no-project', 'please greet Bob'], cwd);
    expect(shown.code).toBe(0);
    const text = shown.stdout.split('----- text -----\n')[1]!.split('----- end -----')[0]!;
    expect(shown.stdout.startsWith('tier 3: triggers match the query\n')).toBe(true);
    expect(shown.stdout).toContain(`size: ${text.length} characters, about ${Math.ceil(text.length / 4)} tokens`);
    expect(text).toContain(`**Root Path:** \`${path.join(BUNDLED, 'hello-extended')}\``);
    const none = skillstate(['disclose', '--no-user', '--no-project', 'weather today'], cwd);
    expect(none.stdout).toContain('tier 1: no trigger matches the query\nsize: 20 characters, about 5 tokens\n----- text -----\n[2 skills available]\n');
    const json = JSON.parse(skillstate(['disclose', '--json', '--no-user', '--no-project', 'what can you do'], cwd).stdout);
    expect(json).toMatchObject({ tier: 2, catalog: ['csv-tools', 'hello-extended'] });
  });

  it('read: prints a resource; refusals and missing files fail with the reason', async () => {
    const cwd = await tree();
    const read = skillstate(['read', '--no-user', '--no-project', 'csv-tools', 'reference.md'], cwd);
    expect(read.code).toBe(0);
    expect(read.stdout).toMatch(/^# CSV reference\n/);
    const refused = skillstate(['read', '--no-user', '--no-project', 'csv-tools', '../hello-extended/SKILL.md'], cwd);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("contains '..'");
    expect(refused.stderr).toContain('[resource_refused]');
    const missing = skillstate(['read', '--no-user', '--no-project', 'csv-tools', 'REFERENCE.md'], cwd);
    expect(missing.stderr).toContain("Did you mean 'reference.md'?");
  });

  it('run: passes the script output and exit code through, 124 on time-out', async () => {
    const cwd = await tree({ '.agent/skills/slow/SKILL.md': simpleSkill('slow'), '.agent/skills/slow/wait.sh': 'echo started; sleep 20', '.agent/skills/slow/code.sh': 'echo "args: $*"; exit 7', '.agent/skills/slow/bg.sh': 'sleep 300 & echo left' });
    const ran = skillstate(['run', '--no-user', 'csv-tools', 'summarize', 'data/sample.csv'], cwd);
    expect(ran.code).toBe(0);
    expect(JSON.parse(ran.stdout).rows).toBe(4);
    const code = skillstate(['run', '--no-user', 'slow', 'code.sh', '--flag', 'x'], cwd);
    expect(code).toMatchObject({ code: 7, stdout: 'args: --flag x\n', stderr: '' });
    const stray = skillstate(['run', '--no-user', 'slow', 'bg.sh'], cwd);
    expect(stray).toMatchObject({ code: 0, stdout: 'left\n', stderr: 'note: the script left processes running when it exited; they were killed\n' });
    const timed = skillstate(['run', '--no-user', '--timeout', '1000', 'slow', 'wait.sh'], cwd);
    expect(timed.code).toBe(124);
    expect(timed.stdout).toBe('started\n');
    expect(timed.stderr).toContain("script 'wait.sh' timed out after 1000 ms");
    const unknown = skillstate(['run', '--no-user', 'nope', 'x.sh'], cwd);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("no skill named 'nope'");
  });

  it('mcp: usage mistakes exit 2 with the reason; an --agent that is not an agent definition is named', async () => {
    const cwd = await tree({ 'package.json': '{ "type": "module" }\n', 'agents.ts': 'export const notAnAgent = 42;\n' });
    expect(skillstate(['mcp', '--token', 'x'], cwd)).toMatchObject({ code: 2, stdout: '' });
    expect(skillstate(['mcp', '--token', 'x'], cwd).stderr).toContain('--host, --token and --stateless apply to --http only');
    expect(skillstate(['mcp', '--http', 'eighty'], cwd).stderr).toContain("--http must be a port number (0 lets the system choose), not 'eighty'");
    const wrong = skillstate(['mcp', '--no-user', '--agent', 'agents.ts:notAnAgent'], cwd);
    expect(wrong.code).toBe(2);
    expect(wrong.stdout).toBe('');
    expect(wrong.stderr).toContain("--agent: 'agents.ts' exports no agent definition named 'notAnAgent'");
  });
});
