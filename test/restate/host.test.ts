/**
 * The Restate host against a real Restate server and a real service process: signals, calls,
 * mounts and scheduled signals; typed errors that change nothing; idempotent sends; a service
 * process killed with SIGKILL mid-stream; the server killed and restarted on its data folder.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSignal, Effects } from '../../src/index.js';
import { connectRestate, type RestateClient } from '../../src/restate/index.js';
import { eventually, startHost } from './harness.js';

let host: Awaited<ReturnType<typeof startHost>>;
let client: RestateClient;

/** How long a cancelled turn's model request may take to be aborted in the service (through the Restate server). */
const ABORT_WAIT_MS = 60_000;
/** How long a new service process may take to try an invocation again (see below), and the tests that wait for it. */
const RETRIED_WITHIN = 150_000;
const RESTART_TEST_TIMEOUT = RETRIED_WITHIN + 60_000;

/**
 * Hides the house style's folder and restarts the service process; once the new process has
 * tried `agent`'s invocation, failed to read the skill and said so in its log (it tries again
 * later), brings the folder back.
 *
 * When that happens is Restate's to say: it retries the invocation with a backoff that doubles
 * while the process is down, so a restart that is slow (a loaded machine) is followed by a long
 * wait for the next try. The wait is for the log line; its bound, and the tests' that use it, is
 * generous for that reason, not an expected time.
 */
async function restartWithoutTheFolderUntilTried(agent: string): Promise<void> {
  renameSync(houseStyle, hidden);
  await host.service.kill();
  rmSync(hold, { force: true });
  await host.service.start();
  await eventually(`the new process to try '${agent}'`, async () => host.service.output().includes(`agent '${agent}' cannot take a step here: skill 'house-style'`), RETRIED_WITHIN).catch((error: Error) => {
    // What the service process said instead, for whoever reads the failure.
    throw new Error(`${error.message}; the service process's log ends:\n${host.service.output().slice(-3000)}`);
  });
  renameSync(hidden, houseStyle);
}

/** Skills the service process discovers (as the scratcher's), which a test hides and brings back. */
const scratch = mkdtempSync(path.join(os.tmpdir(), 'skillstate-restate-skills-'));
const houseStyle = path.join(scratch, 'skills', 'house-style');
const hidden = path.join(scratch, 'hidden');
/** While this file exists, a "slowly" answer waits until its process is killed (see agents.ts). */
const hold = path.join(scratch, 'hold');
mkdirSync(houseStyle, { recursive: true });
writeFileSync(path.join(houseStyle, 'SKILL.md'), '---\nname: house-style\ndescription: How notes are written here. Use it when writing notes.\n---\n\nWrite notes in lower case.\n');

beforeAll(async () => {
  host = await startHost({ SKILLSTATE_TEST_SKILLS: path.join(scratch, 'skills'), SKILLSTATE_TEST_HOLD: hold });
  client = connectRestate(host.server.ingressUrl);
}, 60_000);

// A test that failed while holding the model's slow answers does not hold the next one's.
afterEach(() => rmSync(hold, { force: true }));

afterAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  await host?.close();
});

const itemsOf = async (id: string) => ((await client.get(id).getSnapshot()).state as { notebook: { items: string[] } }).notebook.items;

