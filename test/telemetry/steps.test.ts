/**
 * An agent's steps as OpenTelemetry spans: names, attributes and parents, with a real tracer
 * provider; and the trace following signals from agent to agent.
 */
import { trace, type Span } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentSystem, Signal } from '../../src/index.js';
import { Effects, createSignal, defineAction, defineAgent, defineSkill, notebook, quietSystem, result, z } from '../runtime/fixtures.js';
import { recordSpans } from './fixtures.js';

let system: AgentSystem;
afterEach(async () => {
  await system?.shutdown();
});

const NotesAgent = defineAgent({ name: 'notes_agent', skills: [notebook] });

/** Emits a signal of the first type of `path` (carrying the rest), and tells `arrived` the type it took. */
export function relay(arrived: (type: string) => void) {
  return defineAction({
    name: 'relay',
    description: 'Pass the signal on',
    input: z.object({ path: z.array(z.string()).default([]) }),
    run: ({ path }, ctx) => {
      arrived(ctx.signal?.type ?? '');
      const [next, ...rest] = path;
      return result('passed', next ? { effects: [Effects.emit(createSignal(next, { path: rest }))] } : {});
    },
  });
}

/** An agent that relays signals of type `path`. */
export function hop(name: string, path: string, arrived: (type: string) => void = () => {}) {
  return defineAgent({ name, actions: [relay(arrived)], routes: [{ path, target: { action: 'relay' } }] });
}

