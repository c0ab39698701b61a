/**
 * A model's tool call stops when its turn does: `run_skill_script` hands its `ctx.abortSignal`
 * to the script runner, so a turn cancelled while a script runs (its caller aborts, `chat.cancel`,
 * the conversation unmounted, the agent stopped) kills the script, and its process group, at
 * once instead of at its time limit; the tool's result says it was cancelled, and why. A tool
 * call that outlives the conversation's `toolTimeout` is aborted the same way.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chatMessage, ChatSignals, conversation, createSignal, createSkillTools, defineAgent, discoverSkills, type ConversationConfig, type Signal } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { isRunning } from '../manifest/processes.js';
import { simpleSkill, tree } from '../manifest/tree.js';
import { systemPerTest } from '../runtime/fixtures.js';
import { chatOf, next } from './fixtures.js';

const systems = systemPerTest();

/**
 * A script that writes its pid and that of a `sleep` it starts, then sleeps far longer than any
 * test waits; were it left running, it would write `late` once its sleep is over.
 */
const SLOW_SCRIPT = `
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const [pids, late] = process.argv.slice(2);
const sleeper = spawn('sleep', ['300'], { stdio: 'ignore' });
fs.writeFileSync(pids, process.pid + ' ' + sleeper.pid);
setTimeout(() => fs.writeFileSync(late, 'ran to its end'), 30000);
`;

