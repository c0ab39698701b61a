/**
 * The studio (the local viewer's agent pane) in a real browser: each agent's state skill by skill
 * with what the last step changed, its mounted skills, a model-driven agent's conversation,
 * errors by code and message, finished actors folded, stopped agents shown as such, diagrams
 * legible at 1400×900, redaction holding in the page and on the wire, and time travel through the
 * recorded steps, live, for a page that connects late, and from a trace file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatMessage, createAgentSystem, createSignal, createSqliteStore, defineAgent, type TraceRecord } from '../../src/index.js';
import WebSocket from 'ws';
import { startInspector } from '../../src/runtime/inspect.js';
import { APP_HELLO } from '../../src/viewer/apps.js';
import { startViewerServer } from '../../src/viewer/server.js';
import { STEER_ANSWER, STEER_COMMAND, type DescribedAgent, type SteerCommandMessage } from '../../src/viewer/steering.js';
import { scriptedModel } from '../../src/testing/index.js';
import { arithmetic, counter } from '../../skills/index.js';
import { assistant } from '../model/fixtures.js';
import { crashableChild, defineSkill, notebook, quietSystem } from '../runtime/fixtures.js';
import { openBrowser, type Browser, type ElementLike } from './browser.js';

const Keeper = defineAgent({ name: 'keeper', skills: [counter, notebook] });
const BIN = fileURLToPath(new URL('../../bin/skillstate.js', import.meta.url));
const poll = { timeout: 15_000, interval: 50 };

let browser: Browser;
beforeAll(async () => {
  browser = await openBrowser();
  await browser.page.setViewportSize({ width: 1400, height: 900 });
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

/** The value the agent pane's state tree shows at `path` (`counter.count`), and whether that row is marked changed. */
async function stateRow(path: string): Promise<{ value: string | null; changed: boolean } | null> {
  const row = browser.page.locator(`#agent .state-tree li[data-path="${path}"]`);
  if (!(await row.count())) return null;
  return { value: await row.locator(':scope > .value').textContent(), changed: (await row.getAttribute('class'))?.includes('changed') ?? false };
}

/** What the test reads of a diagram's label (the project compiles without the DOM's types). */
interface SvgLabel {
  closest(selector: 'svg'): { getBoundingClientRect(): { width: number }; viewBox: { baseVal: { width: number } } } | null;
}
declare function getComputedStyle(element: SvgLabel): { fontSize: string };

const texts = (selector: string) => browser.page.locator(selector).allTextContents();
const pane = () => browser.page.locator('#agent');

