/**
 * What OpenTelemetry costs: the routed-signal and model-loop work, in paired rounds of two
 * checkouts loaded in one process (the other one without the tracing code, such as a `git
 * archive` of the commit before it, with this checkout's `node_modules` linked in), interleaved so
 * that the machine's load falls on both alike. `none`: no provider registered (the target is
 * ≤ 1.03×); `provider`: a tracer provider with an exporter that drops every span (information).
 *
 *   node --conditions=skillstate-source --import tsx bench/telemetry-paired.ts <other checkout> . none routed
 *
 * Run by hand, not by `npm run bench`: it needs the other checkout.
 */
import { performance } from 'node:perf_hooks';
import { resolve } from 'node:path';
type Skillstate = typeof import('../src/index.js');
type Testing = typeof import('../src/testing/index.js');
type Skills = typeof import('../skills/index.js');
const [mainRoot, branchRoot, mode, which] = process.argv.slice(2).map((arg, index) => (index < 2 ? resolve(arg) : arg)) as [string, string, string, string];
if (mode === 'provider') {
  const { context, trace } = await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { BasicTracerProvider, SimpleSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor({ export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} })] }));
}
const { z } = await import('zod');
const quiet = { onUnhandledError: () => {}, onUnhandledDiagnostic: () => {} };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function routed(root: string): Promise<() => number> {
  const s = (await import(`${root}/src/index.js`)) as Skillstate;
  const counterState = z.object({ count: z.number().int().default(0) });
  const increment = s.defineAction({ name: 'increment', description: 'Add one', input: z.object({}), state: counterState, run: (_p, { skillState }) => s.result({ count: skillState.count + 1 }, { state: { count: skillState.count + 1 } }) });
  const counter = s.defineSkill({ name: 'counter', schema: counterState, actions: [increment], routes: [{ path: 'counter.increment', target: { action: 'increment' } }] });
  const system = s.createAgentSystem(quiet);
  const agent = system.spawn(s.defineAgent({ name: 'bench_counter', skills: [counter] }), { id: 'bench' });
  const N = 10_000;
  return () => {
    const t = performance.now();
    for (let i = 0; i < N; i++) agent.send(s.createSignal('counter.increment'));
    return ((performance.now() - t) * 1e6) / N;
  };
}

async function model(root: string): Promise<() => Promise<number>> {
  const s = (await import(`${root}/src/index.js`)) as Skillstate;
  const { scriptedModel } = (await import(`${root}/src/testing/index.js`)) as Testing;
  const { calculator } = (await import(`${root}/skills/index.js`)) as Skills;
  const script = Array.from({ length: 5000 }, () => [{ text: 'Adding.', toolCalls: [{ tool: 'add', args: { a: 1, b: 2 } }] }, { text: '3.' }]).flat();
  const system = s.createAgentSystem({ ...quiet, models: { default: scriptedModel(script) } });
  const agent = system.spawn(s.defineAgent({ name: 'calc', skills: [[s.conversation, { stream: false }], calculator] }));
  return async () => {
    const t = performance.now();
    for (let i = 0; i < 20; i++) await agent.call(s.chatMessage('add 1 and 2'));
    await agent.call(s.createSignal('chat.reset'));
    return ((performance.now() - t) * 1e3) / 20;
  };
}

const make = which === 'routed' ? routed : model;
const a = await make(mainRoot);
const b = await make(branchRoot);
for (let i = 0; i < 5; i++) { await a(); await b(); }
const ratios: number[] = [];
const as: number[] = [];
const bs: number[] = [];
for (let r = 0; r < 41; r++) {
  const first = r % 2 === 0;
  const x = first ? await a() : 0;
  const y = await b();
  const x2 = first ? x : await a();
  as.push(x2); bs.push(y); ratios.push(y / x2);
}
const unit = which === 'routed' ? 'ns/signal' : 'µs/turn';
console.log(JSON.stringify({ which, mode, main: Math.round(median(as)), branch: Math.round(median(bs)), unit, ratio: Number(median(ratios).toFixed(3)) }));
process.exit(0);
