/**
 * skillstate's own work per model step: a model turn against an instant model (the AI SDK's
 * `MockLanguageModelV3`: it answers four tool calls, then text), a fresh user message each turn,
 * so all the time is the step's own: the prompt build, the tools recomputed from the agent, the
 * SDK's `generateText` asked for one step, and the steps of the agent (the tool call, the
 * records). As information, the ratio to the AI SDK's own `generateText` tool loop doing the same
 * work in the same rounds (the same model and tool, one call for all the steps of a turn). Measured
 * once V8 has optimized a turn's code, as in a system that has been running; the first 300 ms of
 * the process are reported as information.
 *
 * And the system prompt over 1,000 document skills: a fresh user message each time (the
 * disclosure is ranked anew), and again within a turn (cached).
 */
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import {
  chatMessage,
  conversation,
  createAgentSystem,
  createDocumentSkillRegistry,
  createSignal,
  createSkillTools,
  defineAction,
  defineAgent,
  defineDocumentSkill,
  defineSkill,
  result,
  type AgentRef,
} from '../src/index.js';
import { buildSystemPrompt, PromptCache } from '../src/model/prompt.js';
import { conversationConfigSchema } from '../src/model/conversation.js';
import { compare, formatNs, pairedRatio, type ReportRow } from './harness.js';

const STEPS = 5;
const AGENTS = 50;

type CallOptions = Parameters<MockLanguageModelV3['doGenerate']>[0];

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };

/** A model that answers at once: a tool call while fewer than four results follow the last user message, then text. */
function instantModel(): MockLanguageModelV3 {
  let ids = 0;
  const answer = async (options: CallOptions) => {
    let results = 0;
    for (let i = options.prompt.length - 1; i >= 0 && options.prompt[i]!.role !== 'user'; i--) if (options.prompt[i]!.role === 'tool') results++;
    if (results < STEPS - 1) {
      return {
        content: [{ type: 'tool-call' as const, toolCallId: `c${++ids}`, toolName: 'tally', input: JSON.stringify({ amount: (ids % 97) + 1 }) }],
        finishReason: { unified: 'tool-calls' as const, raw: undefined },
        usage,
        warnings: [],
      };
    }
    return { content: [{ type: 'text' as const, text: `Done after ${results} tallies.` }], finishReason: { unified: 'stop' as const, raw: undefined }, usage, warnings: [] };
  };
  return new MockLanguageModelV3({ provider: 'bench', modelId: 'instant', doGenerate: answer });
}

const tallyState = z.object({ total: z.number().default(0) });
const tally = defineSkill({
  name: 'tally',
  schema: tallyState,
  actions: [
    defineAction({
      name: 'tally',
      description: 'Adds an amount to the running total',
      input: z.object({ amount: z.number() }),
      state: tallyState,
      run: ({ amount }, { skillState }) => result({ total: skillState.total + amount }, { state: { total: skillState.total + amount } }),
    }),
  ],
});

async function loopOverhead(): Promise<ReportRow[]> {
  const model = instantModel();
  const system = createAgentSystem({ models: { default: model }, callTimeout: 60_000 });
  const Agent = defineAgent({ name: 'bench', skills: [[conversation, { instructions: 'You keep tallies.', stream: false }], tally] });
  const agents: AgentRef[] = Array.from({ length: AGENTS }, (_, i) => system.spawn(Agent, { id: `a${i}` }));
  // The same tool for the SDK's own loop, doing the same update on a plain object.
  const totals = new Map<number, number>();
  let sdkConversation = 0;
  const sdkTools = {
    tally: tool({
      description: 'Adds an amount to the running total',
      inputSchema: jsonSchema<{ amount: number }>({ type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] }),
      execute: async ({ amount }) => {
        const total = (totals.get(sdkConversation) ?? 0) + amount;
        totals.set(sdkConversation, total);
        return { total };
      },
    }),
  };
  let turn = 0;
  let sink = 0;
  const agentTurn = async () => {
    const agent = agents[turn++ % AGENTS]!;
    model.doGenerateCalls.length = 0;
    // A fresh conversation per turn, like the SDK side's: the reset is a step of its own, counted against us.
    agent.send(createSignal('chat.reset'));
    sink += String(await agent.call(chatMessage(`Tally ${turn} things`))).length;
  };
  // The first 300 ms of a fresh process, as information: the SDK loaded, the code not optimized yet.
  let coldTurns = 0;
  const coldStart = performance.now();
  while (performance.now() - coldStart < 300) {
    await agentTurn();
    coldTurns++;
  }
  const cold = (performance.now() - coldStart) / coldTurns / STEPS;
  const [sdk, ours] = await compare(
    [
      {
        name: 'generateText tool loop',
        fn: async () => {
          sdkConversation = turn++ % AGENTS;
          // The mock keeps every call it was asked; a bench of thousands of turns lets them go.
          model.doGenerateCalls.length = 0;
          const out = await generateText({ model, system: 'You keep tallies.', prompt: `Tally ${turn} things`, tools: sdkTools, stopWhen: stepCountIs(STEPS + 1) });
          sink += out.steps.length;
        },
      },
      { name: 'agent turn', fn: agentTurn },
    ],
    // A turn runs some hundred functions of skillstate, the SDK and XState, which V8 goes on
    // optimizing for about a thousand turns (`--trace-opt`: 82, 51, 53, 41, 31 functions in each of
    // the first five hundred-turn blocks, under 10 after the tenth): measured once that has settled,
    // as a running system's turns are; the first 300 ms are reported apart.
    { rounds: 21, roundMs: 100, warmupMs: 4_000 },
  );
  await system.shutdown();
  if (sink < 0) console.log(sink);
  const perStep = (ns: number) => ns / STEPS;
  return [
    { suite: 'model', name: `AI SDK generateText, ${STEPS} steps a turn (anchor), per step`, value: formatNs(perStep(sdk!.ns)) },
    {
      suite: 'model',
      name: `skillstate's own work per model step (instant mock model, ${STEPS} steps a turn, ${AGENTS} agents)`,
      value: formatNs(perStep(ours!.ns)),
      target: '≤ 0.5 ms',
      pass: perStep(ours!.ns) <= 500_000,
    },
    {
      suite: 'model',
      name: `the same in the first 300 ms of the process (${coldTurns} turns, before the code is optimized; information)`,
      value: formatNs(cold * 1e6),
    },
    {
      suite: 'model',
      name: `agent conversation loop against the SDK's own tool loop, per step (information)`,
      value: formatNs(perStep(ours!.ns)),
      anchor: `generateText ${formatNs(perStep(sdk!.ns))}`,
      ratio: pairedRatio(ours!, sdk!),
    },
  ];
}

