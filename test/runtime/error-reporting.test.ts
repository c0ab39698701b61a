/**
 * Where a run-time error goes, and what it keeps of what user code threw.
 *
 * One rule: the caller waiting for the step gets the error; `onError` listeners (and
 * `skillstate.error` subscribers) see every error, the caller's included; the unhandled handler
 * gets only errors nobody received. A thrown error is kept as `cause` — on the `RuntimeError`, on
 * the `ErrorInfo` listeners get, in the trace line — and never serialised into effects or state.
 */
import { describe, expect, it } from 'vitest';
import type { AgentSystem, ErrorInfo, TraceLine } from '../../src/index.js';
import { RuntimeError } from '../../src/index.js';
import { createSignal, defineAction, defineAgent, defineSkill, Effects, systemPerTest, result, settleDown, z } from './fixtures.js';

const systems = systemPerTest();
let system: AgentSystem | undefined;

class DatabaseDown extends Error {
  override name = 'DatabaseDown';
}

/** Places user code can throw from, each reached by the signal 'go'. */
function throwing(where: string, thrown: unknown) {
  const fail = () => {
    throw thrown;
  };
  const act = defineAction({ name: 'act', description: 'acts', input: z.object({}), run: () => (where === 'action' ? fail() : 'ok') });
  const asyncAct = defineAction({ name: 'act_later', description: 'acts later', input: z.object({}), run: async () => { await settleDown(1); return fail(); } });
  const skill = defineSkill({
    name: 'store',
    actions: [act, asyncAct],
    signalPatterns: ['go', 'go.later'],
    routes:
      where === 'route handler'
        ? [{ path: 'go', target: () => fail() }]
        : [
            { path: 'go', target: { action: 'act' } },
            { path: 'go.later', target: { action: 'act_later' } },
          ],
    ...(where === 'handleSignal' ? { handleSignal: () => fail() } : {}),
    ...(where === 'transformResult' ? { transformResult: () => fail() } : {}),
  });
  return defineAgent({ name: 'keeper', skills: [skill] });
}

const PLACES: [string, string, string][] = [
  ['action', 'go', 'action_failed'],
  ['async action', 'go.later', 'action_failed'],
  ['handleSignal', 'go', 'hook_failed'],
  ['transformResult', 'go', 'hook_failed'],
  ['route handler', 'go', 'signal_failed'],
];

