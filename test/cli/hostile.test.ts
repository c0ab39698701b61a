/**
 * The command line as a demanding user meets it: output piped into a reader that stops early,
 * and a run interrupted with Ctrl-C. Each case runs the real `skillstate` as a subprocess.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.js';
import { simpleSkill, tree } from '../manifest/tree.js';

const BIN = fileURLToPath(new URL('../../bin/skillstate.js', import.meta.url));
const children: ChildProcess[] = [];
/** Processes a test's scripts started: killed afterwards should a run have left them behind. */
const strays: number[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const pid of strays.splice(0)) if (running(pid)) process.kill(pid, 'SIGKILL');
});

/** Starts the real command in `cwd`, with only the skills of `--path` folders (no user or project skills). */
function skillstate(args: string[], cwd: string): ChildProcess & { stderrText(): string } {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOME: path.join(cwd, '.home') } });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (data) => (stderr += String(data)));
  return Object.assign(child, { stderrText: () => stderr });
}

/** Runs the command line in this process; its exit code and what it wrote. */
async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { out: (text) => void (stdout += text), err: (text) => void (stderr += text), isTTY: false });
  return { code, stdout, stderr };
}

/** Whether process `pid` still runs (a zombie, dead but not yet reaped, does not). */
function running(pid: number): boolean {
  try {
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.startsWith('Z');
  } catch {
    return false;
  }
}

/** A script that starts a child of its own, writes its pid to `child.pid` (whole, at once), and waits for it. */
const NAP = '#!/bin/sh\nsleep 60 &\necho $! > child.pid.tmp\nmv child.pid.tmp child.pid\nwait\n';

/** The pid of the child a `NAP` script started, once it is written to `file`; killed after the test should it outlive it. */
async function childOf(file: string): Promise<number> {
  await vi.waitFor(() => expect(existsSync(file)).toBe(true), { timeout: 20_000, interval: 20 });
  const pid = Number(readFileSync(file, 'utf8'));
  strays.push(pid);
  expect(running(pid)).toBe(true);
  return pid;
}

