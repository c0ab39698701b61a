/**
 * The signal pipeline: signalPatterns → handleSignal hooks in order →
 * router → cmd → run effects → transformResult (for calls) → effects.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeError, createAgentSystem, type AgentSystem, type Diagnostic, type Signal } from '../../src/index.js';
import { arithmetic, calculator, counter } from '../../skills/index.js';
import { Decision, Effects, createSignal, defineAction, defineAgent, defineSkill, notebook, quietSystem, result, z } from './fixtures.js';

let system: AgentSystem;
afterEach(async () => {
  await system?.shutdown();
});

/** A skill whose handleSignal records what it saw and does what the signal's data says. */
function recorder(name: string, seen: string[], patterns = ['**']) {
  return defineSkill({
    name,
    schema: z.object({ hits: z.number().default(0) }),
    signalPatterns: patterns,
    handleSignal(signal, ctx) {
      seen.push(`${name}:${signal.type}`);
      const data = (signal.data ?? {}) as { [key: string]: unknown };
      const mode = data[name];
      if (mode === 'rewrite') return Decision.rewrite(createSignal('notes.add_now', { item: `rewritten by ${name}` }));
      if (mode === 'handle') return Decision.handle({ state: { hits: ctx.state.hits + 1 }, output: { handledBy: name } });
      if (mode === 'fail') return Decision.fail(`${name} refuses`, { why: 'told to' });
      if (mode === 'throw') throw new Error(`${name} blew up`);
      if (mode === 'garbage') return 42 as never;
      return undefined;
    },
  });
}