/** Resolves once `file` exists (the script has started and written it). */
async function written(file: string): Promise<void> {
  while (!existsSync(file) || readFileSync(file, 'utf8').trim().split(' ').length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
}

/**
 * A model-driven agent that loads the skill `slow` and runs its script, which sleeps. Scripts
 * may run for two minutes, longer than any of these tests waits: only an abort ends one early.
 */
async function scriptAgent(config: ConversationConfig = {}, needsApproval = false) {
  const root = await tree({ 'slow/SKILL.md': simpleSkill('slow'), 'slow/scripts/slow.cjs': SLOW_SCRIPT });
  const out = await tree();
  const pids = path.join(out, 'pids');
  const late = path.join(out, 'late');
  const registry = await discoverSkills({ extra: [root] });
  const definition = defineAgent({ name: 'runner', skills: [[conversation, { retryDelay: 1, ...config }], createSkillTools(registry, { scripts: { timeoutMs: 120_000, needsApproval } })] });
  const model = scriptedModel([
    { toolCalls: [{ tool: 'load_skill', args: { name: 'slow' } }] },
    { toolCalls: [{ tool: 'run_skill_script', args: { skill: 'slow', script: 'scripts/slow.cjs', args: [pids, late] }, id: 'run' }] },
    { text: 'after the script' },
    { text: 'still here' },
  ]);
  const system = systems.start({ models: { default: model } });
  const agent = system.spawn(definition, { id: 'runner' });
  const result = next(system, ChatSignals.toolResult, (signal) => (signal.data as { toolCallId?: string }).toolCallId === 'run');
  /** The pids of the script and of the sleep it started, once it has written them. */
  const started = async () => {
    await written(pids);
    return readFileSync(pids, 'utf8').trim().split(' ').map(Number);
  };
  return { system, agent, model, started, pids, late, result };
}

/** The run's result as the model is told it (`chat.tool.result`). */
function outputOf(signal: Signal): Record<string, unknown> {
  return (signal.data as { output: Record<string, unknown> }).output;
}

describe('a turn cancelled while run_skill_script runs kills the script', () => {
  it("by its caller's AbortSignal: the script and what it started are gone, the result says cancelled, the agent answers next", async () => {
    const { system, agent, started, late, result } = await scriptAgent();
    const controller = new AbortController();
    const cancelled = next(system, ChatSignals.cancelled);
    const pending = agent.call(chatMessage('run the slow script'), { signal: controller.signal, timeout: 60_000 }).catch((error: unknown) => error);
    const [script, sleeper] = await started();
    expect(isRunning(script!)).toBe(true);
    controller.abort();
    expect(await pending).toMatchObject({ code: 'cancelled' });
    await cancelled;
    expect(isRunning(script!)).toBe(false);
    expect(isRunning(sleeper!)).toBe(false);
    expect(existsSync(late)).toBe(false);
    // Cancelled, not timed out: the script's own limit was nowhere near.
    expect(outputOf(await result)).toMatchObject({ exitCode: null, signal: 'SIGKILL', timedOut: false, cancelled: true, cancelReason: expect.stringContaining('its caller aborted its call') });
    expect(chatOf(agent)).toMatchObject({ turn: null, last: { n: 1, outcome: 'cancelled' } });
    await expect(agent.call(chatMessage('are you there?'), { timeout: 10_000 })).resolves.toBe('after the script');
  });

  it('by a chat.cancel signal', async () => {
    const { system, agent, started, result } = await scriptAgent();
    const cancelled = next(system, ChatSignals.cancelled);
    const pending = agent.call(chatMessage('run the slow script'), { timeout: 60_000 }).catch((error: unknown) => error);
    const [script] = await started();
    agent.send(createSignal(ChatSignals.cancel, { reason: 'enough' }));
    expect(await pending).toMatchObject({ code: 'cancelled' });
    await cancelled;
    expect(isRunning(script!)).toBe(false);
    expect(outputOf(await result)).toMatchObject({ cancelled: true, cancelReason: expect.stringContaining(`turn 1 is being cancelled (${ChatSignals.cancel})`) });
  });

  it('by the conversation skill unmounted mid-turn', async () => {
    const { agent, started, result } = await scriptAgent();
    const pending = agent.call(chatMessage('run the slow script'), { timeout: 60_000 }).catch((error: unknown) => error);
    const [script] = await started();
    await agent.unmount(conversation);
    expect(await pending).toMatchObject({ code: 'cancelled', skill: 'conversation' });
    expect(isRunning(script!)).toBe(false);
    expect(outputOf(await result)).toMatchObject({ cancelled: true, cancelReason: expect.stringContaining("skill 'conversation' is being unmounted") });
  });

  it('once approved: a call that waited for a person stops as one that did not', async () => {
    const { system, agent, started, result } = await scriptAgent({}, true);
    const asking = next(system, ChatSignals.approval);
    const pending = agent.call(chatMessage('run the slow script'), { timeout: 60_000 }).catch((error: unknown) => error);
    expect((await asking).data).toMatchObject({ toolCallId: 'run', tool: 'run_skill_script' });
    agent.send(createSignal(ChatSignals.approve, { toolCallId: 'run' }));
    const [script] = await started();
    agent.send(createSignal(ChatSignals.cancel));
    expect(await pending).toMatchObject({ code: 'cancelled' });
    expect(isRunning(script!)).toBe(false);
    expect(outputOf(await result)).toMatchObject({ cancelled: true, timedOut: false });
  });

  it('by its agent stopped', async () => {
    const { agent, started } = await scriptAgent();
    const pending = agent.call(chatMessage('run the slow script'), { timeout: 60_000 }).catch((error: unknown) => error);
    const [script, sleeper] = await started();
    await agent.stop();
    expect(await pending).toMatchObject({ code: 'agent_stopped' });
    while (isRunning(script!) || isRunning(sleeper!)) await new Promise((resolve) => setTimeout(resolve, 10));
  });
});

describe("a tool call past the conversation's toolTimeout", () => {
  it('is aborted: the script is killed, the model is told the call timed out, and the turn goes on', async () => {
    const { agent, model, pids, late } = await scriptAgent({ toolTimeout: 1_000 });
    // The turn asks the model again only once the call's step is over: that is, once the script
    // was killed (left alone, it would run for two minutes).
    await expect(agent.call(chatMessage('run the slow script'), { timeout: 60_000 })).resolves.toBe('after the script');
    expect(JSON.stringify(model.calls[2]!.messages)).toContain("tool 'run_skill_script' of agent 'runner' gave no answer within 1000 ms");
    expect(existsSync(late)).toBe(false);
    // Killed before it could write its pids, or after: either way, nothing of it runs.
    const started = existsSync(pids) ? readFileSync(pids, 'utf8').trim().split(' ').map(Number) : [];
    for (const pid of started) expect(isRunning(pid)).toBe(false);
  });
});
