/**
 * Watch agents and their skill lifecycles. Starts the inspection server on 127.0.0.1, prints the
 * two pages that read it — the local viewer (offline: state diagrams and the event log) and the
 * Stately inspector (online) — and runs a few signals through an agent, with state and payloads
 * redacted before they leave the process. Run:
 *   npm run example -- examples/inspector.ts          # keeps running until Ctrl-C
 *   npm run example -- examples/inspector.ts --once   # runs the signals and exits (what CI does)
 * Without a browser, use the trace instead: createAgentSystem({ trace: 'trace.jsonl' }).
 */
import { createAgentSystem, createSignal, defineAgent } from 'skillstate';
import { startInspector } from 'skillstate/inspect';
import { arithmetic, counter } from 'skillstate/skills';

const MathAgent = defineAgent({ name: 'math_agent', skills: [counter] });

export async function inspectorTour(options: { once: boolean }, log: (line: string) => void = console.log): Promise<void> {
  const inspector = await startInspector({ redact: true }); // url is the local viewer's (the default)
  log(`Local viewer: open ${inspector.localUrl} in a browser (works offline)`);
  log(`Stately inspector: open ${inspector.statelyUrl} (needs the internet; events stream over ${inspector.socketUrl})`);
  const system = createAgentSystem({ inspect: inspector.inspect });
  const agent = system.spawn(MathAgent, { id: 'inspected' });
  await agent.mount(arithmetic);
  const tick = async () => {
    await agent.call(createSignal('counter.increment'));
    await agent.call(createSignal('arithmetic.add', { a: 1, b: 2 }));
  };
  await tick();
  log(`agent '${agent.id}' with lifecycle children: ${Object.keys(agent.actor.getSnapshot().children).join(', ')}`);
  if (options.once) {
    await system.shutdown();
    await inspector.stop();
    return;
  }
  const timer = setInterval(() => void tick(), 2000);
  process.once('SIGINT', () => {
    clearInterval(timer);
    void system.shutdown().then(() => inspector.stop());
  });
}

if (import.meta.url === `file://${process.argv[1]}`) await inspectorTour({ once: process.argv.includes('--once') });
