/** Inspection for real: the Stately inspector server, a WebSocket client, and the JSON-lines trace. */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startInspector, type InspectorHandle } from '../../src/runtime/inspect.js';
import type { AgentSystem, TraceLine } from '../../src/index.js';
import { arithmetic, calculator, counter } from '../../skills/index.js';
import { fromCallback } from 'xstate';
import { NotesAgent, createSignal, defineAgent, defineSkill, quietSystem, settleDown } from './fixtures.js';

let system: AgentSystem | undefined;
let inspector: InspectorHandle | undefined;
let client: WebSocket | undefined;
afterEach(async () => {
  client?.close();
  await system?.shutdown();
  await inspector?.stop();
  system = inspector = client = undefined;
});

const MathAgent = defineAgent({ name: 'math_agent', skills: [calculator, counter] });

interface Message {
  type: string;
  name?: string;
  sessionId?: string;
  parentId?: string;
  event?: { type: string };
}

describe('the Stately inspector', () => {
  it('streams the agent and each skill lifecycle child to a WebSocket client of the inspector server', async () => {
    inspector = await startInspector({ viewer: 'stately' });
    expect(inspector.url).toBe(`http://127.0.0.1:${inspector.port}`);
    const messages: Message[] = [];
    client = new WebSocket(inspector.socketUrl);
    await new Promise<void>((resolve, reject) => {
      client!.once('open', () => resolve());
      client!.once('error', reject);
    });
    client.on('message', (data) => messages.push(JSON.parse(String(data)) as Message));

    system = quietSystem({ inspect: inspector.inspect });
    const agent = system.spawn(MathAgent, { id: 'inspected' });
    await agent.mount(arithmetic);
    await agent.call(createSignal('counter.increment'));

    const registered = (name: string) => messages.find((m) => m.type === '@xstate.actor' && m.name === name);
    const deadline = Date.now() + 10_000;
    while (!(registered('inspected') && registered('skill:calculator') && registered('skill:counter') && registered('skill:arithmetic')) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const agentActor = registered('inspected');
    expect(agentActor).toBeDefined();
    for (const skill of ['calculator', 'counter', 'arithmetic']) {
      expect(registered(`skill:${skill}`)).toMatchObject({ parentId: agentActor!.sessionId });
    }
    expect(messages.some((m) => m.type === '@xstate.event' && m.event?.type === 'signal')).toBe(true);
  });
});

describe('both viewers read one stream', () => {
  it('startInspector() opens the offline local viewer by default; the Stately bridge is an explicit choice', async () => {
    const local = await startInspector();
    try {
      expect(local.url).toBe(local.localUrl);
      const home = await fetch(`http://127.0.0.1:${local.port}/`, { redirect: 'manual' });
      expect(home.status).toBe(302);
      expect(home.headers.get('location')).toBe('/local/');
    } finally {
      await local.stop();
    }

    inspector = await startInspector({ viewer: 'stately' });
    const stately = await fetch(inspector.url, { redirect: 'manual' });
    expect(stately.status).toBe(302);
    expect(stately.headers.get('location')).toBe('/stately');
  });

  it('the server serves the Stately bridge and the local viewer whichever is chosen', async () => {
    inspector = await startInspector();
    const bridge = await (await fetch(inspector.statelyUrl)).text();
    expect(bridge).toContain('<iframe id="inspector" src="https://stately.ai/inspect">');
    expect(bridge).toContain('new WebSocket(`ws://${location.host}/`)');
    const local = await fetch(inspector.localUrl);
    expect(local.status).toBe(200);
    // The local page may reach nothing but the server it came from.
    expect(local.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(local.headers.get('content-security-policy')).toContain("connect-src 'self'");
  });
});

describe('the trace', () => {
  it('writes every signal, step, effect and lifecycle transition as JSON lines to a file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'skillstate-trace-'));
    try {
      const file = join(dir, 'trace.jsonl');
      system = quietSystem({ trace: file });
      const agent = system.spawn(MathAgent, { id: 't' });
      await agent.call(createSignal('calculator.add', { a: 1, b: 2 }));
      await agent.mount(arithmetic);
      await agent.unmount('arithmetic');
      agent.send(createSignal('no.route'));
      await system.shutdown();
      const lines = (await readFile(file, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as TraceLine);
      expect(lines.every((line) => typeof line.time === 'string')).toBe(true);
      const summary = lines.map((line) => {
        switch (line.kind) {
          case 'spawn':
          case 'stop':
          case 'passivate':
          case 'wake':
          case 'revert':
            return `${line.kind}:${line.agent}`;
          case 'signal':
            return `signal:${line.type}`;
          case 'step':
            return `step:${line.item}:${line.subject}:${line.ok ? 'ok' : line.error?.code}`;
          case 'effect':
            return `effect:${line.effect.type}`;
          case 'lifecycle':
            return `lifecycle:${line.skill}:${line.state}`;
          case 'diagnostic':
            return `diagnostic:${line.diagnostic.code}`;
          case 'turn':
            return `turn:${line.turn}:${line.state}`;
        }
      });
      expect(summary).toEqual([
        'spawn:t',
        'lifecycle:calculator:active',
        'lifecycle:counter:active',
        'signal:calculator.add',
        'step:signal:calculator.add:ok',
        'step:mount:arithmetic:ok',
        // arithmetic's add, subtract and multiply share their names with calculator's
        ...Array(3).fill('diagnostic:action_name_clash'),
        'lifecycle:arithmetic:active',
        ...Array(4).fill('effect:register_action'),
        'step:unmount:arithmetic:ok',
        'lifecycle:arithmetic:inactive',
        ...Array(4).fill('effect:deregister_action'),
        'signal:no.route',
        'step:signal:no.route:no_route',
        'effect:error',
        'stop:t',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('records an agent and its lifecycles before anything that happens as it starts, so read in order it ends as the agent is', async () => {
    const lines: string[] = [];
    system = quietSystem({
      definitions: [NotesAgent],
      trace: (line) => {
        if (line.kind === 'spawn') lines.push(`spawn:${line.agent}${line.restored ? ' (restored)' : ''}`);
        else if (line.kind === 'lifecycle') lines.push(`lifecycle:${line.agent}:${line.skill}:${line.state}`);
        else if (line.kind === 'step') lines.push(`step:${line.agent}:${line.item}:${line.ok ? 'ok' : line.error?.code}`);
        else if (line.kind === 'diagnostic') lines.push(`diagnostic:${line.agent}:${line.diagnostic.code}`);
      },
    });
    // A child that crashes as it starts, with no restart to spare: the skill fails while its agent spawns.
    const brittle = defineSkill({
      name: 'brittle',
      children: () => [{ id: 'worker', maxRestarts: 0, logic: fromCallback(() => { throw new Error('no start'); }) }],
    });
    system.spawn(defineAgent({ name: 'brittle_agent', skills: [brittle] }), { id: 'b' });
    // A mount hook that fails: the agent's first step fails.
    const refusing = defineSkill({ name: 'refusing', mount: () => { throw new Error('not today'); } });
    system.spawn(defineAgent({ name: 'refusing_agent', skills: [refusing] }), { id: 'r' });
    // A child restored without its parent: warned of once it runs.
    system.restore({
      format: 'skillstate/agent@1',
      id: 'orphan',
      parent: 'gone',
      definition: 'notes_agent',
      agent: { id: 'orphan', definition: 'notes_agent', state: { notebook: { items: [] } }, mounted: [{ name: 'notebook', stateKey: 'notebook', config: {} }] },
      lifecycles: { notebook: 'active' },
      children: [],
    });
    await settleDown();
    expect(lines).toEqual([
      'spawn:b',
      'lifecycle:b:brittle:active',
      'lifecycle:b:brittle:failed',
      'spawn:r',
      'lifecycle:r:refusing:active',
      'step:r:start:hook_failed',
      'spawn:orphan (restored)',
      'lifecycle:orphan:notebook:active',
      'diagnostic:orphan:orphan_restored',
    ]);
    expect(system.get('b')!.getSnapshot().lifecycles).toEqual({ brittle: 'failed' });
  });

  it('writes one stop line per agent when the system shuts down, children included', async () => {
    const stops: string[] = [];
    system = quietSystem({ trace: (line) => void (line.kind === 'stop' && stops.push(`${line.agent}: ${line.reason}`)) });
    const boss = system.spawn(defineAgent({ name: 'boss', skills: [counter] }), { id: 'boss' });
    const Worker = defineAgent({ name: 'worker', skills: [counter] });
    system.spawn(Worker, { id: 'w1', parent: boss });
    system.spawn(Worker, { id: 'w2', parent: boss });
    await system.shutdown();
    expect(stops.sort()).toEqual(["boss: the system shut down", "w1: its parent 'boss' stopped", "w2: its parent 'boss' stopped"]);
  });

  it('an inspector asked to listen on an empty host is refused: it would listen on every interface', async () => {
    await expect(startInspector({ host: '' })).rejects.toThrow("host must be an address to listen on, such as '127.0.0.1', not \"\"; leave it out for 127.0.0.1");
  });
});

