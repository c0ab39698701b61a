/** The system actor carries out the effects steps produce. */
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentSystem, Signal } from '../../src/index.js';
import { Effects, NotesAgent, createSignal, defineAction, defineAgent, notebook, quietSystem, result, z } from './fixtures.js';

let system: AgentSystem;
afterEach(async () => {
  await system?.shutdown();
});

/** An agent whose `do` action returns the effects given in the signal. */
const perform = defineAction({
  name: 'perform',
  description: 'Return the effects it is given',
  input: z.object({ effects: z.array(z.any()).default([]), output: z.unknown().optional() }),
  run: ({ effects, output }) => result(output ?? 'done', { effects }),
});
const Performer = defineAgent({ name: 'performer', actions: [perform], routes: [{ path: 'do', target: { action: 'perform' } }] });
const perform_ = (effects: unknown[]) => createSignal('do', { effects });

describe('effects', () => {
  it('emit: reaches subscribers whose pattern matches and every other agent whose routes match', async () => {
    system = quietSystem();
    const heard: string[] = [];
    system.subscribe('news.**', (signal) => heard.push(`news.**:${signal.type}`));
    system.subscribe('other.*', (signal) => heard.push(`other.*:${signal.type}`));
    const listener = system.spawn(defineAgent({ name: 'listener', skills: [notebook] }), { id: 'listener' });
    const performer = system.spawn(Performer, { id: 'performer' });
    await performer.call(perform_([Effects.emit(createSignal('news.sports.today')), Effects.emit(createSignal('notes.add_now', { item: 'from performer' }))]));
    expect(heard).toEqual(['news.**:news.sports.today']);
    expect(listener.getSnapshot().state).toEqual({ notebook: { items: ['from performer'] } });
  });

  it('emit: a signal nobody wants is reported as dropped, not lost silently', async () => {
    system = quietSystem();
    const diagnostics: string[] = [];
    system.onDiagnostic((d) => diagnostics.push(`${d.code}: ${d.message}`));
    await system.spawn(Performer, { id: 'p' }).call(perform_([Effects.emit(createSignal('into.the.void'))]));
    expect(diagnostics).toEqual(["dropped_signal: signal 'into.the.void' emitted by agent 'p' reached no subscriber and no agent"]);
  });

  it('emit: the emitter does not receive its own signal', async () => {
    system = quietSystem();
    const Echo = defineAgent({ name: 'echo', skills: [notebook], actions: [perform], routes: [{ path: 'do', target: { action: 'perform' } }] });
    const agent = system.spawn(Echo, { id: 'echo' });
    const other = system.spawn(NotesAgent, { id: 'other' });
    await agent.call(perform_([Effects.emit(createSignal('notes.add_now', { item: 'x' }))]));
    expect(agent.getSnapshot().state).toMatchObject({ notebook: { items: [] } });
    expect(other.getSnapshot().state).toEqual({ notebook: { items: ['x'] } });
  });

  it('spawn: starts a child agent of a known definition, linked to its parent', async () => {
    system = quietSystem({ definitions: [NotesAgent] });
    const parent = system.spawn(Performer, { id: 'parent' });
    await parent.call(perform_([Effects.spawn('notes_agent', { id: 'kid', state: { notebook: { items: ['born'] } } })]));
    expect(parent.children()).toEqual(['kid']);
    expect(system.get('kid')!.getSnapshot()).toMatchObject({ parent: 'parent', state: { notebook: { items: ['born'] } } });
    await parent.stop();
    expect(system.get('kid')).toBeUndefined();
  });

  it('spawn: an unknown definition is an error for the errors subscription, naming it', async () => {
    system = quietSystem();
    const errors: string[] = [];
    system.onError((error, agent) => errors.push(`${agent}: ${error.code}: ${error.message}`));
    await system.spawn(Performer, { id: 'p' }).call(perform_([Effects.spawn('nobody_knows_me')]));
    expect(errors).toEqual(["p: unknown_agent: agent 'p' asked to spawn definition 'nobody_knows_me', which this system does not know"]);
  });

  it('stop: stops the named agent, or the agent itself', async () => {
    system = quietSystem();
    const victim = system.spawn(NotesAgent, { id: 'victim' });
    const performer = system.spawn(Performer, { id: 'p' });
    await performer.call(perform_([Effects.stop({ agent: 'victim' })]));
    expect(victim.getSnapshot().status).toBe('stopped');
    await expect(performer.call(perform_([Effects.stop()]))).resolves.toBe('done');
    expect(performer.getSnapshot().status).toBe('stopped');
    expect(system.list()).toEqual([]);
  });

  it('stop: stops a child that an earlier effect of the same step spawned', async () => {
    system = quietSystem({ definitions: [NotesAgent] });
    const errors: string[] = [];
    system.onError((error, agent) => errors.push(`${agent}: ${error.code}: ${error.message}`));
    const performer = system.spawn(Performer, { id: 'p' });
    await performer.call(perform_([Effects.spawn('notes_agent', { id: 'w1' }), Effects.stop({ agent: 'w1' })]));
    await system.flush();
    expect(system.list().map((ref) => ref.id)).toEqual(['p']);
    expect(performer.children()).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('stop: stops a child that the step before it spawned, the two sent back to back', async () => {
    system = quietSystem({ definitions: [NotesAgent] });
    const errors: string[] = [];
    system.onError((error, agent) => errors.push(`${agent}: ${error.code}: ${error.message}`));
    const performer = system.spawn(Performer, { id: 'p' });
    performer.send(perform_([Effects.spawn('notes_agent', { id: 'w1' })]));
    await performer.call(perform_([Effects.stop({ agent: 'w1' })]));
    await system.flush();
    expect(system.list().map((ref) => ref.id)).toEqual(['p']);
    expect(errors).toEqual([]);
  });

  it('stop: an agent that is not running is an error for the errors subscription, naming it', async () => {
    system = quietSystem();
    const errors: string[] = [];
    system.onError((error, agent) => errors.push(`${agent}: ${error.code}: ${error.message}`));
    const victim = system.spawn(NotesAgent, { id: 'victim' });
    const performer = system.spawn(Performer, { id: 'p' });
    // The second stop of the victim finds it stopped by the first: its stop is done, nothing to say.
    await performer.call(perform_([Effects.stop({ agent: 'nobody' }), Effects.stop({ agent: 'victim' }), Effects.stop({ agent: 'victim' })]));
    await system.flush();
    expect(victim.getSnapshot().status).toBe('stopped');
    expect(errors).toEqual(["p: unknown_agent: agent 'p' asked to stop agent 'nobody', which is not running"]);
  });

  it('stop: an agent stopped by another before the step is over (with its parent, by itself) is no error', async () => {
    system = quietSystem({ definitions: [NotesAgent, Performer] });
    const errors: string[] = [];
    system.onError((error, agent) => errors.push(`${agent}: ${error.code}: ${error.message}`));
    const performer = system.spawn(Performer, { id: 'p' });
    const parent = system.spawn(Performer, { id: 'q' });
    const child = system.spawn(Performer, { id: 'qc', parent });
    await performer.call(perform_([Effects.stop({ agent: 'q' }), Effects.stop({ agent: 'qc' })]));
    const kid = system.spawn(Performer, { id: 'kid', parent: performer });
    await Promise.all([kid.call(perform_([Effects.stop()])), performer.call(perform_([Effects.stop({ agent: 'kid' })]))]);
    await system.flush();
    expect([parent.getSnapshot().status, child.getSnapshot().status, kid.getSnapshot().status]).toEqual(['stopped', 'stopped', 'stopped']);
    expect(errors).toEqual([]);
  });

  it('schedule: delivers the signal to the agent after the delay; cancelled when the agent stops', async () => {
    system = quietSystem();
    const Both = defineAgent({ name: 'both', skills: [notebook], actions: [perform], routes: [{ path: 'do', target: { action: 'perform' } }] });
    const agent = system.spawn(Both, { id: 'a' });
    await agent.call(perform_([Effects.schedule(15, createSignal('notes.add_now', { item: 'later' }))]));
    expect(agent.getSnapshot().state).toMatchObject({ notebook: { items: [] } });
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(agent.getSnapshot().state).toMatchObject({ notebook: { items: ['later'] } });

    const other = system.spawn(Both, { id: 'b' });
    const errors: unknown[] = [];
    system.onError((error) => errors.push(error));
    await other.call(perform_([Effects.schedule(15, createSignal('notes.add_now', { item: 'never' }))]));
    await other.stop();
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(errors).toEqual([]);
    expect(other.getSnapshot().state).toMatchObject({ notebook: { items: [] } });
  });

  it('error: goes to the caller and to the errors subscription', async () => {
    system = quietSystem();
    const errors: string[] = [];
    system.onError((error, agent) => errors.push(`${agent}: ${error.code}`));
    const agent = system.spawn(Performer, { id: 'p' });
    await expect(agent.call(perform_([Effects.error({ code: 'signal_failed', message: 'reported by the action' })]))).rejects.toMatchObject({
      code: 'signal_failed',
      message: 'reported by the action',
    });
    expect(errors).toEqual(['p: signal_failed']);
  });

  it('an invalid effect fails the step with invalid_effect and changes nothing', async () => {
    system = quietSystem();
    const agent = system.spawn(Performer);
    await expect(agent.call(perform_([{ type: 'teleport' }]))).rejects.toMatchObject({ code: 'invalid_effect', message: expect.stringContaining("unknown effect type 'teleport'") });
  });

  it('errors are also published as skillstate.error signals', async () => {
    system = quietSystem();
    const seen: Signal[] = [];
    system.subscribe('skillstate.error', (signal) => seen.push(signal));
    system.spawn(NotesAgent, { id: 'n' }).send(createSignal('no.route.here'));
    expect(seen).toEqual([expect.objectContaining({ type: 'skillstate.error', data: { agent: 'n', error: expect.objectContaining({ code: 'no_route' }) } })]);
  });
});

describe('effects at the edges', () => {
  const Both = defineAgent({ name: 'both', skills: [notebook], actions: [perform], routes: [{ path: 'do', target: { action: 'perform' } }] });
  const itemsOf = (agent: { getSnapshot(): { state: unknown } }) => (agent.getSnapshot().state as { notebook: { items: string[] } }).notebook.items;

  it('schedule with delay 0: delivered after the step, behind what was already waiting', async () => {
    system = quietSystem();
    const agent = system.spawn(Both, { id: 'a' });
    agent.send(perform_([Effects.schedule(0, createSignal('notes.add_now', { item: 'scheduled' }))]));
    agent.send(createSignal('notes.add_now', { item: 'sent' }));
    expect(itemsOf(agent)).toEqual(['sent']);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(itemsOf(agent)).toEqual(['sent', 'scheduled']);
  });

  it('schedule longer than a timer can hold (2^31 ms): not delivered at once, and cancelled when the agent stops', async () => {
    system = quietSystem();
    const errors: unknown[] = [];
    system.onError((error) => errors.push(error));
    const agent = system.spawn(Both, { id: 'a' });
    await agent.call(perform_([Effects.schedule(3_000_000_000, createSignal('notes.add_now', { item: 'in a month' }))]));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(itemsOf(agent)).toEqual([]);
    await agent.stop();
    expect(errors).toEqual([]);
  });

  it('emit to 1,000 agents: each gets the signal once, the emitter not at all', async () => {
    system = quietSystem();
    const listeners = Array.from({ length: 1000 }, (_, i) => system.spawn(NotesAgent, { id: `n${i}` }));
    const emitter = system.spawn(Both, { id: 'emitter' });
    await expect(emitter.call(perform_([Effects.emit(createSignal('notes.add_now', { item: 'hello' }))]))).resolves.toBe('done');
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(listeners.filter((agent) => itemsOf(agent).join() === 'hello')).toHaveLength(1000);
    expect(itemsOf(emitter)).toEqual([]);
  });

  it('spawn with an invalid state: the error names the definition and the problem, with its own code', async () => {
    system = quietSystem({ definitions: [NotesAgent] });
    const errors: string[] = [];
    system.onError((error) => errors.push(`${error.code}: ${error.message}`));
    await system.spawn(Performer, { id: 'p' }).call(perform_([Effects.spawn('notes_agent', { id: 'kid', state: { notebook: { items: 'nope' } } })]));
    await new Promise((resolve) => setTimeout(resolve, 1));
    expect(errors).toEqual([
      "invalid_state: agent 'p' could not spawn 'notes_agent': invalid state for skill 'notebook': items: Invalid input: expected array, received string",
    ]);
    expect(system.get('kid')).toBeUndefined();
  });

  it('two systems sharing one definition: an emit in one never reaches an agent of the other', async () => {
    system = quietSystem();
    const other = quietSystem();
    try {
      const here = system.spawn(NotesAgent, { id: 'same' });
      const there = other.spawn(NotesAgent, { id: 'same' });
      await system.spawn(Both, { id: 'emitter' }).call(perform_([Effects.emit(createSignal('notes.add_now', { item: 'local' }))]));
      await new Promise((resolve) => setTimeout(resolve, 1));
      expect([itemsOf(here), itemsOf(there)]).toEqual([['local'], []]);
    } finally {
      await other.shutdown();
    }
  });
});
