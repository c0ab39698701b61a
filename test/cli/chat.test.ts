/**
 * `skillstate chat` as users run it: a real subprocess fed by a pipe, and a real terminal (tmux),
 * on a scripted model (a stand-in: the model is not under test). The skill is skillstate's
 * csv-tools example, whose script really runs.
 */
import { spawnSync, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ChatRefusal, providerModel } from '../../src/cli/commands/chat.js';

const BIN = fileURLToPath(new URL('../../bin/skillstate.js', import.meta.url));

const SCRIPT = [
  { text: 'Let me look.', toolCalls: [{ tool: 'load_skill', args: { name: 'csv-tools' } }] },
  { toolCalls: [{ tool: 'run_skill_script', args: { skill: 'csv-tools', script: 'summarize', args: ['data/sample.csv'] }, id: 'run-1' }] },
  { text: 'The file has 4 rows.' },
  { error: { status: 400, message: 'the model refused' } },
  { text: 'Still here.' },
];

function scriptFile(script: unknown): { dir: string; file: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'skillstate-chat-'));
  const file = path.join(dir, 'script.json');
  writeFileSync(file, JSON.stringify(script));
  return { dir, file };
}

function chat(args: string[], input: string, env: Record<string, string | undefined> = {}) {
  const { dir } = scriptFile([]);
  const result = spawnSync(process.execPath, [BIN, 'chat', '--no-user', '--no-project', ...args], {
    cwd: dir,
    input,
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, HOME: path.join(dir, '.home'), ...env },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('skillstate chat, piped', () => {
  it('--json prints the transcript: tool calls, the approval asked and given, the answer, an error, and goes on', () => {
    const { file } = scriptFile(SCRIPT);
    const { code, stdout, stderr } = chat(['--example', 'csv-tools', '--script', file, '--json'], 'summarise data/sample.csv\ny\nhello?\nand now?\n/exit\n');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const records = stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; [key: string]: unknown });
    expect(records.map((r) => r.type)).toEqual(['user', 'tool_call', 'tool_result', 'approval', 'decision', 'tool_call', 'tool_result', 'answer', 'user', 'error', 'user', 'answer']);
    expect(records[3]).toMatchObject({ tool: 'run_skill_script', id: 'run-1' });
    expect(records[4]).toEqual({ type: 'decision', id: 'run-1', approved: true });
    expect(records[6]).toMatchObject({ tool: 'run_skill_script', ok: true, output: { exitCode: 0 } });
    expect(JSON.parse((records[6]!.output as { stdout: string }).stdout)).toMatchObject({ rows: 4 });
    expect(records[7]).toEqual({ type: 'answer', text: 'The file has 4 rows.' });
    expect(records[9]).toMatchObject({ type: 'error', code: 'model_failed', message: expect.stringContaining('the model refused') });
    expect(records[11]).toEqual({ type: 'answer', text: 'Still here.' });
  });

  it('prints streamed answers, tool calls, a refused script, /skills with the loaded one marked, and ends at end of input', () => {
    const { file } = scriptFile(SCRIPT);
    const { code, stdout } = chat(['--example', 'csv-tools', '--script', file], 'summarise data/sample.csv\nn\n/skills\n');
    expect(code).toBe(0);
    expect(stdout).toContain('assistant: Let me look.\n  → load_skill({"name":"csv-tools"})');
    expect(stdout).toContain('(loaded: csv-tools)');
    expect(stdout).toContain('approve run_skill_script({"skill":"csv-tools","script":"summarize","args":["data/sample.csv"]})? [y/N] no');
    expect(stdout).not.toContain('exitCode');
    expect(stdout).toContain('assistant: The file has 4 rows.');
    expect(stdout).toContain('* csv-tools: Summarise and inspect CSV files. Use it when the user has a .csv file, a spreadsheet export or comma-separated data and wants row counts, column names or column totals.');
  });

  it('refuses a provider whose key is missing, naming the variable', () => {
    const { code, stderr } = chat(['--model', 'openai:gpt-4.1'], '', { OPENAI_API_KEY: '' });
    expect(code).toBe(1);
    expect(stderr).toContain('needs the OPENAI_API_KEY environment variable');
  });

  it('refuses usage mistakes with exit code 2', () => {
    expect(chat([], '').stderr).toContain('give --model provider:model, or --script FILE');
    const unknown = chat(['--model', 'acme:big'], '');
    expect([unknown.code, unknown.stderr.includes("unknown provider 'acme'")]).toEqual([2, true]);
    const { file } = scriptFile({ text: 'not a list' });
    const bad = chat(['--script', file], '');
    expect([bad.code, bad.stderr.includes('must hold a JSON list of responses')]).toEqual([2, true]);
  });

  it('names the package to install when a provider is not installed', async () => {
    const providers = { acme: { pkg: '@acme/ai-provider-that-is-not-installed', factory: 'acme', env: 'ACME_KEY' } };
    const refused = await providerModel('acme:big', { ACME_KEY: 'k' }, providers).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ChatRefusal);
    expect((refused as Error).message).toContain('npm install @acme/ai-provider-that-is-not-installed');
  });
});

describe('skillstate chat, in a real terminal', () => {
  it('streams, asks for approval, lists skills and exits on /exit', async () => {
    const { dir, file } = scriptFile(SCRIPT.slice(0, 3));
    const session = `skillstate-chat-${process.pid}`;
    const command = `cd ${dir} && HOME=${dir}/.home ${process.execPath} ${BIN} chat --no-user --no-project --example csv-tools --script ${file}; echo "EXITED $?"; sleep 20`;
    execFileSync('tmux', ['new-session', '-d', '-s', session, '-x', '220', '-y', '60', command]);
    const screen = () => execFileSync('tmux', ['capture-pane', '-p', '-t', session], { encoding: 'utf8' });
    const waitFor = async (text: string) => {
      for (let i = 0; i < 200; i++) {
        const shown = screen();
        if (shown.includes(text)) return shown;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`the terminal never showed '${text}':\n${screen()}`);
    };
    const keys = (text: string) => execFileSync('tmux', ['send-keys', '-t', session, text, 'Enter']);
    try {
      await waitFor('you:');
      keys('summarise data/sample.csv');
      await waitFor('[y/N]');
      keys('y');
      const answered = await waitFor('The file has 4 rows.');
      expect(answered).toContain('→ run_skill_script');
      expect(answered).toContain('"exitCode":0');
      keys('/skills');
      await waitFor('* csv-tools');
      keys('/exit');
      await waitFor('EXITED 0');
    } finally {
      execFileSync('tmux', ['kill-session', '-t', session]);
    }
  }, 30_000);
});
