import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeError, StateError, createAgentSystem, createSignal, defineAgent, type AgentSystem } from '../../src/index.js';
import { NotesAgent, notebook, quietSystem, thrown, z } from './fixtures.js';

let system: AgentSystem;
afterEach(async () => {
  await system?.shutdown();
});

describe('createAgentSystem: spawning and finding agents', () => {
  it('spawns an agent as an XState actor whose context holds the namespaced skill state', () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    expect(agent.id).toBe('n1');
    expect(agent.definition).toBe('notes_agent');
    expect(agent.actor.getSnapshot().context.agent.state).toEqual({ notebook: { items: [] } });
    expect(agent.getSnapshot()).toMatchObject({ id: 'n1', status: 'idle', state: { notebook: { items: [] } }, lifecycles: { notebook: 'active' }, mailbox: 0 });
  });

  it('gives each agent a fresh id when none is given, and finds agents by id', () => {
    system = quietSystem();
    const a = system.spawn(NotesAgent);
    const b = system.spawn(NotesAgent);
    expect(a.id).not.toBe(b.id);
    expect(system.get(a.id)).toBe(a);
    expect(system.list()).toEqual([a, b]);
    expect(system.get('nobody')).toBeUndefined();
  });

  it('applies initial state over the defaults and refuses an invalid one with a StateError', () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent, { state: { notebook: { items: ['x'] } } });
    expect(agent.getSnapshot().state).toEqual({ notebook: { items: ['x'] } });
    expect(() => system.spawn(NotesAgent, { state: { notebook: { items: 'x' } } as never })).toThrow(StateError);
  });

  it('refuses a taken id and a parent that is not running, naming them', () => {
    system = quietSystem();
    system.spawn(NotesAgent, { id: 'same' });
    const taken = thrown(() => system.spawn(NotesAgent, { id: 'same' }));
    expect(taken).toBeInstanceOf(RuntimeError);
    expect((taken as RuntimeError).code).toBe('duplicate_agent');
    expect((taken as RuntimeError).message).toContain("'same'");
    expect(() => system.spawn(NotesAgent, { parent: 'ghost' })).toThrow(/parent agent 'ghost' is not running/);
  });

  it('refuses spawn options that are not an object, and starts nothing', () => {
    system = quietSystem();
    for (const [options, got] of [[null, 'null'], ['n1', 'string']] as const) {
      const error = thrown(() => system.spawn(NotesAgent, options as never));
      expect(error).toBeInstanceOf(RuntimeError);
      expect(error).toMatchObject({ code: 'invalid_agent', message: `spawn takes { id?, state?, parent? } as its options, got ${got}` });
    }
    expect(system.list()).toEqual([]);
  });

  it('refuses system options that are not an object, or out of range, naming the option', () => {
    expect(() => createAgentSystem(5 as never)).toThrow(expect.objectContaining({ name: 'DefinitionError', message: 'createAgentSystem takes an options object, got number' }));
    expect(() => createAgentSystem({ mailboxLimit: 0 })).toThrow('mailboxLimit must be a positive integer, got 0');
    expect(() => createAgentSystem({ callTimeout: -1 })).toThrow('callTimeout must be a number of milliseconds above 0 (or Infinity), got -1');
  });

  it('refuses two different definitions with the same name in one system', () => {
    system = quietSystem();
    system.spawn(NotesAgent);
    const impostor = defineAgent({ name: 'notes_agent', schema: z.object({ x: z.number().default(1) }) });
    expect(() => system.spawn(impostor)).toThrow(/a different agent definition named 'notes_agent'/);
  });

  it('keeps two systems in one process apart', () => {
    system = quietSystem();
    const other = quietSystem();
    system.spawn(NotesAgent, { id: 'only-here' });
    expect(other.get('only-here')).toBeUndefined();
    other.skills.register(notebook);
    expect(system.skills.has('notebook')).toBe(false);
    return other.shutdown();
  });
});

describe('stopping', () => {
  it('stops an agent and its children, and forgets them', async () => {
    system = quietSystem();
    const parent = system.spawn(NotesAgent, { id: 'parent' });
    const child = system.spawn(NotesAgent, { id: 'child', parent });
    const grandchild = system.spawn(NotesAgent, { id: 'grandchild', parent: 'child' });
    expect(parent.children()).toEqual(['child']);
    await system.stop('parent');
    expect(system.list()).toEqual([]);
    for (const ref of [parent, child, grandchild]) {
      expect(ref.getSnapshot().status).toBe('stopped');
      expect(ref.actor.getSnapshot().status).toBe('stopped');
    }
  });

  it('refuses signals to a stopped agent with agent_stopped, and stopping an unknown id with unknown_agent', async () => {
    system = quietSystem();
    const agent = system.spawn(NotesAgent);
    await agent.stop();
    expect(() => agent.send(createSignal('notes.list'))).toThrow(expect.objectContaining({ code: 'agent_stopped' }));
    await expect(agent.call(createSignal('notes.list'))).rejects.toMatchObject({ code: 'agent_stopped' });
    await expect(system.stop('ghost')).rejects.toMatchObject({ code: 'unknown_agent' });
  });

  it('shuts down: every agent stops and the system refuses new work', async () => {
    system = quietSystem();
    const a = system.spawn(NotesAgent);
    await system.shutdown();
    expect(a.getSnapshot().status).toBe('stopped');
    expect(system.actor.getSnapshot().status).toBe('stopped');
    expect(() => system.spawn(NotesAgent)).toThrow(expect.objectContaining({ code: 'agent_stopped' }));
  });
});

describe('errors nobody hears are still visible', () => {
  it('writes a failed send to the unhandled-error handler, naming the agent and the code', async () => {
    const heard: string[] = [];
    system = createAgentSystem({ onUnhandledError: (error, agent) => heard.push(`${agent}: ${error.code}`) });
    const agent = system.spawn(NotesAgent, { id: 'lonely' });
    agent.send(createSignal('nothing.routes.this'));
    expect(heard).toEqual(['lonely: no_route']);
  });

  it('goes to onError listeners (and not to the unhandled handler) when someone listens', () => {
    const unhandled: unknown[] = [];
    system = createAgentSystem({ onUnhandledError: (error) => unhandled.push(error) });
    const errors: string[] = [];
    system.onError((error, agent) => errors.push(`${agent}: ${error.code}: ${error.message}`));
    const agent = system.spawn(NotesAgent, { id: 'a' });
    agent.send(createSignal('notes.refuse'));
    expect(errors).toEqual(["a: action_failed: action 'refuse' failed: this action always refuses"]);
    expect(unhandled).toEqual([]);
  });
});