describe('Restate host', () => {
  it('signals, calls and mounts reach the agent its id names, and its state survives in Restate', async () => {
    const one = await client.spawn('worker', { id: 'one' });
    const two = await client.spawn('notes_agent', { id: 'two', state: { notebook: { items: ['born'] } } });
    await one.send('notes.add', { item: 'a' });
    expect(await one.call('notes.add', { item: 'b', delay: 5 })).toEqual({ count: 2 });
    expect(await two.call('notes.add', { item: 'c' })).toEqual({ count: 2 });
    await two.mount('tally');
    expect(await client.get('two').call('tally.bump')).toBe(1);
    expect(await itemsOf('one')).toEqual(['a', 'b']);
    expect(await client.get('two').getSnapshot()).toMatchObject({ id: 'two', definition: 'notes_agent', state: { notebook: { items: ['born', 'c'] }, tally: { count: 1 } }, mounted: [{ name: 'notebook' }, { name: 'tally', stateKey: 'tally' }] });
    expect(await two.run({ action: 'bump', skill: 'tally' })).toBe(2);
    await expect(two.run({ action: 'nope', skill: 'tally' })).rejects.toMatchObject({ code: 'unknown_action' });
    await expect(two.run({ action: 5 } as never)).rejects.toMatchObject({ code: 'invalid_instruction' });
    await two.unmount('tally');
    await expect(two.call('tally.bump')).rejects.toMatchObject({ code: 'no_route' });
  });

  it('a failing action answers the typed error and leaves the state in Restate unchanged', async () => {
    const agent = await client.spawn('notes_agent', { id: 'fails' });
    await agent.call('notes.add', { item: 'kept' });
    await expect(agent.call('notes.add', { item: 'boom', explode: true })).rejects.toMatchObject({ code: 'action_failed', agentId: 'fails' });
    await expect(agent.call('notes.add', { item: 5 })).rejects.toMatchObject({ code: 'invalid_params' });
    expect(await itemsOf('fails')).toEqual(['kept']);
    expect(await agent.call('notes.add', { item: 'still answering' })).toEqual({ count: 2 });
    await expect(client.get('nobody').call('notes.add', { item: 'x' })).rejects.toMatchObject({ code: 'unknown_agent' });
    await expect(client.spawn('notes_agent', { id: 'fails' })).rejects.toMatchObject({ code: 'duplicate_agent' });
  });

  it('a send retried with the same idempotency key is applied once', async () => {
    const agent = await client.spawn('notes_agent', { id: 'once' });
    const signal = createSignal('notes.add', { item: 'x' });
    await agent.send(signal, undefined, { idempotencyKey: 'same' });
    await agent.send(signal, undefined, { idempotencyKey: 'same' });
    await agent.send(signal, undefined, { idempotencyKey: 'other' });
    await eventually('both distinct sends', async () => (await itemsOf('once')).length === 2);
    expect(await itemsOf('once')).toEqual(['x', 'x']);
  });

  it('schedule is a durable delayed send; spawn and stop reach other agents', async () => {
    const agent = await client.spawn('worker', { id: 'planner' });
    await agent.call('do', { effects: [Effects.schedule(300, createSignal('notes.add', { item: 'later' })), Effects.spawn('notes_agent', { id: 'kid', state: { notebook: { items: ['from parent'] } } })] });
    expect(await itemsOf('planner')).toEqual([]);
    await eventually('the scheduled signal', async () => (await itemsOf('planner')).includes('later'));
    await eventually('the spawned child', async () => (await itemsOf('kid')).includes('from parent'));
    await agent.call('do', { effects: [Effects.stop({ agent: 'kid' })] });
    await eventually('the child to stop', async () => client.get('kid').getSnapshot().then(() => false, (error: { code?: string }) => error.code === 'unknown_agent'));
  });

  it('emit reaches the agents subscribed to the emitter, and no other', async () => {
    const emitter = await client.spawn('worker', { id: 'emitter' });
    await client.spawn('notes_agent', { id: 'listener' });
    await client.spawn('notes_agent', { id: 'bystander' });
    await emitter.subscribe('listener');
    await emitter.call('do', { effects: [Effects.emit(createSignal('notes.add', { item: 'news' }))] });
    await eventually('the subscriber to hear it', async () => (await itemsOf('listener')).includes('news'));
    expect(await itemsOf('bystander')).toEqual([]);
    expect(await itemsOf('emitter')).toEqual([]);
  });

  it('a service process killed with SIGKILL mid-stream loses nothing and applies nothing twice; its timer fires', async () => {
    const agent = await client.spawn('worker', { id: 'survivor' });
    await agent.call('do', { effects: [Effects.schedule(1_500, createSignal('notes.add', { item: 'timer' }))] });
    const sent = Array.from({ length: 20 }, (_, i) => `s${i}`);
    const sending = Promise.all(sent.map((item, i) => agent.send('notes.add', { item, delay: 20 }, { idempotencyKey: `survivor-${i}` })));
    await eventually('a few signals applied', async () => (await itemsOf('survivor')).length >= 3);
    await host.service.kill();
    await sending;
    await host.service.start();
    await eventually('every signal and the timer', async () => (await itemsOf('survivor')).length === sent.length + 1, 30_000);
    const items = await itemsOf('survivor');
    expect(items.filter((item) => item !== 'timer').sort()).toEqual([...sent].sort());
    expect(items.filter((item) => item === 'timer')).toEqual(['timer']);
  }, 45_000);

  it('a call waiting for a deferred answer outlives a restart of the server: the answer still reaches it', async () => {
    const agent = await client.spawn('desk_agent', { id: 'patient' });
    const asked = agent.call('desk.ask', { question: 'still there?' });
    await eventually('the question to wait', async () => ((await agent.getSnapshot()).state as { desk: { waiting: string | null } }).desk.waiting !== null);
    await host.server.restart();
    await agent.call('desk.answer', { text: 'yes, still' });
    expect(await asked).toBe('yes, still');
  }, 45_000);

  it("a deferred answer awaited longer than fetch waits for a response still reaches its caller", async () => {
    // Node's fetch gives up on a response that has not begun within five minutes; here within a
    // second (its timers tick once a second).
    const { Agent, getGlobalDispatcher, setGlobalDispatcher } = await import('undici');
    const before = getGlobalDispatcher();
    const agent = await client.spawn('desk_agent', { id: 'long-wait' });
    setGlobalDispatcher(new Agent({ headersTimeout: 100 }));
    try {
      const asked = agent.call('desk.ask', { question: 'take your time' });
      await eventually('the question to wait', async () => ((await agent.getSnapshot()).state as { desk: { waiting: string | null } }).desk.waiting !== null);
      // Longer than the retries of a cut connection last (six waits of a second, 6.2 s of backing off).
      await new Promise((resolve) => setTimeout(resolve, 15_000));
      await agent.call('desk.answer', { text: 'here it is' });
      expect(await asked).toBe('here it is');
    } finally {
      setGlobalDispatcher(before);
    }
  }, 45_000);

  it('the server killed and restarted on its data folder keeps agents and pending timers', async () => {
    const agent = await client.spawn('worker', { id: 'restarted' });
    await agent.call('notes.add', { item: 'before' });
    // Due well after the restart is done (it takes a second or two; more on a loaded machine), so
    // the timer is still pending when the server is back.
    await agent.call('do', { effects: [Effects.schedule(6_000, createSignal('notes.add', { item: 'timer' }))] });
    await host.server.restart();
    expect(await itemsOf('restarted')).toEqual(['before']);
    await eventually('the timer after the restart', async () => (await itemsOf('restarted')).includes('timer'), 30_000);
    expect(await agent.call('notes.add', { item: 'after' })).toEqual({ count: 3 });
  }, 60_000);

  it('a model turn waiting for approval survives a SIGKILL of the service process; the caller still gets its answer', async () => {
    const agent = await client.spawn('chatter', { id: 'approver' });
    const turnOf = async () => ((await agent.getSnapshot()).state as { conversation: { turn: { status: string; pending: { toolCallId: string }[] } | null } }).conversation.turn;
    const answer = agent.call('chat.message', { text: 'wire 7' });
    await eventually('the wire to wait for approval', async () => (await turnOf())?.status === 'awaiting-approval');
    await host.service.kill();
    await host.service.start();
    await agent.send('chat.approve', { toolCallId: (await turnOf())!.pending[0]!.toolCallId });
    expect(await answer).toBe('Wired; 7 out so far.');
    expect((await agent.getSnapshot()).state).toMatchObject({ ledger: { total: 0, wired: 7 }, conversation: { turn: null, turns: 1 } });
  }, 45_000);

  it('a service process killed while the model answers resumes the turn: the tool step is applied once', async () => {
    const agent = await client.spawn('chatter', { id: 'resumer' });
    const answer = agent.call('chat.message', { text: 'slowly add 20 and 22' });
    // The tool has run (its step is committed); the model's last answer is on its way.
    await eventually('the tool step', async () => ((await agent.getSnapshot()).state as { ledger: { total: number } }).ledger.total === 42);
    await host.service.kill();
    await host.service.start();
    expect(await answer).toBe('The total is 42.');
    const state = (await agent.getSnapshot()).state as { ledger: { total: number }; conversation: { messages: { role: string }[]; turn: unknown } };
    expect(state.ledger.total).toBe(42);
    expect(state.conversation.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(state.conversation.turn).toBeNull();
  }, 45_000);

  it('a document skill the model loaded before a SIGKILL of the service process is read again from its folder by the restarted process: the turn goes on with its tool', async () => {
    const agent = await client.spawn('librarian', { id: 'reader' });
    const answer = agent.call('chat.message', { text: 'slowly greet Ada' });
    // load_skill's step is committed (the skill is mounted); the model's next answer is on its way.
    const mounted = async () => ((await agent.getSnapshot()).mounted as { name: string }[]).map((skill) => skill.name);
    await eventually('the skill to be loaded', async () => (await mounted()).includes('hello-extended'));
    await host.service.kill();
    await host.service.start();
    expect(await answer).toBe('Greeted: Hello, Ada.');
    expect(await mounted()).toEqual(['conversation', 'skills', 'hello-extended']);
    expect(await agent.run({ action: 'wave', skill: 'hello-extended', params: { name: 'Ada', times: 2 } })).toEqual({ output: '👋👋 Ada' });
  }, 45_000);

  it('an agent whose document skill cannot be read in a new service process answers unknown_skill, can unmount the skill or be stopped, and takes steps again once the folder is back', async () => {
    const agents = await Promise.all(['unread-1', 'unread-2', 'unread-3'].map((id) => client.spawn('scratcher', { id })));
    for (const agent of agents) expect(await agent.run({ action: 'load_skill', skill: 'skills', params: { name: 'house-style' } })).toMatchObject({ skill: 'house-style' });
    const [unmounted, returning, stopped] = agents as [typeof agents[0], typeof agents[0], typeof agents[0]];
    // A new process that does not find the folder.
    renameSync(houseStyle, hidden);
    await host.service.kill();
    await host.service.start();
    await expect(unmounted.call('notes.add', { item: 'a' })).rejects.toMatchObject({ code: 'unknown_skill', message: expect.stringContaining("skill 'house-style' is mounted on it") });
    // The agent keeps answering: the skill can be unmounted, and the next step is taken.
    await unmounted.unmount('house-style');
    expect(await unmounted.call('notes.add', { item: 'a' })).toEqual({ count: 1 });
    expect(((await unmounted.getSnapshot()).mounted as { name: string }[]).map((skill) => skill.name)).toEqual(['conversation', 'notebook', 'skills']);
    // It can be stopped.
    await stopped.stop();
    await expect(stopped.getSnapshot()).rejects.toMatchObject({ code: 'unknown_agent' });
    // The folder comes back: the same process reads it again, with no restart.
    await expect(returning.call('notes.add', { item: 'b' })).rejects.toMatchObject({ code: 'unknown_skill' });
    renameSync(hidden, houseStyle);
    await eventually('the skill to be read again', () => returning.call('notes.add', { item: 'b' }).then(() => true));
    expect(((await returning.getSnapshot()).mounted as { name: string }[]).map((skill) => skill.name)).toEqual(['conversation', 'notebook', 'skills', 'house-style']);
  }, 60_000);

  it('a step replayed in a process that cannot read the skill it mounted waits for the folder instead of answering otherwise than its journal', async () => {
    const agent = await client.spawn('scratcher', { id: 'replayer' });
    // load_skill is journaled as soon as it ran; the process is killed while the next action runs.
    const answer = agent.run([{ action: 'load_skill', skill: 'skills', params: { name: 'house-style' } }, { action: 'linger' }]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await restartWithoutTheFolderUntilTried('replayer');
    expect(await answer).toBe('lingered');
    expect(((await agent.getSnapshot()).mounted as { name: string }[]).map((skill) => skill.name)).toContain('house-style');
    expect(host.service.output()).not.toMatch(/mismatch/i);
  }, RESTART_TEST_TIMEOUT);

  it('a step of an agent with a document skill mounted, replayed by a new process, answers as the first attempt did', async () => {
    const agent = await client.spawn('scratcher', { id: 'replayed' });
    await agent.run({ action: 'load_skill', skill: 'skills', params: { name: 'house-style' } });
    const answer = agent.run([{ action: 'append', skill: 'notebook', params: { item: 'once' } }, { action: 'linger' }]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await host.service.kill();
    await host.service.start();
    expect(await answer).toBe('lingered');
    expect(((await agent.getSnapshot()).state as { notebook: { items: string[] } }).notebook.items).toEqual(['once']);
    expect(host.service.output()).not.toMatch(/mismatch/i);
  }, 60_000);

  it('unmounting a skill that cannot be read is refused while a skill that can be read requires it', async () => {
    const agent = await client.spawn('scratcher', { id: 'required' });
    await agent.run({ action: 'load_skill', skill: 'skills', params: { name: 'house-style' } });
    await agent.mount('annotator');
    renameSync(houseStyle, hidden);
    try {
      await host.service.kill();
      await host.service.start();
      await expect(agent.unmount('house-style')).rejects.toMatchObject({ code: 'required_by', message: "skill 'house-style' cannot be unmounted: 'annotator' requires it" });
      await agent.unmount('annotator');
      await agent.unmount('house-style');
      expect(await agent.call('notes.add', { item: 'a' })).toEqual({ count: 1 });
    } finally {
      // Back, for the tests after this one, in a process that has scanned it.
      renameSync(hidden, houseStyle);
      await host.service.kill();
      await host.service.start();
    }
  }, 60_000);

  it('a turn whose agent cannot be read in a new service process waits until the skill folder is back, then answers', async () => {
    const agent = await client.spawn('scratcher', { id: 'waiting-turn' });
    await agent.run({ action: 'load_skill', skill: 'skills', params: { name: 'house-style' } });
    expect(await agent.call('chat.message', { text: 'style check' })).toBe('styled');
    // The model does not answer in this process: it is killed first, however long that takes.
    writeFileSync(hold, '');
    const answer = agent.call('chat.message', { text: 'slowly style check' });
    // Killed once the model is asked, so the turn's read of the agent's skills is in its journal:
    // the new process, unable to read the folder, must not take another path than the journal's.
    // (Killed before that read, the turn would read the skills anew and wait on its own timer.)
    await eventually('the model call', async () => host.service.output().includes('model call made: slowly style check'));
    await restartWithoutTheFolderUntilTried('waiting-turn');
    expect(await answer).toBe('styled');
    expect(((await agent.getSnapshot()).state as { conversation: { turn: unknown } }).conversation.turn).toBeNull();
  }, RESTART_TEST_TIMEOUT);

  it("a model-driven agent's subscribers get chat.tool.call before each tool call and chat.tool.result after it, in order", async () => {
    const agent = await client.spawn('chatter', { id: 'watched' });
    const watcher = await client.spawn('watcher', { id: 'watching' });
    await agent.subscribe('watching');
    expect(await agent.call('chat.message', { text: 'add 2 and 3' })).toBe('The total is 5.');
    // A tool call that fails: the model gets the error, and the watcher hears of both.
    expect(await agent.call('chat.message', { text: 'add 600 and 600' })).toMatch(/^The add failed/);
    const seen = async () => ((await watcher.getSnapshot()).state as { watch: { seen: { type: string; tool: string; ok?: boolean }[] } }).watch.seen;
    await eventually('four progress signals', async () => (await seen()).length >= 4);
    expect((await seen()).map(({ type, tool, ok }) => [type, tool, ok])).toEqual([
      ['chat.tool.call', 'add', undefined],
      ['chat.tool.result', 'add', true],
      ['chat.tool.call', 'add', undefined],
      ['chat.tool.result', 'add', false],
    ]);
    // An agent nobody follows publishes nothing: the watcher hears only from the one it follows.
    const other = await client.spawn('chatter', { id: 'unwatched' });
    expect(await other.call('chat.message', { text: 'add 1 and 1' })).toBe('The total is 2.');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await seen()).toHaveLength(4);
  }, 30_000);

  it("a call a skill pre-approved is announced with the skill's name, and the allowed-tools entries that pre-approve nothing are said in the service process's log", async () => {
    const agent = await client.spawn('treasurer', { id: 'pre-approved' });
    const watcher = await client.spawn('watcher', { id: 'pre-approval-watch' });
    await agent.subscribe('pre-approval-watch');
    expect(await agent.call('chat.message', { text: 'load treasury' })).toBe('Loaded treasury.');
    expect(await agent.call('chat.message', { text: 'wire 40' })).toBe('Wired; 40 out so far.');
    const seen = async () => ((await watcher.getSnapshot()).state as { watch: { seen: { type: string; tool: string; preApprovedBy?: string }[] } }).watch.seen;
    await eventually('the wire announced', async () => (await seen()).some((item) => item.tool === 'wire'));
    expect((await seen()).filter((item) => item.type === 'chat.tool.call').map(({ tool, preApprovedBy }) => [tool, preApprovedBy])).toEqual([
      ['load_skill', undefined],
      ['wire', 'treasury'],
    ]);
    const log = host.service.output();
    expect(log).toMatch(/agent 'pre-approved', turn 2: tool call '[\w-]+' of 'wire' runs without asking: skill 'treasury' pre-approves it \(allowed-tools\)/);
    // Said from the first model call that offers the tools with the skill active: the one after load_skill.
    expect(log).toContain("agent 'pre-approved', turn 1: skill 'treasury' pre-approves 'add(small:*)', but skillstate cannot apply '(small:*)' to tool 'add'");
    expect(log).toContain("agent 'pre-approved', turn 1: skill 'treasury' pre-approves 'Read', but the agent has no tool named 'Read'");
  }, 30_000);

  it("a model's warnings are said in the service process's log, once, naming the agent, the turn and the model", async () => {
    const agent = await client.spawn('chatter', { id: 'warned' });
    expect(await agent.call('chat.message', { text: 'mind the fixed temperature' })).toBe('Noted.');
    const line = "agent 'warned', turn 1: model 'scripted:ledger' warned: temperature is fixed for this model";
    await eventually('the warning in the log', async () => host.service.output().includes(line));
    expect(host.service.output().split(line)).toHaveLength(2);
  }, 30_000);

  it('an agent stopped mid-turn and spawned anew under its id: the old turn does not reach the new one, whose turn has the same number', async () => {
    const old = await client.spawn('chatter', { id: 'reborn' });
    // The old turn's second model call does not answer before the stop, however long that takes.
    writeFileSync(hold, '');
    // What the service says from here on: an earlier case of this file asked the same question.
    const mark = host.service.output().length;
    const said = () => host.service.output().slice(mark);
    const oldAnswer = old.call('chat.message', { text: 'slowly add 20 and 22' });
    // The old turn waits on its second model call when the agent is stopped and spawned again.
    await eventually('the tool step', async () => ((await old.getSnapshot()).state as { ledger: { total: number } }).ledger.total === 42);
    // Stopped while the model call after the tool waits, not before it is made.
    await eventually('the model call after the tool', async () => said().includes('model call after a tool: slowly add 20 and 22'));
    await old.stop();
    await expect(oldAnswer).rejects.toMatchObject({ code: 'agent_stopped' });
    // The stop cancelled the turn, and with it the model request under way.
    // The cancellation crosses the Restate server to the service, whose turn handler then aborts the request itself (the windows
    // where a cancel could miss it are in cancel.test.ts): on a machine running the whole suite that can take a while.
    await eventually('the old model request to be aborted', async () => said().includes('model call aborted: slowly add 20 and 22'), ABORT_WAIT_MS).catch((error: Error) => {
      throw new Error(`${error.message}; the service said:\n${host.service.output().slice(-2_000)}`);
    });
    rmSync(hold, { force: true });
    const reborn = await client.spawn('chatter', { id: 'reborn' });
    expect(await reborn.call('chat.message', { text: 'hello' })).toBe('You said: hello');
    const state = (await reborn.getSnapshot()).state as { ledger: { total: number }; conversation: { messages: { role: string; content: unknown }[]; turns: number; turn: unknown } };
    expect(state.ledger.total).toBe(0);
    expect(state.conversation.messages).toEqual([
      { role: 'user', content: 'hello' },
      expect.objectContaining({ role: 'assistant' }),
    ]);
    expect(state.conversation).toMatchObject({ turns: 1, turn: null });
  }, ABORT_WAIT_MS + 45_000);

  it("chat.cancel cancels the turn object's invocation: the model request under way is aborted", async () => {
    const agent = await client.spawn('chatter', { id: 'canceller' });
    // The model's last answer does not come before the cancel, however long that takes.
    writeFileSync(hold, '');
    const mark = host.service.output().length;
    const said = () => host.service.output().slice(mark);
    const slow = agent.call('chat.message', { text: 'slowly add 5 and 6' });
    // The tool has run; the model's last answer is held.
    await eventually('the tool step', async () => ((await agent.getSnapshot()).state as { ledger: { total: number } }).ledger.total === 11);
    // Cancelled while the model call after the tool waits, not before it is made.
    await eventually('the model call after the tool', async () => said().includes('model call after a tool: slowly add 5 and 6'));
    await agent.send('chat.cancel', { reason: 'enough' });
    await expect(slow).rejects.toMatchObject({ code: 'cancelled', message: 'enough' });
    await eventually('the model request to be aborted', async () => said().includes('model call aborted: slowly add 5 and 6'), ABORT_WAIT_MS).catch((error: Error) => {
      throw new Error(`${error.message}; the service said:\n${host.service.output().slice(-2_000)}`);
    });
    rmSync(hold, { force: true });
    expect(host.service.output()).toContain("agent 'canceller': turn 1 was cancelled");
    expect(await agent.call('chat.message', { text: 'add 1 and 1' })).toBe('The total is 13.');
  }, ABORT_WAIT_MS + 45_000);

  it('a stopped agent answers the calls whose answer it deferred with agent_stopped', async () => {
    const agent = await client.spawn('desk_agent', { id: 'closing' });
    const asked = agent.call('desk.ask', { question: 'will you answer?' });
    await eventually('the question to wait', async () => ((await agent.getSnapshot()).state as { desk: { waiting: string | null } }).desk.waiting !== null);
    await agent.stop();
    await expect(asked).rejects.toMatchObject({ code: 'agent_stopped', agentId: 'closing' });
  });

  it('a signal called twice while its answer is deferred gets the one answer twice; later replies do not change it', async () => {
    const agent = await client.spawn('desk_agent', { id: 'twice' });
    const question = createSignal('desk.ask', { question: 'same?' });
    const first = agent.call(question);
    await eventually('the question to wait', async () => ((await agent.getSnapshot()).state as { desk: { waiting: string | null } }).desk.waiting !== null);
    const second = agent.call(question);
    await eventually('the second ask to be taken', async () => ((await agent.getSnapshot()).state as { desk: { asked: number } }).desk.asked === 2);
    await agent.call('desk.answer', { text: 'same' });
    expect(await Promise.all([first, second])).toEqual(['same', 'same']);
  });

  it('hostile requests get typed answers and never wedge the agent: unknown spawn targets, bad mounts, bogus subscribers, forged answers, signals without ids', async () => {
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${host.server.ingressUrl}/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: response.status, body: await response.text() };
    };
    const agent = await client.spawn('worker', { id: 'hostile' });
    // A spawn effect naming a definition nobody serves: nothing is spawned, the step is answered.
    expect(await agent.call('do', { effects: [Effects.spawn('no_such_definition')] })).toBe('done');
    expect(JSON.parse((await post('worker/hostile/mount', null)).body)).toMatchObject({ ok: false, error: { code: 'invalid_skill' } });
    expect(JSON.parse((await post('worker/hostile/subscribe', { definition: 'nope', id: 'x' })).body)).toMatchObject({ ok: false, error: { code: 'unknown_agent' } });
    expect(await agent.call('notes.add', { item: 'still answering' })).toEqual({ count: 1 });

    // Only the agent answers a deferred call: the ingress refuses anyone else.
    const desk = await client.spawn('desk_agent', { id: 'guarded' });
    const asked = desk.call('desk.ask', { question: 'who answers?' });
    await eventually('the question to wait', async () => ((await desk.getSnapshot()).state as { desk: { waiting: string | null } }).desk.waiting !== null);
    const forged = await post(`skillstate_replies/${encodeURIComponent('desk_agent/guarded/x')}/answer`, { ok: true, value: 'forged' });
    expect(forged.status).toBeGreaterThanOrEqual(400);
    expect((await post('skillstate_turns/guarded/run', { definition: 'desk_agent', turn: 1 })).status).toBeGreaterThanOrEqual(400);
    await desk.call('desk.answer', { text: 'the agent' });
    expect(await asked).toBe('the agent');

    // A signal id used again after its answer came is answered afresh.
    const again = createSignal('desk.ask', { question: 'again' });
    const first = desk.call(again);
    await eventually('the first ask', async () => ((await desk.getSnapshot()).state as { desk: { asked: number } }).desk.asked === 2);
    await desk.call('desk.answer', { text: 'one' });
    expect(await first).toBe('one');
    const second = desk.call(again);
    await eventually('the second ask', async () => ((await desk.getSnapshot()).state as { desk: { asked: number } }).desk.asked === 3);
    await desk.call('desk.answer', { text: 'two' });
    expect(await second).toBe('two');

    // A called signal without an id still has its answer deferred, not answered with the step's output.
    const raw = JSON.parse((await post('desk_agent/guarded/call', { type: 'desk.ask', data: { question: 'no id' } })).body);
    expect(raw).toMatchObject({ ok: 'deferred' });
  }, 45_000);
});
