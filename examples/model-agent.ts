/**
 * A model-driven agent, end to end, offline (`npm run example examples/model-agent.ts`): the
 * model is the scripted stand-in from `skillstate/testing`, so it needs no key and no network,
 * and everything between it and the agent is the real AI SDK and the real runtime. Swap one line
 * (`models: { default: openai('gpt-4.1') }`) for a real model: see examples/chat-openai.ts.
 *
 * The user asks for something; the system prompt carries the skill catalog; the model loads a
 * skill, gets its tools, reads a resource, runs a script, a tool fails and the model recovers,
 * an approval pauses a turn, and the agent, persisted mid-turn, is restored in a new system and
 * finishes the turn there.
 */
import { chatMessage, conversation, createAgentSystem, createSignal, createSkillTools, defineAgent, discoverSkills, type AgentSystem } from 'skillstate';
import { calculator } from 'skillstate/skills';
import { scriptedModel, type ScriptedCall } from 'skillstate/testing';

export async function modelAgentTour(log: (line: string) => void = console.log, heading: (text: string) => void = (text) => log(`\n\x1b[1m== ${text}\x1b[0m`)): Promise<void> {
  const registry = await discoverSkills({ examples: ['csv-tools', 'hello-extended'] });
  const Analyst = defineAgent({
    name: 'analyst',
    skills: [[conversation, { instructions: 'You are a data analyst. Use skills when they fit.' }], createSkillTools(registry, { scripts: true }), calculator],
  });

  // A scripted stand-in for a model: each response is what a real model might answer next.
  const model = scriptedModel([
    (call: ScriptedCall) => {
      log(`\x1b[2m[model] system prompt: ${call.system.length} chars; catalog line: ${call.system.split('\n').find((line) => line.includes('csv-tools'))?.trim()}\x1b[0m`);
      log(`\x1b[2m[model] tools: ${call.tools.join(', ')}\x1b[0m`);
      return { text: 'Let me load the CSV skill.', toolCalls: [{ tool: 'load_skill', args: { name: 'csv-tools' } }] };
    },
    (call: ScriptedCall) => {
      log(`\x1b[2m[model] tools after load_skill: ${call.tools.join(', ')} (the same: csv-tools brings a script, which run_skill_script runs, and no tools)\x1b[0m`);
      return { toolCalls: [{ tool: 'read_skill_resource', args: { skill: 'csv-tools', path: 'reference.md' } }] };
    },
    { toolCalls: [{ tool: 'run_skill_script', args: { skill: 'csv-tools', script: 'summarize', args: ['data/sample.csv'] } }] },
    { toolCalls: [{ tool: 'add', args: { a: 'the total', b: 1 } }] },
    { text: 'That failed; I will pass numbers.', toolCalls: [{ tool: 'add', args: { a: 1200, b: 34.5 } }] },
    { text: 'The sample has 4 rows; 1200 + 34.5 = 1234.5.' },
  ]);

  const system = createAgentSystem({ models: { default: model } });
  follow(system, log);
  const agent = system.spawn(Analyst, { id: 'analyst' });

  heading('A conversation: load a skill, read a resource, run a script, recover from a failed tool');
  log('user: Summarise data/sample.csv for me.');
  const answer = await agent.call(chatMessage('Summarise data/sample.csv for me.'), { timeout: 30_000 });
  log(`\nanswer: ${String(answer)}`);
  const chat = (agent.getSnapshot().state as { conversation: { messages: unknown[]; usage: { totalTokens: number } } }).conversation;
  log(`history: ${chat.messages.length} messages, ${chat.usage.totalTokens} tokens used; loaded: ${agent.getSnapshot().mounted.map((m) => m.name).join(', ')}`);
  await system.shutdown();

  heading('A turn waiting for approval is persisted, restored elsewhere, approved and finished');
  const Payer = defineAgent({ name: 'payer', skills: [[conversation, {}], createSkillTools(registry, { scripts: { needsApproval: true } })] });
  const first = createAgentSystem({ models: { default: scriptedModel([{ toolCalls: [{ tool: 'load_skill', args: { name: 'csv-tools' } }] }, { toolCalls: [{ tool: 'run_skill_script', args: { skill: 'csv-tools', script: 'summarize', args: ['data/sample.csv'] }, id: 'run-1' }] }]) } });
  const asked = new Promise((resolve) => first.subscribe('chat.turn.approval', resolve));
  const payer = first.spawn(Payer, { id: 'payer' });
  void payer.call(chatMessage('Summarise the sample'), { timeout: 30_000 }).catch(() => {});
  await asked;
  const snapshot = JSON.stringify(payer.persist());
  log(`persisted mid-turn: ${snapshot.length} bytes, turn status '${JSON.parse(snapshot).agent.state.conversation.turn.status}'`);
  await first.shutdown();

  // Another process would discover its skills the same way; the registry loads csv-tools back.
  const second = createAgentSystem({ models: { default: scriptedModel([{ text: 'Done: the sample has 4 rows.' }]) }, definitions: [Payer], resolvers: [registry] });
  const finished = new Promise<{ data?: unknown }>((resolve) => second.subscribe('chat.turn.answered', resolve));
  const restored = await second.loadAndRestore(JSON.parse(snapshot));
  log('restored in a new system; approving the script run');
  restored.send(createSignal('chat.approve', { toolCallId: 'run-1' }));
  log(`answer after restore: ${((await finished).data as { text: string }).text}`);
  await second.shutdown();
}

/** Prints what a UI would show: streamed text and tool progress, from the signals. */
function follow(system: AgentSystem, log: (line: string) => void): void {
  let line = '';
  system.subscribe('chat.delta', (signal) => {
    line += (signal.data as { text: string }).text;
  });
  const flush = () => {
    if (line) log(`assistant: ${line}`);
    line = '';
  };
  system.subscribe('chat.tool.call', (signal) => {
    flush();
    const { tool, args } = signal.data as { tool: string; args: unknown };
    log(`  → ${tool}(${JSON.stringify(args)})`);
  });
  system.subscribe('chat.tool.result', (signal) => {
    const { ok, output, error } = signal.data as { ok: boolean; output?: unknown; error?: { message: string } };
    const shown = ok ? JSON.stringify(output) : `error: ${error?.message}`;
    log(`  ← ${shown.length > 110 ? `${shown.slice(0, 110)}…` : shown}`);
  });
  system.subscribe('chat.turn.answered', flush);
}

if (import.meta.url === `file://${process.argv[1]}`) await modelAgentTour();