describe('handleSignal hooks', () => {
  it('run in mount order for skills whose patterns match, then the router takes the signal', async () => {
    const seen: string[] = [];
    const Agent = defineAgent({ name: 'hooks', skills: [recorder('first', seen), recorder('second', seen, ['notes.*']), recorder('third', seen, ['other.**']), notebook] });
    system = quietSystem();
    const agent = system.spawn(Agent);
    await expect(agent.call(createSignal('notes.add_now', { item: 'x' }))).resolves.toEqual({ count: 1 });
    expect(seen).toEqual(['first:notes.add_now', 'second:notes.add_now']);
  });

  it('rewrite: later skills and the router see the new signal', async () => {
    const seen: string[] = [];
    const Agent = defineAgent({ name: 'rewrites', skills: [recorder('first', seen), recorder('second', seen), notebook] });
    system = quietSystem();
    const agent = system.spawn(Agent);
    await agent.call(createSignal('notes.whatever', { first: 'rewrite' }));
    expect(seen).toEqual(['first:notes.whatever', 'second:notes.add_now']);
    expect(agent.getSnapshot().state).toMatchObject({ notebook: { items: ['rewritten by first'] } });
  });

  it('handle: the skill updates its slice, answers the call and the router is skipped', async () => {
    const seen: string[] = [];
    const Agent = defineAgent({ name: 'handles', skills: [recorder('first', seen), recorder('second', seen), notebook] });
    system = quietSystem();
    const agent = system.spawn(Agent);
    await expect(agent.call(createSignal('notes.add_now', { item: 'x', first: 'handle' }))).resolves.toEqual({ handledBy: 'first' });
    expect(seen).toEqual(['first:notes.add_now']);
    expect(agent.getSnapshot().state).toMatchObject({ first: { hits: 1 }, notebook: { items: [] } });
  });

  it.each([
    ['fail', 'signal_failed', 'first refuses'],
    ['throw', 'hook_failed', "handleSignal of skill 'first' failed: first blew up"],
    ['garbage', 'hook_failed', "handleSignal of skill 'first' returned something that is not a decision"],
  ])('%s: the caller gets %s and the agent keeps its state and keeps answering', async (mode, code, message) => {
    const Agent = defineAgent({ name: `refuses_${mode}`, skills: [recorder('first', []), notebook] });
    system = quietSystem();
    const agent = system.spawn(Agent, { state: { notebook: { items: ['kept'] } } });
    const before = agent.getSnapshot().state;
    const error = await agent.call(createSignal('notes.add_now', { item: 'x', first: mode })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({ code, skill: 'first' });
    expect((error as Error).message).toContain(message);
    expect(agent.getSnapshot().state).toBe(before);
    await expect(agent.call(createSignal('notes.list'))).resolves.toEqual({ items: ['kept'] });
  });
});

describe('routing', () => {
  it('answers a signal with no route with a typed no_route error, and keeps serving', async () => {
    system = quietSystem();
    const agent = system.spawn(defineAgent({ name: 'routes', skills: [notebook] }));
    await expect(agent.call(createSignal('unknown.signal'))).rejects.toMatchObject({ code: 'no_route', message: "no route matches signal 'unknown.signal'" });
    await expect(agent.call(createSignal('notes.add_now', { item: 'a' }))).resolves.toEqual({ count: 1 });
  });

  it('names the route a misspelled signal type was likely meant for; never a wildcard, nor a route whose guard said no', async () => {
    const guarded = defineAgent({
      name: 'slips',
      skills: [notebook],
      actions: [defineAction({ name: 'noop', description: 'Nothing', input: z.object({}), run: () => null })],
      routes: [
        { path: 'notes.archive', target: { action: 'noop' }, match: () => false },
        { path: 'audit.*', target: { action: 'noop' }, match: () => false },
      ],
    });
    system = quietSystem();
    const agent = system.spawn(guarded);
    await expect(agent.call(createSignal('notes.lsit'))).rejects.toMatchObject({
      code: 'no_route',
      subject: 'notes.lsit',
      message: "no route matches signal 'notes.lsit'; did you mean 'notes.list'?",
    });
    await expect(agent.call(createSignal('notes.archive'))).rejects.toMatchObject({ code: 'no_route', message: "no route matches signal 'notes.archive'" });
    await expect(agent.call(createSignal('audit.x'))).rejects.toMatchObject({ code: 'no_route', message: "no route matches signal 'audit.x'" });
  });

  it('uses agent routes before skill routes of the same path and reports the shadowed one', () => {
    const mine = defineAction({ name: 'mine', description: 'the agent own', input: z.object({}), run: () => 'agent' });
    const Agent = defineAgent({ name: 'shadowing', skills: [notebook], actions: [mine], routes: [{ path: 'notes.list', target: { action: 'mine' } }] });
    expect(Agent.diagnostics).toEqual([expect.objectContaining({ code: 'shadowed_route', subject: 'notes.list', skill: 'notebook' })]);
    system = quietSystem();
    return expect(system.spawn(Agent).call(createSignal('notes.list'))).resolves.toBe('agent');
  });

  it("says what defining an agent found once per system, whether the system is given it in `definitions` or first meets it at a spawn", async () => {
    const mine = defineAction({ name: 'mine', description: 'the agent own', input: z.object({}), run: () => 'agent' });
    const Agent = defineAgent({ name: 'shadowing_listed', skills: [notebook], actions: [mine], routes: [{ path: 'notes.list', target: { action: 'mine' } }] });
    for (const listed of [true, false]) {
      const said: Diagnostic[] = [];
      system = createAgentSystem({ ...(listed ? { definitions: [Agent] } : {}), onUnhandledDiagnostic: (diagnostic) => void said.push(diagnostic) });
      await expect(system.spawn(Agent).call(createSignal('notes.list'))).resolves.toBe('agent');
      system.spawn(Agent);
      expect(said, listed ? 'given in definitions' : 'met at a spawn').toEqual([expect.objectContaining({ code: 'shadowed_route', subject: 'notes.list', skill: 'notebook' })]);
      await system.shutdown();
    }
  });

  it('passes the signal data as params, with the route static params on top', async () => {
    const echo = defineAction({ name: 'echo', description: 'echo', input: z.object({ a: z.number(), op: z.string() }), run: (params) => params });
    const Agent = defineAgent({ name: 'params', actions: [echo], routes: [{ path: 'calc.*', target: { action: 'echo', params: { op: 'fixed' } } }] });
    system = quietSystem();
    await expect(system.spawn(Agent).call(createSignal('calc.x', { a: 1, op: 'from-data' }))).resolves.toEqual({ a: 1, op: 'fixed' });
  });

  it('a route guard that throws counts as no match and is reported as a diagnostic', async () => {
    const echo = defineAction({ name: 'echo', description: 'echo', input: z.object({}), run: () => 'fallback' });
    const Agent = defineAgent({
      name: 'guards',
      actions: [echo],
      routes: [
        { path: 'g.x', target: { action: 'echo' }, priority: 10, match: () => { throw new Error('guard exploded'); } },
        { path: 'g.*', target: { action: 'echo' } },
      ],
    });
    const diagnostics: string[] = [];
    system = quietSystem();
    system.onDiagnostic((d) => diagnostics.push(`${d.code}: ${d.message}`));
    await expect(system.spawn(Agent).call(createSignal('g.x'))).resolves.toBe('fallback');
    expect(diagnostics).toEqual(["guard_failed: guard of route 'g.x' threw: guard exploded"]);
  });

  it('a handler target turns the signal into several instructions, run in order, atomically', async () => {
    const Agent = defineAgent({
      name: 'handler',
      skills: [notebook],
      routes: [
        {
          path: 'notes.pair',
          target: (signal: Signal) => {
            const { first, second } = signal.data as { first: string; second: unknown };
            return [{ action: 'append_now', params: { item: first } }, { action: 'append_now', params: { item: second as string } }];
          },
        },
      ],
    });
    system = quietSystem();
    const agent = system.spawn(Agent);
    await expect(agent.call(createSignal('notes.pair', { first: 'a', second: 'b' }))).resolves.toEqual({ count: 2 });
    await expect(agent.call(createSignal('notes.pair', { first: 'c', second: 7 }))).rejects.toMatchObject({ code: 'invalid_params', action: 'append_now' });
    expect(agent.getSnapshot().state).toEqual({ notebook: { items: ['a', 'b'] } });
  });
});

describe('results, replies and run effects', () => {
  it('runs the run effects handleSignal asked for, and answers with their output (the arithmetic skill)', async () => {
    system = quietSystem();
    const agent = system.spawn(defineAgent({ name: 'arith', skills: [calculator, arithmetic] }));
    await expect(agent.call(createSignal('arithmetic.calculate', { op: 'divide', a: 1, b: 4 }))).resolves.toEqual({ result: 0.25 });
    await expect(agent.call(createSignal('arithmetic.calculate', { op: 'divide', a: 1, b: 0 }))).rejects.toMatchObject({
      code: 'action_failed',
      skill: 'arithmetic',
      details: { reason: 'division_by_zero' },
    });
    await expect(agent.call(createSignal('arithmetic.calculate', { op: 'modulo', a: 1, b: 2 }))).rejects.toMatchObject({ code: 'signal_failed' });
  });

  it('chains transformResult across skills for calls (the calculator answers with a calculator.result signal)', async () => {
    system = quietSystem();
    const agent = system.spawn(defineAgent({ name: 'calc', skills: [calculator] }));
    const answer = (await agent.call(createSignal('calculator.add', { a: 1.005, b: 2 }, { source: 'test' }))) as Signal;
    expect(answer).toMatchObject({ specversion: '1.0', type: 'calculator.result', source: 'test', data: { result: 3.01 } });
    expect(agent.getSnapshot().state).toEqual({ calculator: { precision: 2, last_result: 3.01 } });
  });

  it('a reply effect answers the call instead of the output', async () => {
    const ask = defineAction({ name: 'ask', description: 'ask', input: z.object({}), run: () => result('output', { effects: [Effects.reply({ answer: 42 })] }) });
    system = quietSystem();
    const agent = system.spawn(defineAgent({ name: 'replies', actions: [ask], routes: [{ path: 'ask', target: { action: 'ask' } }] }));
    await expect(agent.call(createSignal('ask'))).resolves.toEqual({ answer: 42 });
  });

  it('stops a chain of run effects that never ends with effect_loop', async () => {
    const again = defineAction({ name: 'again', description: 'runs itself', input: z.object({}), run: () => result(null, { effects: [Effects.run('again')] }) });
    system = quietSystem();
    const agent = system.spawn(defineAgent({ name: 'loops', actions: [again], routes: [{ path: 'go', target: { action: 'again' } }] }));
    await expect(agent.call(createSignal('go'))).rejects.toMatchObject({ code: 'effect_loop' });
    await expect(agent.call(createSignal('go'))).rejects.toMatchObject({ code: 'effect_loop' });
  });

  it('counts with the counter skill through routes', async () => {
    system = quietSystem();
    const agent = system.spawn(defineAgent({ name: 'counting', skills: [[counter, { initial: 10, step: 5 }]] }));
    agent.send(createSignal('counter.increment'));
    agent.send(createSignal('counter.decrement'));
    agent.send(createSignal('counter.increment'));
    await expect(agent.call(createSignal('counter.get'))).resolves.toEqual({ count: 15 });
  });
});
