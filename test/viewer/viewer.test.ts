/**
 * The local viewer in a real browser (chromium, headless): it draws every agent and skill
 * lifecycle as a state diagram with the current state highlighted, follows mounts and unmounts
 * live, lists the events with filters by agent and skill, renders a recorded trace the same way
 * (`skillstate trace view`), and never makes a request that leaves this machine.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActor, createMachine } from 'xstate';
import { createSignal, defineAgent, type AgentSystem } from '../../src/index.js';
import { startInspector, type InspectorHandle } from '../../src/runtime/inspect.js';
import { arithmetic, counter } from '../../skills/index.js';
import { quietSystem } from '../runtime/fixtures.js';
import { openBrowser, shownState, visibleLog, type Browser, type ElementLike } from './browser.js';

const MathAgent = defineAgent({ name: 'math_agent', skills: [counter] });
const BIN = fileURLToPath(new URL('../../bin/skillstate.js', import.meta.url));
const poll = { timeout: 15_000, interval: 50 };

let browser: Browser;
let artefacts: string;
beforeAll(async () => {
  browser = await openBrowser();
  artefacts = await mkdtemp(join(tmpdir(), 'skillstate-viewer-'));
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

describe('the local viewer, live', () => {
  let inspector: InspectorHandle;
  let system: AgentSystem;
  afterAll(async () => {
    await system?.shutdown();
    await inspector?.stop();
  });

  it('shows agents and skill lifecycles, follows mounts and unmounts, and filters the log', async () => {
    inspector = await startInspector({ viewer: 'local', redact: true });
    expect(inspector.url).toBe(inspector.localUrl);
    system = quietSystem({ inspect: inspector.inspect });
    const alice = system.spawn(MathAgent, { id: 'alice' });
    const bob = system.spawn(MathAgent, { id: 'bob' });
    const { page } = browser;
    await page.goto(inspector.localUrl);

    await expect.poll(() => shownState(page, 'bob', 'skill:counter'), poll).toEqual({ state: 'active', highlighted: ['active'] });
    await expect.poll(() => page.locator('#tree > li').evaluateAll((items: ElementLike[]) => items.map((item) => item.querySelector('.actor-name')?.textContent)), poll).toEqual(
      expect.arrayContaining(['alice', 'bob']),
    );

    await alice.mount(arithmetic);
    await alice.call(createSignal('counter.increment'));
    await alice.call(createSignal('arithmetic.add', { a: 1, b: 2 }));
    await bob.call(createSignal('counter.increment'));
    const arithmeticCard = page.locator('.machine[data-name="skill:arithmetic"]');
    await expect.poll(() => arithmeticCard.getAttribute('data-agent'), poll).toBe('alice');
    await expect.poll(() => shownState(page, 'alice', 'skill:arithmetic'), poll).toEqual({ state: 'active', highlighted: ['active'] });

    await alice.unmount('arithmetic');
    // The highlighted state moves: the diagram is drawn again with `inactive` current.
    await expect.poll(() => shownState(page, 'alice', 'skill:arithmetic'), poll).toEqual({ state: 'inactive', highlighted: ['inactive'] });
    // The diagram is the machine's own: every state of the lifecycle machine is drawn.
    const drawn = (await arithmeticCard.locator('svg g.node').allTextContents()).map((text) => text.trim()).filter(Boolean).sort();
    expect(drawn).toEqual(['activating', 'active', 'deactivating', 'failed', 'inactive']);
    // The agent's own machine has states too: idle between items.
    await expect.poll(() => shownState(page, 'alice', 'alice'), poll).toEqual({ state: 'idle', highlighted: ['idle'] });

    await expect
      .poll(async () => (await visibleLog(page)).filter((line) => line.agent === 'alice').map((line) => `${line.type}:${line.skill}`), poll)
      .toEqual(expect.arrayContaining(['mount:arithmetic', 'signal:', 'unmount:arithmetic', 'deactivate:arithmetic']));
    const signals = (await visibleLog(page)).filter((line) => line.type === 'signal').map((line) => `${line.agent} ${line.detail}`);
    expect(signals).toEqual(expect.arrayContaining(['alice counter.increment "[redacted]"', 'alice arithmetic.add "[redacted]"', 'bob counter.increment "[redacted]"']));

    await page.selectOption('#filter-agent', 'bob');
    const bobs = await visibleLog(page);
    expect(bobs.length).toBeGreaterThan(0);
    expect(new Set(bobs.map((line) => line.agent))).toEqual(new Set(['bob']));
    expect(await page.locator('.machine:not([hidden])').evaluateAll((cards: ElementLike[]) => cards.map((card) => card.getAttribute('data-agent')))).toEqual(['bob', 'bob']);

    await page.selectOption('#filter-agent', '');
    await page.selectOption('#filter-skill', 'arithmetic');
    const arithmeticLines = await visibleLog(page);
    expect(arithmeticLines.map((line) => line.type)).toEqual(expect.arrayContaining(['mount', 'unmount', 'deactivate']));
    expect(new Set(arithmeticLines.map((line) => line.skill))).toEqual(new Set(['arithmetic']));
    await page.selectOption('#filter-skill', '');

    const screenshot = join(artefacts, 'local-viewer.png');
    await page.screenshot({ path: screenshot });
    if (process.env.SKILLSTATE_VIEWER_SCREENSHOT) await copyFile(screenshot, process.env.SKILLSTATE_VIEWER_SCREENSHOT);

    expect(browser.requests.some((url) => url.endsWith('/local/mermaid.min.js'))).toBe(true);
    expect(browser.outside).toEqual([]);
  }, 60_000);
});

describe('the local viewer draws whatever states a machine has', () => {
  it('nested states from the definition, the active state and its parent highlighted, following transitions', async () => {
    // Any XState actor streamed to the inspector is drawn from its own definition: machines with
    // richer states show up without changes to the viewer.
    const worker = createMachine({
      id: 'worker',
      initial: 'idle',
      states: {
        idle: { on: { work: 'stepping' } },
        stepping: {
          initial: 'hooks',
          states: { hooks: { on: { next: 'actions' } }, actions: { on: { next: 'effects' } }, effects: { type: 'final' } },
          onDone: 'idle',
          on: { stop: '#worker.stopped' },
        },
        stopped: { type: 'final' },
      },
    });
    const inspector = await startInspector({ viewer: 'local' });
    try {
      const actor = createActor(worker, { id: 'worker', inspect: inspector.inspect }).start();
      const { page } = browser;
      await page.goto(inspector.localUrl);
      await expect.poll(() => shownState(page, 'worker', 'worker'), poll).toEqual({ state: 'idle', highlighted: ['idle'] });
      const card = page.locator('.machine[data-name="worker"]');
      expect((await card.locator('svg g.node').allTextContents()).map((text) => text.trim()).filter(Boolean).sort()).toEqual(['actions', 'effects', 'hooks', 'idle', 'stopped']);
      actor.send({ type: 'work' });
      actor.send({ type: 'next' });
      await expect.poll(() => card.locator('.diagram').getAttribute('data-state'), poll).toBe('stepping.actions');
      expect((await card.locator('svg g.node.current').allTextContents()).map((text) => text.trim())).toEqual(['actions']);
      expect(await card.locator('svg g.current').count()).toBe(2); // the compound state `stepping` too
      await card.screenshot({ path: join(artefacts, 'nested-machine.png') });
      // Transitions by id (`#worker.stopped`) and on completion (`onDone`) are drawn too.
      expect((await card.locator('svg .edgeLabel').allTextContents()).map((text) => text.trim()).filter(Boolean).sort()).toEqual(['done', 'next', 'next', 'stop', 'work']);
      actor.stop();
      expect(browser.outside).toEqual([]);
    } finally {
      await inspector.stop();
    }
  }, 60_000);
});

/** Starts `skillstate <args>` and resolves with the process and the local viewer's URL once it prints it. */
function serve(args: string[]): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL printed: ${output}`)), 20_000);
    const read = (data: Buffer) => {
      output += String(data);
      const url = /Local viewer:\s+(\S+)/.exec(output)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve({ child, url, output: () => output });
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${output}`)));
  });
}

