/**
 * `skillstate inspect` and `skillstate trace view` as real processes: the server they start
 * listens on 127.0.0.1, an application streams to it with `startInspector({ connect })`, viewers
 * connected to it receive the stream, and bad input ends with a message naming the culprit.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createSignal, defineAgent, startInspector } from '../../src/index.js';
import { type InspectionMessage } from '../../src/viewer/messages.js';
import { counter } from '../../skills/index.js';
import { quietSystem } from '../runtime/fixtures.js';

const BIN = fileURLToPath(new URL('../../bin/skillstate.js', import.meta.url));
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

function started(args: string[]): Promise<{ child: ChildProcess; output: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`nothing printed: ${output}`)), 20_000);
    child.stdout!.on('data', (data) => {
      output += String(data);
      if (output.includes('Press Ctrl-C')) {
        clearTimeout(timer);
        resolve({ child, output });
      }
    });
    child.stderr!.on('data', (data) => (output += String(data)));
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${output}`)));
  });
}

describe('skillstate inspect', () => {
  it('serves on 127.0.0.1; an application connects with startInspector({ connect }) and viewers get its stream', async () => {
    const { child, output } = await started(['inspect', '--port', '0']);
    const socketUrl = /Application socket: (\S+)/.exec(output)![1]!;
    expect(new URL(socketUrl).hostname).toBe('127.0.0.1');
    expect(output).toMatch(/Local viewer: +http:\/\/127\.0\.0\.1:\d+\/local\//);

    const viewer = new WebSocket(socketUrl);
    const received: InspectionMessage[] = [];
    viewer.on('message', (data) => received.push(JSON.parse(String(data)) as InspectionMessage));
    await new Promise((resolve) => viewer.once('open', resolve));

    const inspector = await startInspector({ connect: socketUrl });
    expect(inspector.localUrl).toBe(socketUrl.replace('ws:', 'http:').replace(/\/$/, '/local/'));
    const system = quietSystem({ inspect: inspector.inspect });
    const agent = system.spawn(defineAgent({ name: 'watched', skills: [counter] }), { id: 'watched' });
    await agent.call(createSignal('counter.increment'));
    const deadline = Date.now() + 10_000;
    while (!received.some((message) => message.name === 'skill:counter') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(received.find((message) => message.name === 'skill:counter')).toMatchObject({ type: '@xstate.actor', snapshot: { value: 'active' } });
    await system.shutdown();
    await inspector.stop();
    viewer.close();

    const exit = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGINT');
    expect(await exit).toBe(0);
  }, 30_000);

  it('refuses a port that is not one', () => {
    const result = spawnSync(process.execPath, [BIN, 'inspect', '--port', 'eighty'], { encoding: 'utf8' });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("--port must be a whole number from 0 to 65535, not 'eighty'");
  });
});

describe('skillstate trace view', () => {
  it('names the line of a trace that is not one, and exits 1', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'skillstate-trace-bad-'));
    try {
      const file = join(dir, 'trace.jsonl');
      await writeFile(file, `${JSON.stringify({ time: new Date().toISOString(), kind: 'spawn', agent: 'a', definition: 'd' })}\n{"kind":"gossip"}\n`);
      const result = spawnSync(process.execPath, [BIN, 'trace', 'view', file], { encoding: 'utf8' });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(`${file}, line 2: not a trace record (kind "gossip"; expected one of spawn, stop, signal, step, effect, lifecycle, diagnostic, turn) [invalid_trace]`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('wants an action and a file', () => {
    const none = spawnSync(process.execPath, [BIN, 'trace'], { encoding: 'utf8' });
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('say what to do: trace view <trace.jsonl>');
    const noFile = spawnSync(process.execPath, [BIN, 'trace', 'view'], { encoding: 'utf8' });
    expect(noFile.status).toBe(2);
    expect(noFile.stderr).toContain('name the trace file');
  });
});
