/**
 * Steering from the studio: opt-in (`interactive: true`), loopback only, a session token on every
 * request. In Chromium, a form generated from an action's input schema changes the agent's state
 * and the page shows it, a typed error is shown as such, a signal is called, a skill mounted and
 * unmounted, an agent stopped, a chat with an approval given from the page runs the tool once, and
 * a model's answer shows piece by piece as it is written.
 * Over HTTP and WebSocket: read-only refuses every steering request, a request without the token
 * (or with a wrong one) is refused, a foreign Origin or Host is refused.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockLanguageModelV3 } from 'ai/test';
import WebSocket from 'ws';
import { createDocumentSkillRegistry, defineAgent } from '../../src/index.js';
import { startInspector, type InspectorHandle } from '../../src/runtime/inspect.js';
import { startViewerServer } from '../../src/viewer/server.js';
import { scriptedModel } from '../../src/testing/index.js';
import { arithmetic, counter } from '../../skills/index.js';
import { assistant } from '../model/fixtures.js';
import { notebook, quietSystem } from '../runtime/fixtures.js';
import { openBrowser, type Browser } from './browser.js';

const Keeper = defineAgent({ name: 'keeper', skills: [counter, notebook] });
const poll = { timeout: 15_000, interval: 50 };
type StreamPart = Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;

let browser: Browser;
beforeAll(async () => {
  browser = await openBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

/** POSTs a steering command as a program would; resolves with the status and the answer. */
function post(inspector: InspectorHandle, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; answer: { ok: boolean; value?: unknown; error?: { code: string; message: string }; text?: string } }> {
  return new Promise((resolve, reject) => {
    const url = new URL('/local/steer', inspector.localUrl);
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (response) => {
      let text = '';
      response.on('data', (chunk) => (text += String(chunk)));
      // A refused Host is answered before any steering: in plain text.
      response.on('end', () => resolve({ status: response.statusCode ?? 0, answer: response.headers['content-type'] === 'application/json' ? JSON.parse(text) : { ok: false, text } }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** What the test reads of a row of the page (the project compiles without the DOM's types). */
interface ListRow {
  dataset: Record<string, string | undefined>;
  querySelector(selector: string): { textContent: string | null } | null;
}

const texts = (selector: string) => browser.page.locator(selector).allTextContents();
const tokenOf = (inspector: InspectorHandle) => new URL(inspector.localUrl).hash.replace('#token=', '');

describe('steering from the page (interactive: true)', () => {
  it('runs an action from its form, shows the answer and the typed error, calls a signal, mounts and unmounts, stops the agent', async () => {
    const inspector = await startInspector({ interactive: true });
    const system = quietSystem({ inspect: inspector.inspect });
    inspector.attach(system);
    try {
      const ada = system.spawn(Keeper, { id: 'ada' });
      const { page } = browser;
      expect(new URL(inspector.localUrl).hash).toMatch(/^#token=[\w-]{32}$/);
      await page.goto(inspector.localUrl);
      const action = page.locator('#agent .action[data-action="notebook/append_now"]');
      await expect.poll(() => action.count(), poll).toBe(1);
      // The form is the action's input schema: `item`, a required string.
      await action.locator('summary').click();
      expect(await action.locator('.field').evaluateAll((fields: { dataset: { field?: string }; textContent: string | null }[]) => fields.map((field) => field.textContent))).toEqual(['item *']);
      await action.locator('input[name="item"]').fill('from the page');
      await action.locator('button.run').click();
      await expect.poll(() => page.locator('#agent .state-tree li[data-path="notebook.items.0"] > .value').textContent(), poll).toBe('"from the page"');
      expect(ada.getSnapshot().state).toMatchObject({ notebook: { items: ['from the page'] } });
      // The state reaches the page by the inspection stream, the answer by the run's own request: either may come first.
      await expect.poll(() => action.locator('.answer').getAttribute('data-ok'), poll).toBe('true');

      // Input the schema refuses: the typed error, shown as such; nothing changed.
      const refused = page.locator('#agent .action[data-action="notebook/refuse"]');
      await refused.locator('summary').click();
      await refused.locator('button.run').click();
      await expect.poll(() => refused.locator('.answer').textContent(), poll).toBe("action_failed: action 'refuse' failed: this action always refuses");
      expect(await refused.locator('.answer').getAttribute('data-ok')).toBe('false');

      await page.fill('#agent .signal-type', 'counter.increment');
      await page.click('#agent .signal button.call');
      await expect.poll(() => page.locator('#agent .state-tree li[data-path="counter.count"] > .value').textContent(), poll).toBe('1');

      await page.fill('#agent .mount-name', 'arithmetic');
      await page.click('#agent .life button.mount');
      // A skill neither the definition nor a registry knows: the typed error, nothing mounted.
      await expect.poll(() => page.locator('#agent .life .answer').textContent(), poll).toMatch(/^unknown_skill: /);
      expect(ada.getSnapshot().mounted.map((skill) => skill.name)).toEqual(['counter', 'notebook']);
      await ada.mount(arithmetic);
      await expect.poll(() => page.locator('#agent .action[data-action="arithmetic/add"]').count(), poll).toBe(1);
      await page.click('#agent .life button.unmount:text("Unmount arithmetic")');
      await expect.poll(() => ada.getSnapshot().mounted.map((skill) => skill.name), poll).toEqual(['counter', 'notebook']);

      await page.click('#agent .life button.stop-agent');
      await expect.poll(() => page.locator('#agent').getAttribute('data-status'), poll).toBe('stopped');
      expect(ada.getSnapshot().status).toBe('stopped');
      expect(browser.outside).toEqual([]);
    } finally {
      await system.shutdown();
      await inspector.stop();
    }
  }, 60_000);

  it("mounts a skill from the disclosure list: a document skill in a folder the system's resolvers know, shown with its description and origin, loaded and mounted from the page", async () => {
    const folder = await mkdtemp(join(tmpdir(), 'skillstate-studio-skills-'));
    await cp('/work/shared/corpus/anthropics-skills/brand-guidelines', join(folder, 'brand-guidelines'), { recursive: true });
    const documents = createDocumentSkillRegistry();
    await documents.registerPath(join(folder, 'brand-guidelines'));
    // Loading waits for the test: the page sees the mount begin before the skill is loaded and mounted.
    let release!: () => void;
    const loading = new Promise<void>((resolve) => (release = resolve));
    const held = { get: (name: string) => documents.get(name), has: (name: string) => documents.has(name), entries: () => documents.entries(), load: async (names: string[]) => (await loading, documents.load(names)) };
    const inspector = await startInspector({ interactive: true });
    const system = quietSystem({ inspect: inspector.inspect, resolvers: [held], skills: [arithmetic] });
    inspector.attach(system);
    try {
      const ada = system.spawn(Keeper, { id: 'ada' });
      const { page } = browser;
      await page.goto(inspector.localUrl);
      const offered = page.locator('#agent .life .mountable li');
      await expect.poll(() => offered.evaluateAll((rows: ListRow[]) => rows.map((row) => `${row.dataset.skill}|${row.querySelector('.from')?.textContent}`)), poll).toEqual(['arithmetic|registry', 'brand-guidelines|documents']);
      // What a model is disclosed of the skill: its description as its SKILL.md gives it.
      const brand = page.locator('#agent .life .mountable li[data-skill="brand-guidelines"]');
      expect(await brand.locator('.description').textContent()).toBe(documents.entry('brand-guidelines')!.briefDescription);
      expect(await brand.locator('.description').textContent()).toMatch(/^Applies Anthropic's official brand colors/);
      expect(documents.get('brand-guidelines')).toBeUndefined(); // listed, not loaded

      const askedAgain = page.waitForResponse((response) => response.url().endsWith('/local/steer') && (response.request().postData() ?? '').includes('"op":"describe"'));
      await brand.locator('button.mount-one').click();
      await askedAgain; // on the mount event, while the skill is still loading
      release();
      await expect.poll(() => ada.getSnapshot().mounted.map((skill) => skill.name), poll).toEqual(['counter', 'notebook', 'brand-guidelines']);
      expect(ada.getSnapshot().lifecycles['brand-guidelines']).toBe('active');
      await expect.poll(() => page.locator('#agent .life .answer').getAttribute('data-ok'), poll).toBe('true');
      // Now mounted: among the agent's skills, no longer offered, and it can be unmounted.
      await expect.poll(() => texts('#agent .skills li'), poll).toEqual(['counter {"initial":0,"step":1}', 'notebook', 'brand-guidelines']);
      await expect.poll(() => offered.evaluateAll((rows: ListRow[]) => rows.map((row) => row.dataset.skill)), poll).toEqual(['arithmetic']);
      expect(await page.locator('#agent .life button.unmount:text("Unmount brand-guidelines")').count()).toBe(1);
      expect(browser.outside).toEqual([]);
    } finally {
      await system.shutdown();
      await inspector.stop();
      await rm(folder, { recursive: true, force: true });
    }
  }, 60_000);

  it('chats with a model-driven agent: the turn shows as it goes, an approval from the page runs the tool once', async () => {
    const model = scriptedModel([{ toolCalls: [{ tool: 'pay', args: { to: 'bob', amount: 5 }, id: 'pay-1' }] }, { text: 'Paid bob 5.' }]);
    const inspector = await startInspector({ interactive: true });
    const system = quietSystem({ inspect: inspector.inspect, models: { default: model } });
    inspector.attach(system);
    try {
      const agent = system.spawn(assistant(), { id: 'helper' });
      const { page } = browser;
      await page.goto(inspector.localUrl);
      await expect.poll(() => page.locator('#agent .chat').count(), poll).toBe(1);
      await page.fill('#agent .chat-text', 'pay bob 5');
      await page.click('#agent .chat-send');
      const approve = page.locator('#agent .conversation li.approval button.approve');
      await expect.poll(() => approve.count(), poll).toBe(1);
      await approve.click();
      await expect.poll(() => page.locator('#agent .conversation li.assistant .body').allTextContents(), poll).toEqual(['Paid bob 5.']);
      const state = agent.getSnapshot().state as { ledger: { paid: unknown[] } };
      expect(state.ledger.paid).toEqual([{ to: 'bob', amount: 5 }]);
      expect(await page.locator('#agent .conversation li[data-tool="pay"] .result').allTextContents()).toEqual(['→ {"paid":5,"to":"bob"}']);
      expect(await page.locator('#agent .conversation li.approval').count()).toBe(0);
    } finally {
      await system.shutdown();
      await inspector.stop();
    }
  }, 60_000);

  it("streams a model's answer into the conversation as it is written, piece by piece", async () => {
    // The model writes only when the test says: each piece is awaited on the page before the next.
    let writer: ReadableStreamDefaultController<StreamPart> | undefined;
    let open = () => {};
    const opened = new Promise<void>((resolve) => (open = resolve));
    const model = new MockLanguageModelV3({
      doStream: async () => ({
        stream: new ReadableStream<StreamPart>({
          start(controller) {
            writer = controller;
            controller.enqueue({ type: 'stream-start', warnings: [] });
            controller.enqueue({ type: 'text-start', id: 't1' });
            open();
          },
        }),
      }),
    });
    const inspector = await startInspector({ interactive: true });
    const system = quietSystem({ inspect: inspector.inspect, models: { default: model } });
    inspector.attach(system);
    try {
      system.spawn(assistant(), { id: 'writer' });
      const { page } = browser;
      await page.goto(inspector.localUrl);
      await expect.poll(() => page.locator('#agent .chat').count(), poll).toBe(1);
      await page.fill('#agent .chat-text', 'say hello');
      await page.click('#agent .chat-send');
      await opened;
      const streaming = () => page.locator('#agent .conversation li.streaming .body').allTextContents();
      writer!.enqueue({ type: 'text-delta', id: 't1', delta: 'Hel' });
      await expect.poll(streaming, poll).toEqual(['Hel']);
      writer!.enqueue({ type: 'text-delta', id: 't1', delta: 'lo.' });
      await expect.poll(streaming, poll).toEqual(['Hello.']);
      writer!.enqueue({ type: 'text-end', id: 't1' });
      writer!.enqueue({ type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 2, text: 2, reasoning: 0 } } });
      writer!.close();
      await expect.poll(() => page.locator('#agent .conversation li.assistant:not(.streaming) .body').allTextContents(), poll).toEqual(['Hello.']);
      expect(await streaming()).toEqual([]);
    } finally {
      await system.shutdown();
      await inspector.stop();
    }
  }, 60_000);
});

describe('steering is refused unless every lock is open', () => {
  it('read-only: every steering request is refused over HTTP and over the socket; describing still works', async () => {
    const inspector = await startInspector({});
    const system = quietSystem({ inspect: inspector.inspect });
    inspector.attach(system);
    try {
      system.spawn(Keeper, { id: 'ada' });
      expect(new URL(inspector.localUrl).hash).toBe('');
      const commands = [
        { op: 'send', agent: 'ada', signal: { type: 'counter.increment' } },
        { op: 'call', agent: 'ada', signal: { type: 'counter.increment' } },
        { op: 'run', agent: 'ada', action: 'append_now', params: { item: 'x' } },
        { op: 'mount', agent: 'ada', skill: 'arithmetic' },
        { op: 'unmount', agent: 'ada', skill: 'counter' },
        { op: 'stop', agent: 'ada' },
      ];
      for (const command of commands) {
        const { status, answer } = await post(inspector, { app: 'app1', ...command }, { 'x-skillstate-token': 'guess' });
        expect([command.op, status, answer.error?.code]).toEqual([command.op, 403, 'read_only']);
      }
      expect(system.get('ada')!.getSnapshot()).toMatchObject({ status: 'idle', state: { counter: { count: 0 }, notebook: { items: [] } } });
      const described = await post(inspector, { app: 'app1', op: 'describe' });
      expect(described.status).toBe(200);
      expect((described.answer.value as { id: string; actions: { name: string }[] }[])[0]).toMatchObject({ id: 'ada', actions: expect.arrayContaining([expect.objectContaining({ name: 'append_now' })]) });

      // Over the socket, a command is answered with a refusal and never reaches the application.
      const socket = new WebSocket(inspector.socketUrl);
      await new Promise((resolve) => socket.once('open', resolve));
      const answers: unknown[] = [];
      socket.on('message', (data) => {
        const message = JSON.parse(String(data)) as { type: string };
        if (message.type === '@skillstate.answer') answers.push(message);
      });
      socket.send(JSON.stringify({ type: '@skillstate.command', id: 'w1', command: { op: 'stop', agent: 'ada' } }));
      await expect.poll(() => answers, poll).toEqual([{ type: '@skillstate.answer', id: 'w1', ok: false, error: { code: 'read_only', message: expect.any(String) } }]);
      socket.close();
      expect(system.get('ada')!.getSnapshot().status).toBe('idle');
    } finally {
      await system.shutdown();
      await inspector.stop();
    }
  });

  it('interactive: no token, a wrong token, a foreign Origin or Host are refused; the socket never steers; the right token from the page own origin works', async () => {
    const inspector = await startInspector({ interactive: true });
    const system = quietSystem({ inspect: inspector.inspect });
    inspector.attach(system);
    try {
      system.spawn(Keeper, { id: 'ada' });
      const token = tokenOf(inspector);
      const increment = { app: 'app1', op: 'call', agent: 'ada', signal: { type: 'counter.increment' } };
      expect(await post(inspector, increment)).toMatchObject({ status: 401, answer: { ok: false, error: { code: 'unauthorized' } } });
      expect(await post(inspector, increment, { 'x-skillstate-token': `${token.slice(1)}x` })).toMatchObject({ status: 401, answer: { error: { code: 'unauthorized' } } });
      expect(await post(inspector, increment, { 'x-skillstate-token': token, origin: 'http://evil.example' })).toMatchObject({ status: 403, answer: { error: { code: 'foreign_origin' } } });
      expect(await post(inspector, increment, { 'x-skillstate-token': token, host: 'evil.example' })).toMatchObject({ status: 403, answer: { text: expect.stringMatching(/loopback names only/) } });
      expect(system.get('ada')!.getSnapshot().state).toMatchObject({ counter: { count: 0 } });

      const socket = new WebSocket(inspector.socketUrl);
      await new Promise((resolve) => socket.once('open', resolve));
      const answers: { error?: { code: string } }[] = [];
      socket.on('message', (data) => {
        const message = JSON.parse(String(data)) as { type: string; error?: { code: string } };
        if (message.type === '@skillstate.answer') answers.push(message);
      });
      socket.send(JSON.stringify({ type: '@skillstate.command', id: 'w1', token, command: { op: 'stop', agent: 'ada' } }));
      await expect.poll(() => answers.map((answer) => answer.error?.code), poll).toEqual(['over_websocket']);
      socket.close();

      const origin = new URL(inspector.localUrl).origin;
      expect(await post(inspector, increment, { 'x-skillstate-token': token, origin })).toEqual({ status: 200, answer: { ok: true, value: { count: 1 } } });
      expect(system.get('ada')!.getSnapshot().state).toMatchObject({ counter: { count: 1 } });
      // A typed error from the agent comes back as such.
      expect(await post(inspector, { ...increment, signal: { type: 'no.such.route' } }, { 'x-skillstate-token': token })).toMatchObject({ status: 200, answer: { ok: false, error: { code: 'no_route' } } });
      expect(await post(inspector, { app: 'app1', op: 'call', agent: 'nobody', signal: { type: 'x' } }, { 'x-skillstate-token': token })).toMatchObject({ answer: { ok: false, error: { code: 'unknown_agent' } } });
      expect(await post(inspector, { app: 'app1', op: 'explode' }, { 'x-skillstate-token': token })).toMatchObject({ status: 400, answer: { error: { code: 'invalid_command' } } });
    } finally {
      await system.shutdown();
      await inspector.stop();
    }
  });

  it('an application that did not opt in refuses steering even from an interactive server; interactive refuses a non-loopback host', async () => {
    const server = await startViewerServer({ interactive: true });
    const inspector = await startInspector({ connect: server.socketUrl });
    const system = quietSystem({ inspect: inspector.inspect });
    inspector.attach(system);
    try {
      system.spawn(Keeper, { id: 'ada' });
      const url = new URL('/local/steer', server.url);
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-skillstate-token': server.token! }, body: JSON.stringify({ app: 'app1', op: 'stop', agent: 'ada' }) });
      expect(await response.json()).toMatchObject({ ok: false, error: { code: 'read_only', message: expect.stringContaining('did not opt in') } });
      expect(system.get('ada')!.getSnapshot().status).toBe('idle');
    } finally {
      await system.shutdown();
      await inspector.stop();
      await server.stop();
    }
    await expect(startInspector({ interactive: true, host: '0.0.0.0' })).rejects.toMatchObject({ message: expect.stringMatching(/loopback only/) });
  });
});