describe('the studio shows what each agent holds', () => {
  it('its state skill by skill, live, with what the last step changed; its skills; errors by code and message; finished step actors folded; the system not listed; a stopped agent as stopped', async () => {
    const inspector = await startInspector({});
    const system = quietSystem({ inspect: inspector.inspect });
    try {
      const ada = system.spawn(Keeper, { id: 'ada' });
      const { page } = browser;
      await page.goto(inspector.localUrl);
      for (let i = 0; i < 3; i++) await ada.call(createSignal('counter.increment'));
      await expect.poll(() => stateRow('counter.count'), poll).toEqual({ value: '3', changed: true });
      expect(await stateRow('counter.step')).toEqual({ value: '1', changed: false });
      expect(await pane().getAttribute('data-agent')).toBe('ada');
      // The step shown is the last one: its signal and the diff it made.
      expect(await texts('#agent .step .trigger')).toEqual(['signal counter.increment']);
      expect(await texts('#agent .step .diff li')).toEqual(['counter.count: 2 → 3']);

      // Six async calls each run as a step actor of the agent: when done, they are a count, not six cards.
      await Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map((item) => ada.call(createSignal('notes.add', { item, delay: 1 }))));
      await expect.poll(() => page.locator('#agent .state-tree li[data-path="notebook.items"] > .size').textContent(), poll).toBe('[6]');
      const card = page.locator('.machine[data-name="ada"]');
      await expect.poll(() => card.locator('.folded').textContent(), poll).toMatch(/×6/);
      expect(await page.locator('.machine:not([hidden])').evaluateAll((cards: ElementLike[]) => cards.map((one) => one.getAttribute('data-name')))).toEqual(['ada', 'skill:counter', 'skill:notebook']);
      expect(await texts('#tree > li > .actor-name')).toEqual(['ada']);

      await ada.mount(arithmetic);
      await expect.poll(() => texts('#agent .skills li'), poll).toEqual(['counter {"initial":0,"step":1}', 'notebook', 'arithmetic']);
      await expect(ada.call(createSignal('arithmetic.divide', { a: 1, b: 0 }))).rejects.toThrow();
      const failure = "action_failed: action 'divide' failed: cannot divide by zero";
      await expect.poll(() => page.locator('#log li[data-type="error"] .detail').allTextContents(), poll).toEqual([failure]);
      expect(await page.locator('#log li[data-type="error"]').getAttribute('data-agent')).toBe('ada');
      await expect.poll(() => texts('#agent .step .error'), poll).toEqual([failure, `error ${failure}`]);

      // The diagrams' state names are 12 px or more as drawn at 1400×900.
      const labels = page.locator('.machine:not([hidden]) svg g.node .nodeLabel');
      await expect.poll(() => labels.count(), poll).toBeGreaterThan(5);
      // A label's size on screen: its font size times the scale its diagram is drawn at.
      const sizes = await labels.evaluateAll((found: SvgLabel[]) =>
        found.map((label) => {
          const svg = label.closest('svg')!;
          return parseFloat(getComputedStyle(label).fontSize) * (svg.getBoundingClientRect().width / svg.viewBox.baseVal.width);
        }),
      );
      expect(Math.min(...sizes)).toBeGreaterThanOrEqual(12);

      // Zoom and expand: a larger diagram, then one as wide as the pane.
      const lifecycle = page.locator('.machine[data-name="skill:counter"]');
      const zoomBefore = Number(await lifecycle.locator('.diagram').getAttribute('data-zoom'));
      await lifecycle.locator('button.larger').click();
      expect(Number(await lifecycle.locator('.diagram').getAttribute('data-zoom'))).toBeGreaterThan(zoomBefore);
      await lifecycle.locator('button.expand').click();
      expect(await lifecycle.getAttribute('class')).toContain('expanded');

      await ada.stop();
      await expect.poll(() => pane().getAttribute('data-status'), poll).toBe('stopped');
      await expect.poll(() => page.locator('.machine[data-name="skill:counter"]').getAttribute('data-status'), poll).toBe('stopped');
      expect(await page.locator('.machine[data-name="skill:counter"] .state').textContent()).toBe('stopped (was active)');
      expect(browser.outside).toEqual([]);
    } finally {
      await system.shutdown();
      await inspector.stop();
    }
  }, 60_000);

  it('a child restarted after a crash is folded into a count on its skill, not left as a card', async () => {
    const inspector = await startInspector({});
    const system = quietSystem({ inspect: inspector.inspect });
    try {
      const ada = system.spawn(Keeper, { id: 'ada' });
      await ada.mount(defineSkill({ name: 'worker', children: () => [{ id: 'loop', logic: crashableChild({ count: 0 }), restart: 'permanent', maxRestarts: 5, withinMs: 60_000 }] }));
      const { page } = browser;
      await page.goto(inspector.localUrl);
      for (let i = 0; i < 2; i++) ada.actor.system.get('ada/skills/worker/loop')!.send({ type: 'crash' });
      const worker = page.locator('.machine[data-name="skill:worker"]');
      await expect.poll(() => worker.locator('.folded').textContent(), poll).toBe('finished: loop ×2');
      expect(await page.locator('.machine:not([hidden])[data-name="loop"]').count()).toBe(1);
      expect(await page.locator('#tree li:not([hidden]) > .actor-name').allTextContents()).toEqual(['ada', 'skill:counter', 'skill:notebook', 'skill:worker', 'loop']);
    } finally {
      await system.shutdown();
      await inspector.stop();
    }
  }, 60_000);

  it('redaction holds in the page and on the wire: the state is `[redacted]`, no value of it reaches the browser', async () => {
    const inspector = await startInspector({ redact: true });
    const system = quietSystem({ inspect: inspector.inspect });
    const frames: string[] = [];
    const { page } = browser;
    const listen = (socket: { on(event: 'framereceived', listener: (frame: { payload: string | Buffer }) => void): void }) => socket.on('framereceived', (frame) => frames.push(String(frame.payload)));
    page.on('websocket', listen);
    try {
      const ada = system.spawn(Keeper, { id: 'ada' });
      await page.goto(inspector.localUrl);
      await ada.call(createSignal('notes.add_now', { item: 'hunter2-secret' }));
      await expect(ada.call(createSignal('notes.refuse'))).rejects.toThrow();
      await expect.poll(() => page.locator('#agent .state-part .redacted').textContent(), poll).toBe('[redacted]');
      await expect.poll(() => texts('#agent .step .trigger'), poll).toEqual(['signal notes.refuse']);
      expect(await page.content()).not.toContain('hunter2');
      expect(frames.length).toBeGreaterThan(0);
      expect(frames.join('\n')).not.toContain('hunter2');
      expect(frames.join('\n')).not.toContain('always refuses');
    } finally {
      page.off('websocket', listen);
      await system.shutdown();
      await inspector.stop();
    }
  }, 60_000);

  it("a model-driven agent's conversation: messages, tool calls with their output, failed and unknown ones, the call waiting for approval, usage", async () => {
    const model = scriptedModel([
      { text: 'Adding.', toolCalls: [{ tool: 'add', args: { a: 2, b: 3 }, id: 'sum' }, { tool: 'balance', args: { explode: true }, id: 'down' }, { tool: 'teleport', args: { to: 'Mars' }, id: 'away' }] },
      { text: '2 + 3 = 5; the ledger is offline.' },
      { toolCalls: [{ tool: 'pay', args: { to: 'bob', amount: 5 }, id: 'pay-1' }] },
      { text: 'Paid bob 5.' },
    ]);
    const inspector = await startInspector({});
    const system = quietSystem({ inspect: inspector.inspect, models: { default: model } });
    try {
      const agent = system.spawn(assistant(), { id: 'helper' });
      const { page } = browser;
      await page.goto(inspector.localUrl);
      await expect(agent.call(chatMessage('add 2 and 3, then check the ledger'))).resolves.toBe('2 + 3 = 5; the ledger is offline.');
      const rows = () => page.locator('#agent .conversation li').evaluateAll((items: ElementLike[]) => items.map((item) => `${item.getAttribute('class')}|${item.querySelector('.role')?.textContent}|${item.querySelector('.body')?.textContent}|${item.querySelector('.result')?.textContent ?? ''}`));
      await expect.poll(rows, poll).toEqual([
        'message user|user|add 2 and 3, then check the ledger|',
        'message assistant|assistant|Adding.|',
        'tool-call|tool|add({"a":2,"b":3})|→ {"result":5}',
        'tool-call failed|tool|balance({"explode":true})|→ ledger_offline: the ledger is offline',
        expect.stringMatching(/^tool-call failed\|tool\|teleport\(\{"to":"Mars"\}\)\|→ unknown_action: Model tried to call unavailable tool 'teleport'/),
        'message assistant|assistant|2 + 3 = 5; the ledger is offline.|',
      ]);
      expect(await page.locator('#agent .usage').textContent()).toMatch(/^tokens: \d+ in, \d+ out, \d+ total$/);

      const answer = agent.call(chatMessage('pay bob 5'));
      await expect.poll(() => texts('#agent .conversation li.approval'), poll).toEqual(['approve?pay({"amount":5,"to":"bob"})']);
      agent.send(createSignal('chat.approve', { toolCallId: 'pay-1' }));
      await expect(answer).resolves.toBe('Paid bob 5.');
      await expect.poll(() => texts('#agent .conversation li.approval'), poll).toEqual([]);
      await expect.poll(() => texts('#agent .conversation li[data-tool="pay"] .result'), poll).toEqual(['→ {"paid":5,"to":"bob"}']);
      expect(browser.outside).toEqual([]);
    } finally {
      await system.shutdown();
      await inspector.stop();
    }
  }, 60_000);
});