async function promptBuild(): Promise<ReportRow[]> {
  const COUNT = 1000;
  const registry = createDocumentSkillRegistry();
  for (let i = 0; i < COUNT; i++) {
    registry.register(
      defineDocumentSkill({
        name: `skill-${i}`,
        description: `Skill ${i} handles topic${i} and area${i % 101} requests. Use it for task${i % 37}.`,
        instructions: `# Skill ${i}\n\nSteps for skill ${i}.`,
        triggers: { keywords: [`topic${i}`], verbs: [`do${i % 11}`] },
      }),
    );
  }
  const Agent = defineAgent({ name: 'prompted', skills: [[conversation, { instructions: 'You are helpful.' }], createSkillTools(registry)] });
  const agent = Agent.new({ id: 'p' });
  const settings = conversationConfigSchema.parse({ instructions: 'You are helpful.' });
  const words = ['summarise', 'plan', 'merge', 'check', 'draft', 'review'];
  // Bodies a disclosure may show in full are read once, as a running system would have them.
  for (let i = 0; i < COUNT; i++) await registry.content(`skill-${i}`);
  let n = 0;
  let sink = 0;
  const cache = new PromptCache();
  const fixed = 'please summarise the notes about topic512 for area7';
  const [fresh, cached] = await compare(
    [
      {
        name: 'fresh message',
        fn: async () => {
          n++;
          sink += (await buildSystemPrompt(agent, settings, `${words[n % words.length]} the report on topic${n % COUNT} for area${n % 101}, number ${n}`, undefined, undefined)).text.length;
        },
      },
      { name: 'within a turn', fn: async () => { sink += (await buildSystemPrompt(agent, settings, fixed, undefined, cache)).text.length; } },
    ],
    { rounds: 11 },
  );
  if (sink < 0) console.log(sink);
  return [
    { suite: 'model', name: `system prompt, ${COUNT} document skills, a fresh message each time`, value: formatNs(fresh!.ns), target: '≤ 1 ms', pass: fresh!.ns <= 1_000_000 },
    { suite: 'model', name: `system prompt, ${COUNT} document skills, later steps of a turn`, value: formatNs(cached!.ns), target: '≤ 1 ms', pass: cached!.ns <= 1_000_000 },
  ];
}

/**
 * What a turn leaves behind: one agent answers thousands of turns from the AI SDK's mock model,
 * its history reset before each, in a process of its own with forced collections (the program
 * the memory test runs). Information, no target: a turn should retain nothing.
 */
function retainedPerTurn(): ReportRow[] {
  return (['stream', 'generate'] as const).map((mode) => {
    const run = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', 'test/model/turn-memory.program.ts', mode, '2000'], { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`turn-memory program failed: ${run.stderr}`);
    const { bytesPerTurn } = JSON.parse(run.stdout) as { bytesPerTurn: number };
    return { suite: 'model', name: `heap retained per model turn, ${mode === 'stream' ? 'streamed' : 'not streamed'} (2 × 2,000 turns, the smaller window)`, value: `${Math.round(bytesPerTurn)} bytes` };
  });
}

export async function run(): Promise<ReportRow[]> {
  return [...(await loopOverhead()), ...(await promptBuild()), ...retainedPerTurn()];
}
