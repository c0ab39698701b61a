/**
 * An idle agent's sync step is taken as a direct transition (`machines/agent.ts`, `directly`),
 * and any other step is begun there and left to XState. Each scenario here runs twice, once as
 * the runtime runs it and once with every step taken by XState's own statechart algorithm, and
 * what a user can see must be the same: the inspection stream (events, microsteps, snapshots of
 * the agent and its lifecycles), the errors reported, the answers, the agent's snapshots.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AnyStateMachine, InspectionEvent } from 'xstate';
import { agentMachine, startingAgentMachine } from '../../machines/agent.js';
import type { AgentRef, AgentSystem, AgentSystemOptions, TraceRecord } from '../../src/index.js';
import { chatMessage, createSqliteStore, discoverSkills } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { assistant, next } from '../model/fixtures.js';
import { EXAMPLE_SKILLS_DIR } from '../../src/manifest/discover.js';
import { toPlain } from '../../src/viewer/messages.js';
import { Effects, Reminder, createSignal, defineAction, defineAgent, defineSkill, firedOf, notebook, quietSystem, result, tempFolders, z } from '../runtime/fixtures.js';

const databaseFile = tempFolders('direct-transitions').database;

let systems: AgentSystem[] = [];
afterEach(async () => {
  for (const system of systems) await system.shutdown();
  systems = [];
});

/** Random ids (of signals, turns) and times differ from run to run: the same text with each replaced. */
function steady(text: string): string {
  return text.replace(/"[A-Za-z0-9_-]{21}"/g, '"<id>"').replace(/"\d{4}-\d\d-\d\dT[\d:.]+Z"/g, '"<time>"');
}

/** A value as the scenario notes it: plain JSON data, ids and times replaced. */
function noted(value: unknown): unknown {
  return value === undefined ? value : (JSON.parse(steady(JSON.stringify(value))) as unknown);
}

/** A snapshot as the projection shows it: the state, and the agent's skill state when it is an agent's. */
function shown(snapshot: unknown): string {
  const { value, status, context } = (snapshot ?? {}) as { value?: unknown; status?: string; context?: { busy?: boolean; agent?: { state?: unknown; mounted?: Array<{ name: string }> } } };
  const agent = context?.agent;
  const inner = Array.isArray(agent?.mounted) ? ` busy=${String(context!.busy)} ${JSON.stringify(agent.state)} [${agent.mounted.map((record) => record.name).join(',')}]` : '';
  return steady(`${JSON.stringify(value)}/${String(status)}${inner}`);
}

/** An inspection event as a line of text: no session ids, signal ids or times, which differ from run to run. */
function line(event: InspectionEvent): string | undefined {
  // The system's own actor is named by its session id, which counts every actor made so far.
  const id = (event.actorRef as { id?: string }).id;
  const actor = id !== undefined && /^x:\d+$/.test(id) ? 'system' : id;
  const signal = 'event' in event ? (event.event as { signal?: { type: string } } | undefined)?.signal : undefined;
  const item = 'event' in event && event.event ? `${event.event.type}${signal ? `(${signal.type})` : ''}` : '';
  switch (event.type) {
    case '@xstate.event':
      return `event ${actor} ${item}`;
    case '@xstate.microstep': {
      const taken = (event as { _transitions?: Array<{ source: { key: string }; eventType: string; target?: unknown[] }> })._transitions ?? [];
      return `microstep ${actor} ${item} [${taken.map((t) => `${t.source.key}:${t.eventType}${t.target?.length ? '>' : ''}`).join(',')}] ${shown(event.snapshot)}`;
    }
    case '@xstate.snapshot':
      // The snapshot whole, as the viewers receive it.
      return `snapshot ${actor} ${item} ${steady(JSON.stringify(toPlain(event.snapshot)))}`;
    case '@xstate.actor':
      return `actor ${actor}`;
    case '@xstate.action':
      return `action ${actor} ${event.action.type}`;
    default:
      return undefined;
  }
}

/** What a scenario shows a user: the inspection stream, the trace, the errors reported, and what the scenario noted. */
interface Seen {
  inspected: string[];
  traced: string[];
  errors: string[];
  noted: unknown[];
}

