/**
 * Property tests: random interleavings of what users do to a running agent — fire-and-forget
 * sends, calls, runs of instructions, items sent to the actor directly, failing actions, bad
 * params, mounts and unmounts of optional skills (one with an async mount hook, one with a
 * supervised child), crashes of that child, stops — issued without waiting for one another.
 *
 * After every operation the agent invariants hold (`checkAgentInvariants`, listed in docs/architecture.md); at the end
 * nothing is lost and nothing reordered (the notebook holds exactly the accepted items, in the
 * order they were sent), every caller got the answer its item deserved, and persisting and
 * restoring the agent gives one that answers the same. Runs are few and short (bounded sizes,
 * delays of a millisecond or two), so the file stays fast.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentRef } from '../../src/index.js';
import { RuntimeError } from '../../src/index.js';
import { BoundedQueue } from '../../src/runtime/queue.js';
import { checkAgentInvariants } from '../../src/testing/index.js';
import { NotesAgent, collectEscapes, createSignal, crashableChild, defineAction, defineSkill, quietSystem, settleDown, z } from './fixtures.js';

const escaped = collectEscapes({ beforeAll, afterAll });

const ping = defineAction({ name: 'ping', description: 'answer pong', input: z.object({}), run: () => 'pong' });
const extra = defineSkill({ name: 'extra', actions: [ping], routes: [{ path: 'extra.ping', target: { action: 'ping' } }] });
const slowHook = defineSkill({
  name: 'slow_hook',
  schema: z.object({ ready: z.boolean().default(false) }),
  mount: async () => {
    await settleDown(1);
    return { state: { ready: true } };
  },
});
const worker = defineSkill({ name: 'worker', children: () => [{ id: 'loop', logic: crashableChild({ count: 0 }), maxRestarts: 2, withinMs: 60_000 }] });
const OPTIONAL = [extra, slowHook, worker];
const OPTIONAL_NAMES = OPTIONAL.map((skill) => skill.name);

type Op =
  | { kind: 'send' | 'call' | 'run' | 'direct'; item: string; async: boolean }
  | { kind: 'explode' | 'bad_params' | 'no_route'; async: boolean }
  | { kind: 'mount' | 'unmount'; skill: string }
  | { kind: 'crash' }
  | { kind: 'pause' };

const item = fc.string({ minLength: 1, maxLength: 4, unit: fc.constantFrom('a', 'b', 'c', 'd') });
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constantFrom('send' as const, 'call' as const, 'run' as const, 'direct' as const), item, async: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('explode' as const, 'bad_params' as const, 'no_route' as const), async: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('mount' as const, 'unmount' as const), skill: fc.constantFrom(...OPTIONAL_NAMES) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'crash' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'pause' as const }) },
);

/** What the caller of one operation must get. */
type Expectation = { ok: true; value?: unknown } | { ok: false; code: string };

/** Issues one operation without waiting; returns the caller's promise (if any) and what it must settle with. */
function issue(agent: AgentRef<object>, op: Op, accepted: string[], mounted: Set<string>): [Promise<unknown>, Expectation] | undefined {
  const add = (item: string, async: boolean) => (async ? createSignal('notes.add', { item, delay: 1 }) : createSignal('notes.add_now', { item }));
  switch (op.kind) {
    case 'send':
      agent.send(add(op.item, op.async));
      accepted.push(op.item);
      return undefined;
    case 'direct':
      agent.actor.send({ type: 'signal', signal: add(op.item, op.async) });
      accepted.push(op.item);
      return undefined;
    case 'call':
      accepted.push(op.item);
      return [agent.call(add(op.item, op.async)), { ok: true, value: { count: accepted.length } }];
    case 'run':
      accepted.push(op.item);
      return [agent.run(op.async ? { action: 'append', params: { item: op.item, delay: 1 } } : { action: 'append_now', params: { item: op.item } }), { ok: true, value: { count: accepted.length } }];
    case 'explode':
      return [agent.call(createSignal('notes.add', { item: 'boom', explode: true, delay: op.async ? 1 : 0 })), { ok: false, code: 'action_failed' }];
    case 'bad_params':
      return [agent.call(createSignal(op.async ? 'notes.add' : 'notes.add_now', { item: 42 })), { ok: false, code: 'invalid_params' }];
    case 'no_route':
      return [agent.call(createSignal('extra.ping')), mounted.has('extra') ? { ok: true, value: 'pong' } : { ok: false, code: 'no_route' }];
    case 'mount': {
      const changed = !mounted.has(op.skill);
      mounted.add(op.skill);
      return [agent.mount(OPTIONAL.find((skill) => skill.name === op.skill)!), { ok: true, value: expect.objectContaining({ skill: op.skill, changed }) }];
    }
    case 'unmount': {
      const changed = mounted.delete(op.skill);
      return [agent.unmount(op.skill), { ok: true, value: expect.objectContaining({ skill: op.skill, changed }) }];
    }
    case 'crash':
      agent.actor.system.get(`${agent.id}/skills/worker/loop`)?.send({ type: 'crash' });
      return undefined;
    case 'pause':
      return undefined;
  }
}