describe('a thrown error keeps the original as cause', () => {
  it.each(PLACES)('thrown by %s: the RuntimeError, the onError info and the trace line carry it', async (where, type, code) => {
    const original = new DatabaseDown('database down');
    const infos: ErrorInfo[] = [];
    const lines: TraceLine[] = [];
    system = systems.start({ trace: (line) => lines.push(line) });
    system.onError((error) => infos.push(error));
    const agent = system.spawn(throwing(where === 'async action' ? 'action' : where, original));
    const error = await agent.call(createSignal(type)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({ code, message: expect.stringContaining('database down') });
    expect((error as Error).cause).toBe(original);
    expect(infos).toHaveLength(1);
    expect(infos[0]!.cause).toBe(original);
    const step = lines.find((line) => line.kind === 'step' && !line.ok);
    expect(step).toMatchObject({ cause: { name: 'DatabaseDown', message: 'database down', stack: expect.stringContaining('DatabaseDown') } });
    expect((step as { cause: { stack: string } }).cause.stack).toContain('error-reporting.test.ts');
  });

  it.each([
    ['a string', 'plain words'],
    ['a plain object', { reason: 'gone' }],
    ['null', null],
  ])('a throw of %s is kept as it was thrown', async (_name, value) => {
    system = systems.start();
    const agent = system.spawn(throwing('action', value));
    const error = (await agent.call(createSignal('go')).catch((caught: unknown) => caught)) as Error;
    expect(error.cause).toBe(value);
  });

  it('the cause is not serialised: the error effect, JSON of the error and the snapshot leave it out', async () => {
    const original = new DatabaseDown('database down');
    const infos: ErrorInfo[] = [];
    const lines: string[] = [];
    system = systems.start({ trace: { write: (line: string) => lines.push(line) } });
    system.onError((error) => infos.push(error));
    const agent = system.spawn(throwing('action', original));
    agent.send(createSignal('go'));
    expect(infos).toHaveLength(1);
    expect(infos[0]!.cause).toBe(original);
    expect(Object.keys(infos[0]!)).not.toContain('cause');
    expect(JSON.parse(JSON.stringify(infos[0]))).toEqual({ code: 'action_failed', message: "action 'act' failed: database down", action: 'act', skill: 'store' });
    expect(structuredClone(infos[0])).not.toHaveProperty('cause');
    const effectLine = lines.map((line) => JSON.parse(line) as TraceLine).find((line) => line.kind === 'effect' && line.effect.type === 'error');
    expect(effectLine && 'effect' in effectLine && effectLine.effect.type === 'error' && Object.keys(effectLine.effect.error)).not.toContain('cause');
    expect(JSON.stringify(agent.persist())).not.toContain('DatabaseDown');
  });

  it('an error with no throw behind it (no route for the signal) has no cause', async () => {
    system = systems.start();
    const agent = system.spawn(throwing('nowhere', undefined));
    const error = (await agent.call(createSignal('nowhere.at.all')).catch((caught: unknown) => caught)) as Error;
    expect(error).toMatchObject({ code: 'no_route' });
    expect(error.cause).toBeUndefined();
  });
});

describe('where an error goes: the caller, onError observers, and the unhandled handler only when nobody received it', () => {
  const Failing = defineAgent({
    name: 'failing',
    actions: [
      defineAction({ name: 'boom', description: 'throws', input: z.object({}), run: () => { throw new Error('boom'); } }),
      defineAction({
        name: 'two_errors',
        description: 'succeeds, reporting two errors as effects',
        input: z.object({}),
        run: () => result('done', { effects: [Effects.error({ code: 'signal_failed', message: 'first' }), Effects.error({ code: 'signal_failed', message: 'second' })] }),
      }),
    ],
    routes: [
      { path: 'boom', target: { action: 'boom' } },
      { path: 'two', target: { action: 'two_errors' } },
    ],
  });

  function watched(listening: boolean) {
    const unhandled: string[] = [];
    const observed: string[] = [];
    system = systems.start({ onUnhandledError: (error) => unhandled.push(error.message) });
    if (listening) system.onError((error) => observed.push(error.message));
    return { agent: system.spawn(Failing), unhandled, observed };
  }

  const CASES: [string, boolean, boolean, string[], string[], number][] = [
    // how, a caller waits, a listener listens, onError sees, unhandled gets, callers rejected
    ['call, with a listener', true, true, ["action 'boom' failed: boom"], [], 1],
    ['call, without a listener', true, false, [], [], 1],
    ['send, with a listener', false, true, ["action 'boom' failed: boom"], [], 0],
    ['send, without a listener', false, false, [], ["action 'boom' failed: boom"], 0],
  ];
  it.each(CASES)('%s', async (_name, calling, listening, seen, unhandledMessages, rejected) => {
    const { agent, unhandled, observed } = watched(listening);
    let rejections = 0;
    if (calling) await agent.call(createSignal('boom')).catch(() => rejections++);
    else agent.send(createSignal('boom'));
    await settleDown();
    expect(observed).toEqual(seen);
    expect(unhandled).toEqual(unhandledMessages);
    expect(rejections).toBe(rejected);
  });

  it('a step with two errors: the caller gets the first; the second, which no caller received, goes to the unhandled handler', async () => {
    const { agent, unhandled } = watched(false);
    await expect(agent.call(createSignal('two'))).rejects.toMatchObject({ message: 'first' });
    expect(unhandled).toEqual(['second']);
  });

  it('a failed mount: the caller gets it, the unhandled handler does not', async () => {
    const { agent, unhandled } = watched(false);
    const broken = defineSkill({ name: 'broken', mount: () => 'nonsense' as never });
    await expect(agent.mount(broken)).rejects.toMatchObject({ code: 'hook_failed' });
    expect(unhandled).toEqual([]);
  });
});
