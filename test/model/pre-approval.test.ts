/**
 * allowed-tools in a conversation: while a trusted document skill is active, the tools it names
 * run without asking for approval, and the turn's record, the progress signal and the trace name
 * the skill. Nothing else changes. Real document skills in a temporary folder, a real system, a
 * scripted model (the model is not under test).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentToolset } from '../../src/core/tools.js';
import { chatMessage, cmd, conversation, createSignal, createSkillTools, defineAction, defineAgent, discoverSkills, type Agent } from '../../src/index.js';
import { preApprovalsOf, preApprovedBy } from '../../src/model/pre-approval.js';
import { scriptedModel, type ScriptedResponse } from '../../src/testing/index.js';
import { calculator } from '../../skills/index.js';
import { simpleSkill, tree } from '../manifest/tree.js';
import { systemPerTest } from '../runtime/fixtures.js';
import { chatOf, ledger, next, observed, record } from './fixtures.js';

const systems = systemPerTest();

/** The application's own shell tool, which asks before every command. */
const bash = defineAction({ name: 'Bash', description: 'Runs a shell command', input: z.object({ command: z.string() }), needsApproval: true, run: ({ command }) => `ran ${command}` });

/** Document skills: two trusted ones with allowed-tools, an untrusted one, and one without. */
async function library() {
  const root = await tree({
    'treasury/SKILL.md': simpleSkill('treasury', 'allowed-tools: pay Bash(git:*) Read(./docs/**)'),
    'shady/SKILL.md': simpleSkill('shady', 'allowed-tools: pay'),
    'reports/SKILL.md': simpleSkill('reports', 'allowed-tools: run_skill_script(scripts/*.sh)'),
    'reports/scripts/hello.sh': 'echo "hello $1"\n',
    'reports/scripts/sub/hello.sh': 'echo "deep $1"\n',
  });
  return discoverSkills({ project: root, user: false, bundled: false }, { trust: (entry) => entry.name !== 'shady' });
}

/** A model-driven agent with a ledger (`pay` needs approval), a calculator, its own `Bash`, and skill tools whose scripts need approval. */
async function treasurer() {
  const registry = await library();
  const Treasurer = defineAgent({
    name: 'treasurer',
    actions: [bash],
    skills: [[conversation, { instructions: 'You pay people.', retryDelay: 1 }], calculator, ledger, createSkillTools(registry, { scripts: { needsApproval: true } })],
    registry,
  });
  return { registry, Treasurer };
}

const load = (name: string, id = `load-${name}`): ScriptedResponse => ({ toolCalls: [{ tool: 'load_skill', args: { name }, id }] });
const paid = (state: unknown) => (state as { ledger: { paid: unknown[] } }).ledger.paid;