// Each case starts a real process; on a busy machine one start can take seconds.
describe('skillstate, used roughly', { timeout: 30_000 }, () => {
  it('stops quietly, exit code 0, when the reader of its output goes away (| head -1)', async () => {
    const lines = Array.from({ length: 100_000 }, (_, i) => `line ${i}\n`).join('');
    const root = await tree({ 'skills/huge/SKILL.md': simpleSkill('huge'), 'skills/huge/references/big.md': lines });
    const child = skillstate(['read', '--no-user', '--no-project', '--path', path.join(root, 'skills'), '--max-bytes', '10000000', 'huge', 'references/big.md'], root);
    // Take the first piece of the output, then close the pipe, as `head -1` does.
    const [first] = (await once(child.stdout!, 'data')) as [Buffer];
    expect(String(first)).toMatch(/^line 0\n/);
    child.stdout!.destroy();
    const [code] = (await once(child, 'close')) as [number | null];
    expect(child.stderrText()).toBe('');
    expect(code).toBe(0);
  });

  it.each([
    [['inspect', '--port', '1', '--port', '2'], "skillstate inspect: --port is given twice ('1', then '2'): give it once\n"],
    [['trace', 'view', 'trace.jsonl', '-p', '0', '--port', '3'], "skillstate trace: --port is given twice ('0', then '3'): give it once\n"],
    [['read', '--max-bytes=5', '--max-bytes', '7', 'a', 'b'], "skillstate read: --max-bytes is given twice ('5', then '7'): give it once\n"],
    [['list', '--project', 'a', '--project', 'b'], "skillstate list: --project is given twice ('a', then 'b'): give it once\n"],
  ])('refuses an option of one value given twice, rather than keep the last: %j', async (argv, message) => {
    const result = await run(argv);
    expect(result).toEqual({ code: 2, stdout: '', stderr: `${message}Run 'skillstate ${argv[0]} --help' for usage.\n` });
  });

  it.each([
    [['inspect', '--host', ''], 'host must be an address to listen on'],
    [['inspect', '--host', '0.0.0.0', '--interactive'], 'interactive: true steers agents from the page and is served on loopback only, not on 0.0.0.0'],
  ])('a server option it refuses is a usage mistake (exit 2): %j', async (argv, message) => {
    const result = await run(argv);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`skillstate inspect: ${message}`);
    expect(result.stderr).toMatch(/Run 'skillstate inspect --help' for usage\.\n$/);
  });

  it('says a shadowed skill once (disclose on stderr, list under Shadowed)', async () => {
    const root = await tree({ 'first/notes/SKILL.md': simpleSkill('notes'), 'second/notes/SKILL.md': simpleSkill('notes') });
    const result = await run(['disclose', '--no-user', '--no-project', '--path', path.join(root, 'first'), '--path', path.join(root, 'second'), 'notes']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(`skillstate: skill 'notes' of extra (${path.join(root, 'second/notes')}) is shadowed by the one of extra (${path.join(root, 'first/notes')})\n`);
    const listed = await run(['list', '--no-user', '--no-project', '--path', path.join(root, 'first'), '--path', path.join(root, 'second')]);
    expect(listed.code).toBe(0);
    expect(listed.stdout.match(/shadowed/g)).toHaveLength(1);
    expect(listed.stdout).toContain(`Shadowed:\n  notes: extra ${path.join(root, 'second/notes')} is shadowed by extra ${path.join(root, 'first/notes')}\n`);
  });

  it('takes a flag, or an option that may be repeated, given twice', async () => {
    const root = await tree({ 'skills/one/SKILL.md': simpleSkill('one') });
    const skills = path.join(root, 'skills');
    const result = await run(['list', '--json', '--json', '--no-user', '--no-project', '--path', skills, '--path', skills]);
    expect(result.code).toBe(0);
    expect((JSON.parse(result.stdout) as { skills: { name: string }[] }).skills.map((skill) => skill.name)).toEqual(['one']);
  });

  it('trace view reads the trace of a process killed mid-line up to that line, says so, and stops on Ctrl-C', async () => {
    const spawned = JSON.stringify({ time: '2026-01-01T00:00:00.000Z', kind: 'spawn', agent: 'a', definition: 'd' });
    const root = await tree({ 'trace.jsonl': `${spawned}\n{"time":"2026-01-01T00:00:01.000Z","kind":"sig` });
    const child = skillstate(['trace', 'view', 'trace.jsonl', '--port', '0'], root);
    let stdout = '';
    child.stdout!.on('data', (data) => (stdout += String(data)));
    await vi.waitFor(() => expect(stdout).toContain('Press Ctrl-C to stop.'), { timeout: 20_000, interval: 20 });
    expect(stdout).toContain('1 trace lines from trace.jsonl\n');
    expect(child.stderrText()).toBe('note: trace.jsonl, line 2 is cut short (its writer stopped mid-line) and was left out\n');
    child.kill('SIGINT');
    const [code] = (await once(child, 'close')) as [number | null];
    expect(code).toBe(0);
  });

  it.runIf(process.platform === 'linux')('chat: Ctrl-C while a tool call runs a script ends the chat and kills the script', async () => {
    const script = [
      { toolCalls: [{ tool: 'load_skill', args: { name: 'sleeper' } }] },
      { toolCalls: [{ tool: 'run_skill_script', args: { skill: 'sleeper', script: 'scripts/nap.sh' } }] },
      { text: 'Done.' },
    ];
    const root = await tree({ 'skills/sleeper/SKILL.md': simpleSkill('sleeper'), 'skills/sleeper/scripts/nap.sh': NAP, 'responses.json': JSON.stringify(script) });
    const child = spawn(process.execPath, [BIN, 'chat', '--no-user', '--no-project', '--path', path.join(root, 'skills'), '--script', 'responses.json'], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, HOME: path.join(root, '.home') } });
    children.push(child);
    let stdout = '';
    child.stdout!.on('data', (data) => (stdout += String(data)));
    child.stdin!.write('Take a nap.\n');
    await vi.waitFor(() => expect(stdout).toContain('approve run_skill_script('), { timeout: 20_000, interval: 20 });
    child.stdin!.write('y\n');
    const sleeper = await childOf(path.join(root, 'skills/sleeper/child.pid'));
    child.kill('SIGINT');
    const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
    expect({ code, signal }).toEqual({ code: null, signal: 'SIGINT' });
    await vi.waitFor(() => expect(running(sleeper)).toBe(false), { timeout: 5_000, interval: 20 });
  });

  it.runIf(process.platform === 'linux')('run: Ctrl-C kills the script and what it started, and exits 130', async () => {
    const root = await tree({ 'skills/sleeper/SKILL.md': simpleSkill('sleeper'), 'skills/sleeper/scripts/nap.sh': NAP });
    const child = skillstate(['run', '--no-user', '--no-project', '--path', path.join(root, 'skills'), 'sleeper', 'scripts/nap.sh'], root);
    const sleeper = await childOf(path.join(root, 'skills/sleeper/child.pid'));
    child.kill('SIGINT');
    const [code] = (await once(child, 'close')) as [number | null];
    expect(code).toBe(130);
    expect(child.stderrText()).toContain("error: interrupted (SIGINT); script 'scripts/nap.sh' was killed\n");
    await vi.waitFor(() => expect(running(sleeper)).toBe(false), { timeout: 5_000, interval: 20 });
  });
});
