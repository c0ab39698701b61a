/**
 * The public API's types: what a user gets from inference. `npm test` runs `tsc --noEmit` over
 * this file, so a wrong inference or a lost `@ts-expect-error` fails the run; vitest runs the
 * few runtime lines.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import {
  createAgentSystem,
  defineAction,
  defineAgent,
  defineSkill,
  mountSkill,
  result,
  RuntimeError,
  type ActionContext,
  type Agent,
  type AgentRef,
  type ErrorDetails,
  type ErrorInfo,
  type Signal,
  type SkillState,
} from '../src/index.js';
import { toolsForAgent, type FunctionTool } from '../src/core/tools.js';

const counterState = z.object({ count: z.number().int().default(0), step: z.number().int().default(1) });
const counterConfig = z.object({ initial: z.number().int().default(0) });

const increment = defineAction({
  name: 'increment',
  description: 'Add the step',
  input: z.object({ times: z.number().int().default(1), note: z.string().optional() }),
  state: counterState,
  run: (params, context) => {
    // Input as parsed: defaults filled in, optional fields optional.
    expectTypeOf(params).toEqualTypeOf<{ times: number; note?: string | undefined }>();
    expectTypeOf(context.skillState).toEqualTypeOf<{ count: number; step: number }>();
    expectTypeOf(context).toExtend<ActionContext<{ count: number; step: number }>>();
    const count = context.skillState.count + context.skillState.step * params.times;
    return result({ count }, { state: { count } });
  },
});

const counter = defineSkill({
  name: 'counter',
  schema: counterState,
  configSchema: counterConfig,
  initialState: (config) => {
    expectTypeOf(config).toEqualTypeOf<{ initial: number }>();
    return { count: config.initial };
  },
  actions: [increment],
});

const notes = defineSkill({ name: 'notes', stateKey: 'notebook', schema: z.object({ items: z.array(z.string()).default([]) }) });

const Assistant = defineAgent({
  name: 'assistant',
  schema: z.object({ mode: z.enum(['chat', 'batch']).default('chat') }),
  skills: [[counter, { initial: 3 }], notes],
});

type AssistantState = { mode: 'chat' | 'batch'; counter: { count: number; step: number }; notebook: { items: string[] } };

describe('types users get from inference', () => {
  it('an agent definition knows its state: its own schema and each skill slice under its state key', () => {
    const agent = Assistant.new();
    expectTypeOf(agent).toEqualTypeOf<Agent<AssistantState>>();
    expectTypeOf(agent.state.counter.count).toBeNumber();
    expectTypeOf(agent.state.notebook.items).toEqualTypeOf<string[]>();
    expectTypeOf(agent.state.mode).toEqualTypeOf<'chat' | 'batch'>();
    // @ts-expect-error the skill's state lives under its stateKey, not its name
    void agent.state.notes;
    expectTypeOf<SkillState<typeof counter>>().toEqualTypeOf<{ count: number; step: number }>();
    expectTypeOf(Assistant.skillState(agent, counter)).toEqualTypeOf<{ count: number; step: number } | undefined>();
  });

  it('cmd and mountSkill keep the agent type', async () => {
    const agent = Assistant.new();
    const ran = await Assistant.cmd(agent, { action: 'increment', params: { times: 2 } });
    expectTypeOf(ran.agent).toEqualTypeOf<Agent<AssistantState>>();
    expect(ran.agent.state.counter.count).toBe(5);
    const extra = defineSkill({ name: 'extra', schema: z.object({ hits: z.number().default(0) }) });
    const mounted = mountSkill(agent, extra);
    if (!mounted.ok) throw new Error(mounted.error.message);
    // The mounted skill's slice joins the agent's state type.
    expectTypeOf(mounted.agent.state.extra).toEqualTypeOf<{ hits: number }>();
    expectTypeOf(mounted.agent.state.counter.count).toBeNumber();
    expect(mounted.agent.state.extra).toEqual({ hits: 0 });
    expectTypeOf(toolsForAgent(agent)).toEqualTypeOf<FunctionTool[]>();
  });

  it('a running agent carries the same state type', async () => {
    const system = createAgentSystem();
    try {
      const ref = system.spawn(Assistant, { id: 'typed', state: { mode: 'batch' } });
      expectTypeOf(ref).toEqualTypeOf<AgentRef<AssistantState>>();
      expectTypeOf(ref.getSnapshot().state.counter.step).toBeNumber();
      expectTypeOf(ref.call).parameter(0).toExtend<Signal | string | { type: string; data?: unknown }>();
      expectTypeOf(ref.call).returns.resolves.toBeUnknown();
    } finally {
      await system.shutdown();
    }
  });

  it('refuses at compile time what would fail at run time', () => {
    defineAction({
      name: 'shout',
      description: 'Upper-case a number?',
      input: z.object({ n: z.number() }),
      // @ts-expect-error n is a number
      run: ({ n }) => n.toUpperCase(),
    });
    defineSkill({
      name: 'typed_init',
      schema: counterState,
      // @ts-expect-error count must be a number
      initialState: () => ({ count: 'zero' }),
    });
    // @ts-expect-error a skill's config is checked against its configSchema
    void (() => defineAgent({ name: 'bad_config', skills: [[counter, { initial: 'three' }]] }));
    const system = createAgentSystem();
    const ref = system.spawn(Assistant);
    // @ts-expect-error a skill mounted at run time has its config checked too
    void (() => ref.mount(counter, { initial: 'three' }));
    void (() => ref.mount('counter', { anything: 'goes by name' }));
    void system.shutdown();
    // @ts-expect-error spawn's state is checked against the agent's state
    void (() => createAgentSystem().spawn(Assistant, { state: { mode: 'sleepy' } }));
  });

  it("narrowing an error on its code types the code's details", () => {
    const errors: ErrorInfo[] = [
      { code: 'unknown_skill', message: 'cannot load', skill: 'notes', details: { reason: 'skill_unreadable' } },
      { code: 'mailbox_full', message: 'full', details: { capacity: 2 } },
      { code: 'no_route', message: 'no route' },
    ];
    const read = errors.map((error) => {
      if (error.code === 'unknown_skill') {
        expectTypeOf(error.details).toEqualTypeOf<{ reason: 'skill_unreadable' } | undefined>();
        return error.details?.reason;
      }
      if (error.code === 'mailbox_full') {
        expectTypeOf(error.details).toEqualTypeOf<{ capacity: number } | undefined>();
        return error.details?.capacity;
      }
      if (error.code === 'action_failed') expectTypeOf(error.details).toEqualTypeOf<{ reason: string; details?: Record<string, unknown> } | undefined>();
      if (error.code === 'no_route') expectTypeOf(error.details).toEqualTypeOf<undefined>();
      // @ts-expect-error not every code's details have a reason: narrow on the code first
      return error.details?.reason;
    });
    expect(read).toEqual(['skill_unreadable', 2, undefined]);
    expectTypeOf<ErrorDetails<'script_refused'>['reason']>().toEqualTypeOf<
      'absolute' | 'parent' | 'invalid' | 'escapes' | 'not_a_file' | 'missing' | 'no_root' | 'untrusted' | 'arguments' | 'no_interpreter'
    >();
    // @ts-expect-error a code's details are checked where the error is made
    void ({ code: 'mailbox_full', message: 'full', details: { capacity: 'two' } } satisfies ErrorInfo);
    // @ts-expect-error a code without details takes none
    void ({ code: 'no_route', message: 'none', details: { why: 'nothing matched' } } satisfies ErrorInfo);
    // @ts-expect-error a code that is not one
    void ({ code: 'approval_denied', message: 'no' } satisfies ErrorInfo);
  });

  it('a thrown error narrows on its code with is()', () => {
    const error: unknown = new RuntimeError({ code: 'cancelled', message: 'call cancelled', details: { reason: 'user left' } });
    if (!(error instanceof RuntimeError)) throw new Error('expected a RuntimeError');
    // @ts-expect-error before narrowing, details are any code's
    void error.details?.reason;
    if (!error.is('cancelled')) throw new Error(`expected a cancelled error, got ${error.code}`);
    expectTypeOf(error.details).toEqualTypeOf<{ reason: string } | undefined>();
    expectTypeOf(error.toInfo().code).toEqualTypeOf<'cancelled'>();
    expect(error.details?.reason).toBe('user left');
  });
});
