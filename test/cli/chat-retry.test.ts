/**
 * `skillstate chat` when the model's streamed answer fails part-way and the step is tried again:
 * a real subprocess on a scripted model whose first answer breaks off after two words. What was
 * printed stays, a line says the answer failed and is asked again, and the new answer follows on
 * its own line: the two attempts never run together.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/skillstate.js', import.meta.url));
const NOTICE = "[the model's answer failed part-way; retrying]";
const FAILED = "[the model's answer failed part-way]";

function chat(script: unknown, input: string, extra: string[] = []) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'skillstate-chat-retry-'));
  const file = path.join(dir, 'script.json');
  writeFileSync(file, JSON.stringify(script));
  const result = spawnSync(process.execPath, [BIN, 'chat', '--no-user', '--no-project', '--script', file, ...extra], {
    cwd: dir,
    input,
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, HOME: path.join(dir, '.home') },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const BREAKS_OFF = { text: 'The answer is forty two.', streamFails: { after: 2, status: 503, message: 'connection reset' } };

describe('skillstate chat, a streamed answer that fails part-way', () => {
  it('prints the first attempt, a line saying it failed, then the new answer on its own line', () => {
    const { code, stdout } = chat([BREAKS_OFF, { text: 'The answer is 42.' }, { text: 'Next.' }], 'question\nanother\n');
    expect(code).toBe(0);
    expect(stdout).toContain(`assistant: The answer \n${NOTICE}\nassistant: The answer is 42.\n`);
    expect(stdout).not.toContain('The answer The answer');
    // One notice for the one retry: the next turn streams as usual.
    expect(stdout.split(NOTICE)).toHaveLength(2);
    expect(stdout).toContain('assistant: Next.\n');
  });

  it('failing twice: a notice for each new attempt', () => {
    const { stdout } = chat([BREAKS_OFF, BREAKS_OFF, { text: 'Third time.' }], 'question\n');
    expect(stdout).toContain(`assistant: The answer \n${NOTICE}\nassistant: The answer \n${NOTICE}\nassistant: Third time.\n`);
  });

  it('failing on every attempt: the last partial answer is followed by a line saying it failed, the error on stderr, and the chat goes on', () => {
    const { code, stdout, stderr } = chat([BREAKS_OFF, BREAKS_OFF, BREAKS_OFF, { text: 'Next.' }], 'question\nanother\n');
    expect(code).toBe(0);
    expect(stdout).toContain(`assistant: The answer \n${NOTICE}\nassistant: The answer \n${NOTICE}\nassistant: The answer \n${FAILED}\nassistant: Next.\n`);
    expect(stderr).toContain('error model_failed:');
  });

  it('--json prints the answer once, whole', () => {
    const { stdout } = chat([BREAKS_OFF, { text: 'The answer is 42.' }], 'question\n', ['--json']);
    const records = stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; text?: string });
    expect(records).toEqual([
      { type: 'user', text: 'question' },
      { type: 'answer', text: 'The answer is 42.' },
    ]);
  });
});
