/**
 * One model turn with two tool calls, on skillstate and on the agents of @mastra/core (`Agent`,
 * `generate`) and @voltagent/core (`Agent`, `generateText`), in the same rounds, for information;
 * and the AI SDK's `generateText` tool loop alone, the floor the three build on.
 *
 * The three ask the same `MockLanguageModelV3` (the AI SDK's, answering at once): two calls of a
 * `tally` tool in its first answer, then text once their results are in. A turn is a fresh user
 * message (skillstate's agent has its conversation reset first, counted against it), two model
 * calls, two tool runs. Each library runs with what its documentation shows for a tool-calling
 * agent and nothing turned off: Mastra's agent with no memory configured, VoltAgent's with its
 * default memory, skillstate's with the conversation skill, not streamed (the other two ask the
 * model's `doGenerate` too).
 */
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { chatMessage, conversation, createAgentSystem, createSignal, defineAction, defineAgent, defineSkill, result } from '../src/index.js';
import { compare, formatNs, pairedRatio, type ReportRow } from './harness.js';

type GenerateOptions = Parameters<MockLanguageModelV3['doGenerate']>[0];

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
const INSTRUCTIONS = 'You keep tallies.';
const TOOL_DESCRIPTION = 'Adds an amount to the running total';

/** Two tool calls when the last message is the user's, text once the tools have answered. */
function scriptedModel(): MockLanguageModelV3 {
  let ids = 0;
  return new MockLanguageModelV3({
    doGenerate: async ({ prompt }: GenerateOptions) => {
      if (prompt.at(-1)?.role === 'user') {
        const call = (amount: number) => ({ type: 'tool-call' as const, toolCallId: `c${++ids}`, toolName: 'tally', input: JSON.stringify({ amount }) });
        return { content: [call(1), call(2)], finishReason: { unified: 'tool-calls' as const, raw: undefined }, usage, warnings: [] };
      }
      return { content: [{ type: 'text' as const, text: 'Tallied.' }], finishReason: { unified: 'stop' as const, raw: undefined }, usage, warnings: [] };
    },
  });
}

/** What the benchmark uses of @mastra/core and @voltagent/core. */
interface ComparedAgents {
  MastraAgent: new (options: { id: string; name: string; instructions: string; model: unknown; tools: Record<string, unknown> }) => {
    generate(message: string, options: { maxSteps: number }): Promise<{ text: string }>;
  };
  mastraTool: (options: { id: string; description: string; inputSchema: z.ZodType; execute: (input: { amount: number }) => Promise<unknown> }) => unknown;
  volt: {
    Agent: new (options: { name: string; instructions: string; model: unknown; tools: unknown[] }) => {
      generateText(message: string, options: { maxSteps: number; allowSystemInMessages: boolean }): Promise<{ text: string }>;
    };
    createTool: (options: { name: string; description: string; parameters: z.ZodType; execute: (input: { amount: number }) => Promise<unknown> }) => unknown;
  };
}

/** The libraries, from bench/compare (see discovery.bench.ts); the path is from the build, .bench-build/bench/. */
function comparedAgents(): Promise<ComparedAgents> {
  return import(new URL('../../bench/compare/index.mjs', import.meta.url).href) as Promise<ComparedAgents>;
}

const tallyState = z.object({ total: z.number().default(0) });
const tallySkill = defineSkill({
  name: 'tally',
  schema: tallyState,
  actions: [
    defineAction({
      name: 'tally',
      description: TOOL_DESCRIPTION,
      input: z.object({ amount: z.number() }),
      state: tallyState,
      run: ({ amount }, { skillState }) => result({ total: skillState.total + amount }, { state: { total: skillState.total + amount } }),
    }),
  ],
});

export async function run(): Promise<ReportRow[]> {
  const model = scriptedModel();
  const { MastraAgent, mastraTool, volt } = await comparedAgents();
  // The other two libraries' tool, the same update on a plain total.
  let total = 0;
  const execute = async ({ amount }: { amount: number }) => ({ total: (total += amount) });
  const mastra = new MastraAgent({
    id: 'tally',
    name: 'tally',
    instructions: INSTRUCTIONS,
    model,
    tools: { tally: mastraTool({ id: 'tally', description: TOOL_DESCRIPTION, inputSchema: z.object({ amount: z.number() }), execute }) },
  });
  const voltAgent = new volt.Agent({
    name: 'tally',
    instructions: INSTRUCTIONS,
    model,
    tools: [volt.createTool({ name: 'tally', description: TOOL_DESCRIPTION, parameters: z.object({ amount: z.number() }), execute })],
  });
  const sdkTools = { tally: tool({ description: TOOL_DESCRIPTION, inputSchema: z.object({ amount: z.number() }), execute }) };
  const system = createAgentSystem({ models: { default: model }, callTimeout: 60_000 });
  const agent = system.spawn(defineAgent({ name: 'tally', skills: [[conversation, { instructions: INSTRUCTIONS, stream: false }], tallySkill] }));

  const turns = {
    skillstate: async () => {
      agent.send(createSignal('chat.reset'));
      return String(await agent.call(chatMessage('Tally these')));
    },
    mastra: async () => (await mastra.generate('Tally these', { maxSteps: 5 })).text,
    // VoltAgent hands its system prompt to the AI SDK among the messages: the SDK warns on every call unless told it is meant.
    voltagent: async () => (await voltAgent.generateText('Tally these', { maxSteps: 5, allowSystemInMessages: true })).text,
    sdk: async () => (await generateText({ model, system: INSTRUCTIONS, prompt: 'Tally these', tools: sdkTools, stopWhen: stepCountIs(5) })).text,
  };
  // Each does the turn the same way before it is timed: two model calls, both tools run, the text answered.
  for (const [name, turn] of Object.entries(turns)) {
    const calls = model.doGenerateCalls.length;
    const before = name === 'skillstate' ? 0 : total;
    const answer = await turn();
    const tallied = name === 'skillstate' ? (agent.getSnapshot().state as { tally: { total: number } }).tally.total : total - before;
    if (answer !== 'Tallied.' || model.doGenerateCalls.length - calls !== 2 || tallied !== 3) {
      throw new Error(`${name}: the turn did not go as scripted (answer ${JSON.stringify(answer)}, ${model.doGenerateCalls.length - calls} model calls, tallied ${tallied})`);
    }
  }

  let sink = 0;
  // The mock keeps every call's options: emptied between loops, so no case pays for the others' history.
  const forget = () => void (model.doGenerateCalls.length = 0);
  const [ours, mastraTurn, voltTurn, sdkTurn] = await compare(
    Object.entries(turns).map(([name, turn]) => ({ name, fn: async () => void (sink += (await turn()).length), afterLoop: forget })),
    { rounds: 9, roundMs: 200 },
  );
  await system.shutdown();
  if (sink < 0) console.log(sink);
  const row = (name: string, measured: NonNullable<typeof ours>): ReportRow => ({
    suite: 'turn',
    name,
    value: formatNs(measured.ns),
    anchor: `skillstate ${formatNs(ours!.ns)}`,
    ratio: pairedRatio(measured, ours!),
    target: 'comparison (÷ skillstate)',
  });
  return [
    { suite: 'turn', name: 'skillstate agent, conversation skill (not streamed): a turn with two tool calls', value: formatNs(ours!.ns), target: 'informational' },
    row('@mastra/core Agent.generate, the same turn', mastraTurn!),
    row('@voltagent/core Agent.generateText, the same turn', voltTurn!),
    row('AI SDK generateText alone (no agent), the same turn', sdkTurn!),
  ];
}
