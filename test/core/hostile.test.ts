/**
 * The pure core against input a careless or hostile user gives it: names every object inherits,
 * guards that cannot decide, effects with values of the wrong type, huge inputs. Each case is
 * refused with a typed error that names the culprit, or reported, never silently passed over.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cmd, createRouter, createSignal, DefinitionError, defineAction, defineAgent, defineSkill, Effects, result, SignalError, StateError } from '../../src/index.js';
import { thrownBy } from './support.js';

describe('names every object inherits (toString, valueOf, constructor...)', () => {
  const counting = z.object({ n: z.number().default(0) });

  it.each(['toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf'])("a skill whose state key is '%s' is refused when it is defined, naming the key", (name) => {
    const error = thrownBy(() => defineSkill({ name, schema: counting }), DefinitionError, 'invalid_skill');
    expect(error.message).toBe(
      `skill '${name}': stateKey '${name}' is a name every object inherits from Object.prototype, so the agent's state would read the inherited value for the slice: give the skill another stateKey`,
    );
    expect(error.details).toEqual({ field: 'stateKey' });
  });

  it('the same skill under another state key works: its slice starts from its defaults', () => {
    const skill = defineSkill({ name: 'toString', stateKey: 'text', schema: counting });
    expect(defineAgent({ name: 'a', skills: [skill] }).new().state).toEqual({ text: { n: 0 } });
  });

  const hint = (key: string) => `(a missing '${key}' reads as the '${key}' every object inherits, so no default applies to it: give it a value, or rename the field)`;

  it("an agent's schema field named 'constructor' with a default: new() says why the default did not apply", () => {
    const Agent = defineAgent({ name: 'g', schema: z.object({ constructor: z.number().default(1) }) });
    const error = thrownBy(() => Agent.new(), StateError, 'invalid_state');
    expect(error.message).toBe(`agent 'g': invalid initial state: constructor: Invalid input: expected number, received function ${hint('constructor')}`);
  });

  it("an action's param named 'valueOf' left out: invalid_params says why, naming the param", async () => {
    const Agent = defineAgent({
      name: 'g',
      actions: [defineAction({ name: 'round', description: 'Rounds', input: z.object({ valueOf: z.number().optional() }), run: () => 0 })],
    });
    const ran = await cmd(Agent.new(), { action: 'round' });
    expect(ran.effects[0]).toMatchObject({
      type: 'error',
      error: { code: 'invalid_params', message: `invalid params for action 'round': valueOf: Invalid input: expected number, received function ${hint('valueOf')}` },
    });
  });

  it('given a value, such a field works: the hint is only for the missing case', () => {
    const Agent = defineAgent({ name: 'g', schema: z.object({ constructor: z.number().default(1) }) });
    expect(Agent.new({ state: { constructor: 5 } }).state).toEqual({ constructor: 5 });
  });

  it('fields of other names that merely contain those words are fine', () => {
    const skill = defineSkill({ name: 's', schema: z.object({ toStringified: z.string().default(''), my_constructor: z.number().default(2) }) });
    expect(defineAgent({ name: 'g', skills: [skill] }).new().state).toEqual({ s: { toStringified: '', my_constructor: 2 } });
  });
});

describe('a misspelled field of a definition is refused, naming it and the field meant', () => {
  const noop = defineAction({ name: 'noop', description: 'Does nothing', input: z.object({}), run: () => null });

  it("defineSkill({ rotues }): the skill would have had no routes", () => {
    const error = thrownBy(() => defineSkill({ name: 'desk', actions: [noop], rotues: [{ path: 'desk.noop', target: { action: 'noop' } }] } as never), DefinitionError, 'invalid_skill');
    expect(error.message).toMatch(/^skill 'desk': rotues is not a field of the definition; did you mean 'routes'\? \(fields: name, stateKey, actions, /);
    expect(error).toMatchObject({ skill: 'desk', details: { field: 'rotues' } });
  });

  it("defineSkill keeps a field of its own that is no misspelling: its hooks read it as this", () => {
    const skill = defineSkill({ name: 'desk', greeting: 'hello', transformResult(this: { greeting: string }) { return this.greeting; } } as never);
    expect(skill.transformResult?.(createSignal('desk.any'), null, {} as never)).toBe('hello');
  });

  it('defineAgent({ skils }): the agent would have had no skills', () => {
    const error = thrownBy(() => defineAgent({ name: 'clerk', skils: [defineSkill({ name: 'desk' })] } as never), DefinitionError, 'invalid_agent');
    expect(error.message).toMatch(/^agent 'clerk': skils is not a field of the definition; did you mean 'skills'\? /);
    expect(error.subject).toBe('skils');
  });

  it('defineAgent with a field of no known name at all: refused too, as nothing reads it', () => {
    expect(thrownBy(() => defineAgent({ name: 'clerk', instructions: 'Be kind.' } as never), DefinitionError, 'invalid_agent').message).toBe(
      "agent 'clerk': instructions is not a field of the definition (fields: name, description, schema, skills, routes, actions, registry)",
    );
  });

  it("defineAction({ needsAproval }): the action would have run without asking", () => {
    const error = thrownBy(() => defineAction({ name: 'pay', description: 'Pays', input: z.object({}), needsAproval: true, run: () => null } as never), DefinitionError, 'invalid_action');
    expect(error.message).toMatch(/^action 'pay': needsAproval is not a field of the definition; did you mean 'needsApproval'\? /);
    expect(error).toMatchObject({ action: 'pay', details: { field: 'needsAproval' } });
  });
});

describe('route targets of the wrong shape are refused when the agent or skill is defined, naming the route', () => {
  const noop = defineAction({ name: 'noop', description: 'Does nothing', input: z.object({ a: z.number().optional() }), run: (params) => params });
  it.each([
    ['a bare action name', 'noop', "route 'go' has a target that is neither { action } nor a handler function, got a string, 'noop' (write { action: 'noop' })"],
    ['params that are not an object', { action: 'noop', params: 5 }, "route 'go' has a target whose params are not an object, got 5"],
    ['a misspelled params', { action: 'noop', parms: { a: 1 } }, "route 'go' has a target whose parms is not a field of a target; did you mean 'params'? (fields: action, params, skill)"],
    ['an action that is neither a name nor an action', { action: 5 }, "route 'go' has a target whose action is not an action name or an action made by defineAction, got 5"],
    ['a skill that is not a name', { action: 'noop', skill: { name: 'desk' } }, "route 'go' has a target whose skill is not a skill name, got an object"],
  ])('%s', (_what, target, words) => {
    const route = { path: 'go', target } as never;
    expect(thrownBy(() => defineAgent({ name: 'clerk', actions: [noop], routes: [route] }), DefinitionError, 'invalid_route').message).toBe(`agent 'clerk': ${words}`);
    expect(thrownBy(() => defineSkill({ name: 'desk', actions: [noop], routes: [route] }), DefinitionError, 'invalid_skill').message).toBe(`skill 'desk': routes has an invalid route: ${words}`);
    const configured = defineSkill({ name: 'desk', actions: [noop], routes: () => [route] });
    expect(thrownBy(() => defineAgent({ name: 'clerk', skills: [configured] }), DefinitionError, 'invalid_route').message).toBe(`agent 'clerk': routes of skill 'desk': ${words}`);
  });

  it('a handler target and an action given by value are fine', async () => {
    const Clerk = defineAgent({ name: 'clerk', actions: [noop], routes: [{ path: 'go', target: { action: noop, params: { a: 1 } } }, { path: 'run', target: () => ({ action: 'noop' }) }] });
    expect(Clerk.routes().map((route) => route.path)).toEqual(['go', 'run']);
  });
});

describe('route guards that cannot decide are reported, not silently passed over', () => {
  it.each([
    ['an async guard', async () => true, "guard of route 'job.run' returned a promise (guards decide synchronously), not true or false; the route is passed over"],
    ['a guard that forgot to return', () => undefined, "guard of route 'job.run' returned undefined, not true or false; the route is passed over"],
    ['a guard returning a truthy number', () => 1, "guard of route 'job.run' returned number, not true or false; the route is passed over"],
  ])('%s: no match, and a guard_failed error naming the route', (_what, guard, message) => {
    const router = createRouter<string>([
      { path: 'job.run', target: 'guarded', match: guard as unknown as () => boolean },
      { path: 'job.*', target: 'fallback' },
    ]);
    const routed = router.route(createSignal('job.run'));
    expect(routed).toEqual({ ok: true, matches: [expect.objectContaining({ target: 'fallback' })], guardErrors: [{ code: 'guard_failed', message, subject: 'job.run' }] });
  });

  it('a guard returning false is a plain no match: nothing reported', () => {
    const router = createRouter<string>([{ path: 'job.run', target: 'guarded', match: () => false }]);
    expect(router.route('job.run')).toMatchObject({ ok: false, error: { code: 'no_route' }, guardErrors: [] });
  });
});

describe('effects with values of the wrong type say what they got', () => {
  const scheduling = (delay: unknown) =>
    defineAgent({
      name: 'planner',
      actions: [
        defineAction({
          name: 'later',
          description: 'Schedules a reminder',
          input: z.object({}),
          run: () => result('planned', { effects: [Effects.schedule(delay as number, createSignal('reminder'))] }),
        }),
      ],
    });

  it.each([
    ['10', "a string, '10'"],
    [{ ms: 10 }, 'an object'],
    [-1, '-1'],
  ])('a schedule effect with delay %j: invalid_effect, the state unchanged', async (delay, got) => {
    const Planner = scheduling(delay);
    const before = Planner.new();
    const ran = await cmd(before, { action: 'later' });
    expect(ran.agent).toBe(before);
    expect(ran.effects).toEqual([
      expect.objectContaining({
        type: 'error',
        error: expect.objectContaining({
          code: 'invalid_effect',
          message: `action 'later' returned an invalid effect at index 0: effect 'schedule' needs a delay in milliseconds (a finite number >= 0), got ${got}`,
        }),
      }),
    ]);
  });
});

describe("createSignal's options", () => {
  it("a misspelled option is refused, naming it and the one meant: the signal would have had the default source", () => {
    const error = thrownBy(() => createSignal('orders.created', {}, { sourc: 'shop' } as never), SignalError, 'invalid_options');
    expect(error.message).toBe("signal 'orders.created': unknown option 'sourc'; did you mean 'source'? (createSignal options are: source, subject, id, time, datacontenttype)");
    expect(error.subject).toBe('sourc');
  });

  it('options that are not an object are refused', () => {
    expect(thrownBy(() => createSignal('orders.created', {}, 'shop' as never), SignalError, 'invalid_options').message).toBe(
      "signal 'orders.created': createSignal takes an options object such as { source }, got string",
    );
  });

  it('every known option is taken', () => {
    const signal = createSignal('orders.created', { id: 1 }, { source: 'shop', subject: 'order-1', id: 'sig-1', time: '2026-01-01T00:00:00.000Z', datacontenttype: 'application/json' });
    expect(signal).toEqual({ specversion: '1.0', id: 'sig-1', source: 'shop', type: 'orders.created', time: '2026-01-01T00:00:00.000Z', subject: 'order-1', data: { id: 1 }, datacontenttype: 'application/json' });
  });
});

describe('huge inputs', () => {
  it('a router of 100,000 routes finds the one a signal names, and removes it', () => {
    const router = createRouter<number>(Array.from({ length: 100_000 }, (_, i) => ({ path: `tenant${i % 100}.event${i}`, target: i })));
    expect(router.size).toBe(100_000);
    const routed = router.route('tenant99.event99999');
    expect(routed.ok && routed.matches.map((match) => match.target)).toEqual([99_999]);
    expect(router.remove('tenant99.event99999')).toBe(1);
    expect(router.route('tenant99.event99999')).toMatchObject({ ok: false, error: { code: 'no_route' } });
  });

  it('a 10 MB string param runs through cmd and lands in state whole', async () => {
    const notes = z.object({ text: z.string().default('') });
    const write = defineAction({ name: 'write', description: 'Keeps a text', input: z.object({ text: z.string() }), state: notes, run: ({ text }) => result(text.length, { state: { text } }) });
    const Writer = defineAgent({ name: 'writer', skills: [defineSkill({ name: 'pad', schema: notes, actions: [write] })] });
    const text = 'x'.repeat(10 * 1024 * 1024);
    const ran = await cmd(Writer.new(), { action: 'write', params: { text } });
    expect(ran.effects).toEqual([]);
    expect(ran.agent.state.pad!.text.length).toBe(text.length);
  });
});