describe('step spans', () => {
  it('a routed signal is a span named after its type, with the agent, the signal and the outcome', async () => {
    const recorded = recordSpans();
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    const signal = createSignal('notes.add_now', { item: 'x' });
    await agent.call(signal);
    const span = recorded.one('step notes.add_now');
    expect(span.attributes).toEqual({
      'skillstate.agent.id': 'n1',
      'skillstate.agent.definition': 'notes_agent',
      'skillstate.step.item': 'signal',
      'skillstate.signal.type': 'notes.add_now',
      'skillstate.signal.id': signal.id,
      'skillstate.signal.source': 'skillstate',
      'skillstate.step.outcome': 'ok',
    });
    expect(span.status.code).toBe(0);
    expect(span.instrumentationScope.name).toBe('skillstate');
  });

  it('a call made inside an active span continues it: the step is its child', async () => {
    const recorded = recordSpans();
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    await trace.getTracer('app').startActiveSpan('request', async (outer: Span) => {
      await agent.call(createSignal('notes.add', { item: 'x', delay: 1 }));
      agent.send(createSignal('notes.add_now', { item: 'y' }));
      outer.end();
    });
    const request = recorded.one('request');
    for (const name of ['step notes.add', 'step notes.add_now']) {
      const step = recorded.one(name);
      expect(recorded.parentOf(step)).toBe(request);
      expect(step.spanContext().traceId).toBe(request.spanContext().traceId);
    }
  });

  it('an action that fails: the span has status error and the error code as error.type', async () => {
    const recorded = recordSpans();
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    const failed = await agent.call(createSignal('notes.refuse')).catch((error: { code: string }) => error);
    const span = recorded.one('step notes.refuse');
    expect(span.status).toMatchObject({ code: 2, message: expect.stringContaining('this action always refuses') });
    expect(span.attributes['error.type']).toBe((failed as { code: string }).code);
    expect(span.attributes['skillstate.step.outcome']).toBe('error');
    expect(span.attributes['skillstate.step.effects']).toEqual(['error']);
  });

  it('an action that throws records the exception on the span', async () => {
    const recorded = recordSpans();
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    await agent.call(createSignal('notes.add', { item: 'x', explode: true })).catch(() => undefined);
    const span = recorded.one('step notes.add');
    expect(span.status.code).toBe(2);
    expect(span.events.map((event) => [event.name, event.attributes?.['exception.message']])).toContainEqual(['exception', "exploded on 'x'"]);
  });

  it("each call of user code in a step is the step's child span, named after what runs, ended when it settles", async () => {
    const recorded = recordSpans();
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    await agent.call(createSignal('notes.add_now', { item: 'x' }));
    await agent.call(createSignal('notes.add', { item: 'y', delay: 5 }));
    await agent.call(createSignal('notes.add', { item: 'z', explode: true })).catch(() => undefined);
    const [syncAction] = recorded.named("action 'append_now'");
    expect(recorded.parentOf(syncAction!)).toBe(recorded.one('step notes.add_now'));
    expect(syncAction!.attributes).toEqual({ 'skillstate.skill.name': 'notebook', 'skillstate.action.name': 'append_now' });
    const [settled, exploded] = recorded.named("action 'append'");
    // An async action's span lasts until its promise settles (it waited 5 ms).
    expect(settled!.duration[0] * 1e9 + settled!.duration[1]).toBeGreaterThanOrEqual(4e6);
    expect(settled!.status.code).toBe(0);
    expect(exploded!.status).toMatchObject({ code: 2, message: expect.stringContaining("exploded on 'z'") });
    expect(exploded!.events.map((event) => event.name)).toEqual(['exception']);
    for (const span of [settled!, exploded!]) expect(recorded.parentOf(span)?.name).toBe('step notes.add');
  });

  it('a step cut short by the agent stopping ends its span as stopped', async () => {
    const recorded = recordSpans();
    system = quietSystem();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const Waiting = defineAgent({ name: 'waiting', actions: [defineAction({ name: 'wait', description: 'Wait until released', input: z.object({}), run: async () => held })], routes: [{ path: 'wait', target: { action: 'wait' } }] });
    const waiting = system.spawn(Waiting, { id: 'w' });
    const answer = waiting.call(createSignal('wait')).catch((error: { code: string }) => error.code);
    await system.stop('w');
    release();
    await expect(answer).resolves.toBe('agent_stopped');
    const span = recorded.one('step wait');
    expect(span.attributes).toMatchObject({ 'skillstate.step.outcome': 'stopped', 'error.type': 'agent_stopped' });
  });

  it('a chain of three agents is one trace: each step the child of the step that emitted its signal', async () => {
    const recorded = recordSpans();
    system = quietSystem();
    let arrived!: () => void;
    const done = new Promise<void>((resolve) => (arrived = resolve));
    system.spawn(hop('first', 'chain.a'), { id: 'a' });
    system.spawn(hop('second', 'chain.b'), { id: 'b' });
    system.spawn(hop('third', 'chain.c', () => arrived()), { id: 'c' });
    await system.spawn(hop('starter', 'go'), { id: 's' }).call(createSignal('go', { path: ['chain.a', 'chain.b', 'chain.c'] }));
    await done;
    const go = recorded.one('step go');
    const [a, b, c] = ['step chain.a', 'step chain.b', 'step chain.c'].map((name) => recorded.one(name));
    expect(recorded.parentOf(a!)).toBe(go);
    expect(recorded.parentOf(b!)).toBe(a);
    expect(recorded.parentOf(c!)).toBe(b);
    expect([a, b, c].map((span) => span!.attributes['skillstate.agent.id'])).toEqual(['a', 'b', 'c']);
    expect(new Set(recorded.spans().map((span) => span.spanContext().traceId)).size).toBe(1);
  });

  it('an agent spawned by a step starts within it: its mount hooks are a child of the step', async () => {
    const recorded = recordSpans();
    system = quietSystem();
    let started!: () => void;
    const hooked = new Promise<void>((resolve) => (started = resolve));
    const Child = defineAgent({ name: 'child', skills: [defineSkill({ name: 'greeter', mount: () => started() })] });
    system.register(Child);
    const spawner = defineAction({ name: 'spawn_child', description: 'Spawn a child', input: z.object({}), run: () => result('spawned', { effects: [Effects.spawn('child', { id: 'kid' })] }) });
    await system.spawn(defineAgent({ name: 'parent', actions: [spawner], routes: [{ path: 'grow', target: { action: 'spawn_child' } }] }), { id: 'p' }).call(createSignal('grow'));
    await hooked;
    await new Promise<void>((resolve) => setImmediate(resolve));
    const start = recorded.one('step start');
    expect(start.attributes['skillstate.agent.id']).toBe('kid');
    expect(recorded.parentOf(start)).toBe(recorded.one('step grow'));
  });

  it('a signal arriving with a traceparent continues that trace', async () => {
    const recorded = recordSpans();
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await agent.call({ ...createSignal('notes.add_now', { item: 'x' }), traceparent });
    const span = recorded.one('step notes.add_now');
    expect(span.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(span.parentSpanContext).toMatchObject({ spanId: 'b7ad6b7169203331', isRemote: true });
    // A signal given as { type, data } keeps it too.
    await agent.call({ type: 'notes.add_now', data: { item: 'y' }, traceparent: '00-1af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } as Signal);
    expect(recorded.named('step notes.add_now').map((step) => step.spanContext().traceId)).toContain('1af7651916cd43dd8448eb211c80319c');
  });

  it('a malformed traceparent is ignored: the step starts a trace of its own', async () => {
    const recorded = recordSpans();
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    await agent.call({ ...createSignal('notes.add_now', { item: 'x' }), traceparent: '00-00000000000000000000000000000000-b7ad6b7169203331-01' });
    expect(recorded.one('step notes.add_now').parentSpanContext).toBeUndefined();
  });
});