describe('stopped and passivated agents', () => {
  it("shows the status the application describes: a passivated or stopped agent, and its skills, as a badge with no steering controls; a running one steerable", async () => {
    const server = await startViewerServer({ interactive: true });
    // An application speaking the protocol as `startInspector` does, whose agents' statuses the test sets.
    const statuses: Record<string, string> = { ada: 'idle', bob: 'idle', cy: 'idle' };
    const asked: string[] = [];
    const app = new WebSocket(server.socketUrl);
    await new Promise((resolve, reject) => app.once('open', resolve).once('error', reject));
    app.on('message', (data) => {
      const message = JSON.parse(String(data)) as SteerCommandMessage;
      if (message.type !== STEER_COMMAND) return;
      asked.push(message.command.op);
      const value: DescribedAgent[] = Object.entries(statuses).map(([id, status]) => ({ id, definition: 'keeper', status, mounted: ['counter'], actions: [{ name: 'increment', skill: 'counter', description: 'Adds one', input: { type: 'object', properties: {} } }], routes: [], mountable: [] }));
      app.send(JSON.stringify({ type: STEER_ANSWER, id: message.id, ok: true, value }));
    });
    const send = (message: Record<string, unknown>) => app.send(JSON.stringify({ createdAt: String(Date.now()), ...message }));
    const machine = JSON.stringify({ id: 'agent', initial: 'idle', states: { idle: {}, stepping: {} } });
    send({ type: APP_HELLO, label: 'scripted', pid: 1 });
    for (const [index, name] of ['ada', 'bob', 'cy'].entries()) {
      send({ type: '@xstate.actor', sessionId: `x:${index}`, name, definition: machine, snapshot: { status: 'active', value: 'idle', context: { agent: { state: { counter: { count: index } }, mounted: [{ name: 'counter' }] } } } });
      send({ type: '@xstate.actor', sessionId: `x:${index}.counter`, parentId: `x:${index}`, name: 'skill:counter', snapshot: { status: 'active', value: 'active' } });
    }
    const { page } = browser;
    const tree = () => page.locator('#tree > li').evaluateAll((items: ElementLike[]) => items.map((item) => `${item.querySelector('.actor-name')?.textContent}: ${item.getAttribute('data-status')}`));
    const agentStatus = async () => ({ status: await pane().getAttribute('data-status'), badge: await page.locator('#agent .agent-status').textContent(), isBadge: (await page.locator('#agent .agent-status').getAttribute('class'))?.includes('badge') ?? false });
    try {
      await page.goto(server.localUrl);
      await expect.poll(tree, poll).toEqual(['ada: active', 'bob: active', 'cy: active']);
      await expect.poll(() => page.locator('#agent .signal').count(), poll).toBe(1);

      // The runtime drops a passivated agent from memory: its actor stops, and only the application knows why.
      statuses.ada = 'passivated';
      statuses.bob = 'stopped';
      send({ type: '@xstate.snapshot', sessionId: 'x:0', snapshot: { status: 'stopped', value: 'idle' }, event: { type: 'xstate.stop' } });
      send({ type: '@xstate.snapshot', sessionId: 'x:1', snapshot: { status: 'stopped', value: 'idle' }, event: { type: 'xstate.stop' } });
      await expect.poll(tree, poll).toEqual(['ada: passivated', 'bob: stopped', 'cy: active']);
      expect(await texts('#tree > li > .state')).toEqual(['passivated (was idle)', 'stopped (was idle)', 'idle']);
      // Its skills are not working either.
      expect(await page.locator('.machine[data-agent="ada"][data-name="skill:counter"] .state').textContent()).toBe('passivated (was active)');
      expect(await page.locator('.machine[data-agent="cy"][data-name="skill:counter"] .state').textContent()).toBe('active');

      await expect.poll(agentStatus, poll).toEqual({ status: 'passivated', badge: 'passivated', isBadge: true });
      // Shown, not steered: its actions are listed, no control offered.
      await expect.poll(() => page.locator('#agent .signal, #agent .life').count(), poll).toBe(0);
      expect(await page.locator('#agent .action[data-action="counter/increment"]').count()).toBe(1);
      await page.click('#tree > li[data-session$="x:1"] > .actor-name');
      await expect.poll(agentStatus, poll).toEqual({ status: 'stopped', badge: 'stopped', isBadge: true });
      await page.click('#tree > li[data-session$="x:2"] > .actor-name');
      await expect.poll(agentStatus, poll).toEqual({ status: 'active', badge: 'running', isBadge: false });
      await expect.poll(() => page.locator('#agent .signal').count(), poll).toBe(1);
      // The page only asked; nothing was steered.
      expect(new Set(asked)).toEqual(new Set(['describe']));
      expect(browser.outside).toEqual([]);
    } finally {
      app.close();
      await server.stop();
    }
  }, 60_000);
});

