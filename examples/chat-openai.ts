/**
 * The model-driven agent of examples/model-agent.ts on a real model
 * (`OPENAI_API_KEY=... npm run example examples/chat-openai.ts "Summarise data/sample.csv"`).
 * The one line that differs from the offline version is `models: { default: openai('gpt-4.1') }`.
 * Needs `npm install @ai-sdk/openai` and the key in OPENAI_API_KEY; refuses clearly without them.
 */
import { chatMessage, conversation, createAgentSystem, createSkillTools, defineAgent, discoverSkills, type ChatModel } from 'skillstate';

async function openaiModel(id: string): Promise<ChatModel | string> {
  if (!process.env.OPENAI_API_KEY) return 'this example talks to OpenAI: set OPENAI_API_KEY (or run examples/model-agent.ts, which needs no key)';
  try {
    const { openai } = (await import('@ai-sdk/openai')) as { openai: (id: string) => ChatModel };
    return openai(id);
  } catch {
    return 'this example needs the OpenAI provider: npm install @ai-sdk/openai';
  }
}

const model = await openaiModel(process.env.OPENAI_MODEL ?? 'gpt-4.1');
if (typeof model === 'string') {
  console.error(model);
  process.exitCode = 1;
} else {
  const registry = await discoverSkills({ examples: ['csv-tools', 'hello-extended'] });
  const Analyst = defineAgent({
    name: 'analyst',
    skills: [[conversation, { instructions: 'You are a data analyst. Use skills when they fit.' }], createSkillTools(registry)],
  });
  const system = createAgentSystem({ models: { default: model }, resolvers: [registry] });
  system.subscribe('chat.delta', (signal) => process.stdout.write((signal.data as { text: string }).text));
  system.subscribe('chat.tool.call', (signal) => console.log(`\n  → ${(signal.data as { tool: string }).tool}`));
  const agent = system.spawn(Analyst);
  const question = process.argv[2] ?? 'What can you do?';
  try {
    await agent.call(chatMessage(question), { timeout: 120_000 });
    console.log();
  } catch (error) {
    console.error(`\n${(error as { code?: string }).code}: ${(error as Error).message}`);
    process.exitCode = 1;
  }
  await system.shutdown();
}
