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
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { createSignal, defineAgent } from '../../src/index.js';
import { startInspector } from '../../src/runtime/inspect.js';
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

/** A viewer connected to the inspection server: what it received, and a wait for what it should. */
async function viewerOf(socketUrl: string): Promise<{ socket: WebSocket; received: InspectionMessage[]; until(what: string, holds: () => boolean): Promise<void> }> {
  const socket = new WebSocket(socketUrl);
  const received: InspectionMessage[] = [];
  const waits: (() => void)[] = [];
  socket.on('message', (data) => {
    received.push(JSON.parse(String(data)) as InspectionMessage);
    for (const wake of waits.splice(0)) wake();
  });
  await new Promise((resolve) => socket.once('open', resolve));
  return {
    socket,
    received,
    async until(what, holds) {
      const deadline = Date.now() + 10_000;
      while (!holds()) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`the viewer never got ${what}`);
        // Woken by the next message (or, at the latest, by the deadline).
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waits.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
  };
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

  it('stop() flushes before closing: a short application shows in skillstate inspect, its final stopped states included', async () => {
    const { output } = await started(['inspect', '--port', '0']);
    const socketUrl = /Application socket: (\S+)/.exec(output)![1]!;
    const viewer = await viewerOf(socketUrl);

    // A short application: it spawns, answers once, shuts down and stops its inspector at once.
    const inspector = await startInspector({ connect: socketUrl });
    const system = quietSystem({ inspect: inspector.inspect });
    const agent = system.spawn(defineAgent({ name: 'brief', skills: [counter] }), { id: 'brief' });
    await agent.call(createSignal('counter.increment'));
    await system.shutdown();
    expect(await inspector.stop()).toEqual({ flushed: true, unsent: 0 });

    // Everything it streamed reached the server, and so the viewer: the agent and its lifecycle
    // stopped.
    const stopped = (name: string) => {
      const actor = viewer.received.find((message) => message.type === '@xstate.actor' && message.name === name);
      return actor !== undefined && viewer.received.some((message) => message.type === '@xstate.snapshot' && message.sessionId === actor.sessionId && message.snapshot?.status === 'stopped');
    };
    await viewer.until('the final stopped states', () => stopped('brief') && stopped('skill:counter'));
    expect(viewer.received.some((message) => message.type === '@xstate.event' && (message.event as { signal?: { type?: string } }).signal?.type === 'counter.increment')).toBe(true);
    viewer.socket.close();
  }, 30_000);

  it('--interactive prints the local viewer with its session token; an application that opts in is steered with it, and only with it', async () => {
    const { child, output } = await started(['inspect', '--port', '0', '--interactive']);
    const localUrl = /Local viewer: +(\S+)/.exec(output)![1]!;
    expect(localUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/local\/#token=[\w-]{32}$/);
    const socketUrl = /Application socket: (\S+)/.exec(output)![1]!;
    expect(output).toContain(`startInspector({ connect: '${socketUrl}', interactive: true })`);
    const inspector = await startInspector({ connect: socketUrl, interactive: true });
    const system = quietSystem({ inspect: inspector.inspect });
    inspector.attach(system);
    const agent = system.spawn(defineAgent({ name: 'steered', skills: [counter] }), { id: 'steered' });
    const steer = (token: string) =>
      fetch(new URL('/local/steer', localUrl), { method: 'POST', headers: { 'content-type': 'application/json', 'x-skillstate-token': token }, body: JSON.stringify({ app: 'app1', op: 'call', agent: 'steered', signal: { type: 'counter.increment' } }) });
    const refused = await steer('wrong');
    expect([refused.status, ((await refused.json()) as { error: { code: string } }).error.code]).toEqual([401, 'unauthorized']);
    const answered = await steer(new URL(localUrl).hash.slice('#token='.length));
    expect(await answered.json()).toEqual({ ok: true, value: { count: 1 } });
    expect(agent.getSnapshot().state).toMatchObject({ counter: { count: 1 } });
    await system.shutdown();
    await inspector.stop();
    child.kill('SIGTERM');
  }, 30_000);

  it('stop() is bounded by its time-out, and says on stderr that it gave up', async () => {
    // A server that accepts the connection, then reads nothing more: the close is never answered.
    const deaf = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    deaf.on('connection', (_socket, request) => request.socket.pause());
    await new Promise((resolve) => deaf.once('listening', resolve));
    const port = (deaf.address() as { port: number }).port;
    const written: string[] = [];
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
    try {
      const inspector = await startInspector({ connect: `ws://127.0.0.1:${port}/` });
      const system = quietSystem({ inspect: inspector.inspect });
      system.spawn(defineAgent({ name: 'unheard', skills: [counter] }));
      const stopped = await inspector.stop({ timeout: 200 });
      await system.shutdown();
      expect(stopped.flushed).toBe(false);
      expect(written.join('')).toMatch(new RegExp(`^\\[skillstate\\] the inspector stopped before everything was sent to ws://127\\.0\\.0\\.1:${port}/: \\d+ event\\(s\\) were still waiting after 200 ms`));
      await expect(inspector.stop({ timeout: -1 })).rejects.toMatchObject({ code: 'invalid_config', message: expect.stringContaining('timeout must be a number of milliseconds') });
    } finally {
      stderr.mockRestore();
      for (const client of deaf.clients) client.terminate();
      await new Promise((resolve) => deaf.close(resolve));
    }
  });

  it('says when the server went away and what was dropped, instead of stop() reporting everything sent', async () => {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((resolve) => server.once('listening', resolve));
    const port = (server.address() as { port: number }).port;
    const written: string[] = [];
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
    try {
      const connected = new Promise<WebSocket>((resolve) => server.once('connection', resolve));
      const inspector = await startInspector({ connect: `ws://127.0.0.1:${port}/` });
      // The server closes the connection; once its close is done, the application's socket is closed too.
      const socket = await connected;
      const gone = new Promise((resolve) => socket.once('close', resolve));
      socket.close();
      await gone;
      const system = quietSystem({ inspect: inspector.inspect });
      system.spawn(defineAgent({ name: 'unheard', skills: [counter] }));
      const stopped = await inspector.stop();
      await system.shutdown();
      expect(stopped.flushed).toBe(false);
      expect(stopped.unsent).toBeGreaterThan(0);
      expect(written).toEqual([
        `[skillstate] the connection to the inspection server at ws://127.0.0.1:${port}/ closed: inspection events are dropped from now on\n`,
        `[skillstate] the inspector stopped after its connection to ws://127.0.0.1:${port}/ had closed: ${stopped.unsent} event(s) were dropped\n`,
      ]);
    } finally {
      stderr.mockRestore();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('keeps two applications on one skillstate inspect apart: each numbers its actors from x:0, each is labelled', async () => {
    const { output } = await started(['inspect', '--port', '0']);
    const socketUrl = /Application socket: (\S+)/.exec(output)![1]!;
    const viewer = await viewerOf(socketUrl);
    const apps = [];
    for (const label of ['shop', 'bank']) {
      const inspector = await startInspector({ connect: socketUrl, label });
      const system = quietSystem({ inspect: inspector.inspect });
      // The same agent id in both: only the application tells them apart.
      await system.spawn(defineAgent({ name: label, skills: [counter] }), { id: 'ada' }).call(createSignal('counter.increment', { by: label === 'shop' ? 1 : 2 }));
      apps.push({ inspector, system });
    }
    const agents = () => viewer.received.filter((message) => message.type === '@xstate.actor' && message.name === 'ada');
    await viewer.until('both agents', () => agents().length === 2);
    const [shop, bank] = agents();
    expect(shop!.app).toEqual({ id: expect.any(String), label: 'shop', pid: process.pid });
    expect(bank!.app).toEqual({ id: expect.any(String), label: 'bank', pid: process.pid });
    expect(shop!.sessionId).not.toBe(bank!.sessionId);
    // Each application's events are logged under its own actor.
    const increments = (sessionId: string) =>
      viewer.received.filter((message) => message.type === '@xstate.event' && message.sessionId === sessionId && (message.event as { signal?: { type?: string } }).signal?.type === 'counter.increment');
    await viewer.until('both increments', () => increments(shop!.sessionId).length === 1 && increments(bank!.sessionId).length === 1);
    expect((increments(bank!.sessionId)[0]!.event as unknown as { signal: { data: unknown } }).signal.data).toEqual({ by: 2 });
    // A lifecycle's parent is its own application's agent.
    const lifecycles = viewer.received.filter((message) => message.type === '@xstate.actor' && message.name === 'skill:counter');
    expect(lifecycles.map((message) => message.parentId).sort()).toEqual([shop!.sessionId, bank!.sessionId].sort());
    for (const { inspector, system } of apps) {
      await system.shutdown();
      await inspector.stop();
    }
    viewer.socket.close();
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
      expect(result.stderr).toContain(`${file}, line 2: not a trace record (kind "gossip"; expected one of spawn, stop, signal, step, effect, lifecycle, diagnostic, turn, passivate, wake, revert) [invalid_trace]`);
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

  it('says so when the file is missing or a folder, as a usage mistake', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'skillstate-trace-none-'));
    try {
      const missing = spawnSync(process.execPath, [BIN, 'trace', 'view', join(dir, 'trace.jsonl')], { encoding: 'utf8' });
      expect(missing.status).toBe(2);
      expect(missing.stderr).toContain(`no file ${join(dir, 'trace.jsonl')}: name a trace written by createAgentSystem`);
      const folder = spawnSync(process.execPath, [BIN, 'trace', 'view', dir], { encoding: 'utf8' });
      expect(folder.status).toBe(2);
      expect(folder.stderr).toContain(`${dir} is not a file`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