async function stopped(child: ChildProcess): Promise<number | null> {
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return exit;
}

describe('the local viewer, two applications on one skillstate inspect', () => {
  it('keeps them apart: both agents of the same id shown, each labelled with its application, its events under its own agent', async () => {
    const { child, url, output } = await serve(['inspect', '--port', '0']);
    const socketUrl = /Application socket: (\S+)/.exec(output())![1]!;
    const apps: { inspector: InspectorHandle; system: AgentSystem }[] = [];
    try {
      const agents = [];
      for (const label of ['shop', 'bank']) {
        const inspector = await startInspector({ connect: socketUrl, label });
        const system = quietSystem({ inspect: inspector.inspect });
        apps.push({ inspector, system });
        // Each application's XState system numbers its actors from x:0.
        agents.push(system.spawn(MathAgent, { id: 'ada' }));
      }
      const [shopAda, bankAda] = agents;
      await bankAda!.mount(arithmetic);
      await bankAda!.call(createSignal('arithmetic.add', { a: 1, b: 2 }));
      await shopAda!.call(createSignal('counter.increment'));
      const shop = `shop (pid ${process.pid})`;
      const bank = `bank (pid ${process.pid})`;

      const { page } = browser;
      await page.goto(url);
      const roots = () => page.locator('#tree > li').evaluateAll((items: ElementLike[]) => items.map((item) => `${item.querySelector('.actor-name')?.textContent} ${item.querySelector('.app')?.textContent}`));
      // Each application's agent: both named alike, each with its application (the system actors that run them are not agents, and not listed).
      await expect.poll(roots, poll).toEqual([`ada ${shop}`, `ada ${bank}`]);
      const cards = (name: string) => page.locator(`.machine[data-name="${name}"]`).evaluateAll((found: ElementLike[]) => found.map((card) => card.getAttribute('data-app')).sort());
      await expect.poll(() => cards('skill:arithmetic'), poll).toEqual([bank]);
      expect(await cards('skill:counter')).toEqual([bank, shop]);
      expect(await cards('ada')).toEqual([bank, shop]);
      // Each signal is logged under the agent of the application that got it, saying which.
      const signals = () =>
        page.locator('#log li[data-type="signal"]').evaluateAll((items: ElementLike[]) => items.map((item) => `${item.getAttribute('data-app')}: ${item.querySelector('.who')?.textContent} ${item.querySelector('.detail')?.textContent}`));
      await expect.poll(signals, poll).toEqual(expect.arrayContaining([`${bank}: [${bank}] ada arithmetic.add {"a":1,"b":2}`, `${shop}: [${shop}] ada counter.increment`]));
      await page.screenshot({ path: join(artefacts, 'two-applications.png') });
      expect(browser.outside).toEqual([]);
    } finally {
      for (const { inspector, system } of apps) {
        await system.shutdown();
        await inspector.stop();
      }
      expect(await stopped(child)).toBe(0);
    }
  }, 60_000);
});

