/** `skillstate restate dev`, run as a real subprocess: a local server, the agents served, signals answered, Ctrl-C stops it all. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { createSignal } from '../../src/index.js';
import { connectRestate } from '../../src/restate/index.js';

const BIN = fileURLToPath(new URL('../../bin/skillstate.js', import.meta.url));
const root = fileURLToPath(new URL('../..', import.meta.url));

it('skillstate restate dev serves the agents and models it is given and prints where to send signals', async () => {
  const args = ['restate', 'dev', '--agent', 'test/restate/agents.ts:NotesAgent', '--agent', 'test/restate/agents.ts:Chatter', '--models', 'test/restate/agents.ts:models'];
  const child = spawn(process.execPath, [BIN, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const ingress = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const found = /Restate ingress: (\S+)/.exec(stdout);
      if (found && stdout.includes('With curl')) resolve(found[1]!);
    });
    void exited.then((code) => reject(new Error(`exited with ${code}: ${stderr}`)));
  });
  expect(stdout).toContain('Agents served:   notes_agent, chatter');
  expect(stdout).toContain('Models:          default');
  const client = connectRestate(ingress);
  const agent = await client.spawn('notes_agent', { id: 'from-cli' });
  expect(await agent.call(createSignal('notes.add', { item: 'x' }))).toEqual({ count: 1 });
  const chatter = await client.spawn('chatter', { id: 'chat-from-cli' });
  expect(await chatter.call('chat.message', { text: 'add 4 and 5' })).toBe('The total is 9.');
  child.kill('SIGINT');
  expect(await exited).toBe(0);
  // The SDK warns that requests are not signed (a local server on 127.0.0.1); nothing else.
  expect(stderr.split('\n').filter((line) => line && !line.includes('without validating request signatures'))).toEqual([]);
}, 60_000);

it('skillstate restate without dev, without an agent, or with --models naming no models, is a usage error', async () => {
  const run = (args: string[]) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('exit', (code) => resolve({ code, stderr }));
    });
  const [noDev, noAgent, noModels] = await Promise.all([
    run(['restate', 'start', '--agent', 'x.ts']),
    run(['restate', 'dev']),
    run(['restate', 'dev', '--agent', 'test/restate/agents.ts:Chatter', '--models', 'test/restate/agents.ts:Chatter']),
  ]);
  expect(noDev.code).toBe(2);
  expect(noDev.stderr).toContain("the one subcommand is 'dev', not 'start'");
  expect(noAgent.code).toBe(2);
  expect(noAgent.stderr).toContain('restate dev needs at least one --agent');
  expect(noModels.code).toBe(2);
  expect(noModels.stderr).toContain("--models: 'test/restate/agents.ts' exports no object of language models named 'Chatter'; objects of language models there: models");
}, 60_000);
