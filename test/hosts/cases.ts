/**
 * Behaviour every host of the engine must show, written once against a small host interface and
 * run against the in-process system and the Restate host (one case table, two hosts). Only
 * behaviour a user sees through spawn / send / call / mount / unmount and the agent's state: no
 * in-process details (actors, traces, diagnostics), no Restate details (journals, keys).
 */
import { expect } from 'vitest';
import { Effects, createSignal } from '../../src/index.js';

/** The hosts the cases run on. */
export type HostName = 'in-process' | 'restate';

/**
 * A behaviour the hosts do not share, on purpose: what each does, and why. The cases that show it
 * expect each host's own (through `onHost`), and docs/restate.md lists the table (a test checks
 * that it lists every entry, as written here).
 */
export interface HostDifference {
  behaviour: string;
  'in-process': string;
  restate: string;
  reason: string;
}

/** Every behaviour the two hosts do not share. */
export const HOST_DIFFERENCES = {
  reusedCallId: {
    behaviour: "A `call` with the id of a call to the same agent whose deferred answer is still awaited",
    'in-process': 'is refused at once with `invalid_signal` (`details.reason: duplicate_call`), and never reaches the agent.',
    restate: 'reaches the agent as a step of its own, and shares the first call\'s answer.',
    reason:
      "in-process, a deferred answer finds its caller by the signal id in memory, where a second waiter would be ambiguous; on Restate a caller that lost its connection calls again with the same id to get its answer, so the id names one answer however many wait for it.",
  },
  streaming: {
    behaviour: 'An answer with `stream: true`',
    'in-process': 'is streamed as `chat.delta` signals while the model writes it.',
    restate: 'comes whole (said once in the service\'s log), with no `chat.delta` signals.',
    reason: 'a journaled model call records its answer once it is complete; pieces of text sent before that would be sent again on a replay.',
  },
  modelNotes: {
    behaviour: "What the provider warns about, and parts of an answer the history cannot keep",
    'in-process': 'are `model_warning` and `model_part_dropped` diagnostics.',
    restate: "are lines in the service's log, naming the agent, the turn and the model.",
    reason: 'a Restate handler has no diagnostics channel; its log is where its operator looks.',
  },
  abortedTool: {
    behaviour: 'The action of a tool call that outlives `toolTimeout`, or whose turn is cancelled while it runs',
    'in-process': 'has its `ctx.abortSignal` aborted then (`timeout`, `cancelled`), so it can stop early; its step still applies what it returns.',
    restate: 'is never told: its `ctx.abortSignal` is never aborted, and it runs to its end.',
    reason:
      "an action runs inside `ctx.run`, in the agent's exclusive handler: nothing reaches the agent while it runs (a `chat.cancel` waits behind it), and Restate does not abort a `ctx.run` block under way.",
  },
  callsInStep: {
    behaviour: 'The tool calls of a model step, when none needs approval',
    'in-process': "run within the model step, each recorded by the step of the agent that runs it, the last one's step recording the model step too.",
    restate: 'are recorded with the model step as waiting, then each runs as a step of the agent of its own.',
    reason: 'a journaled turn must record what the model asked for before anything runs, so a replay does not ask again; in-process the same atomicity comes from recording each call with its effect. The model reads the same history either way.',
  },
} satisfies Record<string, HostDifference>;

/** Runs what host `host` does where the hosts differ on purpose (an entry of `HOST_DIFFERENCES`). */
export function onHost<T>(host: Host, _difference: keyof typeof HOST_DIFFERENCES, each: Record<HostName, () => T>): T {
  return each[host.name]();
}

/** An agent as a case reaches it. */
export interface HostAgent {
  send(type: string, data?: unknown): Promise<void>;
  /** Calls the agent with a signal of `type`, with `id` when given (a fresh one otherwise). */
  call(type: string, data?: unknown, id?: string): Promise<unknown>;
  /** Runs one action by name, as a step (how a model's tool call reaches the agent). */
  run(action: string, skill: string | undefined, params: Record<string, unknown>): Promise<unknown>;
  mount(skill: string): Promise<void>;
  unmount(skill: string): Promise<void>;
  state(): Promise<Record<string, unknown>>;
  /** Makes agent `watcher` hear the `chat.tool.*` signals this agent publishes. */
  followTools(watcher: string): Promise<void>;
}