describe('time travel', () => {
  it('steps back and forward through the recorded steps, each with its state, signal, effects and diff, jumps to the error, and a page that connects late has the steps too', async () => {
    const inspector = await startInspector({});
    const system = quietSystem({ inspect: inspector.inspect });
    try {
      const ada = system.spawn(Keeper, { id: 'ada' });
      await ada.call(createSignal('counter.increment'));
      await ada.call(createSignal('notes.add_now', { item: 'milk' }));
      await expect(ada.call(createSignal('notes.refuse'))).rejects.toThrow();
      await ada.call(createSignal('counter.increment'));
      // The page connects after all this: the server replays the steps in order.
      const { page } = browser;
      await page.goto(inspector.localUrl);
      const at = () => pane().getAttribute('data-step');
      await expect.poll(() => stateRow('counter.count'), poll).toEqual({ value: '2', changed: true });
      const last = Number(await at());
      expect(await pane().getAttribute('data-following')).toBe('true');

      await page.click('#step-error');
      await expect.poll(() => texts('#agent .step .trigger'), poll).toEqual(['signal notes.refuse']);
      const refused = "action_failed: action 'refuse' failed: this action always refuses";
      expect(await texts('#agent .step .error')).toEqual([refused, `error ${refused}`]);
      expect(await texts('#agent .step .diff li')).toEqual(['state unchanged']);
      expect(await stateRow('counter.count')).toEqual({ value: '1', changed: false });
      expect(await pane().getAttribute('data-following')).toBe('false');

      await page.click('#step-back');
      expect(await texts('#agent .step .trigger')).toEqual(['signal notes.add_now']);
      expect(await texts('#agent .step .signal-data')).toEqual(['data {"item":"milk"}']);
      expect(await texts('#agent .step .diff li')).toEqual(['notebook.items.0: — → "milk"']);
      expect(await stateRow('notebook.items.0')).toEqual({ value: '"milk"', changed: true });

      await page.click('#step-back');
      expect(await texts('#agent .step .trigger')).toEqual(['signal counter.increment']);
      expect(await stateRow('counter.count')).toEqual({ value: '1', changed: true });
      expect(await stateRow('notebook.items.0')).toBeNull();

      // New steps do not move a page that went back in time; `latest` follows again.
      const here = await at();
      await ada.call(createSignal('counter.increment'));
      await expect.poll(() => page.locator('#step-at').textContent(), poll).toMatch(new RegExp(`of ${last + 1}$`));
      expect(await at()).toBe(here);
      await page.click('#step-forward');
      expect(await texts('#agent .step .trigger')).toEqual(['signal notes.add_now']);
      await page.click('#step-latest');
      expect(await at()).toBe(String(last + 1));
      expect(await stateRow('counter.count')).toEqual({ value: '3', changed: true });
      expect(await page.locator('#step-forward').isDisabled()).toBe(true);

      // The skills shown are those of the step shown.
      await ada.mount(arithmetic);
      await expect.poll(() => texts('#agent .skills li'), poll).toEqual(['counter {"initial":0,"step":1}', 'notebook', 'arithmetic']);
      await page.click('#step-back');
      await page.click('#step-back');
      expect(await texts('#agent .step .trigger')).toEqual(['signal counter.increment']);
      expect(await texts('#agent .skills li')).toEqual(['counter {"initial":0,"step":1}', 'notebook']);
    } finally {
      await system.shutdown();
      await inspector.stop();
    }
  }, 60_000);

  it("from a trace file: each step with its signal and effects, the step where an error happened, and the agent's skills at each step with their lifecycle", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'skillstate-studio-trace-'));
    const file = join(dir, 'trace.jsonl');
    const system = quietSystem({ trace: file });
    const ada = system.spawn(Keeper, { id: 'ada' });
    await ada.call(createSignal('counter.increment'));
    await expect(ada.call(createSignal('notes.refuse'))).rejects.toThrow();
    await ada.mount(arithmetic);
    await ada.unmount('notebook');
    await system.shutdown();
    const { child, url } = await serve(['trace', 'view', file, '--port', '0']);
    try {
      const { page } = browser;
      await page.goto(url);
      await expect.poll(() => texts('#agent .step .trigger'), poll).toEqual(['unmount notebook']);
      expect(await texts('#agent .state-part .none')).toEqual(['not recorded in a trace']);
      // The skills the trace tells of: those the agent started with, less the one unmounted, plus the one mounted.
      expect(await texts('#agent .skills li')).toEqual(['counter — active', 'arithmetic — active']);
      await page.click('#step-back');
      expect(await texts('#agent .step .trigger')).toEqual(['mount arithmetic']);
      expect(await texts('#agent .skills li')).toEqual(['counter — active', 'notebook — active', 'arithmetic — active']);
      await page.click('#step-error');
      await expect.poll(() => texts('#agent .step .trigger'), poll).toEqual(['step.signal notes.refuse']);
      const refused = "action_failed: action 'refuse' failed: this action always refuses";
      expect(await texts('#agent .step .error')).toEqual([refused, `error ${refused}`]);
      expect(await texts('#agent .skills li')).toEqual(['counter — active', 'notebook — active']);
      expect(browser.outside).toEqual([]);
    } finally {
      const exit = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exit;
    }
  }, 60_000);
});

