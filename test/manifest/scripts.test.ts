import { existsSync } from 'node:fs';
import { readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { discoverSkills, ManifestError } from '../../src/index.js';
import { runSkillScript } from '../../src/manifest/index.js';
import { EXAMPLE_SKILLS_DIR } from '../../src/manifest/discover.js';
import { MAX_SCRIPT_TIMEOUT_MS } from '../../src/manifest/scripts.js';
import { simpleSkill, tree } from './tree.js';
import { isRunning } from './processes.js';

async function skill(files: Record<string, string>) {
  const root = await tree({ 'tool/SKILL.md': simpleSkill('tool'), ...Object.fromEntries(Object.entries(files).map(([k, v]) => [`tool/${k}`, v])) });
  return { root, dir: path.join(root, 'tool') };
}

async function refusal(promise: Promise<unknown>): Promise<ManifestError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ManifestError);
  return error as ManifestError;
}

describe('runSkillScript', () => {
  it('runs the bundled python script by its declared name, in the skill root', async () => {
    const registry = await discoverSkills({ bundled: EXAMPLE_SKILLS_DIR });
    const result = await runSkillScript(registry.entry('csv-tools')!, 'summarize', ['data/sample.csv']);
    expect(result).toMatchObject({ exitCode: 0, signal: null, truncated: false, timedOut: false, stderr: '' });
    expect(JSON.parse(result.stdout)).toEqual({ rows: 4, columns: ['region', 'product', 'units', 'revenue'], totals: { units: 22, revenue: 470.47 } });
  });

  it('picks the interpreter by extension or shebang, never a shell', async () => {
    const { dir } = await skill({
      'a.sh': 'echo "sh $1 $(pwd)"',
      'b.mjs': 'console.log("node", process.argv[2])',
      'c.ts': 'const n: number = 2; console.log("ts", n * 21)',
      'd': '#!/usr/bin/env python3\nimport sys; print("shebang", sys.argv[1])',
      'e.txt': 'no interpreter',
    });
    expect((await runSkillScript(dir, 'a.sh', ['x; rm -rf /'])).stdout).toBe(`sh x; rm -rf / ${dir}\n`);
    expect((await runSkillScript(dir, 'b.mjs', ['$HOME'])).stdout).toBe('node $HOME\n');
    expect((await runSkillScript(dir, 'c.ts')).stdout).toBe('ts 42\n');
    expect((await runSkillScript(dir, 'd', ['ok'])).stdout).toBe('shebang ok\n');
    expect((await refusal(runSkillScript(dir, 'e.txt'))).message).toContain('no interpreter');
  });

  it('reports a non-zero exit as a result, not an error', async () => {
    const { dir } = await skill({ 'fail.sh': 'echo oops >&2; exit 3' });
    expect(await runSkillScript(dir, 'fail.sh')).toMatchObject({ exitCode: 3, stderr: 'oops\n', timedOut: false });
  });

  it('kills the whole process group at the timeout', async () => {
    const { dir } = await skill({ 'slow.sh': 'sleep 30 & sleep 30; echo never' });
    const result = await runSkillScript(dir, 'slow.sh', [], { timeoutMs: 1000 });
    expect(result).toMatchObject({ timedOut: true, signal: 'SIGKILL', stdout: '' });
  });

  it('kills what a script leaves running when it exits, and says so', async () => {
    const { dir } = await skill({ 'daemon.sh': 'sleep 300 & echo $! > stray.pid; echo started' });
    const result = await runSkillScript(dir, 'daemon.sh');
    expect(result).toMatchObject({ exitCode: 0, stdout: 'started\n', timedOut: false, strayProcessesKilled: true });
    const pid = Number(await readFile(path.join(dir, 'stray.pid'), 'utf8'));
    await vi.waitFor(() => expect(isRunning(pid)).toBe(false));
    expect(await runSkillScript(dir, 'daemon.sh', [], { timeoutMs: 5_000 }).then((again) => again.strayProcessesKilled)).toBe(true);
    const { dir: tidy } = await skill({ 'tidy.sh': 'echo done' });
    expect((await runSkillScript(tidy, 'tidy.sh')).strayProcessesKilled).toBe(false);
  });

  it.runIf(process.platform === 'linux')('kills what a script leaves running in process groups of their own (bash job control), and says so', async () => {
    const { dir } = await skill({ 'jobs.sh': 'set -m\nsleep 300 &\necho $! > job.pid\necho started' });
    const result = await runSkillScript(dir, 'jobs.sh');
    expect(result).toMatchObject({ exitCode: 0, stdout: 'started\n', strayProcessesKilled: true });
    const pid = Number(await readFile(path.join(dir, 'job.pid'), 'utf8'));
    await vi.waitFor(() => expect(isRunning(pid)).toBe(false));
  });

  it('stops a flood of output at the cap and marks it truncated', async () => {
    const { dir } = await skill({ 'flood.sh': 'yes "a line of output that repeats forever"' });
    const result = await runSkillScript(dir, 'flood.sh', [], { timeoutMs: 15_000 });
    expect(result.truncated).toBe(true);
    expect(result.timedOut).toBe(false);
    expect(Buffer.byteLength(result.stdout)).toBe(1024 * 1024);
  });

  it('refuses more than 100 arguments or 4096 argument bytes', async () => {
    const { dir } = await skill({ 'a.sh': 'echo ok' });
    expect((await refusal(runSkillScript(dir, 'a.sh', Array.from({ length: 101 }, () => 'a')))).message).toContain('101 arguments, more than the 100 allowed');
    expect((await refusal(runSkillScript(dir, 'a.sh', ['x'.repeat(4097)]))).message).toContain('arguments total 4097 bytes, more than the 4096 allowed');
    expect((await runSkillScript(dir, 'a.sh', Array.from({ length: 100 }, () => 'a'))).exitCode).toBe(0);
  });

  it('refuses scripts outside the root: .., absolute paths and links', async () => {
    const { root, dir } = await skill({ 'ok.sh': 'echo ok' });
    const { writeFile } = await import('node:fs/promises');
    await writeFile(path.join(root, 'outside.sh'), 'echo escaped');
    await symlink(path.join(root, 'outside.sh'), path.join(dir, 'link.sh'));
    const refused = async (script: string) => {
      const error = await refusal(runSkillScript(dir, script));
      expect(error.code).toBe('script_refused');
      return error.is('script_refused') ? error.details?.reason : undefined;
    };
    expect(await refused('../outside.sh')).toBe('parent');
    expect(await refused(path.join(root, 'outside.sh'))).toBe('absolute');
    expect(await refused('link.sh')).toBe('escapes');
    expect(await refused('missing.sh')).toBe('missing');
  });

  it.each([3_000_000_000, 2 ** 31, Infinity, 0, -1, NaN])('refuses timeoutMs %s before running anything, naming the option', async (timeoutMs) => {
    const { dir } = await skill({ 'mark.sh': 'echo ran > marker.txt' });
    const error = await refusal(runSkillScript(dir, 'mark.sh', [], { timeoutMs }));
    expect(error).toMatchObject({ code: 'invalid_options', subject: 'timeoutMs', details: { option: 'timeoutMs', value: timeoutMs } });
    expect(error.message).toBe(`timeoutMs must be a positive number of milliseconds, at most 2147483647 (about 24.8 days), not ${timeoutMs}`);
    expect(existsSync(path.join(dir, 'marker.txt'))).toBe(false);
  });

  it('runs with the longest timeout a timer holds, 2^31 − 1 ms, without timing out', async () => {
    const { dir } = await skill({ 'quick.sh': 'echo done' });
    expect(await runSkillScript(dir, 'quick.sh', [], { timeoutMs: MAX_SCRIPT_TIMEOUT_MS })).toMatchObject({ exitCode: 0, signal: null, timedOut: false, stdout: 'done\n' });
  });

  it.each([0, -1, Infinity, NaN])('refuses maxOutputBytes %s, naming the option', async (maxOutputBytes) => {
    const { dir } = await skill({ 'quick.sh': 'echo done' });
    const error = await refusal(runSkillScript(dir, 'quick.sh', [], { maxOutputBytes }));
    expect(error).toMatchObject({ code: 'invalid_options', subject: 'maxOutputBytes', message: `maxOutputBytes must be a positive, finite number of bytes, not ${maxOutputBytes}` });
  });

  it('scrubs the environment to the allow-list', async () => {
    const { dir } = await skill({ 'env.sh': 'env | cut -d= -f1 | sort' });
    process.env.SKILLSTATE_SECRET_TOKEN = 'hunter2';
    try {
      const result = await runSkillScript(dir, 'env.sh', [], { env: { EXTRA_VAR: '1' } });
      const names = result.stdout.trim().split('\n');
      expect(names).not.toContain('SKILLSTATE_SECRET_TOKEN');
      expect(names).toContain('EXTRA_VAR');
      expect(names).toContain('PATH');
      const allowed = new Set(['PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TMPDIR', 'TEMP', 'TMP', 'TZ', 'TERM', 'USER', 'LOGNAME', 'SYSTEMROOT', 'EXTRA_VAR', 'PWD', 'SHLVL', '_', 'OLDPWD']);
      expect(names.filter((name) => !allowed.has(name))).toEqual([]);
    } finally {
      delete process.env.SKILLSTATE_SECRET_TOKEN;
    }
  });
});
