/**
 * A real browser for the viewer tests: Debian's chromium driven by playwright-core, with a fresh
 * profile, every request recorded and every one that would leave this machine refused.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export interface Browser {
  page: Page;
  /** Every URL the page asked for (HTTP and WebSocket). */
  requests: string[];
  /** The requests that would have left this machine (refused). */
  outside: string[];
  close(): Promise<void>;
}

function isLoopback(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  if (protocol === 'data:' || protocol === 'about:' || protocol === 'blob:') return true;
  return hostname === '127.0.0.1' || hostname === 'localhost' || hostname === '[::1]';
}

export async function openBrowser(): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), 'skillstate-chromium-'));
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 860 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const requests: string[] = [];
  const outside: string[] = [];
  await context.route('**/*', async (route) => {
    const url = route.request().url();
    if (isLoopback(url)) await route.continue();
    else {
      outside.push(url);
      await route.abort();
    }
  });
  context.on('request', (request) => void requests.push(request.url()));
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('websocket', (socket) => {
    requests.push(socket.url());
    if (!isLoopback(socket.url())) outside.push(socket.url());
  });
  return {
    page,
    requests,
    outside,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** The state the card of an agent's actor shows, and the states highlighted in its diagram (once drawn for that state). */
export async function shownState(page: Page, agent: string, actor: string): Promise<{ state: string | null; highlighted: string[] }> {
  const card = page.locator(`.machine[data-agent="${agent}"][data-name="${actor}"]`);
  if (!(await card.count())) return { state: null, highlighted: [] };
  const state = await card.locator('.diagram').getAttribute('data-state');
  const highlighted = (await card.locator('.diagram svg g.node.current').allTextContents()).map((text) => text.trim());
  return { state, highlighted };
}

/** What the visible log lines say: `agent type skill`. */
/** What the tests read of a page element (the project compiles without the DOM's types). */
export interface ElementLike {
  getAttribute(name: string): string | null;
  querySelector(selector: string): { textContent: string | null } | null;
}

export async function visibleLog(page: Page): Promise<{ agent: string; type: string; skill: string; detail: string }[]> {
  return page.locator('#log li:not([hidden])').evaluateAll((items: ElementLike[]) =>
    items.map((item) => ({
      agent: item.getAttribute('data-agent') ?? '',
      type: item.getAttribute('data-type') ?? '',
      skill: item.getAttribute('data-skill') ?? '',
      detail: item.querySelector('.detail')?.textContent ?? '',
    })),
  );
}