describe('skillstate trace view', () => {
  it('renders a recorded trace the same way: last states highlighted, every event listed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'skillstate-trace-view-'));
    const file = join(dir, 'trace.jsonl');
    const system = quietSystem({ trace: file });
    const agent = system.spawn(MathAgent, { id: 'carol' });
    await agent.mount(arithmetic);
    await agent.call(createSignal('arithmetic.add', { a: 2, b: 2 }));
    await agent.unmount('arithmetic');
    agent.send(createSignal('no.route'));
    await system.shutdown();

    const { child, url } = await serve(['trace', 'view', file, '--port', '0']);
    try {
      expect(new URL(url).hostname).toBe('127.0.0.1');
      const { page } = browser;
      await page.goto(url);
      await expect.poll(() => shownState(page, 'carol', 'skill:arithmetic'), poll).toEqual({ state: 'inactive', highlighted: ['inactive'] });
      await expect.poll(() => shownState(page, 'carol', 'skill:counter'), poll).toEqual({ state: 'active', highlighted: ['active'] });
      const log = await visibleLog(page);
      expect(log.map((line) => line.type)).toEqual(expect.arrayContaining(['spawn', 'mount', 'signal', 'unmount', 'deactivate', 'effect.register_action', 'stop']));
      expect(log.filter((line) => line.type === 'signal').map((line) => line.detail)).toEqual(['arithmetic.add', 'no.route']);
      expect(await page.locator('#title').textContent()).toBe(`trace ${file}`);
      await page.screenshot({ path: join(artefacts, 'trace-view.png') });
      expect(browser.outside).toEqual([]);
    } finally {
      expect(await stopped(child)).toBe(0);
    }
  }, 60_000);
});