/** Starts `skillstate <args>` and resolves with the process and the local viewer's URL once it prints it. */
function serve(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const read = (data: Buffer) => {
      output += String(data);
      const url = /Local viewer:\s+(\S+)/.exec(output)?.[1];
      if (url) resolve({ child, url });
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${output}`)));
  });
}

describe('passivated agents of a real system', () => {
  it('shows an agent the runtime passivates as passivated, its skills too, and the actor a call wakes it as, with the state the call made', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'skillstate-studio-passivate-'));
    const inspector = await startInspector({ interactive: true });
    let passivated: () => void = () => {};
    const trace = (record: TraceRecord) => {
      if (record.kind === 'passivate') passivated();
    };
    const system = createAgentSystem({ inspect: inspector.inspect, store: createSqliteStore({ path: join(dir, 'agents.db') }), passivate: { idleMs: 300 }, trace, onUnhandledDiagnostic: () => {} });
    inspector.attach(system);
    const { page } = browser;
    const tree = () => page.locator('#tree > li').evaluateAll((items: ElementLike[]) => items.map((item) => `${item.querySelector('.actor-name')?.textContent}: ${item.getAttribute('data-status')}`));
    try {
      const rest = new Promise<void>((resolve) => (passivated = resolve));
      const ada = system.spawn(Keeper, { id: 'ada' });
      await ada.call(createSignal('counter.increment'));
      await rest;
      expect(ada.status).toBe('passivated');
      // A page that opens now catches up with what happened.
      await page.goto(inspector.localUrl);
      await expect.poll(tree, poll).toEqual(['ada: passivated']);
      expect(await texts('#tree > li > .state')).toEqual(['passivated']);
      expect(await page.locator('.machine[data-agent="ada"][data-name="skill:counter"] .state').textContent()).toBe('passivated (was active)');
      await expect.poll(() => page.locator('#agent .agent-status').textContent(), poll).toBe('passivated');

      // A call wakes it: a new actor of the same id, from its state as it was stored.
      await ada.call(createSignal('counter.increment'));
      // (It rests again after idleMs: whichever it shows by then, it is the new actor, with the new count.)
      await expect.poll(() => page.locator('#tree > li').count(), poll).toBe(2);
      await page.click('#tree > li:nth-child(2) > .actor-name');
      await expect.poll(async () => (await stateRow('counter.count'))?.value, poll).toBe('2');
      expect(browser.outside).toEqual([]);
    } finally {
      await system.shutdown();
      await inspector.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