async function outcomeOf(promise: Promise<unknown>): Promise<Expectation> {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    if (!(error instanceof RuntimeError)) return { ok: false, code: `not a RuntimeError: ${String(error)}` };
    return { ok: false, code: error.code };
  }
}

describe('random interleavings of operations on one agent', () => {
  it('keep the invariants after every operation; nothing is lost or reordered; every caller gets its answer', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 25 }), async (ops) => {
        const system = quietSystem({ skills: OPTIONAL });
        try {
          const agent = system.spawn(NotesAgent, { id: 'p' });
          const accepted: string[] = [];
          const mounted = new Set<string>();
          const pending: [Promise<Expectation>, Expectation][] = [];
          for (const operation of ops) {
            // A list call waits behind everything sent so far: by then all of it is in, in order.
            if (operation.kind === 'pause') await expect(agent.call(createSignal('notes.list'))).resolves.toEqual({ items: accepted });
            const issued = issue(agent, operation, accepted, mounted);
            if (issued) pending.push([outcomeOf(issued[0]), issued[1]]);
            expect(checkAgentInvariants(agent, OPTIONAL_NAMES)).toEqual([]);
          }
          const outcomes = await Promise.all(pending.map(([outcome]) => outcome));
          expect(outcomes).toEqual(pending.map(([, expected]) => expected));
          await expect(agent.call(createSignal('notes.list'))).resolves.toEqual({ items: accepted });
          expect(agent.getSnapshot().mounted.map((record) => record.name).filter((name) => name !== 'notebook').sort()).toEqual([...mounted].sort());
          expect(checkAgentInvariants(agent, OPTIONAL_NAMES)).toEqual([]);

          // Persisted and restored in another system, it answers the same.
          const snapshot = JSON.parse(JSON.stringify(agent.persist()));
          const other = quietSystem({ skills: OPTIONAL, definitions: [NotesAgent] });
          try {
            const restored = other.restore(snapshot);
            expect(restored.getSnapshot()).toMatchObject({ state: agent.getSnapshot().state, lifecycles: agent.getSnapshot().lifecycles });
            expect(restored.getSnapshot().registeredActions.sort()).toEqual(agent.getSnapshot().registeredActions.sort());
            await expect(restored.call(createSignal('notes.add_now', { item: 'next' }))).resolves.toEqual(await agent.call(createSignal('notes.add_now', { item: 'next' })));
            expect(checkAgentInvariants(restored, OPTIONAL_NAMES)).toEqual([]);
          } finally {
            await other.shutdown();
          }
        } finally {
          await system.shutdown();
        }
      }),
      { numRuns: 40 },
    );
    expect(escaped).toEqual([]);
  });

  it('a stop at any point: every caller settles (answered, or agent_stopped), none hangs, nothing escapes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 15 }), fc.nat({ max: 15 }), async (ops, stopAt) => {
        const system = quietSystem({ skills: OPTIONAL, callTimeout: Infinity });
        try {
          const agent = system.spawn(NotesAgent, { id: 'p' });
          const accepted: string[] = [];
          const pending: Promise<Expectation>[] = [];
          for (const [index, operation] of ops.entries()) {
            if (index === stopAt) void agent.stop();
            if (operation.kind === 'pause') await settleDown(1);
            try {
              const issued = issue(agent, operation, accepted, new Set());
              if (issued) pending.push(outcomeOf(issued[0]));
            } catch (error) {
              expect(error).toMatchObject({ code: 'agent_stopped' });
            }
          }
          await agent.stop().catch(() => {});
          const outcomes = await Promise.all(pending);
          for (const outcome of outcomes) if (!outcome.ok) expect(outcome.code).not.toMatch(/^not a RuntimeError|^timeout$/);
          expect(agent.getSnapshot().status).toBe('stopped');
        } finally {
          await system.shutdown();
        }
      }),
      { numRuns: 40 },
    );
    await settleDown();
    expect(escaped).toEqual([]);
  });
});

describe('the mailbox ring buffer', () => {
  it('behaves as a bounded FIFO queue for any sequence of pushes and shifts', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.array(fc.oneof(fc.nat(), fc.constant(null)), { maxLength: 300 }), (capacity, script) => {
        const mailbox = new BoundedQueue<number>(capacity);
        const model: number[] = [];
        for (const step of script) {
          if (step === null) expect(mailbox.shift()).toBe(model.shift());
          else expect(mailbox.push(step)).toBe(model.length < capacity ? (model.push(step), true) : false);
          expect(mailbox.size).toBe(model.length);
        }
        expect(mailbox.drain()).toEqual(model);
        expect(mailbox.size).toBe(0);
      }),
    );
  });
});