/** A host serving the agents of test/restate/agents.ts. */
export interface Host {
  readonly name: HostName;
  spawn(definition: string, options: { id: string; state?: Record<string, unknown> }): Promise<HostAgent>;
  /** Whether an agent of this id runs. */
  exists(id: string): Promise<boolean>;
}

/** Polls until `probe` holds, in real time. */
async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const items = async (agent: HostAgent) => (await agent.state()).notebook as { items: string[] };
const desk = async (agent: HostAgent) => (await agent.state()).desk as { waiting: string | null; asked: number; answered: number };

/** The cases: a name and a body taking the host and an id unique to the run. */
export const HOST_CASES: readonly [string, (host: Host, id: string) => Promise<void>][] = [
  [
    "a document skill loaded with load_skill stays mounted: its toolset's tools answer in later steps, until it is unmounted",
    async (host, id) => {
      const agent = await host.spawn('librarian', { id });
      const loaded = (await agent.run('load_skill', 'skills', { name: 'hello-extended' })) as { skill: string; tools: string[]; alreadyLoaded: boolean };
      expect(loaded).toMatchObject({ skill: 'hello-extended', alreadyLoaded: false });
      expect(loaded.tools).toEqual(expect.arrayContaining(['say_hello', 'wave']));
      expect(await agent.run('wave', 'hello-extended', { name: 'Bob', times: 2 })).toEqual({ output: '👋👋 Bob' });
      expect(await agent.run('say_hello', 'hello-extended', { name: 'Ada', style: 'excited' })).toMatchObject({ output: 'Hello, Ada!!' });
      // Loading it again mounts nothing new and says so.
      expect(await agent.run('load_skill', 'skills', { name: 'hello-extended' })).toMatchObject({ alreadyLoaded: true });
      await agent.unmount('hello-extended');
      await expect(agent.run('wave', 'hello-extended', { name: 'Bob' })).rejects.toMatchObject({ code: 'unknown_action' });
    },
  ],
  [
    "a model loads the document skill its system prompt discloses, then calls the tool that skill brings",
    async (host, id) => {
      const agent = await host.spawn('librarian', { id });
      expect(await agent.call('chat.message', { text: 'please greet Ada' })).toBe('Greeted: Hello, Ada.');
      const conversation = (await agent.state()).conversation as { turn: unknown; messages: { role: string }[] };
      expect(conversation.turn).toBeNull();
      // user, load_skill call and result, say_hello call and result, answer.
      expect(conversation.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    },
  ],
  [
    "a skill of the definition's own registry is mounted by an action or by name, and its state lasts across steps",
    async (host, id) => {
      const agent = await host.spawn('registered', { id });
      expect(await agent.call('stamp.mount')).toBe('mounted');
      expect(await agent.run('stamp', 'stamp', {})).toBe(1);
      expect(await agent.run('stamp', 'stamp', {})).toBe(2);
      expect((await agent.state()).stamp).toEqual({ stamps: 2 });
      const other = await host.spawn('registered', { id: `${id}-by-name` });
      await other.mount('stamp');
      expect(await other.run('stamp', 'stamp', {})).toBe(1);
      await other.unmount('stamp');
      expect((await other.state()).stamp).toBeUndefined();
    },
  ],
  [
    'a document skill is mounted by name from the registry that knows it; a name nobody knows is unknown_skill',
    async (host, id) => {
      const agent = await host.spawn('librarian', { id });
      await agent.mount('hello-extended');
      expect(await agent.run('wave', 'hello-extended', { name: 'Cy' })).toEqual({ output: '👋 Cy' });
      await expect(agent.mount('no-such-skill')).rejects.toMatchObject({ code: 'unknown_skill' });
      expect(await agent.run('wave', 'hello-extended', { name: 'Cy', times: 3 })).toEqual({ output: '👋👋👋 Cy' });
    },
  ],
  [
    'a stop effect in the step after the spawn effect that made the child stops it, and it stays stopped',
    async (host, id) => {
      const parent = await host.spawn('worker', { id });
      await parent.call('do', { effects: [Effects.spawn('notes_agent', { id: `${id}-kid` })] });
      await parent.call('do', { effects: [Effects.stop({ agent: `${id}-kid` })] });
      await until('the child to stop', async () => !(await host.exists(`${id}-kid`)));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await host.exists(`${id}-kid`)).toBe(false);
    },
  ],
  [
    'an agent that stops stops the agents it spawned, and only those',
    async (host, id) => {
      const parent = await host.spawn('worker', { id });
      await parent.call('do', { effects: [Effects.spawn('notes_agent', { id: `${id}-kid` }), Effects.spawn('notes_agent', { id: `${id}-lost` })] });
      await until('the children', async () => (await host.exists(`${id}-kid`)) && (await host.exists(`${id}-lost`)));
      // One child is stopped by another agent, and its id spawned anew by no parent.
      const other = await host.spawn('worker', { id: `${id}-other` });
      await other.call('do', { effects: [Effects.stop({ agent: `${id}-lost` })] });
      await until('the lost child to stop', async () => !(await host.exists(`${id}-lost`)));
      await host.spawn('notes_agent', { id: `${id}-lost` });
      await parent.call('do', { effects: [Effects.stop()] });
      await until('the child to stop with its parent', async () => !(await host.exists(`${id}-kid`)));
      expect(await host.exists(id)).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await host.exists(`${id}-lost`)).toBe(true);
    },
  ],
  [
    'a call answers the output of the action its route names, and the state keeps the change',
    async (host, id) => {
      const agent = await host.spawn('notes_agent', { id, state: { notebook: { items: ['born'] } } });
      expect(await agent.call('notes.add', { item: 'a' })).toEqual({ count: 2 });
      expect(await items(agent)).toEqual({ items: ['born', 'a'] });
    },
  ],
  [
    'signals sent one after another are applied in the order they were sent',
    async (host, id) => {
      const agent = await host.spawn('notes_agent', { id });
      for (const item of ['1', '2', '3', '4', '5']) await agent.send('notes.add', { item, delay: item === '2' ? 20 : 0 });
      expect(await agent.call('notes.list')).toEqual({ items: ['1', '2', '3', '4', '5'] });
    },
  ],
  [
    'a failing action answers action_failed, leaves the state as it was, and the agent keeps answering',
    async (host, id) => {
      const agent = await host.spawn('notes_agent', { id });
      await agent.call('notes.add', { item: 'kept' });
      await expect(agent.call('notes.add', { item: 'boom', explode: true })).rejects.toMatchObject({ code: 'action_failed', action: 'append' });
      expect(await items(agent)).toEqual({ items: ['kept'] });
      expect(await agent.call('notes.add', { item: 'next' })).toEqual({ count: 2 });
    },
  ],
  [
    'bad params answer invalid_params and a signal no route takes answers no_route',
    async (host, id) => {
      const agent = await host.spawn('notes_agent', { id });
      await expect(agent.call('notes.add', { item: 42 })).rejects.toMatchObject({ code: 'invalid_params' });
      await expect(agent.call('nobody.listens')).rejects.toMatchObject({ code: 'no_route' });
      expect(await items(agent)).toEqual({ items: [] });
    },
  ],
  [
    'a mounted skill brings its routes and state; unmounting takes both away',
    async (host, id) => {
      const agent = await host.spawn('notes_agent', { id });
      await agent.mount('tally');
      expect(await agent.call('tally.bump')).toBe(1);
      expect(await agent.call('tally.bump')).toBe(2);
      expect((await agent.state()).tally).toEqual({ count: 2 });
      await agent.unmount('tally');
      await expect(agent.call('tally.bump')).rejects.toMatchObject({ code: 'no_route' });
      expect((await agent.state()).tally).toBeUndefined();
    },
  ],
  [
    'a scheduled signal arrives after its delay, not before',
    async (host, id) => {
      const agent = await host.spawn('worker', { id });
      await agent.call('do', { effects: [Effects.schedule(250, createSignal('notes.add', { item: 'later' }))] });
      expect(await items(agent)).toEqual({ items: [] });
      await until('the scheduled signal', async () => (await items(agent)).items.includes('later'));
    },
  ],
  [
    'spawning an id already taken answers duplicate_agent and leaves the agent as it was',
    async (host, id) => {
      const agent = await host.spawn('notes_agent', { id });
      await agent.call('notes.add', { item: 'first' });
      await expect(host.spawn('notes_agent', { id })).rejects.toMatchObject({ code: 'duplicate_agent' });
      expect(await items(agent)).toEqual({ items: ['first'] });
    },
  ],
  [
    'a call whose answer the agent defers is answered by the later step that replies to it',
    async (host, id) => {
      const agent = await host.spawn('desk_agent', { id });
      const asked = agent.call('desk.ask', { question: 'is it on?' });
      await until('the question to wait', async () => (await agent.state()).desk !== undefined && (await desk(agent)).waiting !== null);
      await expect(agent.call('desk.answer', { text: 'yes' })).resolves.toEqual({ sent: true });
      expect(await asked).toBe('yes');
      expect(await desk(agent)).toEqual({ waiting: null, asked: 1, answered: 1 });
      // A reply to a signal nobody waits for reaches nobody, and the agent goes on.
      await agent.send('desk.ask', { question: 'sent, not called' });
      await expect(agent.call('desk.answer', { text: 'to nobody' })).resolves.toEqual({ sent: true });
      const again = agent.call('desk.ask', { question: 'again?' });
      await until('the second question to wait', async () => (await desk(agent)).waiting !== null);
      await agent.send('desk.answer', { text: 'again' });
      expect(await again).toBe('again');
    },
  ],
  [
    'a call whose answer a skill deferred is answered cancelled, naming the skill, when that skill is unmounted',
    async (host, id) => {
      const agent = await host.spawn('desk_agent', { id });
      const asked = agent.call('desk.ask', { question: 'still there?' }).then(
        () => 'answered',
        (error: unknown) => error,
      );
      await until('the question to wait', async () => (await agent.state()).desk !== undefined && (await desk(agent)).waiting !== null);
      await agent.unmount('desk');
      expect(await asked).toMatchObject({ code: 'cancelled', skill: 'desk', details: { reason: "skill 'desk' was unmounted" } });
      expect((await agent.state()).desk).toBeUndefined();
    },
  ],
  [
    'a model-driven agent answers a chat message after running the tool its model asked for as a step of its own',
    async (host, id) => {
      const agent = await host.spawn('chatter', { id });
      expect(await agent.call('chat.message', { text: 'please add 2 and 3' })).toBe('The total is 5.');
      expect(await agent.call('chat.message', { text: 'now add 10 and 1' })).toBe('The total is 16.');
      const state = await agent.state();
      expect(state.ledger).toEqual({ total: 16, wired: 0 });
      const chat = state.conversation as { messages: { role: string }[]; turn: unknown; turns: number; usage: { totalTokens: number } };
      expect(chat.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'tool', 'assistant']);
      expect(chat).toMatchObject({ turn: null, turns: 2 });
      expect(chat.usage.totalTokens).toBeGreaterThan(0);
    },
  ],
  [
    'a tool call that needs approval pauses the turn until it is approved or denied',
    async (host, id) => {
      const agent = await host.spawn('chatter', { id });
      expect((await agent.state()).conversation).toMatchObject({ turn: null });
      const wired = agent.call('chat.message', { text: 'wire 40' });
      const waiting = async () => ((await agent.state()).conversation as { turn: { status: string; pending: { toolCallId: string }[] } | null }).turn;
      await until('the wire to wait for approval', async () => (await waiting())?.status === 'awaiting-approval');
      expect((await agent.state()).ledger).toEqual({ total: 0, wired: 0 });
      await agent.send('chat.approve', { toolCallId: (await waiting())!.pending[0]!.toolCallId });
      expect(await wired).toBe('Wired; 40 out so far.');
      const denied = agent.call('chat.message', { text: 'wire 5' });
      await until('the second wire to wait for approval', async () => (await waiting())?.status === 'awaiting-approval');
      await agent.send('chat.deny', { toolCallId: (await waiting())!.pending[0]!.toolCallId, reason: 'too much' });
      expect(await denied).toBe('The wire was denied.');
      expect((await agent.state()).ledger).toEqual({ total: 0, wired: 40 });
    },
  ],
  [
    "a tool that needs approval runs without asking while a trusted skill whose allowed-tools names it is active, asks again once it is unmounted; an untrusted skill pre-approves nothing; the agent's other tools work as before",
    async (host, id) => {
      const agent = await host.spawn('treasurer', { id });
      const turn = async () => ((await agent.state()).conversation as { turn: { status: string; pending: { toolCallId: string; preApprovedBy?: string }[] } | null }).turn;
      const waiting = async (what: string) => {
        await until(what, async () => (await turn())?.status === 'awaiting-approval');
        return (await turn())!.pending[0]!;
      };
      expect(await agent.call('chat.message', { text: 'load shady' })).toBe('Loaded shady.');
      const first = agent.call('chat.message', { text: 'wire 5' });
      const asked = await waiting('the wire to wait for approval with the untrusted skill active');
      expect(asked.preApprovedBy).toBeUndefined();
      await agent.send('chat.approve', { toolCallId: asked.toolCallId });
      expect(await first).toBe('Wired; 5 out so far.');
      expect(await agent.call('chat.message', { text: 'load treasury' })).toBe('Loaded treasury.');
      // No approval is sent: the call would wait for one if the skill did not pre-approve it.
      expect(await agent.call('chat.message', { text: 'wire 40' })).toBe('Wired; 45 out so far.');
      // `add`, which the skill's list names only with a specifier nobody can apply, runs as it always did.
      expect(await agent.call('chat.message', { text: 'add 2 and 3' })).toBe('The total is 5.');
      await agent.unmount('treasury');
      const last = agent.call('chat.message', { text: 'wire 1' });
      await agent.send('chat.deny', { toolCallId: (await waiting('the wire to wait for approval again')).toolCallId });
      expect(await last).toBe('The wire was denied.');
      expect((await agent.state()).ledger).toEqual({ total: 5, wired: 45 });
    },
  ],
  [
    'a model that keeps failing ends the turn with a typed error after its retries; a missing model is named; the agent goes on',
    async (host, id) => {
      const agent = await host.spawn('chatter', { id });
      await expect(agent.call('chat.message', { text: 'break it' })).rejects.toMatchObject({ code: 'model_failed', message: expect.stringContaining('HTTP 503') });
      expect(await agent.call('chat.message', { text: 'add 1 and 1' })).toBe('The total is 2.');
      const stranded = await host.spawn('stranded', { id: `${id}-stranded` });
      await expect(stranded.call('chat.message', { text: 'add 1 and 1' })).rejects.toMatchObject({ code: 'model_not_found', message: expect.stringContaining("'elsewhere'") });
      expect((await stranded.state()).conversation).toMatchObject({ turn: null, last: { outcome: 'failed', error: { code: 'model_not_found' } } });
    },
  ],
  [
    'a tool call that fails, names no tool or has bad arguments reaches the model as a tool error, and the turn goes on',
    async (host, id) => {
      const agent = await host.spawn('chatter', { id });
      // The model reads the typed error's code and the action's own reason.
      expect(await agent.call('chat.message', { text: 'add 999 and 2' })).toBe('The add failed: too_big: 1001 is more than the ledger takes at once');
      expect(await agent.call('chat.message', { text: 'teleport me' })).toMatch(/^The teleport failed: .*teleport/);
      expect(await agent.call('chat.message', { text: 'garble the numbers' })).toMatch(/^The add failed: /);
      expect((await agent.state()).ledger).toEqual({ total: 0, wired: 0 });
      expect(await agent.call('chat.message', { text: 'add 1 and 2' })).toBe('The total is 3.');
    },
  ],
  [
    "a model's call to a tool that does not exist is published as a failed chat.tool call, and the model is told",
    async (host, id) => {
      const agent = await host.spawn('chatter', { id });
      const watcher = await host.spawn('watcher', { id: `${id}-watcher` });
      await agent.followTools(`${id}-watcher`);
      expect(await agent.call('chat.message', { text: 'teleport me' })).toMatch(/^The teleport failed: unknown_action: Model tried to call unavailable tool 'teleport'/);
      const seen = async () => ((await watcher.state()).watch as { seen: { type: string; agent: string; tool: string; ok?: boolean }[] }).seen.filter((signal) => signal.agent === id);
      await until('both tool signals', async () => (await seen()).length >= 2);
      expect((await seen()).map(({ type, tool, ok }) => [type, tool, ok])).toEqual([
        ['chat.tool.call', 'teleport', undefined],
        ['chat.tool.result', 'teleport', false],
      ]);
    },
  ],
  [
    "a tool output that is not JSON reaches the model as invalid_output under the tool's own name, and the tool's step changes nothing",
    async (host, id) => {
      const agent = await host.spawn('chatter', { id });
      // In-process the step's record names the tool, on Restate the step names its action: here both are 'census'.
      expect(await agent.call('chat.message', { text: 'take a census' })).toMatch(/^The census failed: invalid_output: the output of (tool|action) 'census' is not JSON: Do not know how to serialize a BigInt$/);
      expect((await agent.state()).ledger).toEqual({ total: 0, wired: 0 });
      expect(await agent.call('chat.message', { text: 'add 1 and 2' })).toBe('The total is 3.');
    },
  ],
  [
    "a MockLanguageModelV3 scripted with doGenerate only answers turns that stream by default; one with doStream only answers unstreamed turns and writes the history's summary",
    async (host, id) => {
      const generating = await host.spawn('generating', { id: `${id}-generating` });
      expect(await generating.call('chat.message', { text: 'hello' })).toBe('Heard you.');
      const streaming = await host.spawn('streaming', { id: `${id}-streaming` });
      expect(await streaming.call('chat.message', { text: 'a first message, long enough to pass the history budget' })).toBe('Heard you.');
      expect(await streaming.call('chat.message', { text: 'a second one' })).toBe('Heard you.');
      const chat = (await streaming.state()).conversation as { messages: { role: string; content: unknown }[]; compacted: number };
      expect(chat.compacted).toBeGreaterThan(0);
      expect(chat.messages[0]).toEqual({ role: 'user', content: '<conversation_summary>\nearlier: a summary\n</conversation_summary>' });
    },
  ],
  [
    'tool calls run one by one in the order the model asked; the calls past maxToolCalls do not run and the turn fails',
    async (host, id) => {
      const agent = await host.spawn('chatter', { id });
      await expect(agent.call('chat.message', { text: 'add these thrice' })).rejects.toMatchObject({ code: 'turn_limit', details: { limit: 'maxToolCalls', value: 2 } });
      expect((await agent.state()).ledger).toEqual({ total: 3, wired: 0 });
      const chat = (await agent.state()).conversation as { messages: { role: string; content: { toolCallId: string; output: { type: string; value: unknown } }[] }[] };
      const results = chat.messages.filter((message) => message.role === 'tool').flatMap((message) => message.content);
      expect(results.map((result) => result.toolCallId.split('-').at(-1))).toEqual(['1', '2', '3']);
      expect(results.map((result) => result.output)).toEqual([
        { type: 'json', value: { total: 1 } },
        { type: 'json', value: { total: 3 } },
        { type: 'error-text', value: expect.stringMatching(/^turn_limit: /) },
      ]);
    },
  ],
  [
    'chat.cancel ends the turn in flight: its caller gets cancelled, the model answer that comes later is dropped, and the next message is answered',
    async (host, id) => {
      const agent = await host.spawn('chatter', { id });
      const slow = agent.call('chat.message', { text: 'slowly add 1 and 2' });
      const ledgerTotal = async () => ((await agent.state()).ledger as { total: number }).total;
      await until('the tool step', async () => (await ledgerTotal()) === 3);
      await agent.send('chat.cancel', { reason: 'changed my mind' });
      await expect(slow).rejects.toMatchObject({ code: 'cancelled', message: 'changed my mind' });
      expect((await agent.state()).conversation).toMatchObject({ turn: null, last: { n: 1, outcome: 'cancelled' } });
      expect(await agent.call('chat.message', { text: 'add 2 and 2' })).toBe('The total is 7.');
      const chat = (await agent.state()).conversation as { messages: { role: string }[]; turns: number };
      // Turn 1 has no answer in the history: the model's late answer was dropped.
      expect(chat.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'user', 'assistant', 'tool', 'assistant']);
      expect(chat.turns).toBe(2);
    },
  ],
  [
    "a tool call that takes longer than toolTimeout reaches the model as a timeout; the tool's step still applies (its action told in-process, not on Restate)",
    async (host, id) => {
      const agent = await host.spawn('hasty', { id });
      expect(await agent.call('chat.message', { text: 'audit the books' })).toBe(`The audit failed: timeout: tool 'audit' of agent '${id}' gave no answer within 200 ms`);
      await until('the audit to apply', async () => ((await agent.state()).auditor as { audited: number }).audited === 1);
      expect((await agent.state()).conversation).toMatchObject({ turn: null, turns: 1 });
      const { interrupted } = (await agent.state()).auditor as { interrupted: number };
      onHost(host, 'abortedTool', {
        'in-process': () => expect(interrupted).toBe(1),
        restate: () => expect(interrupted).toBe(0),
      });
    },
  ],
  [
    'a history over its budget is compacted before the model is asked: older turns summarised, the latest kept',
    async (host, id) => {
      const agent = await host.spawn('forgetful', { id });
      for (const [a, total] of [[1, 2], [2, 5], [3, 9]] as const) expect(await agent.call('chat.message', { text: `add 1 and ${a}` })).toBe(`The total is ${total}.`);
      const chat = (await agent.state()).conversation as { messages: { role: string; content: unknown }[]; compacted: number };
      expect(chat.compacted).toBeGreaterThan(0);
      expect(chat.messages[0]).toMatchObject({ role: 'user', content: expect.stringMatching(/^<conversation_summary>\nearlier: /) });
      // The latest turn is whole after the summary.
      expect(chat.messages.slice(-4).map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
      expect(chat.messages.at(-4)).toMatchObject({ content: 'add 1 and 3' });
    },
  ],
  [
    "a tool's string output reaches the model as text, whether or not another of the agent's tools needs approval",
    async (host, id) => {
      // The chatter's `wire` needs approval; the clerk has no tool that does.
      for (const [definition, expected] of [['chatter', 'The label said, as text: ledger of 0'], ['clerk_agent', 'The label said, as text: label 1']] as const) {
        const agent = await host.spawn(definition, { id: `${id}-${definition}` });
        expect(await agent.call('chat.message', { text: 'label the books' })).toBe(expected);
        const chat = (await agent.state()).conversation as { messages: { role: string; content: { output?: unknown }[] }[] };
        const results = chat.messages.filter((message) => message.role === 'tool').flatMap((message) => message.content.map((part) => part.output));
        expect(results).toEqual([{ type: 'text', value: expected.slice('The label said, as text: '.length) }]);
      }
    },
  ],
  [
    "the tokens of a summary request count against the agent's budget: once it is used up, no model call follows",
    async (host, id) => {
      const agent = await host.spawn('thrifty', { id });
      expect(await agent.call('chat.message', { text: 'add 1 and 2, and make the history long enough to compact' })).toBe('The total is 3.');
      await expect(agent.call('chat.message', { text: 'add 2 and 2' })).rejects.toMatchObject({ code: 'budget_exceeded' });
      const chat = (await agent.state()).conversation as { usage: { inputTokens: number; outputTokens: number }; compacted: number };
      // Two steps of 10 + 10 tokens, then the summary's 5,000 + 40.
      expect(chat.usage).toMatchObject({ inputTokens: 5_020, outputTokens: 60 });
      expect(chat.compacted).toBeGreaterThan(0);
      expect((await agent.state()).ledger).toMatchObject({ total: 3 });
    },
  ],
  [
    'a compactor that returns what a compactor must not is refused: the older messages are dropped, and the turn goes on',
    async (host, id) => {
      const agent = await host.spawn('sloppy', { id });
      expect(await agent.call('chat.message', { text: 'add 1 and 2, and make the history long enough to compact' })).toBe('The total is 3.');
      expect(await agent.call('chat.message', { text: 'add 3 and 4' })).toBe('The total is 10.');
      const chat = (await agent.state()).conversation as { messages: { role: string; content: unknown }[]; compacted: number };
      expect(chat.compacted).toBeGreaterThan(0);
      // Dropped, not summarised: no summary leads the history, and the latest turn is whole.
      expect(chat.messages[0]).toMatchObject({ role: 'user', content: 'add 3 and 4' });
      expect(chat.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    },
  ],
  [
    "a call with the id of a call whose deferred answer is still awaited: refused in-process, sharing the first call's answer on Restate",
    async (host, id) => {
      const agent = await host.spawn('desk_agent', { id });
      const first = agent.call('desk.ask', { question: 'is it on?' }, `${id}-question`);
      await until('the question to wait', async () => (await agent.state()).desk !== undefined && (await desk(agent)).waiting !== null);
      const second = agent.call('desk.ask', { question: 'is it on?' }, `${id}-question`);
      await onHost(host, 'reusedCallId', {
        'in-process': async () => {
          await expect(second).rejects.toMatchObject({ code: 'invalid_signal', details: { reason: 'duplicate_call' } });
          await agent.send('desk.answer', { text: 'yes' });
          expect(await first).toBe('yes');
          expect(await desk(agent)).toMatchObject({ asked: 1, answered: 1 });
        },
        restate: async () => {
          await until('the second question to reach the agent', async () => (await desk(agent)).asked === 2);
          await agent.send('desk.answer', { text: 'yes' });
          expect(await first).toBe('yes');
          expect(await second).toBe('yes');
        },
      });
    },
  ],
];
