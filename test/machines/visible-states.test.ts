/**
 * What a person watching the inspector sees: the agent machine's states (starting, idle,
 * stepping) and each skill lifecycle going inactive → activating → active → deactivating →
 * inactive, through the inspection events XState reports for real actors.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InspectionEvent } from 'xstate';
import { describe, expect, it } from 'vitest';
import { createSqliteStore, type TraceRecord } from '../../src/index.js';
import { z } from 'zod';
import { arithmetic } from '../../skills/index.js';
import { createSignal, defineAction, defineAgent, defineSkill, Effects, NotesAgent, result, systemPerTest } from '../runtime/fixtures.js';

const systems = systemPerTest();

/** The state values an actor went through, microstep by microstep, as the inspector saw them (repeats folded). */
function watch(): { inspect: (event: InspectionEvent) => void; states(systemId: string): string[] } {
  const seen = new Map<string, string[]>();
  return {
    inspect: (event) => {
      if (event.type !== '@xstate.microstep' && event.type !== '@xstate.snapshot') return;
      const actor = event.actorRef as unknown as { systemId?: string; id: string };
      const id = actor.systemId ?? actor.id;
      const value = (event.snapshot as { value?: unknown }).value;
      if (typeof value !== 'string') return;
      const list = seen.get(id) ?? [];
      if (list.at(-1) !== value) list.push(value);
      seen.set(id, list);
    },
    states: (systemId) => seen.get(systemId) ?? [],
  };
}

describe('visible states', () => {
  it('a skill mounted at run time goes inactive → activating → active, deactivating → inactive on unmount, and back', async () => {
    const watched = watch();
    const system = systems.start({ inspect: watched.inspect });
    const agent = system.spawn(NotesAgent, { id: 'ada' });
    await agent.mount(arithmetic);
    await agent.unmount('arithmetic');
    await agent.mount(arithmetic);
    expect(watched.states('ada/skills/arithmetic')).toEqual(['inactive', 'activating', 'active', 'deactivating', 'inactive', 'activating', 'active']);
    // A skill the agent was spawned with is active from the start.
    expect(watched.states('ada/skills/notebook')).toEqual(['active']);
    // Snapshots record only the states a lifecycle rests in.
    expect(agent.persist().lifecycles).toEqual({ notebook: 'active', arithmetic: 'active' });
  });

  it('an agent is idle between items (through sync steps) and stepping while an async step is pending', async () => {
    const watched = watch();
    const system = systems.start({ inspect: watched.inspect });
    const agent = system.spawn(NotesAgent, { id: 'bob' });
    await agent.call(createSignal('notes.add_now', { item: 'sync' }));
    await agent.call(createSignal('notes.add', { item: 'async', delay: 5 }));
    expect(watched.states('bob')).toEqual(['idle', 'stepping', 'idle']);
    expect(agent.actor.getSnapshot().value).toBe('idle');
  });

  it('an agent that asks to stop itself goes stopping → stopped; one stopped from outside goes to stopped', async () => {
    const watched = watch();
    const system = systems.start({ inspect: watched.inspect });
    const quitter = defineSkill({
      name: 'quitter',
      actions: [defineAction({ name: 'quit', description: 'Stops the agent', input: z.object({}), run: () => result({ bye: true }, { effects: [Effects.stop({ reason: 'done' })] }) })],
      routes: [{ path: 'quit', target: { action: 'quit' } }],
    });
    const dave = system.spawn(defineAgent({ name: 'quitting', skills: [quitter] }), { id: 'dave' });
    await dave.call(createSignal('quit'));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(watched.states('dave')).toEqual(['idle', 'stopping', 'stopped']);
    expect(dave.actor.getSnapshot().status).toBe('stopped');
    const erin = system.spawn(NotesAgent, { id: 'erin' });
    await erin.stop();
    expect(watched.states('erin')).toEqual(['idle', 'stopped']);
  });

  it('an idle agent passivated goes idle → passivated, and wakes as a new actor of the same id, idle', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'skillstate-visible-'));
    try {
      const watched = watch();
      const passivated: string[] = [];
      let told: () => void = () => {};
      const trace = (record: TraceRecord) => {
        if (record.kind === 'passivate' && 'agent' in record) {
          passivated.push(record.agent);
          told();
        }
      };
      const store = createSqliteStore({ path: join(dir, 'agents.db') });
      const system = systems.start({ inspect: watched.inspect, store, trace, passivate: { idleMs: 20 } });
      const agent = system.spawn(NotesAgent, { id: 'fay' });
      await agent.call(createSignal('notes.add_now', { item: 'before' }));
      await new Promise<void>((resolve) => (told = resolve));
      expect(passivated).toEqual(['fay']);
      expect(watched.states('fay')).toEqual(['idle', 'passivated']);
      await agent.call(createSignal('notes.add_now', { item: 'after' }));
      expect(watched.states('fay')).toEqual(['idle', 'passivated', 'idle']);
      expect(agent.actor.getSnapshot().value).toBe('idle');
      await system.shutdown();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('an agent stopped by a listener while its step is being finished still ends in stopped', async () => {
    const watched = watch();
    const system = systems.start({ inspect: watched.inspect });
    const announcer = defineSkill({
      name: 'announcer',
      actions: [defineAction({ name: 'announce', description: 'Emits a signal', input: z.object({}), run: () => result('said', { effects: [Effects.emit(createSignal('announced'))] }) })],
      routes: [{ path: 'announce', target: { action: 'announce' } }],
    });
    const frank = system.spawn(defineAgent({ name: 'announcing', skills: [announcer] }), { id: 'frank' });
    const stopped: Promise<void>[] = [];
    system.subscribe('announced', () => stopped.push(frank.stop()));
    await expect(frank.call(createSignal('announce'))).resolves.toBe('said');
    expect(stopped).toHaveLength(1);
    await Promise.all(stopped);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(frank.actor.getSnapshot().status).toBe('stopped');
    expect(watched.states('frank')).toEqual(['idle', 'stopped']);
  });

  it('an agent whose skills have mount hooks is starting until they have run', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slowStart = defineSkill({ name: 'slow_start', schema: z.object({ ready: z.boolean().default(false) }), mount: async () => { await gate; return { state: { ready: true } }; } });
    const watched = watch();
    const system = systems.start({ inspect: watched.inspect });
    const agent = system.spawn(defineAgent({ name: 'hooked', skills: [slowStart] }), { id: 'carol' });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(agent.actor.getSnapshot().value).toBe('stepping');
    release();
    await agent.call(createSignal('anything.at.all')).catch(() => undefined);
    expect(watched.states('carol')).toEqual(['starting', 'stepping', 'idle']);
    expect((agent.getSnapshot().state as { slow_start: { ready: boolean } }).slow_start.ready).toBe(true);
  });
});
