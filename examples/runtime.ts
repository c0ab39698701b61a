/**
 * Agents as actors in a Node app: spawn an agent, send and call signals, mount a skill at run
 * time, watch emitted signals and errors. Run: npm run example examples/runtime.ts
 */
import { z } from 'zod';
import { Effects, createAgentSystem, createSignal, defineAction, defineAgent, result } from 'skillstate';
import { arithmetic, calculator, counter } from 'skillstate/skills';

// An agent of our own: a calculator and a counter, plus an action that announces totals.
const announce = defineAction({
  name: 'announce',
  description: 'Announce the current count to whoever listens',
  input: z.object({}),
  run: (_params, ctx) => {
    const { count } = (ctx.state as { counter: { count: number } }).counter;
    return result({ announced: count }, { effects: [Effects.emit(createSignal('totals.count', { count }))] });
  },
});

export const MathAgent = defineAgent({
  name: 'math_agent',
  skills: [calculator, [counter, { initial: 1 }]],
  actions: [announce],
  routes: [{ path: 'totals.announce', target: { action: 'announce' } }],
});

export async function runtimeTour(log: (line: string) => void = console.log): Promise<void> {
  const system = createAgentSystem();
  system.subscribe('totals.*', (signal) => log(`subscriber heard ${signal.type} ${JSON.stringify(signal.data)}`));
  system.onError((error, agent) => log(`error from ${agent}: ${error.code}: ${error.message}`));
  system.onDiagnostic((diagnostic) => log(`note (${diagnostic.code}): ${diagnostic.message}`));

  const agent = system.spawn(MathAgent, { id: 'math-1' });
  log(`spawned ${agent.id}; lifecycles ${JSON.stringify(agent.getSnapshot().lifecycles)}`);

  // send: fire and forget (a sync action is done before send returns)
  agent.send(createSignal('counter.increment'));
  agent.send(createSignal('counter.increment'));
  log(`after two sends: ${JSON.stringify(agent.getSnapshot().state)}`);

  // call: wait for the answer (calculator answers with a calculator.result signal)
  const answer = await agent.call(createSignal('calculator.multiply', { a: 6, b: 7 }));
  log(`call answered: ${JSON.stringify((answer as { type: string; data: unknown }).data)} (${(answer as { type: string }).type})`);
  await agent.call(createSignal('totals.announce'));

  // a signal nobody routes is a typed error for the caller
  await agent.call(createSignal('weather.today')).catch((error: { code: string }) => log(`call rejected: ${error.code}`));

  // mount a skill at run time: its lifecycle child starts, its routes join the router
  const mounted = await agent.mount(arithmetic);
  log(`mounted arithmetic: ${mounted.effects.length} actions registered; lifecycles ${JSON.stringify(agent.getSnapshot().lifecycles)}`);
  log(`arithmetic.divide 1/4 = ${JSON.stringify(await agent.call(createSignal('arithmetic.divide', { a: 1, b: 4 })))}`);
  await agent.call(createSignal('arithmetic.divide', { a: 1, b: 0 })).catch((error: { code: string; details: unknown }) => log(`1/0 → ${error.code} ${JSON.stringify(error.details)}`));
  await agent.unmount('arithmetic');
  log(`unmounted arithmetic; lifecycles ${JSON.stringify(agent.getSnapshot().lifecycles)}`);

  await system.shutdown();
}

if (import.meta.url === `file://${process.argv[1]}`) await runtimeTour();