/** What a scenario is given: its system, a way to note what it sees, and a wait for the next trace record of a kind for an agent. */
interface Run {
  system: AgentSystem;
  note(value: unknown): void;
  next(kind: TraceRecord['kind'], agent: string): Promise<void>;
}

type Scenario = (run: Run) => Promise<void>;

/** The options of a scenario's system, made anew for each run (a store is one run's). */
type Options = () => AgentSystemOptions | Promise<AgentSystemOptions>;

async function watch(scenario: Scenario, options: Options): Promise<Seen> {
  const seen: Seen = { inspected: [], traced: [], errors: [], noted: [] };
  const waiting: Array<{ kind: string; agent: string; resolve(): void }> = [];
  const system = quietSystem({
    ...(await options()),
    inspect: (event) => {
      const text = line(event);
      if (text !== undefined) seen.inspected.push(text);
    },
    trace: (record) => {
      const agent = 'agent' in record ? record.agent : '';
      seen.traced.push(`${record.kind} ${agent} ${'item' in record ? record.item : ''} ${'subject' in record ? record.subject : ''} ${'ok' in record ? String(record.ok) : ''} ${'state' in record ? record.state : ''}`);
      for (const waiter of [...waiting]) {
        if (waiter.kind !== record.kind || waiter.agent !== agent) continue;
        waiting.splice(waiting.indexOf(waiter), 1);
        waiter.resolve();
      }
    },
    onUnhandledError: (error) => void seen.errors.push(`${error.code}: ${error.message}`),
  });
  systems.push(system);
  await scenario({ system, note: (value) => seen.noted.push(noted(value)), next: (kind, agent) => new Promise((resolve) => waiting.push({ kind, agent, resolve })) });
  await system.shutdown();
  return seen;
}

/** Runs `scenario` with every step taken by XState's own algorithm: the machines' own `transition`, not the direct one. */
async function throughXState(scenario: Scenario, options: Options): Promise<Seen> {
  const machines = [agentMachine, startingAgentMachine] as AnyStateMachine[];
  const direct = machines.map((machine) => machine.transition);
  for (const machine of machines) delete (machine as { transition?: unknown }).transition;
  try {
    return await watch(scenario, options);
  } finally {
    machines.forEach((machine, at) => (machine.transition = direct[at]!));
  }
}

/** The scenario run both ways gives the same: returns what it showed. */
async function same(scenario: Scenario, options: Options = () => ({})): Promise<Seen> {
  const reference = await throughXState(scenario, options);
  const directly = await watch(scenario, options);
  expect(directly).toEqual(reference);
  return directly;
}

/** The outcome of a call, as the caller sees it. */
async function outcome(promise: Promise<unknown>): Promise<unknown> {
  try {
    return { ok: await promise };
  } catch (error) {
    return { error: `${(error as { code?: string }).code}: ${(error as Error).message}` };
  }
}

const flags = z.object({ log: z.array(z.string()).default([]) });

