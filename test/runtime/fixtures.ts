/**
 * Skills and agents the runtime tests share: real actions (sync and async), real hooks, real
 * XState child logic that can be told to crash.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'libsql';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { fromCallback } from 'xstate';
import { z } from 'zod';
import {
  Decision,
  Effects,
  createAgentSystem,
  createSignal,
  defineAction,
  defineAgent,
  defineSkill,
  fail,
  result,
  type AgentSystem,
  type AgentSystemOptions,
} from '../../src/index.js';

export const notes = z.object({ items: z.array(z.string()).default([]) });

/** Appends to a list; `delay` makes it async; `explode` makes it throw. */
export const append = defineAction({
  name: 'append',
  description: 'Append an item to the list',
  input: z.object({ item: z.string(), delay: z.number().int().min(0).optional(), explode: z.boolean().optional() }),
  state: notes,
  run: async ({ item, delay, explode }, { skillState }) => {
    if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
    if (explode) throw new Error(`exploded on '${item}'`);
    const items = [...skillState.items, item];
    return result({ count: items.length }, { state: { items } });
  },
});

/** The same, synchronously. */
export const appendNow = defineAction({
  name: 'append_now',
  description: 'Append an item to the list, synchronously',
  input: z.object({ item: z.string() }),
  state: notes,
  run: ({ item }, { skillState }) => {
    const items = [...skillState.items, item];
    return result({ count: items.length }, { state: { items } });
  },
});

export const listItems = defineAction({
  name: 'list_items',
  description: 'List the items',
  input: z.object({}),
  state: notes,
  run: (_params, { skillState }) => ({ items: skillState.items }),
});

export const refuse = defineAction({
  name: 'refuse',
  description: 'Always fails with a reason',
  input: z.object({}),
  run: () => fail('refused', 'this action always refuses'),
});

export const notebook = defineSkill({
  name: 'notebook',
  schema: notes,
  actions: [append, appendNow, listItems, refuse],
  routes: [
    { path: 'notes.add', target: { action: 'append' } },
    { path: 'notes.add_now', target: { action: 'append_now' } },
    { path: 'notes.list', target: { action: 'list_items' } },
    { path: 'notes.refuse', target: { action: 'refuse' } },
  ],
});

/** A child that crashes when told to, and counts its starts in `starts`. */
export function crashableChild(starts: { count: number }) {
  return fromCallback<{ type: 'crash' } | { type: 'ping' }>(({ receive }) => {
    starts.count++;
    receive((event) => {
      if (event.type === 'crash') throw new Error('child crashed on purpose');
    });
    return () => {};
  });
}

/**
 * A system whose unhandled errors and diagnostics go nowhere, and whose calls wait as long as the
 * answer takes: on a loaded machine a burst of signals can take longer than the default 5 s call
 * timeout, so only the tests about timeouts set one.
 */
export function quietSystem(options: AgentSystemOptions = {}) {
  return createAgentSystem({ onUnhandledError: () => {}, onUnhandledDiagnostic: () => {}, callTimeout: Infinity, ...options });
}

export const NotesAgent = defineAgent({ name: 'notes_agent', skills: [notebook] });

const later = z.object({ fired: z.array(z.string()).default([]) });

/** An agent that schedules reminders (`later.set` { text, inMs }), records those that fell due, and listens to `news.*`. */
export const Reminder = defineAgent({
  name: 'reminder_agent',
  skills: [
    defineSkill({
      name: 'later',
      schema: later,
      actions: [
        defineAction({
          name: 'set',
          description: 'Schedule a reminder',
          input: z.object({ text: z.string(), inMs: z.number().int().min(0) }),
          run: ({ text, inMs }) => result(null, { effects: [Effects.schedule(inMs, createSignal('later.due', { text }))] }),
        }),
        defineAction({
          name: 'due',
          description: 'A reminder fell due',
          input: z.object({ text: z.string() }),
          state: later,
          run: ({ text }, { skillState }) => result(null, { state: { fired: [...skillState.fired, text] } }),
        }),
      ],
      routes: [
        { path: 'later.set', target: { action: 'set' } },
        { path: 'later.due', target: { action: 'due' } },
      ],
      signalPatterns: ['news.*'],
    }),
  ],
});

