import { spawnSync } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { COMMAND_NAMES, loadCommand, usage } from '../../src/cli/main.js';
import { simpleSkill, skillMd, tree } from '../manifest/tree.js';

const BIN = fileURLToPath(new URL('../../bin/skillstate.js', import.meta.url));
const BUNDLED = fileURLToPath(new URL('../../skills', import.meta.url));

/**
 * Runs the real command as a subprocess, in `cwd`, with no user or project skills unless given;
 * its home folder (user skills, trust file) is `<cwd>/.home`, never the real one.
 */
function skillstate(args: string[], cwd: string) {
  const result = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', timeout: 30_000, env: { ...process.env, HOME: path.join(cwd, '.home') } });
  // A scan that takes over 300 ms says so on stderr (a busy machine): not what these cases check.
  return { code: result.status, stdout: result.stdout, stderr: result.stderr.replace(/^scanning skill folders…\n/gm, '') };
}

// Each case starts several real processes; on a busy machine one start can take seconds.
describe('skillstate CLI', { timeout: 90_000 }, () => {
  it('prints help for the program and for every command', async () => {
    const cwd = await tree();
    const top = skillstate(['--help'], cwd);
    expect(top.code).toBe(0);
    expect(top.stdout).toContain('Usage: skillstate <command> [options]');
    for (const command of ['validate', 'list', 'disclose', 'read', 'run', 'init', 'trust', 'mcp']) {
      const help = skillstate([command, '--help'], cwd);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^Usage: skillstate ${command}`));
    }
  });

  it('lists twelve commands with a summary each, and every one loads its module when it runs', async () => {
    expect(COMMAND_NAMES).toEqual(['validate', 'list', 'disclose', 'read', 'run', 'init', 'trust', 'inspect', 'trace', 'mcp', 'chat', 'restate']);
    for (const name of COMMAND_NAMES) {
      expect(usage()).toMatch(new RegExp(`^  ${name} +\\S.+$`, 'm'));
      const command = await loadCommand(name);
      expect(typeof command.run).toBe('function');
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

  it('a misspelled command or option names the one it was likely meant to be', async () => {
    const cwd = await tree();
    const command = skillstate(['lsit'], cwd);
    expect(command).toMatchObject({ code: 2, stdout: '' });
    expect(command.stderr).toMatch(/^skillstate: unknown command 'lsit'; did you mean 'list'\?\n\nUsage: skillstate <command>/);
    expect(skillstate(['run', '--timout', '5', 'a', 'b'], cwd)).toMatchObject({
      code: 2,
      stderr: "skillstate run: unknown option '--timout'; did you mean '--timeout'?\nRun 'skillstate run --help' for usage.\n",
    });
    expect(skillstate(['list', '--bogus'], cwd).stderr).toBe("skillstate list: Unknown option '--bogus'\nRun 'skillstate list --help' for usage.\n");
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
    const listed = skillstate(['list', '--user', path.join(home, '.agent', 'skills'), '--bundled', BUNDLED, '--no-project'], home);
    expect(listed.code).toBe(1); // the broken folder was skipped
    expect(listed.stdout).toMatch(new RegExp(`csv-tools\\s+user\\s+-\\s+${path.join(home, '.agent', 'skills', 'csv-tools')}`));
    expect(listed.stdout).toMatch(new RegExp(`hello-extended\\s+bundled\\s+1\\.0\\.0\\s+${path.join(BUNDLED, 'hello-extended')}`));
    expect(listed.stdout).toContain(`Shadowed:\n  csv-tools: bundled ${path.join(BUNDLED, 'csv-tools')} is shadowed by user ${path.join(home, '.agent', 'skills', 'csv-tools')}`);
    expect(listed.stdout).toContain('SKILL.md must start with YAML frontmatter (---)');
    const json = JSON.parse(skillstate(['list', '--json', '--no-user', '--no-project', '--bundled', BUNDLED], home).stdout);
    expect(json.skills.map((s: { name: string }) => s.name)).toEqual(['csv-tools', 'hello-extended']);
  });

  it('reads project skills from ./.agent/skills of the working directory', async () => {
    const cwd = await tree({ '.agent/skills/local-skill/SKILL.md': simpleSkill('local-skill') });
    const listed = skillstate(['list', '--no-user', '--no-bundled'], cwd);
    expect(listed.stdout).toMatch(/local-skill \(untrusted\)\s+project/);
  });

  it('disclose: the tier, the size and the exact text', async () => {
    const cwd = await tree();
    const shown = skillstate(['disclose', '--no-user', '--no-project', '--bundled', BUNDLED, 'please greet Bob'], cwd);
    expect(shown.code).toBe(0);
    const text = shown.stdout.split('----- text -----\n')[1]!.split('----- end -----')[0]!;
    expect(shown.stdout.startsWith('tier 3: triggers match the query\n')).toBe(true);
    expect(shown.stdout).toContain(`size: ${text.length} characters, about ${Math.ceil(text.length / 4)} tokens`);
    expect(text).toContain(`**Root Path:** \`${path.join(BUNDLED, 'hello-extended')}\``);
    const none = skillstate(['disclose', '--no-user', '--no-project', '--bundled', BUNDLED, 'weather today'], cwd);
    expect(none.stdout).toContain('tier 1: no trigger matches the query\nsize: 20 characters, about 5 tokens\n----- text -----\n[2 skills available]\n');
    const json = JSON.parse(skillstate(['disclose', '--json', '--no-user', '--no-project', '--bundled', BUNDLED, 'what can you do'], cwd).stdout);
    expect(json).toMatchObject({ tier: 2, catalog: ['csv-tools', 'hello-extended'] });
    // The catalog shows each whole description, its "Use it when" included.
    expect(json.text).toContain('- **csv-tools**: Summarise and inspect CSV files. Use it when the user has a .csv file, a spreadsheet export or comma-separated data and wants row counts, column names or column totals.\n');
  });

  it('disclose --explain: each skill\'s score, the words that scored and whether it is shown', async () => {
    const cwd = await tree({
      'skills/pdf-merge/SKILL.md': skillMd('name: pdf-merge\ndescription: Merge PDF files into one document.'),
      'skills/chart-maker/SKILL.md': skillMd('name: chart-maker\ndescription: Draw charts from tables.'),
      'skills/notes/SKILL.md': skillMd('name: notes\ndescription: Keep meeting notes.'),
    });
    const explained = skillstate(['disclose', '--explain', '--no-user', '--no-project', '--no-bundled', '--path', 'skills', 'please merge these pdfs'], cwd);
    expect(explained.code).toBe(0);
    const lines = explained.stdout.split('\n');
    expect(lines[0]).toBe("tier 3: 'pdf-merge' clearly matches the query best (relevance)");
    expect(lines[3]).toMatch(/^skill\s+score\s+shown\s+why$/);
    expect(lines[4]).toMatch(/^pdf-merge\s+\d+\.\d\d\s+in full\s+words: merg, pdf; no triggers$/);
    expect(lines.slice(5, 7)).toEqual([expect.stringMatching(/^chart-maker\s+0\.00\s+catalog\s+no triggers$/), expect.stringMatching(/^notes\s+0\.00\s+catalog\s+no triggers$/)]);
    const recent = skillstate(['disclose', '--explain', '--no-user', '--no-project', '--no-bundled', '--path', 'skills', '--recent', 'about the meeting', 'do it'], cwd);
    expect(recent.stdout).toMatch(/\nnotes\s+\d+\.\d\d\s+in full\s+words: meet; no triggers\n/);
  });

  it('read: prints a resource; refusals and missing files fail with the reason', async () => {
    const cwd = await tree();
    const read = skillstate(['read', '--no-user', '--no-project', '--bundled', BUNDLED, 'csv-tools', 'reference.md'], cwd);
    expect(read.code).toBe(0);
    expect(read.stdout).toMatch(/^# CSV reference\n/);
    const refused = skillstate(['read', '--no-user', '--no-project', '--bundled', BUNDLED, 'csv-tools', '../hello-extended/SKILL.md'], cwd);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("contains '..'");
    expect(refused.stderr).toContain('[resource_refused]');
    const missing = skillstate(['read', '--no-user', '--no-project', '--bundled', BUNDLED, 'csv-tools', 'REFERENCE.md'], cwd);
    expect(missing.stderr).toContain("Did you mean 'reference.md'?");
  });

  it("read: --help says an absolute path inside the skill's root is accepted, and one is read", async () => {
    const cwd = await tree();
    const help = skillstate(['read', '--help'], cwd).stdout;
    expect(help).toContain("The path is relative to the\nskill's root, or an absolute path inside the root; '..', absolute paths outside the root and links\nleaving the skill are refused");
    const inside = skillstate(['read', '--no-user', '--no-project', '--bundled', BUNDLED, 'csv-tools', path.join(BUNDLED, 'csv-tools', 'reference.md')], cwd);
    expect(inside.code).toBe(0);
    expect(inside.stdout).toMatch(/^# CSV reference\n/);
    const outside = skillstate(['read', '--no-user', '--no-project', '--bundled', BUNDLED, 'csv-tools', path.join(BUNDLED, 'hello-extended', 'SKILL.md')], cwd);
    expect(outside.code).toBe(1);
    expect(outside.stderr).toContain("is an absolute path outside the skill's root");
  });

  it('read: prints the skill\'s SKILL.md as it is on disk, by its relative or absolute path', async () => {
    const cwd = await tree();
    const manifest = readFileSync(path.join(BUNDLED, 'csv-tools', 'SKILL.md'), 'utf8');
    for (const file of ['SKILL.md', './SKILL.md', path.join(BUNDLED, 'csv-tools', 'SKILL.md')]) {
      const read = skillstate(['read', '--no-user', '--no-project', '--bundled', BUNDLED, 'csv-tools', file], cwd);
      expect(read.code).toBe(0);
      expect(read.stdout).toBe(manifest);
    }
  });

  it('--help documents the [code] that ends an error, and the exit codes', async () => {
    const cwd = await tree();
    const help = skillstate(['--help'], cwd).stdout;
    expect(help).toContain('Exit codes: 0 success, 1 failure, 2 a usage mistake. An error of skillstate\'s ends with its stable\ncode in brackets');
    const unknown = skillstate(['read', '--no-user', '--no-project', 'nope', 'SKILL.md'], cwd);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe("skillstate read: no skill named 'nope'; available: (none) [skill_not_found]\n");
  });

  it('list: with no skill found, says where it looked', async () => {
    const cwd = await tree({ 'empty/.keep': '' });
    const listed = skillstate(['list', '--no-user', '--path', path.join(cwd, 'empty'), '--path', path.join(cwd, 'nowhere'), '--allow-skipped'], cwd);
    expect(listed.stdout).toBe(
      'No skills found. Looked in:\n' +
        `  project  ${path.join(realpathSync(cwd), '.agent', 'skills')} (missing)\n` +
        `  path     ${path.join(cwd, 'empty')}\n` +
        `  path     ${path.join(cwd, 'nowhere')} (missing)\n` +
        `\nWarnings:\n  warning: extra skills source ${path.join(cwd, 'nowhere')} does not exist\n`,
    );
    expect(skillstate(['list', '--no-user', '--no-project'], cwd).stdout).toBe('No skills found: every source was left out.\n');
  });

  it('run: passes the script output and exit code through, 124 on time-out', async () => {
    const cwd = await tree({ '.agent/skills/slow/SKILL.md': simpleSkill('slow'), '.agent/skills/slow/wait.sh': 'echo started; sleep 20', '.agent/skills/slow/code.sh': 'echo "args: $*"; exit 7', '.agent/skills/slow/bg.sh': 'sleep 300 & echo left' });
    const ran = skillstate(['run', '--no-user', '--example', 'csv-tools', 'csv-tools', 'summarize', 'data/sample.csv'], cwd);
    expect(ran.code).toBe(0);
    expect(JSON.parse(ran.stdout).rows).toBe(4);
    // A project skill's scripts run once it is trusted.
    expect(skillstate(['trust', '--no-user', 'slow'], cwd)).toMatchObject({ code: 0, stdout: expect.stringContaining(`Trusted: slow (`) });
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

  it('--version prints the version of package.json', async () => {
    const cwd = await tree();
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(skillstate(['--version'], cwd)).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('validate: a folder of skills is searched and each skill reported', async () => {
    const root = await tree({
      'skills/good/SKILL.md': simpleSkill('good'),
      'skills/group/also-good/SKILL.md': simpleSkill('also-good'),
      'skills/bad/SKILL.md': skillMd('name: Bad\ndescription: x'),
      'skills/.hidden/SKILL.md': 'not looked at',
      'skills/notes/readme.txt': 'no skill here',
    });
    const skills = path.join(root, 'skills');
    const all = skillstate(['validate', skills], root);
    expect(all.code).toBe(1);
    expect(all.stdout).toBe(`Valid skill: ${path.join(skills, 'good')}\nValid skill: ${path.join(skills, 'group', 'also-good')}\n`);
    expect(all.stderr).toContain(`Validation failed for ${path.join(skills, 'bad')}:\n  - Skill name 'Bad' must be lowercase\n`);
    expect(all.stderr).toContain('3 skills checked: 2 valid, 1 invalid\n');
    const json = JSON.parse(skillstate(['validate', '--json', skills], root).stdout) as { dir: string; valid: boolean }[];
    expect(json.map((result) => [path.relative(skills, result.dir), result.valid])).toEqual([['bad', false], ['good', true], [path.join('group', 'also-good'), true]]);
    const empty = skillstate(['validate', path.join(skills, 'notes')], root);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('  - Missing required file: SKILL.md\n');
    expect(empty.stderr).toContain(`  - No skill folder (one holding a SKILL.md) found in ${path.join(skills, 'notes')}\n`);
  });

  it('validate: a YAML error names its SKILL.md line and column, with nothing dangling', async () => {
    const root = await tree({ 'colon/SKILL.md': '---\nname: colon\ndescription: Use it when: asked\n---\nBody\n', 'flow/SKILL.md': '---\nname: flow\ndescription: ok\ntags: [a, b\n---\nBody\n' });
    const colon = skillstate(['validate', path.join(root, 'colon')], root);
    expect(colon.stderr).toContain('  - Invalid YAML in frontmatter: Nested mappings are not allowed in compact mappings (SKILL.md line 3, column 14)\n');
    const flow = skillstate(['validate', path.join(root, 'flow')], root);
    expect(flow.stderr).toMatch(/ {2}- Invalid YAML in frontmatter: [^\n]*\(at the end of the front matter, SKILL\.md line 5\)\n/);
    expect(colon.stderr + flow.stderr).not.toMatch(/column \d+:\s*$/m);
  });

  it('list: exit 1 when a folder was skipped or a named source is missing; --allow-skipped exits 0', async () => {
    const cwd = await tree({ 'skills/ok/SKILL.md': simpleSkill('ok'), 'skills/broken/SKILL.md': '---\nname: broken\n' });
    const skills = path.join(cwd, 'skills');
    const failed = skillstate(['list', '--no-user', '--no-project', '--path', skills], cwd);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/^ok\s+extra/m);
    expect(failed.stderr).toBe('error: 1 problem: skill folders skipped or sources missing (listed under Warnings); --allow-skipped exits 0 all the same\n');
    const allowed = skillstate(['list', '--no-user', '--no-project', '--allow-skipped', '--path', skills], cwd);
    expect(allowed.code).toBe(0);
    expect(allowed.stderr).toContain('note: 1 problem');
    expect(JSON.parse(skillstate(['list', '--json', '--no-user', '--no-project', '--path', skills], cwd).stdout)).toMatchObject({ skipped: 1 });
    expect(skillstate(['list', '--no-user', '--no-project', '--path', path.join(cwd, 'nowhere')], cwd).code).toBe(1);
    const clean = skillstate(['list', '--no-user', '--no-project', '--path', path.join(skills, 'ok')], cwd);
    expect(clean).toMatchObject({ code: 0, stderr: '' });
  });

  it('list: no skill of skillstate itself unless asked for by name', async () => {
    const cwd = await tree();
    expect(skillstate(['list', '--no-user'], cwd)).toMatchObject({ code: 0, stdout: expect.stringMatching(/^No skills found\. Looked in:\n/) });
    const named = skillstate(['list', '--no-user', '--example', 'hello-extended'], cwd);
    expect(named.stdout).toMatch(new RegExp(`^hello-extended\\s+example\\s+1\\.0\\.0\\s+${path.join(BUNDLED, 'hello-extended')}$`, 'm'));
    expect(named.stdout).not.toContain('csv-tools');
    const unknown = skillstate(['list', '--no-user', '--example', 'nope'], cwd);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toContain("no example skill named 'nope'; the examples are: csv-tools, hello-extended");
  });

  it('init: scaffolds a skill folder that validates; refuses bad names and existing skills', async () => {
    const cwd = await tree();
    const made = skillstate(['init', '--dir', '.agent/skills', '--description', 'Formats dates. Use it when: dates look wrong.', 'date-format'], cwd);
    const dir = path.join(cwd, '.agent', 'skills', 'date-format');
    expect(made).toMatchObject({ code: 0, stdout: `Created ${path.join(dir, 'SKILL.md')}\nValid skill: ${dir}\n`, stderr: '' });
    expect(skillstate(['validate', '--spec', 'agentskills', dir], cwd)).toMatchObject({ code: 0, stdout: `Valid skill: ${dir}\n` });
    expect(skillstate(['list', '--no-user'], cwd).stdout).toMatch(/^date-format \(untrusted\)\s+project/m);
    const again = skillstate(['init', '--dir', '.agent/skills', 'date-format'], cwd);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already exists; nothing was written');
    const bad = skillstate(['init', 'Bad--Name'], cwd);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("Skill name 'Bad--Name' must be lowercase");
    expect(skillstate(['init'], cwd).code).toBe(2);
  });

  it('init outside the folders discovery scans says how the other commands reach the skill', async () => {
    const cwd = await tree();
    const made = skillstate(['init', 'my-skill'], cwd);
    expect(made).toMatchObject({ code: 0, stderr: '' });
    expect(made.stdout).toBe(
      `Created ${path.join(cwd, 'my-skill', 'SKILL.md')}\nValid skill: ${path.join(cwd, 'my-skill')}\n` +
        'Discovery scans ./.agent/skills and ~/.agent/skills, not the current folder: give the other commands --path ., or create skills with --dir .agent/skills\n',
    );
    expect(skillstate(['list', '--no-user', '--path', '.'], cwd).stdout).toMatch(/^my-skill\s+extra/m);
    expect(skillstate(['init', '--dir', 'skills', 'other'], cwd).stdout).toContain('not skills: give the other commands --path skills,');
  });

  it('trust: a project skill runs its scripts only once trusted; --list and --revoke', async () => {
    const cwd = await tree({ '.agent/skills/tool/SKILL.md': simpleSkill('tool'), '.agent/skills/tool/hi.sh': 'echo hi' });
    const refused = skillstate(['run', '--no-user', 'tool', 'hi.sh'], cwd);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("script 'hi.sh' refused: the skill comes from the project folder and is not trusted; trust it first (skillstate trust tool) [script_refused]");
    expect(skillstate(['trust', '--list'], cwd).stdout).toBe(`No trusted skills in ${path.join(cwd, '.home', '.agent', 'trusted-skills.json')}.\n`);
    expect(skillstate(['trust', '--no-user', 'tool'], cwd).code).toBe(0);
    expect(skillstate(['run', '--no-user', 'tool', 'hi.sh'], cwd)).toMatchObject({ code: 0, stdout: 'hi\n' });
    expect(skillstate(['list', '--no-user'], cwd).stdout).toMatch(/^tool\s+project/m);
    expect(skillstate(['trust', '--list'], cwd).stdout).toContain(`tool  ${realpathSync(path.join(cwd, '.agent', 'skills', 'tool'))}`);
    expect(skillstate(['trust', '--revoke', path.join(cwd, '.agent', 'skills', 'tool')], cwd).stdout).toMatch(/^No longer trusted: tool/);
    expect(skillstate(['run', '--no-user', 'tool', 'hi.sh'], cwd).code).toBe(1);
    expect(skillstate(['trust', '--no-user', 'nope'], cwd)).toMatchObject({ code: 1, stderr: "skillstate trust: no skill folder named 'nope'; available: tool\n" });
  });
});
