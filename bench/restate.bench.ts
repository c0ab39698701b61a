/**
 * What durability costs: signals per second on the Restate host (one agent, sequential calls;
 * 100 agents in parallel), against a bare Restate virtual object doing the same state update by
 * hand, in the same run and through the same server — the anchor, with a target of at most 1.5×
 * its cost. The in-process figures are printed beside them.
 *
 * The two sides take turns in rounds (which one goes first alternates); each side's figure is its
 * median round and the ratio is the median of the rounds' own ratios, so a burst of load on the
 * shared machine falls on both sides alike instead of on whichever ran during it.
 *
 * Starts a real Restate server on free ports of 127.0.0.1 with a temporary data folder.
 */
import { createServer } from 'node:http2';
import type * as Restate from '@restatedev/restate-sdk';
import { z } from 'zod';
import type { LanguageModel } from 'ai';
import { chatMessage, conversation, createAgentSystem, createSignal, defineAction, defineAgent, defineSkill, result } from '../src/index.js';
import { formatRate, type ReportRow } from './harness.js';

const ROUNDS = 7;
const SEQUENTIAL = 60;
const AGENTS = 100;
const PER_AGENT = 2;

const bump = defineAction({
  name: 'bump',
  description: 'Add one to the count',
  input: z.object({}),
  run: (_params, { state }) => {
    const count = (state.count as number) + 1;
    return result(count, { state: { count } });
  },
});
const TURNS = 20;

type ModelV3 = Extract<Exclude<LanguageModel, string>, { specificationVersion: 'v3' }>;
const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };

/** A model that answers at once: one `bump` tool call after each user message, then text. */
const instantModel: ModelV3 = {
  specificationVersion: 'v3',
  provider: 'bench',
  modelId: 'instant',
  supportedUrls: {},
  doGenerate: async (options) => {
    const last = options.prompt.at(-1)!;
    if (last.role === 'user') {
      return { content: [{ type: 'tool-call', toolCallId: `c${options.prompt.length}`, toolName: 'bump', input: '{}' }], finishReason: { unified: 'tool-calls', raw: undefined }, usage, warnings: [] };
    }
    return { content: [{ type: 'text', text: 'Bumped.' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] };
  },
  doStream: () => Promise.reject(new Error('not used')),
};

/** A model-driven agent whose model bumps a counter once per message. */
const Keeper = defineAgent({
  name: 'keeper',
  skills: [[conversation, { instructions: 'You keep count.', stream: false }], defineSkill({ name: 'counting', schema: z.object({ count: z.number().int().default(0) }), actions: [bump] })],
});

const Counter = defineAgent({ name: 'counter', schema: z.object({ count: z.number().int().default(0) }), actions: [bump], routes: [{ path: 'count.bump', target: { action: 'bump' } }] });

/** The anchor: the same update, written by hand on a bare virtual object. */
const bareCounter = (restate: typeof Restate) =>
  restate.object({
  name: 'bare_counter',
  handlers: {
    bump: async (ctx: Restate.ObjectContext): Promise<number> => {
      const count = ((await ctx.get<number>('count')) ?? 0) + 1;
      ctx.set('count', count);
      return count;
    },
  },
});

async function rate(total: number, body: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await body();
  return total / ((performance.now() - started) / 1000);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Our rate and the anchor's (each its median round), and how many times our cost the anchor's is (the median round's). */
async function rounds(total: number, ours: () => Promise<void>, anchor: () => Promise<void>): Promise<[number, number, number]> {
  const mine: number[] = [];
  const theirs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      mine.push(await rate(total, ours));
      theirs.push(await rate(total, anchor));
    } else {
      theirs.push(await rate(total, anchor));
      mine.push(await rate(total, ours));
    }
  }
  return [median(mine), median(theirs), median(theirs.map((rate, round) => rate / mine[round]!))];
}

export async function run(): Promise<ReportRow[]> {
  // The SDK logs every invocation at INFO; keep the table readable.
  // (The SDK reads it when it loads: import it after.)
  process.env.RESTATE_LOGGING ??= 'WARN';
  const restate = await import('@restatedev/restate-sdk');
  const { connectRestate, restateAgents, startRestateServer } = await import('../src/restate/index.js');
  const bare = bareCounter(restate);
  const server = await startRestateServer();
  let endpoint = restate.endpoint().bind(bare);
  for (const service of restateAgents({ definitions: [Counter, Keeper], models: { default: instantModel } })) endpoint = endpoint.bind(service);
  const http = createServer(endpoint.http2Handler());
  const sessions = new Set<import('node:http2').ServerHttp2Session>();
  http.on('session', (session) => sessions.add(session));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const address = http.address();
  await server.register(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
  try {
    const client = connectRestate(server.ingressUrl);
    const bareBump = async (key: string) => {
      const response = await fetch(`${server.ingressUrl}/bare_counter/${key}/bump`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'null' });
      await response.text();
    };
    const signal = () => createSignal('count.bump');

    // Warm up both paths (connections, deployment discovery).
    const warm = await client.spawn('counter', { id: 'warm' });
    for (let i = 0; i < 20; i++) {
      await warm.call(signal());
      await bareBump('warm');
    }

    const one = await client.spawn('counter', { id: 'one' });
    const [hostSequential, bareSequential, sequentialRatio] = await rounds(
      SEQUENTIAL,
      async () => {
        for (let i = 0; i < SEQUENTIAL; i++) await one.call(signal());
      },
      async () => {
        for (let i = 0; i < SEQUENTIAL; i++) await bareBump('one');
      },
    );
    const many = await Promise.all(Array.from({ length: AGENTS }, (_, i) => client.spawn('counter', { id: `p${i}` })));
    const [hostParallel, bareParallel, parallelRatio] = await rounds(
      AGENTS * PER_AGENT,
      () =>
        Promise.all(many.map(async (agent) => {
          for (let i = 0; i < PER_AGENT; i++) await agent.call(signal());
        })).then(() => {}),
      () =>
        Promise.all(Array.from({ length: AGENTS }, async (_, key) => {
          for (let i = 0; i < PER_AGENT; i++) await bareBump(`p${key}`);
        })).then(() => {}),
    );

    // A model turn (two model calls, one tool call, four recorded steps), one agent after another.
    const keeper = await client.spawn('keeper', { id: 'keeper' });
    await keeper.call(chatMessage('warm up'));
    const hostTurns = await rate(TURNS, async () => {
      for (let i = 0; i < TURNS; i++) {
        await keeper.send(createSignal('chat.reset'));
        await keeper.call(chatMessage(`bump ${i}`));
      }
    });

    const system = createAgentSystem({ models: { default: instantModel } });
    const localKeeper = system.spawn(Keeper, { id: 'keeper' });
    await localKeeper.call(chatMessage('warm up'));
    const localTurns = await rate(TURNS * 20, async () => {
      for (let i = 0; i < TURNS * 20; i++) {
        localKeeper.send(createSignal('chat.reset'));
        await localKeeper.call(chatMessage(`bump ${i}`));
      }
    });
    const local = system.spawn(Counter, { id: 'local' });
    const localSequential = await rate(SEQUENTIAL * 50, async () => {
      for (let i = 0; i < SEQUENTIAL * 50; i++) await local.call(signal());
    });
    const locals = Array.from({ length: AGENTS }, (_, i) => system.spawn(Counter, { id: `l${i}` }));
    const localParallel = await rate(AGENTS * PER_AGENT * 25, async () => {
      await Promise.all(locals.map(async (agent) => {
        for (let i = 0; i < PER_AGENT * 25; i++) await agent.call(signal());
      }));
    });
    await system.shutdown();

    const row = (name: string, host: number, anchor: number, ratio: number): ReportRow => ({
      suite: 'restate',
      name,
      value: `${formatRate(host)} signals`,
      anchor: `${formatRate(anchor)} bare object`,
      ratio,
      target: '≤ 1.5×',
      pass: ratio <= 1.5,
    });
    return [
      row('one agent, sequential calls', hostSequential, bareSequential, sequentialRatio),
      row(`${AGENTS} agents in parallel`, hostParallel, bareParallel, parallelRatio),
      { suite: 'restate', name: 'in-process, one agent, sequential calls', value: `${formatRate(localSequential)} signals` },
      { suite: 'restate', name: `in-process, ${AGENTS} agents in parallel`, value: `${formatRate(localParallel)} signals` },
      { suite: 'restate', name: 'a model turn with one tool call, one agent (instant model)', value: `${formatRate(hostTurns)} turns`, anchor: `in-process: ${formatRate(localTurns)} turns` },
    ];
  } finally {
    for (const session of sessions) session.destroy();
    await new Promise((resolve) => http.close(resolve));
    await server.close();
  }
}
