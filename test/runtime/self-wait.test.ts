/**
 * A step never waits for its own agent: what it submits to its own agent is queued behind it. A
 * `mount` or `unmount` is waited for as a `call` is — at most its timeout (the system's
 * `callTimeout` by default), until its `AbortSignal` aborts — so an action awaiting its own agent
 * fails instead of keeping the agent busy for good, and the agent answers afterwards. A caller
 * that stops waiting leaves its item queued: the mount is still applied in its turn.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { AgentRef, AgentSystem } from '../../src/index.js';
import { createSignal, defineAction, defineAgent, defineSkill, notebook, result, systemPerTest, z } from './fixtures.js';

const systems = systemPerTest();

/** Skills to mount and unmount: nothing but their names. */
const extra = defineSkill({ name: 'extra', actions: [] });
const spare = defineSkill({ name: 'spare', actions: [] });

/** Refs by agent id, so an action can reach its own agent's ref. */
const refs = new Map<string, AgentRef<object>>();

const SELF_WAITS = {
  mount: (self: AgentRef<object>) => self.mount(extra),
  unmount: (self: AgentRef<object>) => self.unmount('spare'),
  call: (self: AgentRef<object>) => self.call(createSignal('notes.add_now', { item: 'from inside' })),
} as const;

/** `wait_on_self` awaits its own agent (after going async), as a plausible mistake would. */
const SelfWaiter = defineAgent({
  name: 'self_waiter',
  skills: [
    notebook,
    spare,
    defineSkill({
      name: 'self_waiting',
      actions: [
        defineAction({
          name: 'wait_on_self',
          description: 'Awaits a mount, an unmount or a call on its own agent',
          input: z.object({ how: z.enum(['mount', 'unmount', 'call']) }),
          run: async ({ how }, { agentId }) => {
            await Promise.resolve();
            return result(await SELF_WAITS[how](refs.get(agentId)!));
          },
        }),
      ],
      routes: [{ path: 'self.wait', target: { action: 'wait_on_self' } }],
    }),
  ],
});

function spawnSelfWaiter(system: AgentSystem, id: string): AgentRef<object> {
  const ref = system.spawn(SelfWaiter, { id }) as AgentRef<object>;
  refs.set(id, ref);
  return ref;
}

/**
 * An agent whose steps for `slow.hold` (and `slow.hold_again`) wait until `release()` (and
 * `releaseAgain()`): what is submitted meanwhile waits behind them.
 */
function holdingAgent(system: AgentSystem, id: string) {
  let release!: () => void;
  let releaseAgain!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const heldAgain = new Promise<void>((resolve) => (releaseAgain = resolve));
  const Holder = defineAgent({
    name: 'holder',
    skills: [
      notebook,
      defineSkill({
        name: 'slow',
        actions: [
          defineAction({ name: 'hold', description: 'Waits until released', input: z.object({}), run: async () => result(await held.then(() => 'released')) }),
          defineAction({ name: 'hold_again', description: 'Waits until released again', input: z.object({}), run: async () => result(await heldAgain.then(() => 'released again')) }),
        ],
        routes: [
          { path: 'slow.hold', target: { action: 'hold' } },
          { path: 'slow.hold_again', target: { action: 'hold_again' } },
        ],
      }),
    ],
  });
  const ref = system.spawn(Holder, { id });
  return {
    ref,
    hold: () => ref.call(createSignal('slow.hold'), { timeout: Infinity }),
    holdAgain: () => ref.call(createSignal('slow.hold_again'), { timeout: Infinity }),
    release,
    releaseAgain,
  };
}

/** What a timeout adds when the whole wait was spent behind one step, under way when the item was sent. */
const behind = (step: string) =>
  `: it waited all along behind the step for signal '${step}', under way when it was sent. A step that awaits its own agent waits for itself: from inside a step, return result(output, { mount, unmount }) or a run effect, or send without awaiting`;

const mountedNames = (ref: AgentRef<object>) => ref.getSnapshot().mounted.map((skill) => skill.name);

describe('an action that awaits its own agent', () => {
  it.each(['mount', 'unmount', 'call'] as const)('fails at the timeout when it awaits its own %s, and the agent answers afterwards', async (how) => {
    const system = systems.start({ callTimeout: 50 });
    const self = spawnSelfWaiter(system, `self_${how}`);
    const failed = await self.call(createSignal('self.wait', { how }), { timeout: Infinity }).then(
      () => undefined,
      (error: unknown) => error,
    );
    const what = { mount: "mount 'extra'", unmount: "unmount 'spare'", call: "call 'notes.add_now'" }[how];
    expect(failed).toMatchObject({ code: 'action_failed', action: 'wait_on_self', message: `action 'wait_on_self' failed: ${what} to agent 'self_${how}' got no answer within 50 ms${behind('self.wait')}` });
    // The item it waited for was queued behind the failed step: it runs next, and the agent answers.
    await expect(self.call(createSignal('notes.list'), { timeout: Infinity })).resolves.toEqual({ items: how === 'call' ? ['from inside'] : [] });
    expect(mountedNames(self)).toEqual(how === 'mount' ? ['notebook', 'spare', 'self_waiting', 'extra'] : how === 'unmount' ? ['notebook', 'self_waiting'] : ['notebook', 'spare', 'self_waiting']);
    expect(self.status).toBe('idle');
  });
});

