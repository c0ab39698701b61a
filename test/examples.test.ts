/** Every example is a program a user copies: each one runs, as a real subprocess, and exits cleanly. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

function run(file: string, args: string[] = []) {
  const outcome = spawnSync(process.execPath, ['--import', 'tsx', file, ...args], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  return { code: outcome.status, stdout: outcome.stdout, stderr: outcome.stderr };
}

describe('examples', () => {
  it.each([
    ['examples/runtime.ts', [], ['call answered: {"result":42} (calculator.result)', 'call rejected: no_route', '1/0 → action_failed {"reason":"division_by_zero"}']],
    ['examples/parent-child.ts', [], ["boss's children: w1, w2", 'after stopping boss, running agents: 0']],
    ['examples/persistence.ts', [], ['which now holds the agents ["durable"]', 'still counts: {"count":3}', 'still has arithmetic: {"result":15}']],
    ['examples/model-test.ts', [], ['4 of 4 paths hold', '25 random sequences of signals, mounts, unmounts, restarts and persist/restore hold', "the forgetful counter is caught", "await model.replay([{ signal: 'count' }]);"]],
    ['examples/document-skills.ts', [], ['tier 3 (triggers match the query)', 'tools now: load_skill, list_skills, read_skill_resource, say_hello, wave', "Did you mean 'reference.md'?", 'exit 0 in']],
    ['examples/inspector.ts', ['--once'], ['Local viewer: open http://127.0.0.1:', 'Stately inspector: open http://127.0.0.1:', 'lifecycle children: skill:counter, skill:arithmetic']],
    ['examples/model-agent.ts', [], ['tools after load_skill: load_skill, list_skills, read_skill_resource, run_skill_script, add, subtract, multiply (the same: csv-tools brings a script', '"exitCode":0', 'error: invalid params for action \'add\'', 'answer: The sample has 4 rows; 1200 + 34.5 = 1234.5.', "turn status 'awaiting-approval'", 'answer after restore: Done: the sample has 4 rows.']],
    ['examples/mcp.ts', [], ['increment over MCP → {"count":5}', 'bad arguments, refused before the call: invalid_params', 'after load_skill: load_skill, list_skills, read_skill_resource, say_hello, wave']],
  ])('%s runs and exits 0', (file, args, expected) => {
    const { code, stdout, stderr } = run(file, args);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    for (const line of expected) expect(stdout).toContain(line);
  });

  it('examples/durable.ts restores on its second run the agent its first run stored', () => {
    const dir = mkdtempSync(join(tmpdir(), 'skillstate-durable-example-'));
    try {
      const path = join(dir, 'demo.db');
      const first = run('examples/durable.ts', [path]);
      expect(first.stderr).toBe('');
      expect(first.stdout).toContain('no agent stored');
      expect(first.stdout).toContain('visits counted across runs: 1');
      const second = run('examples/durable.ts', [path]);
      expect(second.stderr).toBe('');
      expect(second.stdout).toContain(`restored 1 agent from ${path}`);
      expect(second.stdout).toContain('visits counted across runs: 2');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('examples/chat-openai.ts refuses clearly without its key', () => {
    const outcome = spawnSync(process.execPath, ['--import', 'tsx', 'examples/chat-openai.ts'], { cwd: root, encoding: 'utf8', timeout: 60_000, env: { ...process.env, OPENAI_API_KEY: '' } });
    expect(outcome.status).toBe(1);
    expect(outcome.stderr).toContain('set OPENAI_API_KEY');
  });

  it('npm start (examples/demo.ts) runs every section and exits 0', () => {
    const { code, stdout, stderr } = run('examples/demo.ts');
    expect(code).toBe(0);
    expect(stderr).toBe('');
    for (const section of ['1. Define an agent from skills', '6. Unmount it again', '10. Model-based test of an agent definition', '11. Document skills', '12. A model-driven agent', '13. Durable agents on SQLite']) expect(stdout).toContain(section);
    expect(stdout).toContain('back to the agent before the mount: true');
    // The model test checks each path once, against a reference model.
    const section = stdout.slice(stdout.indexOf('10. Model-based test'), stdout.indexOf('11. Document skills'));
    const paths = section.split('\n').filter((line) => line.startsWith('✓ '));
    expect(paths.length).toBeGreaterThan(1);
    expect(new Set(paths).size).toBe(paths.length);
    expect(section).toContain('the forgetful counter is caught');
  }, 60_000);
});