/** The reminders of a `Reminder` agent that fell due, in order. */
export function firedOf(agent: { getSnapshot(): { state: unknown } }): string[] {
  return (agent.getSnapshot().state as { later: { fired: string[] } }).later.fired;
}

export { Decision, Effects, createSignal, defineAction, defineAgent, defineSkill, result, z };

/** What `fn` throws (undefined when it does not throw). */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

/**
 * Collects what escapes to Node as an uncaught exception or an unhandled rejection while a test
 * file runs; call at the top level of the file, assert `toEqual([])` after each test.
 */
export function collectEscapes(hooks: { beforeAll(fn: () => void): void; afterAll(fn: () => void): void }): unknown[] {
  const escaped: unknown[] = [];
  const onEscape = (error: unknown) => escaped.push(error);
  hooks.beforeAll(() => {
    process.on('uncaughtException', onEscape);
    process.on('unhandledRejection', onEscape);
  });
  hooks.afterAll(() => {
    process.off('uncaughtException', onEscape);
    process.off('unhandledRejection', onEscape);
  });
  return escaped;
}

/** The notebook's items of an agent. */
export function itemsOf(agent: { getSnapshot(): { state: unknown } }): string[] {
  return (agent.getSnapshot().state as { notebook: { items: string[] } }).notebook.items;
}

/** Waits for timers and microtasks queued so far (real time, a few milliseconds). */
export function settleDown(ms = 5): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Temporary folders for one test file, each removed after the test that made it: `folder()` a new
 * one, `database()` the path of `agents.db` in a new one.
 */
export function tempFolders(prefix: string): { folder(): Promise<string>; database(): Promise<string> } {
  const made: string[] = [];
  afterEach(async () => {
    for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
  });
  const folder = async () => {
    const dir = await mkdtemp(join(tmpdir(), `skillstate-${prefix}-`));
    made.push(dir);
    return dir;
  };
  return { folder, database: async () => join(await folder(), 'agents.db') };
}

/** Every row of the SQLite file at `path` (opened read-only), in the order they were first written: id and snapshot text. */
export function rowTexts(path: string): Map<string, string> {
  const db = new Database(path, { readonly: true });
  try {
    const found = db.prepare('SELECT id, snapshot FROM agents ORDER BY rowid').all() as Array<{ id: string; snapshot: string }>;
    return new Map(found.map((row) => [row.id, row.snapshot]));
  } finally {
    db.close();
  }
}

/**
 * Systems that live for one test: call at the top level of a test file, then `systems.start()`
 * (a quiet system) in a test. After each test every system started is shut down, and nothing may
 * have escaped to Node as an uncaught exception or unhandled rejection.
 */
export function systemPerTest(): { start(options?: AgentSystemOptions): AgentSystem } {
  const escaped = collectEscapes({ beforeAll, afterAll });
  const started: AgentSystem[] = [];
  afterEach(async () => {
    for (const system of started.splice(0)) await system.shutdown();
    await settleDown();
    expect(escaped).toEqual([]);
  });
  return {
    start(options = {}) {
      const system = quietSystem(options);
      started.push(system);
      return system;
    },
  };
}

/** A database file of the SQLite store's schema that refuses, by a trigger, to write the agent `refused`: its error says "agent <refused> is refused here". */
export function refusingDatabase(path: string, refused: string): void {
  const db = new Database(path);
  db.exec(`CREATE TABLE agents (id TEXT PRIMARY KEY, parent TEXT, definition TEXT NOT NULL, snapshot TEXT NOT NULL, saved_at INTEGER NOT NULL) STRICT;
    CREATE TRIGGER refuse BEFORE INSERT ON agents WHEN NEW.id = '${refused}' BEGIN SELECT RAISE(ABORT, 'agent ${refused} is refused here'); END;
    PRAGMA user_version = 1;`);
  db.close();
}
