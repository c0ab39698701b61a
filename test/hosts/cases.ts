/**
 * Behaviour every host of the engine must show, written once against a small host interface and
 * run against the in-process system and the Restate host (one case table, two hosts). Only
 * behaviour a user sees through spawn / send / call / mount / unmount and the agent's state: no
 * in-process details (actors, traces, diagnostics), no Restate details (journals, keys).
 */
import { expect } from 'vitest';
import { Effects, createSignal } from '../../src/index.js';

/** An agent as a case reaches it. */
export interface HostAgent {
  send(type: string, data?: unknown): Promise<void>;
  call(type: string, data?: unknown): Promise<unknown>;
  mount(skill: string): Promise<void>;
  unmount(skill: string): Promise<void>;
  state(): Promise<Record<string, unknown>>;
}

/** A host serving the agents of test/restate/agents.ts. */
export interface Host {
  spawn(definition: string, options: { id: string; state?: Record<string, unknown> }): Promise<HostAgent>;
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

/** The cases: a name and a body taking the host and an id unique to the run. */
export const HOST_CASES: readonly [string, (host: Host, id: string) => Promise<void>][] = [
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
];