describe('pre-approval in a conversation', () => {
  it('runs a tool that needs approval without asking while the skill that pre-approves it is active, and asks again once it is unmounted', async () => {
    const { Treasurer } = await treasurer();
    const model = scriptedModel([
      load('treasury'),
      { text: 'Loaded.' },
      { toolCalls: [{ tool: 'pay', args: { to: 'Bob', amount: 5 }, id: 'pay-1' }, { tool: 'add', args: { a: 1, b: 2 }, id: 'add-1' }] },
      { text: 'Paid Bob 5.' },
      { toolCalls: [{ tool: 'pay', args: { to: 'Cy', amount: 7 }, id: 'pay-2' }] },
      { text: 'Paid Cy 7.' },
    ]);
    const seen = observed();
    const system = systems.start({ models: { default: model }, trace: seen.trace });
    const agent = system.spawn(Treasurer, { id: 'ada' });
    const approvals = record(system, 'chat.turn.approval');
    // What the turn records about a call as it starts to run.
    const starting: { data: Record<string, unknown>; pending: unknown }[] = [];
    system.subscribe('chat.tool.call', (signal) => starting.push({ data: signal.data as Record<string, unknown>, pending: chatOf(agent).turn?.pending[0] }));

    await expect(agent.call(chatMessage('Load the treasury skill'))).resolves.toBe('Loaded.');
    await expect(agent.call(chatMessage('Pay Bob 5 and add 1 and 2'))).resolves.toBe('Paid Bob 5.');
    expect(approvals).toEqual([]);
    expect(paid(agent.getSnapshot().state)).toEqual([{ to: 'Bob', amount: 5 }]);
    const pay = starting.find((item) => item.data.toolCallId === 'pay-1')!;
    expect(pay.data).toMatchObject({ agent: 'ada', tool: 'pay', preApprovedBy: 'treasury' });
    expect(pay.pending).toEqual({ toolCallId: 'pay-1', tool: 'pay', args: { to: 'Bob', amount: 5 }, approval: 'none', preApprovedBy: 'treasury' });
    // A tool that needs no approval is not pre-approved by anyone: it just runs.
    const add = starting.find((item) => item.data.toolCallId === 'add-1')!;
    expect(add.data.preApprovedBy).toBeUndefined();
    expect(add.pending).toEqual({ toolCallId: 'add-1', tool: 'add', args: { a: 1, b: 2 }, approval: 'none' });
    const notes = seen.records.flatMap((r) => (r.kind === 'diagnostic' && r.agent === 'ada' && r.diagnostic.code === 'tool_pre_approved' ? [r.diagnostic] : []));
    expect(notes).toEqual([
      {
        level: 'info',
        code: 'tool_pre_approved',
        message: "agent 'ada', turn 2: tool call 'pay-1' of 'pay' runs without asking: skill 'treasury' pre-approves it (allowed-tools)",
        skill: 'treasury',
        subject: 'pay',
        details: { toolCallId: 'pay-1' },
      },
    ]);

    await agent.unmount('treasury');
    const asked = next(system, 'chat.turn.approval');
    const second = agent.call(chatMessage('Pay Cy 7'));
    expect((await asked).data).toMatchObject({ toolCallId: 'pay-2', tool: 'pay' });
    expect(chatOf(agent).turn!.pending).toEqual([{ toolCallId: 'pay-2', tool: 'pay', args: { to: 'Cy', amount: 7 }, approval: 'needed' }]);
    agent.send(createSignal('chat.approve', { toolCallId: 'pay-2' }));
    await expect(second).resolves.toBe('Paid Cy 7.');
    expect(paid(agent.getSnapshot().state)).toEqual([{ to: 'Bob', amount: 5 }, { to: 'Cy', amount: 7 }]);
  });

  it('an untrusted skill pre-approves nothing, and its loading says so', async () => {
    const { registry, Treasurer } = await treasurer();
    const model = scriptedModel([load('shady'), { toolCalls: [{ tool: 'pay', args: { to: 'Eve', amount: 100 }, id: 'pay-1' }] }, { text: 'Not paid.' }]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(Treasurer, { id: 'bo' });
    const asked = next(system, 'chat.turn.approval');
    const answer = agent.call(chatMessage('Load shady, then pay Eve 100'));
    expect((await asked).data).toMatchObject({ toolCallId: 'pay-1', tool: 'pay' });
    expect(chatOf(agent).turn!.pending).toEqual([{ toolCallId: 'pay-1', tool: 'pay', args: { to: 'Eve', amount: 100 }, approval: 'needed' }]);
    agent.send(createSignal('chat.deny', { toolCallId: 'pay-1', reason: 'no' }));
    await expect(answer).resolves.toBe('Not paid.');
    expect(paid(agent.getSnapshot().state)).toEqual([]);
    expect(registry.diagnostics.filter((item) => item.code === 'allowed_tools_untrusted')).toMatchObject([{ skill: 'shady', message: expect.stringContaining('pre-approve nothing') }]);
  });

  it("keeps every tool and route of the agent as it was, and reports each entry that pre-approves nothing, once per agent", async () => {
    const { Treasurer } = await treasurer();
    const model = scriptedModel([
      load('treasury'),
      { toolCalls: [{ tool: 'add', args: { a: 2, b: 3 }, id: 'add-1' }] },
      { text: '5.' },
      { toolCalls: [{ tool: 'Bash', args: { command: 'git status' }, id: 'bash-1' }] },
      { text: 'Ran it.' },
    ]);
    const seen = observed();
    const system = systems.start({ models: { default: model }, trace: seen.trace });
    const agent = system.spawn(Treasurer, { id: 'cy' });
    await expect(agent.call(chatMessage('Load the treasury skill and add 2 and 3'))).resolves.toBe('5.');
    // The model is offered the same tools with the skill active as before it.
    expect(model.calls[1]!.tools).toEqual(model.calls[0]!.tools);
    expect(model.calls[0]!.tools).toEqual(expect.arrayContaining(['Bash', 'add', 'pay', 'load_skill', 'run_skill_script']));
    // A route to an action hidden from models still runs.
    await expect(agent.call(createSignal('ledger.audit'))).resolves.toEqual({ audits: 1 });

    // `Bash(git:*)`: skillstate cannot read the application's Bash arguments, so the call still asks.
    const asked = next(system, 'chat.turn.approval');
    const ran = agent.call(chatMessage('Show the git status'));
    expect((await asked).data).toMatchObject({ toolCallId: 'bash-1', tool: 'Bash' });
    agent.send(createSignal('chat.approve', { toolCallId: 'bash-1' }));
    await expect(ran).resolves.toBe('Ran it.');

    const notes = seen.records.flatMap((r) => (r.kind === 'diagnostic' && r.agent === 'cy' && r.diagnostic.code.startsWith('allowed_tool') ? [r.diagnostic] : []));
    expect(notes.map((note) => [note.code, note.skill, note.subject])).toEqual([
      ['allowed_tool_specifier', 'treasury', 'Bash(git:*)'],
      ['allowed_tool_unknown', 'treasury', 'Read(./docs/**)'],
    ]);
    expect(notes[0]!.message).toBe(
      "skill 'treasury' pre-approves 'Bash(git:*)', but skillstate cannot apply '(git:*)' to tool 'Bash' (only run_skill_script takes a specifier: a pattern of the skill's own scripts); the entry pre-approves nothing",
    );
    expect(notes[1]!.message).toMatch(/^skill 'treasury' pre-approves 'Read\(\.\/docs\/\*\*\)', but the agent has no tool named 'Read' \(its tools: .*\bBash\b.*\); the entry pre-approves nothing$/);
  });

  it("applies a script pattern to run_skill_script: the skill's own matching scripts run unasked, the others ask", async () => {
    const { Treasurer } = await treasurer();
    const run = (id: string, script: string, skill = 'reports'): ScriptedResponse => ({ toolCalls: [{ tool: 'run_skill_script', args: { skill, script, args: ['Ada'] }, id }] });
    const model = scriptedModel([load('reports'), { text: 'Loaded.' }, run('run-1', 'scripts/hello.sh'), { text: 'Said hello.' }, run('run-2', 'scripts/sub/hello.sh'), { text: 'Denied.' }]);
    const system = systems.start({ models: { default: model } });
    const agent = system.spawn(Treasurer, { id: 'di' });
    const approvals = record(system, 'chat.turn.approval');
    await expect(agent.call(chatMessage('Load reports'))).resolves.toBe('Loaded.');
    await expect(agent.call(chatMessage('Run hello'))).resolves.toBe('Said hello.');
    expect(approvals).toEqual([]);
    // The script ran, as a real process: its output went back to the model.
    expect(JSON.stringify(model.calls[3]!.messages)).toContain('hello Ada');

    const asked = next(system, 'chat.turn.approval');
    const deep = agent.call(chatMessage('Run the deeper hello'));
    expect((await asked).data).toMatchObject({ toolCallId: 'run-2' });
    agent.send(createSignal('chat.deny', { toolCallId: 'run-2' }));
    await expect(deep).resolves.toBe('Denied.');
  });
});

describe('preApprovedBy', () => {
  /** The agent after loading `names`, as plain values (no system). */
  async function loaded(names: string[]): Promise<Agent<object>> {
    const { Treasurer } = await treasurer();
    let agent = Treasurer.new({ id: 'plain' }) as Agent<object>;
    for (const name of names) agent = (await cmd(agent, { action: 'load_skill', params: { name } })).agent;
    return agent;
  }

  it.each([
    ['scripts/hello.sh', 'reports', 'reports'],
    ['./scripts/hello.sh', 'reports', 'reports'],
    ['scripts//hello.sh', 'reports', 'reports'],
    ['scripts/sub/hello.sh', 'reports', undefined],
    ['scripts/../scripts/hello.sh', 'reports', undefined],
    ['/tmp/scripts/hello.sh', 'reports', undefined],
    ['hello.sh', 'reports', undefined],
    // Another skill's scripts are not the pre-approving skill's to approve.
    ['scripts/hello.sh', 'treasury', undefined],
  ])('run_skill_script of %s in %s: %s', async (script, skill, by) => {
    const agent = await loaded(['reports', 'treasury']);
    const approvals = preApprovalsOf(agent, agentToolset(agent));
    expect(preApprovedBy(approvals, 'run_skill_script', { skill, script, args: [] })).toBe(by);
  });

  it('names the first active skill that pre-approves a tool, and none once no active skill does', async () => {
    const agent = await loaded(['shady', 'treasury']);
    expect(preApprovedBy(preApprovalsOf(agent, agentToolset(agent)), 'pay', {})).toBe('treasury');
    expect(preApprovedBy(preApprovalsOf(agent, agentToolset(agent)), 'Bash', { command: 'git log' })).toBeUndefined();
    const without = await loaded(['shady']);
    expect(preApprovedBy(preApprovalsOf(without, agentToolset(without)), 'pay', {})).toBeUndefined();
  });
});
