/**
 * `runSkillScript`'s `signal` aborted once the script has exited, while its result waits for its
 * output to close (a process it left in a session of its own still holds the pipe): the script
 * was not cancelled, so the result says it ran to its end, and nothing is killed in its name.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSkillScript } from '../../src/manifest/index.js';
import { isRunning } from './processes.js';
import { simpleSkill, tree } from './tree.js';

/** Resolves once `check` holds, looking every few milliseconds. */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe.runIf(process.platform === 'linux')('runSkillScript aborted after its script exited', () => {
  it('is not cancelled: the result has the exit code, and cancelled false', async () => {
    const dir = await tree({
      'SKILL.md': simpleSkill('leaver'),
      // A sleeper in a session of its own keeps the output open after the script exits.
      'leave.sh': 'setsid sleep 30 &\necho "$$ $!" > "$1"\n',
    });
    const marker = path.join(dir, 'pids');
    const controller = new AbortController();
    const running = runSkillScript(dir, 'leave.sh', [marker], { signal: controller.signal });
    await until(() => existsSync(marker) && readFileSync(marker, 'utf8').endsWith('\n'));
    const [script, sleeper] = readFileSync(marker, 'utf8').trim().split(' ').map(Number) as [number, number];
    try {
      // Reaped: this process has seen the script exit.
      await until(() => !existsSync(`/proc/${script}`));
      controller.abort(new Error('too late'));
      const result = await running;
      expect(result).toMatchObject({ exitCode: 0, signal: null, cancelled: false });
    } finally {
      if (isRunning(sleeper)) process.kill(sleeper, 'SIGKILL');
    }
  });
});