/** Sync or async as asked, each step; can stop its own agent (sync part), mount or unmount a skill by its result. */
const maybe = defineAction({
  name: 'maybe',
  description: 'appends to the log, async when asked',
  input: z.object({ entry: z.string(), async: z.boolean().default(false), stop: z.boolean().default(false), quit: z.boolean().default(false), shutdown: z.boolean().default(false), then: z.string().optional(), mount: z.string().optional(), unmount: z.string().optional() }),
  state: flags,
  run: ({ entry, async, stop, quit, shutdown, then, mount, unmount }, { skillState, agentId }) => {
    if (stop) void systemOf.get(agentId)!.stop(agentId);
    if (shutdown) void systemOf.get(agentId)!.shutdown();
    const done = result(entry, { state: { log: [...skillState.log, entry] }, effects: [...(then ? [Effects.run('maybe', { entry: then })] : []), ...(quit ? [Effects.stop()] : [])], ...(mount ? { mount: [skillsByName[mount]!] } : {}), ...(unmount ? { unmount: [unmount] } : {}) });
    return async ? Promise.resolve(done) : done;
  },
});
const thrower = defineAction({
  name: 'thrower',
  description: 'throws',
  input: z.object({ async: z.boolean().default(false) }),
  run: ({ async }) => {
    if (async) return Promise.reject(new Error('thrown on purpose'));
    throw new Error('thrown on purpose');
  },
});
const logging = defineSkill({
  name: 'logging',
  schema: flags,
  actions: [maybe, thrower],
  routes: [
    { path: 'log', target: { action: 'maybe' } },
    { path: 'throw', target: { action: 'thrower' } },
  ],
  signalPatterns: ['log'],
  transformResult: (signal, output) => (signal.type === 'log' && typeof output === 'string' ? output.toUpperCase() : output),
});
const desk = z.object({ waiting: z.array(z.string()).default([]) });
/** A help desk: asked, it answers later (`defer_reply`); given an answer, it gives it to the oldest question. */
const helpDesk = defineSkill({
  name: 'desk',
  schema: desk,
  actions: [
    defineAction({
      name: 'desk',
      description: 'asks, or answers the oldest question',
      input: z.object({ answer: z.string().optional() }),
      state: desk,
      run: ({ answer }, { skillState, signal }) => {
        if (answer === undefined) return result({ queued: true }, { state: { waiting: [...skillState.waiting, signal!.id] }, effects: [Effects.deferReply()] });
        const [first, ...waiting] = skillState.waiting;
        return result({ answered: first ?? null }, { state: { waiting }, effects: first ? [Effects.reply(answer, {}, { to: first })] : [] });
      },
    }),
  ],
  routes: [{ path: 'desk', target: { action: 'desk' } }],
});

/** Sends to its own agent and to agent 'b' from inside the step, in its sync part or after an await. */
const relaying = defineSkill({
  name: 'relaying',
  actions: [
    defineAction({
      name: 'relay',
      description: 'sends to itself and to b',
      input: z.object({ async: z.boolean() }),
      run: async ({ async }, { agentId }) => {
        if (async) await Promise.resolve();
        const system = systemOf.get(agentId)!;
        system.get(agentId)!.send(createSignal('log', { entry: `to self (${String(async)})` }));
        system.get('b')!.send(createSignal('log', { entry: `to b (${String(async)})` }));
        void system.get('b')!.call(createSignal('log', { entry: `call b (${String(async)})`, async: true }));
        return 'relayed';
      },
    }),
  ],
  routes: [{ path: 'relay', target: { action: 'relay' } }],
});

/** A skill whose mount hook runs: agents defined with it start `starting`. */
const hooked = defineSkill({ name: 'hooked', schema: z.object({ mounted: z.number().default(0) }), mount: ({ state }) => ({ state: { mounted: state.mounted + 1 } }) });

const skillsByName: Record<string, typeof hooked> = { hooked };

/** The system each agent is in (an action reaches its own system through it). */
const systemOf = new Map<string, AgentSystem>();

function spawn(system: AgentSystem, id: string, skills: Parameters<typeof defineAgent>[0]['skills'] = [logging, notebook]): AgentRef {
  systemOf.set(id, system);
  return system.spawn(defineAgent({ name: `agent_${id}`, skills }), { id });
}

