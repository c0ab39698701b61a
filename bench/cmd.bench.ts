/**
 * `cmd` with one sync action and a state update, against the same work done by hand: validate
 * the params with zod, run the function, spread the new count into the state.
 */
import { z } from 'zod';
import { cmd, defineAgent } from '../src/index.js';
import { execute } from '../src/core/cmd.js';
import { counter } from '../skills/index.js';
import { compare, formatNs, pairedRatio, type CaseResult, type ReportRow } from './harness.js';

export async function run(): Promise<ReportRow[]> {
  const Agent = defineAgent({ name: 'bench_agent', skills: [counter] });
  let agent = Agent.new({ id: 'bench' });
  const instruction = { action: 'increment', params: {} };

  const input = z.object({ by: z.number().int().optional() });
  let state: { counter: { count: number; step: number } } = { counter: { count: 0, step: 1 } };
  const byHand = () => {
    const parsed = input.safeParse({});
    if (!parsed.success) throw parsed.error;
    const count = state.counter.count + (parsed.data.by ?? state.counter.step);
    const output = { count };
    state = { ...state, counter: { ...state.counter, count } };
    return output;
  };

  // The same by hand without the spread that V8 (Node 20) slows down when a key is overridden.
  let state2: { counter: { count: number; step: number } } = { counter: { count: 0, step: 1 } };
  const byHandAssign = () => {
    const parsed = input.safeParse({});
    if (!parsed.success) throw parsed.error;
    const count = state2.counter.count + (parsed.data.by ?? state2.counter.step);
    const slice = Object.assign({}, state2.counter);
    slice.count = count;
    const next = Object.assign({}, state2);
    next.counter = slice;
    state2 = next;
    return { count };
  };

  const sync = await compare([
    { name: 'hand', fn: byHand },
    { name: 'hand (assign)', fn: byHandAssign },
    {
      name: 'execute',
      fn: () => {
        const result = execute(agent, instruction);
        agent = (result as Exclude<typeof result, Promise<unknown>>).agent;
      },
    },
  ]);
  // `cmd` hands back a promise, and its caller awaits it: so does the hand-written version.
  const handCmd = () => Promise.resolve(byHand());
  let sink = 0;
  const promised = await compare([
    {
      name: 'hand',
      fn: async () => {
        sink += (await handCmd()).count;
      },
    },
    { name: 'hand, not awaited', fn: async () => byHand() },
    {
      name: 'cmd',
      fn: async () => {
        agent = (await cmd(agent, instruction)).agent;
      },
    },
  ]);
  const row = (name: string, ours: CaseResult, hand: CaseResult): ReportRow => ({
    suite: 'cmd',
    name,
    value: formatNs(ours.ns),
    anchor: `by hand: ${formatNs(hand.ns)}`,
    ratio: pairedRatio(ours, hand),
    target: '≤ 1.2×',
    pass: pairedRatio(ours, hand) <= 1.2,
  });
  if (sink < 0) console.log(sink);
  return [
    row('cmd (awaited), one sync action + state update', promised[2]!, promised[0]!),
    {
      suite: 'cmd',
      name: 'cmd (awaited), one sync action + state update',
      value: formatNs(promised[2]!.ns),
      anchor: `by hand, returned from an async function, not awaited: ${formatNs(promised[1]!.ns)}`,
      ratio: pairedRatio(promised[2]!, promised[1]!),
      target: 'informational',
    },
    row('execute (sync path), same work', sync[2]!, sync[0]!),
    {
      suite: 'cmd',
      name: 'execute (sync path), same work',
      value: formatNs(sync[2]!.ns),
      anchor: `by hand, Object.assign copies: ${formatNs(sync[1]!.ns)}`,
      ratio: pairedRatio(sync[2]!, sync[1]!),
      target: 'informational',
    },
  ];
}