describe('mount and unmount are waited for as a call is', () => {
  it('a mount whose caller times out is still applied in its turn, and so is an unmount', async () => {
    const system = systems.start();
    const { ref, hold, release } = holdingAgent(system, 'busy');
    const holding = hold();
    await expect(ref.mount(extra, undefined, { timeout: 10 })).rejects.toMatchObject({ code: 'timeout', message: `mount 'extra' to agent 'busy' got no answer within 10 ms${behind('slow.hold')}` });
    await expect(ref.unmount('notebook', { timeout: 10 })).rejects.toMatchObject({ code: 'timeout', message: `unmount 'notebook' to agent 'busy' got no answer within 10 ms${behind('slow.hold')}` });
    expect(mountedNames(ref)).toEqual(['notebook', 'slow']);
    release();
    await expect(holding).resolves.toBe('released');
    // Both waited behind the step; a call queued after them finds them applied.
    await expect(ref.call(createSignal('slow.nothing')).catch((error: { code: string }) => error.code)).resolves.toBe('no_route');
    expect(mountedNames(ref)).toEqual(['slow', 'extra']);
  });

  it('a timeout says nothing of the step ahead when the wait was spent behind more than one', async () => {
    const system = systems.start();
    const { ref, hold, holdAgain, release, releaseAgain } = holdingAgent(system, 'busy');
    const holding = hold();
    const holdingAgain = holdAgain();
    const mounting = ref.mount(extra, undefined, { timeout: 100 });
    release();
    await expect(holding).resolves.toBe('released');
    await expect(mounting).rejects.toMatchObject({ code: 'timeout', message: "mount 'extra' to agent 'busy' got no answer within 100 ms" });
    releaseAgain();
    await expect(holdingAgain).resolves.toBe('released again');
  });

  it('the system’s callTimeout is the default wait of a mount', async () => {
    const system = systems.start({ callTimeout: 10 });
    const { ref, hold, release } = holdingAgent(system, 'busy');
    const holding = hold();
    await expect(ref.mount(extra)).rejects.toMatchObject({ code: 'timeout', message: `mount 'extra' to agent 'busy' got no answer within 10 ms${behind('slow.hold')}` });
    release();
    await holding;
  });

  it('a mount whose signal aborts is cancelled for its caller, applied in its turn, and leaves no listener', async () => {
    const system = systems.start();
    const { ref, hold, release } = holdingAgent(system, 'busy');
    const holding = hold();
    const controller = new AbortController();
    const mounting = ref.mount(extra, undefined, { signal: controller.signal });
    const unmounting = ref.unmount('extra', { signal: controller.signal });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(2);
    controller.abort(new Error('no longer needed'));
    await expect(mounting).rejects.toMatchObject({ code: 'cancelled', message: "mount 'extra' to agent 'busy' was cancelled by its caller", details: { reason: 'no longer needed' } });
    await expect(unmounting).rejects.toMatchObject({ code: 'cancelled' });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    release();
    await holding;
    // Mounted, then unmounted again, in mailbox order: mounting it now changes something.
    await expect(ref.mount(extra)).resolves.toMatchObject({ skill: 'extra', changed: true });
    expect(mountedNames(ref)).toEqual(['notebook', 'slow', 'extra']);
  });

  it('a mount given a signal already aborted is refused at once and never applied', async () => {
    const system = systems.start();
    const ref = system.spawn(defineAgent({ name: 'plain', skills: [notebook] }), { id: 'plain' });
    await expect(ref.mount(extra, undefined, { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'cancelled' });
    await expect(ref.call(createSignal('notes.list'))).resolves.toEqual({ items: [] });
    expect(mountedNames(ref)).toEqual(['notebook']);
  });

  it.each([
    ['a misspelled option', { timout: 5 }, "unknown option 'timout'; did you mean 'timeout'? (mount options are: timeout, signal)"],
    ['a timeout of 0', { timeout: 0 }, 'timeout must be a number of milliseconds above 0, or Infinity for none; got 0'],
    ['a signal that is not an AbortSignal', { signal: 'stop' }, 'signal must be an AbortSignal (for example from new AbortController().signal)'],
  ])('refuses %s with invalid_options, before anything is queued', async (_case, options, message) => {
    const system = systems.start();
    const ref = system.spawn(defineAgent({ name: 'plain', skills: [notebook] }), { id: 'plain' });
    await expect(ref.mount(extra, undefined, options as never)).rejects.toMatchObject({ code: 'invalid_options', message });
    await expect(ref.unmount('notebook', options as never)).rejects.toMatchObject({ code: 'invalid_options', message: message.replace('mount options', 'unmount options') });
    expect(mountedNames(ref)).toEqual(['notebook']);
  });
});