describe("an agent's steps, direct or through XState", () => {
  it('sync, async and sometimes-async steps in a row, with answers through transformResult: the same stream and snapshots', async () => {
    const seen = await same(async ({ system, note }) => {
      const agent = spawn(system, 'a');
      const observed: unknown[] = [];
      agent.actor.subscribe((snapshot) => observed.push(toPlain(snapshot)));
      for (const [entry, async] of [['one', false], ['two', true], ['three', false], ['four', false], ['five', true], ['six', true], ['seven', false]] as const) {
        note(await outcome(agent.call(createSignal('log', { entry, async }))));
      }
      const burst = ['b1', 'b2', 'b3', 'b4'].map((entry, at) => outcome(agent.call(createSignal('log', { entry, async: at % 2 === 1 }))));
      note(await Promise.all(burst));
      // What a subscriber of the agent's actor saw, snapshot by snapshot.
      note(observed);
      note(agent.persist());
      note(agent.actor.getPersistedSnapshot());
      const snapshot = agent.actor.getSnapshot();
      const probe = { type: 'signal', signal: createSignal('log', { entry: 'probe' }) } as const;
      note({ json: JSON.parse(JSON.stringify(snapshot)) as unknown, can: snapshot.can(probe), idle: snapshot.matches('idle'), tagged: snapshot.hasTag('idle'), meta: snapshot.getMeta() });
    });
    expect(seen.noted[0]).toEqual({ ok: 'ONE' });
    // One snapshot a sync step; three an async one (its item, `step.pending`, its commit).
    expect(seen.noted[8]).toHaveLength(6 * 1 + 5 * 3);
    expect(seen.inspected).toContain('microstep a signal(log) [idle:signal] "idle"/active busy=false {"logging":{"log":["one"]},"notebook":{"items":[]}} [logging,notebook]');
  });

  it('a step whose user code throws, sync or async: the same errors and stream', async () => {
    const seen = await same(async ({ system, note }) => {
      const agent = spawn(system, 'a');
      note(await outcome(agent.call(createSignal('throw', { async: false }))));
      note(await outcome(agent.call(createSignal('throw', { async: true }))));
      note(await outcome(agent.call(createSignal('log', { entry: 'after' }))));
    });
    expect(seen.noted).toEqual([expect.objectContaining({ error: expect.stringContaining('thrown on purpose') }), expect.objectContaining({ error: expect.stringContaining('thrown on purpose') }), { ok: 'AFTER' }]);
  });

  it('an action that stops its own agent, in a sync step, an async one, and one that mounts a skill: nothing reported, the same stream', async () => {
    for (const how of [{}, { async: true }, { mount: 'hooked' }]) {
      const seen = await same(
        async ({ system, note }) => {
          const agent = spawn(system, 'k');
          note(await outcome(agent.call(createSignal('log', { entry: 'first' }))));
          note(await outcome(agent.call(createSignal('log', { entry: 'last', stop: true, ...how }))));
          note(agent.actor.getSnapshot().status);
        },
        () => ({ skills: [hooked] }),
      );
      expect(seen.errors, JSON.stringify(how)).toEqual([]);
      expect(seen.noted, JSON.stringify(how)).toEqual([{ ok: 'FIRST' }, { error: "agent_stopped: agent 'k' stopped (stopped by request) before answering" }, 'stopped']);
    }
  });

  it('a step that shuts its system down, sync or async, and one whose run effect steps again: the same stream', async () => {
    for (const async of [false, true]) {
      const seen = await same(async ({ system, note }) => {
        const agent = spawn(system, 's');
        note(await outcome(agent.call(createSignal('log', { entry: 'first', then: 'by its run effect', async }))));
        note(await outcome(agent.call(createSignal('log', { entry: 'last', shutdown: true, async }))));
        note(agent.actor.getSnapshot().status);
      });
      expect(seen.errors).toEqual([]);
      // A call's answer is the output of the last action its step ran.
      expect(seen.noted[0]).toEqual({ ok: 'BY ITS RUN EFFECT' });
    }
  });

  it('mounts and unmounts, by the step itself and by the items, with mount hooks and a starting agent: the same stream', async () => {
    await same(
      async ({ system, note }) => {
        const agent = spawn(system, 'm', [logging, hooked]);
        note(await outcome(agent.call(createSignal('log', { entry: 'one' }))));
        note(await outcome(agent.unmount('hooked')));
        note(await outcome(agent.call(createSignal('log', { entry: 'two', mount: 'hooked' }))));
        note(await outcome(agent.call(createSignal('log', { entry: 'three', unmount: 'hooked', async: true }))));
        note(await outcome(agent.mount('hooked')));
        note(await outcome(agent.mount('hooked')));
        note(await outcome(agent.mount('nowhere')));
        note(await outcome(agent.call(createSignal('log', { entry: 'four' }))));
        note(agent.persist());
      },
      () => ({ skills: [hooked] }),
    );
  });

  it('emits, stops by effect and sends from listeners to the same agent and to another: the same stream', async () => {
    await same(async ({ system, note }) => {
      const a = spawn(system, 'a');
      const b = spawn(system, 'b');
      system.subscribe('noted', (signal) => {
        note(`heard ${JSON.stringify(signal.data)}`);
        if ((signal.data as { item: string }).item === 'x') void a.send(createSignal('log', { entry: 'from listener' }));
      });
      note(await outcome(a.call(createSignal('notes.add_now', { item: 'x' }))));
      a.actor.subscribe((snapshot) => {
        if (snapshot.context.agent.state && (snapshot.context.agent.state as { logging: { log: string[] } }).logging.log.length === 2) void b.send(createSignal('log', { entry: 'from subscriber' }));
      });
      note(await outcome(a.call(createSignal('log', { entry: 'second' }))));
      note(await outcome(b.call(createSignal('log', { entry: 'b own' }))));
      note(await outcome(b.run([{ action: 'maybe', params: { entry: 'by run' } }])));
      note(await outcome(b.call(createSignal('log', { entry: 'bye', quit: true }))));
      note(await outcome(b.call(createSignal('log', { entry: 'after bye' }))));
      note(a.persist());
    });
  });

  it('an item sent to the actor directly goes back through the mailbox and is taken once: the same stream', async () => {
    const seen = await same(async ({ system, note }) => {
      const agent = spawn(system, 'd');
      agent.actor.send({ type: 'signal', signal: createSignal('log', { entry: 'direct' }) });
      agent.actor.send({ type: 'signal', signal: createSignal('log', { entry: 'direct async', async: true }) });
      note(await outcome(agent.call(createSignal('log', { entry: 'called' }))));
      note((agent.getSnapshot().state as { logging: { log: string[] } }).logging.log);
    });
    expect(seen.noted.at(-1)).toEqual(['direct', 'direct async', 'called']);
  });

  it('a passivated agent wakes on use and steps on: the same stream and trace', async () => {
    const seen = await same(
      async ({ system, note, next }) => {
        const agent = spawn(system, 'p');
        note(await outcome(agent.call(createSignal('log', { entry: 'before' }))));
        await next('passivate', 'p');
        note(agent.status);
        note(await outcome(agent.call(createSignal('log', { entry: 'woken' }))));
        note(await outcome(agent.call(createSignal('log', { entry: 'woken async', async: true }))));
        note(await outcome(agent.call(createSignal('log', { entry: 'after' }))));
        note(agent.persist());
      },
      async () => ({ store: createSqliteStore({ path: await databaseFile() }), passivate: { idleMs: 20 } }),
    );
    expect(seen.noted.slice(0, 3)).toEqual([{ ok: 'BEFORE' }, 'passivated', { ok: 'WOKEN' }]);
  });

  it("a durable system writing each step, and an agent restored from a snapshot: the same stream, answers and rows", async () => {
    await same(
      async ({ system, note }) => {
        const agent = spawn(system, 'w', [logging, notebook, hooked]);
        for (const [entry, async] of [['one', false], ['two', true], ['three', false]] as const) note(await outcome(agent.call(createSignal('log', { entry, async }))));
        note(await outcome(agent.unmount('hooked')));
        note(await outcome(agent.call(createSignal('log', { entry: 'four', mount: 'hooked' }))));
        const snapshot = agent.persist();
        await agent.stop();
        const restored = system.restore(snapshot);
        note(await outcome(restored.call(createSignal('log', { entry: 'restored' }))));
        note(await outcome(restored.call(createSignal('log', { entry: 'restored async', async: true }))));
        await system.flush();
        note(restored.persist());
      },
      async () => ({ store: createSqliteStore({ path: await databaseFile() }), durability: 'step', skills: [hooked], definitions: [] }),
    );
  });

  it('scheduled signals firing, deferred replies answered by a later step, and a model tool call: the same stream', async () => {
    const seen = await same(async ({ system, note, next }) => {
      const reminder = system.spawn(Reminder, { id: 'r' });
      note(await outcome(reminder.call(createSignal('later.set', { text: 'soon', inMs: 1 }))));
      await next('step', 'r');
      note(firedOf(reminder));
      const desk = spawn(system, 'desk', [logging, helpDesk]);
      const asked = outcome(desk.call(createSignal('desk', {}, { id: 'question-1' })));
      note(await outcome(desk.call(createSignal('log', { entry: 'meanwhile' }))));
      note(await outcome(desk.call(createSignal('desk', { answer: 'forty-two' }))));
      note(await asked);
      note(await outcome(desk.callTool('maybe', { entry: 'by tool' })));
      note(await outcome(desk.callTool('maybe', { entry: 'by tool, async', async: true })));
      note(desk.persist());
    });
    expect(seen.noted.slice(0, 5)).toEqual([{ ok: null }, ['soon'], { ok: 'MEANWHILE' }, { ok: { answered: 'question-1' } }, { ok: 'forty-two' }]);
  });

  it("user code that sends to its own agent and to another, from a step's sync and async parts: the same stream", async () => {
    await same(async ({ system, note }) => {
      const a = spawn(system, 'a', [logging, notebook, relaying]);
      spawn(system, 'b');
      note(await outcome(a.call(createSignal('relay', { async: false }))));
      note(await outcome(a.call(createSignal('relay', { async: true }))));
      note(await outcome(a.call(createSignal('log', { entry: 'last' }))));
      note(a.persist().agent.state);
      note(system.get('b')!.persist().agent.state);
    });
  });

  it('a document skill mounted by name is loaded first, then mounted: the same stream', async () => {
    const seen = await same(
      async ({ system, note }) => {
        const agent = spawn(system, 'doc');
        note(await outcome(agent.call(createSignal('log', { entry: 'before' }))));
        const mounted = outcome(agent.mount('csv-tools'));
        const after = outcome(agent.call(createSignal('log', { entry: 'behind the load' })));
        note(await mounted);
        note(await after);
        note(await outcome(agent.unmount('csv-tools')));
        note(await outcome(agent.mount('csv-tools')));
        note(agent.getSnapshot().mounted.map((record) => record.name));
      },
      // A registry of its own for each run: a registry keeps the skills it loaded.
      async () => ({ resolvers: [await discoverSkills({ bundled: EXAMPLE_SKILLS_DIR })] }),
    );
    expect(seen.inspected.filter((text) => text.startsWith('microstep doc ')).slice(1, 4)).toEqual([
      expect.stringMatching(/^microstep doc mount \[idle:mount\] "idle"\/active busy=true /),
      expect.stringMatching(/^microstep doc step.pending \[idle:step.pending>\] "stepping"/),
      expect.stringMatching(/^microstep doc xstate.done.actor.step \[stepping:xstate.done.actor.step>\] "idle"\/active busy=false .*\[logging,notebook,csv-tools\]$/),
    ]);
  });

  it("a model's turn whose tool calls run as items, one of them waiting for an approval: the same stream", async () => {
    const seen = await same(
      async ({ system, note }) => {
        const agent = system.spawn(assistant(), { id: 'ada' });
        const asked = next(system, 'chat.turn.approval');
        const answered = next(system, 'chat.turn.answered');
        const pending = outcome(agent.call(chatMessage('Pay Bob 5, then tell me the balance')));
        note((await asked).data);
        agent.send(createSignal('chat.approve', { toolCallId: 'pay-1' }));
        note((await answered).data);
        note(await pending);
        note((agent.getSnapshot().state as { ledger: unknown }).ledger);
      },
      () => ({
        models: {
          default: scriptedModel([
            { toolCalls: [{ tool: 'balance', args: {}, id: 'balance-1' }, { tool: 'pay', args: { to: 'Bob', amount: 5 }, id: 'pay-1' }] },
            { toolCalls: [{ tool: 'balance', args: {}, id: 'balance-2' }] },
            { text: 'Paid Bob 5; 5 paid in all.' },
          ]),
        },
      }),
    );
    expect(seen.noted.at(-1)).toEqual({ paid: [{ to: 'Bob', amount: 5 }], audits: 0 });
  });
});
