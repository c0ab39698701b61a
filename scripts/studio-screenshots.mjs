// Takes the screenshots of the studio in docs/: real agents streamed to a real inspector, the
// local viewer driven in Debian's chromium (headless) at 1400×900, every request that would leave
// this machine refused. Run it after changing the page:
//
//   node --import tsx scripts/studio-screenshots.mjs [out-folder]    (default: docs/)
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { createDocumentSkillRegistry, createSignal, defineAgent, chatMessage } from '../src/index.ts';
import { EXAMPLE_SKILLS_DIR } from '../src/manifest/discover.ts';
import { startInspector } from '../src/runtime/inspect.ts';
import { scriptedModel } from '../src/testing/index.ts';
import { arithmetic, calculator, counter } from '../skills/index.ts';
import { assistant } from '../test/model/fixtures.ts';
import { notebook, quietSystem } from '../test/runtime/fixtures.ts';

const out = process.argv[2] ?? fileURLToPath(new URL('../docs/', import.meta.url));
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
await page.route('**/*', (route) => (/^(http|ws):\/\/127\.0\.0\.1[:/]/.test(route.request().url()) ? route.continue() : route.abort()));
const until = async (check) => {
  for (let i = 0; i < 300 && !(await check()); i++) await new Promise((resolve) => setTimeout(resolve, 50));
};
/** The panes grow to their content (instead of scrolling), so that a panel is pictured whole. */
const unfold = (more = '') => page.addStyleTag({ content: `main { height: auto; } #middle > section { flex: none; overflow: visible; } ${more}` });
const shoot = async (name, target = page) => {
  await new Promise((resolve) => setTimeout(resolve, 300)); // the diagrams' last draw
  await target.screenshot({ path: `${out}${name}` });
  console.log(`${out}${name}`);
};

// Seeing and time travel: an agent with a counter, a notebook and arithmetic; one step failed.
// The system knows more skills to mount: a code skill, and the example document skills' folders.
{
  const documents = createDocumentSkillRegistry();
  for (const name of ['csv-tools', 'hello-extended']) await documents.registerPath(`${EXAMPLE_SKILLS_DIR}/${name}`);
  const inspector = await startInspector({ interactive: true, label: 'shop' });
  const system = quietSystem({ inspect: inspector.inspect, skills: [calculator], resolvers: [documents] });
  inspector.attach(system);
  const ada = system.spawn(defineAgent({ name: 'keeper', skills: [counter, notebook] }), { id: 'ada' });
  await page.goto(inspector.localUrl);
  for (let i = 0; i < 3; i++) await ada.call(createSignal('counter.increment'));
  await ada.call(createSignal('notes.add_now', { item: 'milk' }));
  await ada.mount(arithmetic);
  await ada.call(createSignal('arithmetic.divide', { a: 1, b: 0 })).catch(() => {});
  await ada.call(createSignal('notes.add', { item: 'bread', delay: 1 }));
  await until(async () => (await page.locator('#agent .state-tree li[data-path="notebook.items.1"]').count()) === 1);
  await shoot('studio.png');
  await page.click('#step-error');
  const folded = await unfold('#agent .agent-tools { display: none; }');
  await shoot('studio-time-travel.png', page.locator('#agent'));
  await folded.evaluate((style) => style.remove());
  await page.click('#step-latest');
  const add = page.locator('#agent .action[data-action="arithmetic/add"]');
  await until(async () => (await add.count()) === 1);
  await add.locator('summary').click();
  await add.locator('input[name="a"]').fill('2');
  await add.locator('input[name="b"]').fill('40');
  await add.locator('button.run').click();
  const divide = page.locator('#agent .action[data-action="arithmetic/divide"]');
  await divide.locator('summary').click();
  await divide.locator('input[name="a"]').fill('1');
  await divide.locator('input[name="b"]').fill('0');
  await divide.locator('button.run').click();
  await until(async () => (await divide.locator('.answer[data-ok="false"]').count()) === 1);
  // The actions, routes, signal, and the skills to mount with where each comes from: the tools whole.
  await unfold('#agent { overflow: visible; } #diagrams { display: none; }');
  await shoot('studio-steering.png', page.locator('#agent .agent-tools'));
  await system.shutdown();
  await inspector.stop();
}

// A model-driven agent: a conversation with tool calls (one failed, one unknown) and an approval waiting.
{
  const model = scriptedModel([
    { text: 'Adding.', toolCalls: [{ tool: 'add', args: { a: 2, b: 3 }, id: 'sum' }, { tool: 'balance', args: { explode: true }, id: 'down' }, { tool: 'teleport', args: { to: 'Mars' }, id: 'away' }] },
    { text: '2 + 3 = 5; the ledger is offline.' },
    { toolCalls: [{ tool: 'pay', args: { to: 'bob', amount: 5 }, id: 'pay-1' }] },
    { text: 'Paid bob 5.' },
  ]);
  const inspector = await startInspector({ interactive: true, label: 'support' });
  const system = quietSystem({ inspect: inspector.inspect, models: { default: model } });
  inspector.attach(system);
  const agent = system.spawn(assistant(), { id: 'helper' });
  await page.goto(inspector.localUrl);
  await agent.call(chatMessage('add 2 and 3, then check the ledger'));
  const paying = agent.call(chatMessage('pay bob 5'));
  await until(async () => (await page.locator('#agent .conversation li.approval').count()) === 1);
  await unfold();
  await shoot('studio-conversation.png', page.locator('#agent .conversation-part'));
  agent.send(createSignal('chat.approve', { toolCallId: 'pay-1' }));
  await paying;
  await system.shutdown();
  await inspector.stop();
}
await browser.close();
