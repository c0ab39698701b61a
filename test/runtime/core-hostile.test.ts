/**
 * A running system against what a careless or hostile user does to it: listeners that are not
 * functions, patterns no signal can match, route guards that cannot decide, a thousand calls at
 * once, calls racing a stop, ids in any script. Bad input is refused at once with a typed error
 * naming the culprit, or reported; the agents keep their state and keep answering.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgentSystem, createSignal, createSkillRegistry, defineAction, defineAgent, defineSkill, DefinitionError, result, RouteError, RuntimeError, type AgentSystem, type AgentSystemOptions, type Diagnostic } from '../../src/index.js';

const counting = z.object({ n: z.number().int().default(0) });
const bump = defineAction({
  name: 'bump',
  description: 'Adds one',
  input: z.object({ wait: z.boolean().default(false) }),
  state: counting,
  run: async ({ wait }, { skillState }) => {
    if (wait) await new Promise((resolve) => setImmediate(resolve));
    return result(skillState.n + 1, { state: { n: skillState.n + 1 } });
  },
});
const tally = defineSkill({ name: 'tally', schema: counting, actions: [bump], routes: [{ path: 'tally.bump', target: { action: 'bump' } }] });
const Tally = defineAgent({ name: 'tally_agent', skills: [tally] });

let system: AgentSystem;
afterEach(() => system?.shutdown());

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('listeners are checked when they are given', () => {
  it.each([
    ['subscribe', (s: AgentSystem, bad: never) => s.subscribe('tally.*', bad), 'subscribe needs a listener function, (signal) => void; got number'],
    ['onError', (s: AgentSystem, bad: never) => s.onError(bad), 'onError needs a listener function, (error, agentId) => void; got number'],
    ['onDiagnostic', (s: AgentSystem, bad: never) => s.onDiagnostic(bad), 'onDiagnostic needs a listener function, (diagnostic, agentId) => void; got number'],
  ])('%s with a listener that is not a function: invalid_options at once, and nothing fails later', async (_method, register, message) => {
    const diagnostics: Diagnostic[] = [];
    system = createAgentSystem({ onUnhandledDiagnostic: (diagnostic) => diagnostics.push(diagnostic), onUnhandledError: () => {} });
    const error = thrown(() => register(system, 42 as never));
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({ code: 'invalid_options', message, subject: 'listener', details: { option: 'listener', value: 'number' } });
    // The agent's errors and diagnostics reach no broken listener: no listener_failed follows.
    const agent = system.spawn(Tally, { id: 't1' });
    await expect(agent.call('tally.nothing')).rejects.toMatchObject({ code: 'no_route' });
    system.publish('tally.tick');
    expect(diagnostics.map((diagnostic) => diagnostic.code)).not.toContain('listener_failed');
  });

  it("a subscription pattern no signal type can match: invalid_pattern naming it, in a subscription's words", () => {
    system = createAgentSystem();
    const error = thrown(() => system.subscribe('orders created', () => {}));
    expect(error).toBeInstanceOf(RouteError);
    expect(error).toMatchObject({
      code: 'invalid_pattern',
      subject: 'orders created',
      message: "cannot subscribe to 'orders created': pattern 'orders created' has an invalid segment 'orders created' (allowed: ASCII letters, digits, '_', '-', '*' and '**')",
    });
  });
});

describe('one function subscribed twice is two subscriptions', () => {
  it('ending one subscription of a function leaves its other subscription running', () => {
    system = createAgentSystem({ onUnhandledDiagnostic: () => {} });
    const seen: string[] = [];
    const log = (signal: { type: string }) => void seen.push(signal.type);
    const first = system.subscribe('orders.created', log);
    system.subscribe('orders.*', log);
    expect(system.publish('orders.created')).toBe(2);
    first();
    expect(system.publish('orders.created')).toBe(1);
    expect(seen).toEqual(['orders.created', 'orders.created', 'orders.created']);
  });

  it('the same for onError and onDiagnostic listeners', async () => {
    system = createAgentSystem({ onUnhandledError: () => {}, onUnhandledDiagnostic: () => {} });
    const codes: string[] = [];
    const keep = (report: { code: string }) => void codes.push(report.code);
    const [errorOne] = [system.onError(keep), system.onError(keep)];
    const [diagnosticOne] = [system.onDiagnostic(keep), system.onDiagnostic(keep)];
    errorOne();
    diagnosticOne();
    const agent = system.spawn(Tally, { id: 't1' });
    await expect(agent.call('tally.nothing')).rejects.toMatchObject({ code: 'no_route' });
    await agent.unmount('elsewhere');
    expect(codes).toEqual(['no_route', 'not_mounted']);
  });
});

describe('a skill mounted at run time whose routes(config) gives a target of the wrong shape', () => {
  it('is refused with the words defineAgent uses, and the agent keeps answering', async () => {
    system = createAgentSystem();
    const agent = system.spawn(Tally, { id: 't1' });
    const desk = defineSkill({ name: 'desk', actions: [defineAction({ name: 'file', description: 'Files', input: z.object({}), run: () => 'filed' })], routes: () => [{ path: 'desk.file', target: { action: 'file', params: 5 as never } }] });
    await expect(agent.mount(desk)).rejects.toMatchObject({ code: 'invalid_route', skill: 'desk', message: "routes of skill 'desk': route 'desk.file' has a target whose params are not an object, got 5" });
    expect(agent.getSnapshot().mounted.map((skill) => skill.name)).toEqual(['tally']);
    expect(await agent.call('tally.bump')).toBe(1);
  });
});

describe('a skill mounted at run time whose route names an action nothing on the agent has', () => {
  it('is refused with unknown_action, as defineAgent refuses it, and the agent keeps answering', async () => {
    system = createAgentSystem();
    const agent = system.spawn(Tally, { id: 't1' });
    const desk = defineSkill({ name: 'desk', actions: [defineAction({ name: 'file', description: 'Files', input: z.object({}), run: () => 'filed' })], routes: [{ path: 'desk.shred', target: { action: 'shred' } }] });
    await expect(agent.mount(desk)).rejects.toMatchObject({ code: 'unknown_action', skill: 'desk', action: 'shred', subject: 'desk.shred', message: expect.stringContaining("mounting skill 'desk': route 'desk.shred' of skill 'desk' targets action 'shred'") });
    expect(agent.getSnapshot().mounted.map((skill) => skill.name)).toEqual(['tally']);
    expect(await agent.call('tally.bump')).toBe(1);
  });

  it("takes routes to the agent's actions, to another skill's, and to a skill mounted later when they name it", async () => {
    system = createAgentSystem();
    const agent = system.spawn(Tally, { id: 't1' });
    const routes = [
      { path: 'desk.bump', target: { action: 'bump' } },
      { path: 'desk.file', target: { action: 'file' } },
      { path: 'desk.later', target: { action: 'archive', skill: 'archive' } },
    ];
    const desk = defineSkill({ name: 'desk', actions: [defineAction({ name: 'file', description: 'Files', input: z.object({}), run: () => 'filed' })], routes });
    expect((await agent.mount(desk)).changed).toBe(true);
    expect(await agent.call('desk.file')).toBe('filed');
    expect(await agent.call('desk.bump')).toBe(1);
  });
});

describe("a ref's options", () => {
  it('toolset with a misspelled strict: invalid_options naming it, not the non-strict tools', () => {
    system = createAgentSystem();
    const agent = system.spawn(Tally, { id: 't1' });
    expect(thrown(() => agent.toolset({ stric: true } as never))).toMatchObject({ code: 'invalid_options', subject: 'stric', message: "unknown option 'stric'; did you mean 'strict'? (toolset options are: strict)" });
    expect(agent.toolset({ strict: true }).tools.map((tool) => tool.function.name)).toEqual(['bump']);
  });
});

describe("createAgentSystem's options of the wrong shape are refused when the system is made, naming the option", () => {
  const registry = createSkillRegistry([tally]);
  it.each([
    ['one registry where a list of resolvers goes', { resolvers: registry }, 'resolvers', 'resolvers must be an array of skill resolvers, as in { resolvers: [registry] }, got an object'],
    ['one definition where a list goes', { definitions: Tally }, 'definitions', 'definitions must be an array of agent definitions, as in { definitions: [MyAgent] }, got an object'],
    ['skills that are neither a list nor a registry', { skills: { tally } }, 'skills', 'skills must be an array of skills or a skill registry (createSkillRegistry), got an object'],
    ['an unhandled-error handler that is not a function', { onUnhandledError: 'stderr' }, 'onUnhandledError', "onUnhandledError must be a function (error, agentId) => void, got a string, 'stderr'"],
    ['an unhandled-diagnostic handler that is not a function', { onUnhandledDiagnostic: true }, 'onUnhandledDiagnostic', 'onUnhandledDiagnostic must be a function (diagnostic, agentId) => void, got boolean'],
    ['a trace that cannot be written to', { trace: 1 }, 'trace', 'trace must be true, a file path, a stream with write(line) or a function (line) => void, got 1'],
    ['an inspector that is not one', { inspect: {} }, 'inspect', "inspect must be an XState inspector: a function, an observer with next(event), or startInspector()'s result, got an object"],
    ['a call timeout given as text', { callTimeout: '5000' }, 'callTimeout', "callTimeout must be a number of milliseconds above 0 (or Infinity), got a string, '5000'"],
  ])('%s', (_what, options, option, message) => {
    const error = thrown(() => createAgentSystem(options as unknown as AgentSystemOptions));
    expect(error).toBeInstanceOf(DefinitionError);
    expect(error).toMatchObject({ code: 'invalid_options', subject: option, message });
  });

  it('the same options of the right shape make a system that works', async () => {
    const lines: unknown[] = [];
    system = createAgentSystem({ resolvers: [registry], definitions: [Tally], skills: registry, onUnhandledError: () => {}, onUnhandledDiagnostic: () => {}, trace: (line) => void lines.push(line), inspect: { next: () => {} }, callTimeout: 5_000 });
    const agent = system.spawn(defineAgent({ name: 'bare' }), { id: 'b1' });
    expect((await agent.mount('tally')).changed).toBe(true);
    expect(await agent.call('tally.bump')).toBe(1);
    expect(lines.length).toBeGreaterThan(0);
  });
});

describe('route guards that cannot decide, on a running agent', () => {
  it('an async guard: the caller gets no_route, a guard_failed warning names the route, and a guard that rejects does not take the process down', async () => {
    const diagnostics: Diagnostic[] = [];
    system = createAgentSystem();
    system.onDiagnostic((diagnostic) => diagnostics.push(diagnostic));
    let rejected!: () => void;
    const guardRejected = new Promise<void>((resolve) => (rejected = resolve));
    const Guarded = defineAgent({
      name: 'guarded',
      skills: [
        defineSkill({
          name: 'tally',
          schema: counting,
          actions: [bump],
          routes: [
            {
              path: 'tally.bump',
              target: { action: 'bump' },
              match: (async () => {
                queueMicrotask(rejected);
                throw new Error('the guard looked something up and failed');
              }) as unknown as () => boolean,
            },
          ],
        }),
      ],
    });
    const agent = system.spawn(Guarded, { id: 'g1' });
    await expect(agent.call('tally.bump')).rejects.toMatchObject({ code: 'no_route' });
    await guardRejected;
    await new Promise((resolve) => setImmediate(resolve));
    expect(diagnostics).toContainEqual(
      expect.objectContaining({
        level: 'warning',
        code: 'guard_failed',
        subject: 'tally.bump',
        message: "guard of route 'tally.bump' returned a promise (guards decide synchronously), not true or false; the route is passed over",
      }),
    );
    expect(agent.getSnapshot().state).toEqual({ tally: { n: 0 } });
  });
});

describe('many callers at once', () => {
  it('1,000 calls at once to one agent, half of them async: each answered once, in arrival order, none lost', async () => {
    system = createAgentSystem({ mailboxLimit: 1_000 });
    const agent = system.spawn(Tally, { id: 'busy' });
    const answers = await Promise.all(Array.from({ length: 1_000 }, (_, i) => agent.call(createSignal('tally.bump', { wait: i % 2 === 1 }), { timeout: Infinity })));
    expect(answers).toEqual(Array.from({ length: 1_000 }, (_, i) => i + 1));
    expect(agent.getSnapshot().state).toEqual({ tally: { n: 1_000 } });
  });

  it('calls racing a stop: each is answered or gets agent_stopped, and the answered ones are exactly the steps taken', async () => {
    system = createAgentSystem();
    const agent = system.spawn(Tally, { id: 'racing' });
    const calls = Array.from({ length: 50 }, () => agent.call(createSignal('tally.bump', { wait: true })).then((n) => n as number, (error: RuntimeError) => error.code));
    // Stopped while the first async step is under way: the rest of the mailbox is refused.
    const stopped = agent.stop();
    const outcomes = await Promise.all(calls);
    await stopped;
    const answered = outcomes.filter((outcome) => typeof outcome === 'number');
    expect(answered).toEqual(answered.map((_, i) => i + 1));
    expect(outcomes.filter((outcome) => typeof outcome !== 'number').every((code) => code === 'agent_stopped')).toBe(true);
    expect(answered.length + outcomes.filter((outcome) => outcome === 'agent_stopped').length).toBe(50);
    await expect(agent.call('tally.bump')).rejects.toMatchObject({ code: 'agent_stopped' });
  });
});

describe('ids in any script, payloads of any size', () => {
  it.each(['агент-1', '代理', '🙂 agent', 'toString', '__proto__', 'a.b:c'])('an agent with id %j spawns, answers, is found by its id and persists under it', async (id) => {
    system = createAgentSystem({ definitions: [Tally] });
    const agent = system.spawn(Tally, { id });
    expect(await agent.call('tally.bump')).toBe(1);
    expect(system.get(id)).toBe(agent);
    expect(system.list().map((ref) => ref.id)).toEqual([id]);
    const snapshot = JSON.parse(JSON.stringify(agent.persist())) as unknown;
    await agent.stop();
    expect(await system.restore(snapshot).call('tally.bump')).toBe(2);
  });

  it('a 10 MB signal payload published to 100 agents: each gets it, the publisher gets the count', async () => {
    system = createAgentSystem();
    const text = 'x'.repeat(10 * 1024 * 1024);
    const seen: number[] = [];
    const Reader = defineAgent({
      name: 'reader',
      actions: [defineAction({ name: 'read', description: 'Reads a text', input: z.object({ text: z.string() }), run: ({ text: read }) => void seen.push(read.length) })],
      routes: [{ path: 'text.published', target: { action: 'read' } }],
    });
    for (let i = 0; i < 100; i++) system.spawn(Reader, { id: `reader-${i}` });
    expect(system.publish(createSignal('text.published', { text }))).toBe(100);
    expect(seen).toEqual(Array.from({ length: 100 }, () => text.length));
  });
});
