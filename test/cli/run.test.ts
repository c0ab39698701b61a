/**
 * `skillstate run --timeout`: a timeout a timer cannot hold (past 2^31 − 1 ms, `Infinity`) is a
 * usage error before anything runs, not a time-out after 1 ms. The command runs as a real
 * subprocess.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { simpleSkill, tree } from '../manifest/tree.js';

const BIN = fileURLToPath(new URL('../../bin/skillstate.js', import.meta.url));

function skillstate(args: string[], cwd: string) {
  const result = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', timeout: 60_000, env: { ...process.env, HOME: path.join(cwd, '.home') } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('skillstate run --timeout', { timeout: 90_000 }, () => {
  it.each(['3000000000', '2147483648', 'Infinity', '0', 'soon'])('refuses --timeout %j with a usage error, running nothing', async (timeout) => {
    const root = await tree({ 'tool/SKILL.md': simpleSkill('tool'), 'tool/mark.sh': 'echo ran > marker.txt; echo ran' });
    const run = skillstate(['run', '--no-project', '--no-user', '--path', root, '--timeout', timeout, 'tool', 'mark.sh'], root);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toContain(`--timeout must be a positive number of milliseconds, at most 2147483647 (about 24.8 days), not '${timeout}'`);
    expect(existsSync(path.join(root, 'tool', 'marker.txt'))).toBe(false);
  });

  it('runs with the longest timeout a timer holds', async () => {
    const root = await tree({ 'tool/SKILL.md': simpleSkill('tool'), 'tool/quick.sh': 'echo done' });
    expect(skillstate(['run', '--no-project', '--no-user', '--path', root, '--timeout', '2147483647', 'tool', 'quick.sh'], root)).toMatchObject({ code: 0, stdout: 'done\n', stderr: '' });
  });
});
