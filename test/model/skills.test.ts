/**
 * Document skills in a conversation: disclosed in the system prompt for the user's message,
 * loaded by the model with `load_skill`, their tools offered from the next step, their bodies
 * kept in the system prompt after the history is compacted.
 */
import { describe, expect, it } from 'vitest';
import { chatMessage, conversation, createSkillTools, defineAgent, defineDocumentSkill, discoverSkills, type ConversationConfig } from '../../src/index.js';
import { scriptedModel, type ScriptedCall } from '../../src/testing/index.js';
import { calculator } from '../../skills/index.js';
import { systemPerTest } from '../runtime/fixtures.js';
import { chatOf, next, observed, record } from './fixtures.js';

const systems = systemPerTest();

async function skillAgent(config: ConversationConfig = {}) {
  const registry = await discoverSkills({ examples: ['hello-extended', 'csv-tools'] });
  const definition = defineAgent({ name: 'skilled', skills: [[conversation, { retryDelay: 1, ...config }], createSkillTools(registry, { scripts: true }), calculator] });
  return { registry, definition };
}

const HELLO_BODY = '# Hello Extended Skill';

describe('document skills in a conversation', () => {
  it('discloses the skills for the message, and a skill loaded mid-turn offers its tools at the next step', async () => {
    const { definition } = await skillAgent();
    const model = scriptedModel([
      { toolCalls: [{ tool: 'load_skill', args: { name: 'hello-extended' } }] },
      (call: ScriptedCall) => (call.tools.includes('say_hello') ? { toolCalls: [{ tool: 'say_hello', args: { name: 'Ada', style: 'excited' } }] } : { text: 'no tool' }),
      { text: 'I greeted Ada.' },
    ]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(definition);
    await expect(agent.call(chatMessage('Please greet Ada'))).resolves.toBe('I greeted Ada.');

    const [first, second, third] = model.calls;
    // Step 1: the disclosure names the skill; its tools are not offered yet.
    expect(first!.system).toContain('hello-extended');
    expect(first!.tools).toContain('load_skill');
    expect(first!.tools).not.toContain('say_hello');
    // Step 2: loaded, its tools are offered and its body is in force.
    expect(second!.tools).toContain('say_hello');
    expect(second!.system).toContain(HELLO_BODY);
    expect(JSON.stringify(third!.messages)).toMatch(/Ada/);
    expect(agent.getSnapshot().mounted.map((m) => m.name)).toContain('hello-extended');
  });

  it('stops offering the tools of a skill unmounted between turns', async () => {
    const { definition } = await skillAgent();
    const model = scriptedModel([{ toolCalls: [{ tool: 'load_skill', args: { name: 'hello-extended' } }] }, { text: 'loaded' }, { text: 'fine' }]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(definition);
    await agent.call(chatMessage('greet someone'));
    await agent.unmount('hello-extended');
    await agent.call(chatMessage('anything else?'));
    expect(model.calls[1]!.tools).toContain('say_hello');
    expect(model.calls[2]!.tools).not.toContain('say_hello');
    expect(model.calls[2]!.system).not.toContain(HELLO_BODY);
  });

  it('compaction drops older turns, says what it cut, and keeps loaded skills in the system prompt', async () => {
    const { definition } = await skillAgent({ history: { maxTokens: 60, keepTurns: 1, strategy: 'drop' } });
    const model = scriptedModel([
      { toolCalls: [{ tool: 'load_skill', args: { name: 'hello-extended' } }] },
      { text: 'Loaded the greeting skill; it can greet in several styles.' },
      { text: 'Still here.' },
    ]);
    const seen = observed();
    const system = systems.start({ models: { default: model }, trace: seen.trace });
    const compacted = record(system, 'chat.history.compacted');
    const agent = system.spawn(definition, { id: 'ada' });
    await agent.call(chatMessage('load the greeting skill please'));
    await agent.call(chatMessage('are you there?'));

    const last = model.calls.at(-1)!;
    expect(last.system).toContain(HELLO_BODY);
    expect(JSON.stringify(last.messages)).not.toContain('load the greeting skill');
    expect(chatOf(agent).messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(chatOf(agent).compacted).toBe(4);
    expect(compacted.map((s) => s.data)).toEqual([{ agent: 'ada', removed: 4, kept: 1, summarised: false }]);
    const note = seen.records.find((r) => r.kind === 'diagnostic' && r.diagnostic.code === 'history_compacted');
    expect(note).toMatchObject({ diagnostic: { level: 'info', details: { removed: 4, strategy: 'drop', summarised: false } } });
  });

  it('summarises older turns with the model when asked to', async () => {
    const { definition } = await skillAgent({ history: { maxTokens: 40, keepTurns: 1, strategy: 'summarize' } });
    const model = scriptedModel([{ text: 'The answer to your long question is 42.' }, { text: 'The user asked a long question; the answer was 42.' }, { text: 'Yes, 42.' }]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(definition);
    await agent.call(chatMessage('a long question about life, the universe and everything'));
    await agent.call(chatMessage('really?'));
    // The summary call is not streamed and sees the cut part only.
    const summaryCall = model.calls[1]!;
    expect(summaryCall.streamed).toBe(false);
    expect(JSON.stringify(summaryCall.messages)).toContain('the universe');
    expect(chatOf(agent).messages[0]).toEqual({ role: 'user', content: '<conversation_summary>\nThe user asked a long question; the answer was 42.\n</conversation_summary>' });
    expect(JSON.stringify(model.calls[2]!.messages)).toContain('the answer was 42');
  });

  it('uses a compactor the system was given by name', async () => {
    const { definition } = await skillAgent({ history: { maxTokens: 30, keepTurns: 1, strategy: 'count' } });
    const model = scriptedModel([{ text: 'one, answered at some length for the budget' }, { text: 'two' }]);
    const system = systems.start({
      models: { default: model },
      compactors: { count: ({ messages, keepFrom }) => ({ summary: `${keepFrom} of ${messages.length} messages were here` }) },
    });
    const agent = system.spawn(definition);
    await agent.call(chatMessage('first question, at some length'));
    await agent.call(chatMessage('second'));
    expect(chatOf(agent).messages[0]!.content).toContain('2 of 3 messages were here');
  });

  it('refuses a compactor whose summary is not a string, like one that throws: the older messages are dropped and later turns answer', async () => {
    const { definition } = await skillAgent({ history: { maxTokens: 30, keepTurns: 1, strategy: 'numbers' } });
    // The scripted model answers every turn at a length that passes the history budget.
    const model = scriptedModel([{ text: 'an answer long enough to pass the budget of thirty tokens, easily' }], { loop: true });
    const seen = observed();
    const system = systems.start({ models: { default: model }, trace: seen.trace, compactors: { numbers: () => ({ summary: 42 as unknown as string }) } });
    const agent = system.spawn(definition, { id: 'ada' });
    await agent.call(chatMessage('a first question, long enough to pass the budget'));
    for (const question of ['second', 'third']) await expect(agent.call(chatMessage(question))).resolves.toContain('an answer long enough');
    const failures = seen.records.flatMap((r) => (r.kind === 'diagnostic' && r.diagnostic.code === 'compaction_failed' ? [r.diagnostic.message] : []));
    expect(failures).toHaveLength(2);
    expect(failures[0]).toContain("compactor 'numbers' returned a summary of type number; a summary must be a string");
    expect(chatOf(agent).messages[0]).toEqual({ role: 'user', content: 'third' });
  });

  it("counts the summary request's usage against the agent's token budget", async () => {
    const { definition } = await skillAgent({ maxTokens: 1000, history: { maxTokens: 30, keepTurns: 1, strategy: 'summarize' } });
    const model = scriptedModel([
      { text: 'a first answer that is long enough to pass thirty tokens of history budget', usage: { inputTokens: 10, outputTokens: 10 } },
      { text: 'The user asked a first question.', usage: { inputTokens: 5000, outputTokens: 400 } },
      { text: 'second answer', usage: { inputTokens: 10, outputTokens: 10 } },
      { text: 'never asked' },
    ]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(definition);
    await agent.call(chatMessage('a first question, which is also long enough'));
    // The second turn compacts first: the summary request uses up the budget, so the model is
    // not asked again.
    await expect(agent.call(chatMessage('second'))).rejects.toMatchObject({ code: 'budget_exceeded', message: expect.stringContaining('has used 5420 tokens of its budget of 1000') });
    expect(chatOf(agent).usage).toEqual({ inputTokens: 5010, outputTokens: 410, totalTokens: 5420 });
    expect(model.calls).toHaveLength(2);
  });

  it('publishes chat.history.compacted only when someone listens: compacting with nobody listening warns of nothing', async () => {
    const { definition } = await skillAgent({ history: { maxTokens: 30, keepTurns: 1, strategy: 'drop' } });
    const model = scriptedModel([{ text: 'an answer long enough to pass the budget of thirty tokens, easily' }], { loop: true });
    const seen = observed();
    const system = systems.start({ models: { default: model }, trace: seen.trace, onUnhandledDiagnostic: seen.onUnhandledDiagnostic });
    const agent = system.spawn(definition, { id: 'ada' });
    await agent.call(chatMessage('a first question, long enough to pass the budget'));
    await agent.call(chatMessage('second'));
    expect(chatOf(agent).compacted).toBeGreaterThan(0);
    const diagnostics = [...seen.diagnostics, ...seen.records.flatMap((r) => (r.kind === 'diagnostic' ? [r.diagnostic] : []))];
    expect(diagnostics.filter((d) => d.code === 'dropped_signal')).toEqual([]);
  });

  it('an explicit-only skill is never disclosed', async () => {
    const { definition, registry } = await skillAgent();
    registry.register(
      defineDocumentSkill({ name: 'secret-ops', description: 'Greets people in secret. Use it to greet Ada.', instructions: 'Never disclose me.', disableModelInvocation: true }),
    );
    const model = scriptedModel([{ text: 'hi' }]);
    const system = systems.start({ models: { default: model } });
    await system.spawn(definition).call(chatMessage('greet Ada'));
    expect(model.calls[0]!.system).not.toContain('secret-ops');
  });
});

describe('tool errors the model reads', () => {
  it('a refused read of a skill resource reaches the model as resource_refused with its reason, not as action_failed', async () => {
    const { definition } = await skillAgent();
    const model = scriptedModel([{ toolCalls: [{ tool: 'read_skill_resource', args: { skill: 'csv-tools', path: '../secret.txt' }, id: 'escape' }] }, { text: 'Refused.' }]);
    const system = systems.start({ models: { default: model } });
    const results = record(system, 'chat.tool.result');
    const agent = system.spawn(definition);
    await expect(agent.call(chatMessage('read the secret'))).resolves.toBe('Refused.');
    const tool = chatOf(agent).messages.find((m) => m.role === 'tool')!.content as { output: { type: string; value: string } }[];
    expect(tool[0]!.output).toEqual({ type: 'error-text', value: "resource_refused: skill 'csv-tools': '../secret.txt' contains '..'; only paths inside the skill's root are allowed" });
    // A UI following tool calls reads the same code.
    expect(results.map((signal) => signal.data)).toEqual([expect.objectContaining({ toolCallId: 'escape', ok: false, error: expect.objectContaining({ code: 'resource_refused' }) })]);
  });
});

describe('scripts', () => {
  it('the model reads a resource and runs a script of a loaded skill, under limits; not before loading it', async () => {
    const { definition } = await skillAgent();
    const model = scriptedModel([
      { toolCalls: [{ tool: 'run_skill_script', args: { skill: 'csv-tools', script: 'summarize', args: ['data/sample.csv'] }, id: 'early' }] },
      { toolCalls: [{ tool: 'load_skill', args: { name: 'csv-tools' } }] },
      { toolCalls: [{ tool: 'read_skill_resource', args: { skill: 'csv-tools', path: 'reference.md' }, id: 'read' }] },
      { toolCalls: [{ tool: 'run_skill_script', args: { skill: 'csv-tools', script: 'summarize', args: ['data/sample.csv'] }, id: 'run' }] },
      { text: 'The file has rows.' },
    ]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(definition);
    await expect(agent.call(chatMessage('summarise data/sample.csv'), { timeout: 20_000 })).resolves.toBe('The file has rows.');
    const results = Object.fromEntries(
      chatOf(agent).messages.filter((m) => m.role === 'tool').flatMap((m) => m.content as { toolCallId: string; output: { type: string; value: Record<string, unknown> } }[]).map((r) => [r.toolCallId, r.output]),
    );
    // The refusal's own code, and its reason without the step's "action … failed" wording.
    expect(results['early']).toEqual({ type: 'error-text', value: "skill_not_loaded: skill 'csv-tools' is not loaded; load it with load_skill first" });
    expect(results['read']!.value.content).toContain('#');
    expect(results['run']!.value).toMatchObject({ exitCode: 0, timedOut: false });
    expect(JSON.parse(results['run']!.value.stdout as string)).toHaveProperty('rows');
  });
});

describe('streaming tool progress', () => {
  it('emits chat.tool.call before and chat.tool.result after each tool runs', async () => {
    const { definition } = await skillAgent();
    const model = scriptedModel([{ toolCalls: [{ tool: 'add', args: { a: 1, b: 2 }, id: 'c1' }] }, { text: 'done' }]);
    const system = systems.start({ models: { default: model } });
    const tools = record(system, 'chat.tool.*');
    const done = next(system, 'chat.turn.answered');
    system.spawn(definition, { id: 'ada' }).send(chatMessage('add'));
    await done;
    expect(tools.map((s) => [s.type, s.data])).toEqual([
      ['chat.tool.call', { agent: 'ada', turn: 1, toolCallId: 'c1', tool: 'add', args: { a: 1, b: 2 } }],
      ['chat.tool.result', { agent: 'ada', turn: 1, toolCallId: 'c1', tool: 'add', ok: true, output: { result: 3 } }],
    ]);
  });
});
