/**
 * Everything about saving agents and bringing them back: what a snapshot holds (`AgentSnapshot`),
 * taking one from a running agent, all agents at once (`persistAll`), reading one back for a
 * restore, restoring several (`restoreAll`), and where snapshots are kept.
 *
 * A snapshot is plain JSON: `snapshotCopy` copies a value as JSON carries it, and says where the
 * first value JSON cannot hold is, rather than letting `JSON.stringify` lose it or throw later.
 *
 * A store holds `AgentSnapshot`s by agent id; the in-memory store is the default, the file store
 * writes one JSON file per agent (atomically: write to a temporary file of its own, flush it, then
 * rename), so a crash never leaves half a snapshot, and saves of one agent through one store land
 * in the order they were made.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentDefinition } from '../core/agent-definition.js';
import type { Agent, MountedSkill } from '../core/agent-value.js';
import { errorInfo, toErrorInfo, type ErrorInfo } from '../core/errors.js';
import { extraArguments } from '../core/options.js';
import { isPlainObject } from '../core/plain.js';
import { toSignal, type Signal } from '../core/signal.js';
import { SKILL_NAME, type AnySkill } from '../core/skill.js';
import type { LifecycleState } from '../../machines/skill-lifecycle.js';
import { agentIdProblem } from './agent-id.js';
import { RuntimeError } from '../core/runtime-error.js';
import { headText, ROW_PIECES, standardEnd, type RowPieces } from './row-pieces.js';

// ── What is saved ──────────────────────────────────────────────────────────────────────────

/** A signal a `schedule` effect will deliver to the agent, and when (ISO 8601). */
export interface ScheduledSignal {
  due: string;
  signal: Signal;
}

/** An agent snapshot: plain JSON that `system.restore()` turns back into a running agent. */
export interface AgentSnapshot {
  format: 'skillstate/agent@1';
  id: string;
  definition: string;
  parent?: string;
  agent: { id: string; definition: string; state: Record<string, unknown>; mounted: MountedSkill[] };
  lifecycles: Record<string, LifecycleState>;
  children: string[];
  /**
   * Scheduled signals that had not fired when the snapshot was taken, soonest first. A restored
   * agent gets each at its due time, or at once when that time has passed.
   */
  scheduled?: ScheduledSignal[];
  /**
   * Present when the snapshot was taken before the `mount` hooks of the skills the agent was
   * spawned with had finished: the restored agent runs them, as a spawned one does.
   */
  starting?: true;
}

/** Where agent snapshots are saved: `createMemoryStore`, `createFileStore`, or your own. */
export interface SnapshotStore {
  save(snapshot: AgentSnapshot): Promise<void>;
  load(id: string): Promise<AgentSnapshot | undefined>;
  delete(id: string): Promise<boolean>;
  /** Ids of the stored agents. */
  list(): Promise<string[]>;
}

/** An agent as a durable store keeps it: its snapshot as JSON text, with the fields a store indexes. */
export interface StoredAgent {
  id: string;
  parent: string | undefined;
  definition: string;
  /** The `AgentSnapshot`, as JSON text. */
  snapshot: string;
}

/** A stored row that may carry its text in pieces (see `row-pieces.ts`), as `storedRow` makes it. */
export type PiecedRow = StoredAgent & { readonly [ROW_PIECES]?: RowPieces };

/** What a durable store writes in one transaction: agents to save (replacing what it holds of them) and ids to delete. */
export interface StoreBatch {
  save: readonly StoredAgent[];
  delete: readonly string[];
}

/**
 * A store's way to answer, between two steps, the commits it has written since it last did, rather
 * than at the next turn of the event loop: a system in `'step'` durability calls it after each step
 * while a batch is being written (see `Durability.stepsOver`). Not part of the public API.
 */
export const HEAR_COMMITS: unique symbol = Symbol('skillstate.hearCommits');

/** An agent snapshot as a durable store keeps it; a snapshot JSON cannot hold is the `invalid_state` error naming its agent. */
export function storedAgent(snapshot: AgentSnapshot): StoredAgent {
  return { id: snapshot.id, parent: snapshot.parent, definition: snapshot.definition, snapshot: snapshotText(snapshot) };
}

/** A stored agent as a durable store reads it back: its snapshot, or the error that keeps it from being read. */
export type StoredEntry = { id: string; snapshot: unknown; error?: undefined } | { id: string; snapshot?: undefined; error: RuntimeError };

/**
 * A store a system keeps its agents durable in (`createAgentSystem({ store })`): `commit` writes
 * a batch whole or not at all (it throws, or rejects, with `store_failed` when it cannot),
 * `loadPages` (or `loadAll`) reads every stored agent back when the system opens.
 * `createSqliteStore` makes one.
 */
export interface DurableStore extends SnapshotStore {
  /** Writes the batch in one transaction: done when it returns, or when the promise it returns resolves. */
  commit(batch: StoreBatch): void | Promise<void>;
  /**
   * True when `commit` may be given a batch while earlier ones are still being written: the store
   * writes batches in the order they were given, and once one fails it refuses (rejects) every
   * batch given before that failure was reported, so none written after it holds a step that
   * followed a failed one. A system in `'step'` durability then gives the next batch before the
   * last is written, and the store starts it as soon as the last commits. Its `read(id)` must
   * then read what every batch already given left, once they are written (a system brings an
   * agent back to its stored state with it after a failed write). Optional: without it, a system
   * gives one batch at a time.
   */
  readonly inOrder?: boolean;
  /** Every stored snapshot with its id, in the order the agents were first stored; one that cannot be read has its `error` instead. */
  loadAll(): StoredEntry[];
  /**
   * What `loadAll` gives, a page at a time, read as they are taken: a system opens each page's
   * agents before it reads the next, so opening a large store holds one page of snapshots, not
   * all of them. Optional: without it, a system opens from `loadAll`.
   */
  loadPages?(): Iterable<StoredEntry[]>;
  /** Releases the database (and its write lock); the store takes nothing afterwards. */
  close(): void;
  /**
   * The stored snapshot of one agent, read synchronously (undefined when none is stored): what a
   * system that passivates idle agents wakes one from. Throws `store_failed` when it cannot read,
   * `invalid_snapshot` when the row is damaged. Optional: a store without it cannot passivate.
   */
  read?(id: string): unknown;
}

// ── What a snapshot may hold ─────────────────────────────────────────────────────────────────

/** Nesting deeper than this is refused: `JSON.stringify` and `structuredClone` overflow the stack not far beyond. */
const MAX_SNAPSHOT_DEPTH = 1_000;

/** Where in a value something JSON cannot hold is (`['state', 'notes', 'items', 3]`), and what it is. */
export interface Unpersistable {
  path: (string | number)[];
  /** What is there, worded to finish "holds …": `a BigInt`, `a Map`, `a cycle`. */
  problem: string;
}

/** A path as one string: `state.notes.items[3]`. */
function formatPath(path: readonly (string | number)[]): string {
  let text = '';
  for (const key of path) text += typeof key === 'number' ? `[${key}]` : text === '' ? key : `.${key}`;
  return text;
}

/**
 * A copy of `value` as JSON carries it (what `JSON.parse(JSON.stringify(value))` would give, a
 * `toJSON` method included), or where the first value JSON cannot hold faithfully is: a BigInt,
 * a function, a symbol, `NaN` or an infinity, `undefined` or a hole in an array, an object that
 * contains itself, a class instance without `toJSON` (a `Map`, a `Set`), or nesting deeper than
 * `MAX_SNAPSHOT_DEPTH`. A key holding `undefined` is left out, as JSON leaves it out. `at` is
 * the path of `value` itself.
 */
export function snapshotCopy(value: unknown, at: readonly (string | number)[] = []): { ok: true; value: unknown } | { ok: false; error: Unpersistable } {
  const path = [...at];
  const inside = new Set<object>();
  let failure: string | undefined;

  const copy = (item: unknown, key: string): unknown => {
    switch (typeof item) {
      case 'string':
      case 'boolean':
        return item;
      case 'number':
        if (Number.isFinite(item)) return item + 0; // JSON writes -0 as 0
        failure = `${String(item)}, which JSON writes as null`;
        return undefined;
      case 'bigint':
        failure = 'a BigInt, which JSON cannot hold (store it as a string or a number)';
        return undefined;
      case 'function':
        failure = 'a function';
        return undefined;
      case 'symbol':
        failure = 'a symbol';
        return undefined;
      case 'undefined':
        failure = 'undefined, which JSON writes as null in an array';
        return undefined;
      case 'object':
        break;
    }
    if (item === null) return null;
    if (path.length - at.length >= MAX_SNAPSHOT_DEPTH) {
      failure = `values nested deeper than ${MAX_SNAPSHOT_DEPTH} levels`;
      return undefined;
    }
    const object = item as object;
    if (inside.has(object)) {
      failure = 'a cycle: an object that contains itself';
      return undefined;
    }
    const toJSON = (object as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') {
      let json: unknown;
      try {
        json = toJSON.call(object, key);
      } catch (error) {
        failure = `a value whose toJSON() threw: ${error instanceof Error ? error.message : String(error)}`;
        return undefined;
      }
      if (json === object) return plainCopy(object);
      inside.add(object);
      const copied = copy(json, key);
      inside.delete(object);
      return copied;
    }
    return plainCopy(object);
  };

  const plainCopy = (object: object): unknown => {
    inside.add(object);
    try {
      if (Array.isArray(object)) {
        const out: unknown[] = new Array(object.length);
        for (let i = 0; i < object.length; i++) {
          path.push(i);
          if (!(i in object)) {
            failure = 'an empty slot, which JSON writes as null';
            return undefined;
          }
          const copied = copy(object[i], String(i));
          if (failure !== undefined) return undefined;
          out[i] = copied;
          path.pop();
        }
        return out;
      }
      const proto = Object.getPrototypeOf(object) as unknown;
      if (proto !== Object.prototype && proto !== null) {
        const name = (object as { constructor?: { name?: unknown } }).constructor?.name;
        failure = `${typeof name === 'string' && name ? `a ${name}` : 'a class instance'}, which JSON does not keep: state is plain data`;
        return undefined;
      }
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(object)) {
        const field = (object as Record<string, unknown>)[key];
        if (field === undefined) continue;
        path.push(key);
        const copied = copy(field, key);
        if (failure !== undefined) return undefined;
        // An own key named '__proto__' stays a key, as JSON.parse makes it.
        if (key === '__proto__') Object.defineProperty(out, key, { value: copied, enumerable: true, writable: true, configurable: true });
        else out[key] = copied;
        path.pop();
      }
      return out;
    } finally {
      inside.delete(object);
    }
  };

  let copied: unknown;
  try {
    copied = copy(value, '');
  } catch (error) {
    // Deep nesting met when the stack is already deep (or a getter that throws): say where.
    failure ??= error instanceof RangeError ? 'values nested too deeply to copy' : `a value that cannot be read: ${error instanceof Error ? error.message : String(error)}`;
  }
  return failure === undefined ? { ok: true, value: copied } : { ok: false, error: { path, problem: failure } };
}

/** The error for a value of agent `agentId` that a snapshot cannot hold. */
export function unpersistableError(agentId: string, found: Unpersistable): ErrorInfo {
  const where = formatPath(found.path) || 'the snapshot';
  return errorInfo('invalid_state', `agent '${agentId}' cannot be persisted: ${where} holds ${found.problem}`, {
    subject: where,
    details: { reason: 'unpersistable', agent: agentId, path: found.path },
  });
}

/** A snapshot as JSON text; a snapshot holding something JSON cannot hold is a `RuntimeError` naming its agent and the path. */
export function snapshotText(snapshot: AgentSnapshot, indent?: number): string {
  const checked = snapshotCopy(snapshot);
  if (!checked.ok) throw new RuntimeError(unpersistableError(String(snapshot?.id), checked.error), typeof snapshot?.id === 'string' ? snapshot.id : undefined);
  return JSON.stringify(checked.value, null, indent);
}

// ── Taking snapshots ───────────────────────────────────────────────────────────────────────

/** What a snapshot is taken from: a running agent. */
export interface SnapshotSource {
  readonly id: string;
  readonly definition: string;
  readonly parent: string | undefined;
  /** The agent as of its last finished step. */
  readonly agent: Agent<object>;
  readonly lifecycles: {
    states(mounted: readonly MountedSkill[]): Record<string, LifecycleState>;
    /** True when `states` would say every mounted skill is active and nothing else: its text is then kept per list of mounted skills. */
    allActive?(): boolean;
  };
  children(): string[];
  /** The `mount` hooks of the skills it was spawned with have not finished. */
  readonly starting: boolean;
  /** Signals scheduled for it that have not fired yet. */
  readonly scheduled: ReadonlyMap<unknown, ScheduledSignal> | undefined;
  /** What its last row shares with its next one, kept by `storedRow`. */
  rowCache?: RowCache | undefined;
}

/**
 * The snapshot of a running agent, as of its last finished step: a JSON copy. State (or a mounted
 * skill's config, or a scheduled signal's data) holding something JSON cannot hold is a
 * `RuntimeError` (`invalid_state`) naming the agent and the path of the first such value.
 */
export function takeSnapshot(source: SnapshotSource): AgentSnapshot {
  const agent = source.agent;
  const data = agent.toJSON();
  const snapshot: AgentSnapshot = {
    format: 'skillstate/agent@1',
    id: source.id,
    definition: source.definition,
    agent: {
      id: data.id,
      definition: data.definition,
      state: persistable(source.id, data.state, ['state']) as Record<string, unknown>,
      mounted: persistable(source.id, data.mounted, ['mounted']) as MountedSkill[],
    },
    lifecycles: source.lifecycles.states(agent.mounted),
    children: source.children(),
  };
  if (source.parent !== undefined) snapshot.parent = source.parent;
  // The committed state is still the one before the hooks: the restored agent runs them.
  if (source.starting) snapshot.starting = true;
  if (source.scheduled?.size) {
    const entries = [...source.scheduled.values()].sort((a, b) => a.due.localeCompare(b.due));
    snapshot.scheduled = persistable(source.id, entries, ['scheduled']) as ScheduledSignal[];
  }
  return snapshot;
}

/**
 * The row a durable store keeps of a running agent: its snapshot as of its last finished step, as
 * JSON text, the same text as `JSON.stringify(takeSnapshot(source))`. Most state is plain data
 * (plain objects, arrays, strings, finite numbers, booleans, null), which JSON writes as it is:
 * checked and written in one pass (`plainJsonText`), the snapshot's text put together around it
 * (the list of mounted skills, shared by the agents of a definition and the same from step to
 * step, written once, and kept with the agent's other shared pieces in its `RowCache`). The row
 * carries these pieces too (see `row-pieces.ts`), for a store that puts the text together on its
 * own thread. Anything else (a `toJSON`, a class instance, a value JSON cannot hold, deep nesting,
 * a value that throws when read) goes through `takeSnapshot`, which copies it as JSON would or
 * throws its `invalid_state` error.
 */
export function storedRow(source: SnapshotSource): PiecedRow {
  const agent = source.agent;
  const kept = rowCache(source, agent);
  const list = agent.mounted;
  const allActive = source.lifecycles.allActive?.() === true;
  // The list of mounted skills of the last row, every one active still: its text and its lifecycles' are the ones kept.
  const known = allActive && kept.list === list;
  const mounted = known ? kept.mounted : mountedText(list);
  const stateText = mounted === undefined ? undefined : readText(agent.state);
  const scheduled = source.scheduled?.size ? [...source.scheduled.values()].sort((a, b) => a.due.localeCompare(b.due)) : undefined;
  const scheduledText = scheduled === undefined ? undefined : readText(scheduled);
  if (mounted === undefined || stateText === undefined || (scheduled !== undefined && scheduledText === undefined)) {
    return { id: source.id, parent: source.parent, definition: source.definition, snapshot: JSON.stringify(takeSnapshot(source)) };
  }
  // In takeSnapshot's order of keys, so the text is the one JSON.stringify would write.
  const lifecycles = known ? kept.lifecycles : allActive ? activeText(source, list) : lifecyclesText(source.lifecycles.states(list), list);
  const children = source.children();
  const childrenText = children.length === 0 ? '[]' : JSON.stringify(children);
  if (kept.mounted !== mounted || kept.lifecycles !== lifecycles || kept.children !== childrenText) {
    kept.mounted = mounted;
    kept.lifecycles = lifecycles;
    kept.children = childrenText;
    kept.body = `,"mounted":${mounted}},"lifecycles":${lifecycles},"children":${childrenText}`;
  }
  // A list is kept only while frozen: the text of one that can change is made again at each row.
  if (!allActive) kept.list = undefined;
  else if (kept.list !== list) kept.list = Object.isFrozen(list) ? list : undefined;
  let end: string | undefined;
  if (source.starting || scheduled !== undefined) {
    end = source.parent === undefined ? '' : `,"parent":${JSON.stringify(source.parent)}`;
    if (source.starting) end += ',"starting":true';
    if (scheduled !== undefined) end += `,"scheduled":${scheduledText}`;
    end += '}';
  }
  return {
    id: source.id,
    parent: source.parent,
    definition: source.definition,
    snapshot: kept.head + stateText + kept.body + (end ?? kept.end),
    [ROW_PIECES]: { head: kept.standard ? undefined : kept.head, state: stateText, body: kept.body, end },
  };
}

/** What the rows of one agent share from step to step: see `rowCache`. */
export interface RowCache {
  /** The agent value's id and definition the head was made for. */
  agent: string;
  definition: string;
  head: string;
  /** The head is `standardHead` of the row's own id and definition. */
  standard: boolean;
  /** `standardEnd` of its parent. */
  end: string;
  /** The texts the body was made of, and the body. */
  mounted: string;
  lifecycles: string;
  children: string;
  body: string;
  /** The (frozen) list of mounted skills `mounted` and `lifecycles` were made of, every one active; undefined when they are made again at the next row. */
  list: readonly MountedSkill[] | undefined;
}

/** The pieces of an agent's row kept from its last row: its head made again when its ids or definitions change. */
function rowCache(source: SnapshotSource, agent: Agent<object>): RowCache {
  const kept = source.rowCache;
  if (kept !== undefined && kept.agent === agent.id && kept.definition === agent.definition) return kept;
  const standard = agent.id === source.id && agent.definition === source.definition;
  return (source.rowCache = { agent: agent.id, definition: agent.definition, head: headText(source.id, source.definition, agent.id, agent.definition), standard, end: standardEnd(source.parent), mounted: '', lifecycles: '', children: '', body: '', list: undefined });
}

/** The JSON text of the lifecycles of lists of mounted skills met so far, every one active (the usual case). */
const activeTexts = new WeakMap<readonly MountedSkill[], string>();

/** The JSON text of an agent's lifecycle states; when every mounted skill is active and no other is listed, kept per list of mounted skills. */
function lifecyclesText(states: Record<string, LifecycleState>, mounted: readonly MountedSkill[]): string {
  let count = 0;
  for (const skill in states) {
    if (states[skill] !== 'active') return JSON.stringify(states);
    count++;
  }
  if (count !== mounted.length || !Object.isFrozen(mounted)) return JSON.stringify(states);
  let text = activeTexts.get(mounted);
  if (text === undefined) {
    text = JSON.stringify(states);
    activeTexts.set(mounted, text);
  }
  return text;
}

/** The JSON text of an agent's lifecycles when every one is its mounted skill's, active: kept per list of mounted skills, with no states object made. */
function activeText(source: SnapshotSource, mounted: readonly MountedSkill[]): string {
  return activeTexts.get(mounted) ?? lifecyclesText(source.lifecycles.states(mounted), mounted);
}

/** The JSON text of lists of mounted skills met so far (frozen, so their text never changes). */
const mountedTexts = new WeakMap<readonly MountedSkill[], string>();

/** The JSON text of an agent's mounted skills, or undefined when it is not plain data (see `plainJsonText`). */
function mountedText(mounted: readonly MountedSkill[]): string | undefined {
  let text = mountedTexts.get(mounted);
  if (text !== undefined) return text;
  text = readText(mounted);
  if (text !== undefined && Object.isFrozen(mounted)) mountedTexts.set(mounted, text);
  return text;
}

/**
 * `plainJsonText` of a part of a row, or undefined when reading it throws (a getter, a revoked
 * proxy): the row then goes through `takeSnapshot`, whose error names the agent and the path.
 * A text longer than a string can hold is thrown as it is: the copy would end the same way, once
 * it had copied all of it (a value sharing its parts many times over can take more memory than
 * there is).
 */
function readText(value: unknown): string | undefined {
  try {
    return plainJsonText(value);
  } catch (error) {
    if (error instanceof RangeError) throw error;
    return undefined;
  }
}

/** How deep `plainJsonText` looks before it leaves a value to the copying path. */
const PLAIN_DEPTH = 64;

/** A string JSON writes as `"` + itself + `"`: no quote, backslash, control character or surrogate (JSON escapes a lone one). */
const VERBATIM_STRING = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;
/** Strings longer than this are written by `JSON.stringify`, which scans them faster than a test and a copy. */
const SHORT_STRING = 64;

/**
 * Object keys as JSON writes them, followed by the colon: a state's keys are few and the same from
 * step to step. Kept for the life of the process, so only short ones, and a bounded number: a
 * state keyed by long texts (documents, URLs) would otherwise hold them after its agent is gone.
 */
const keyTexts = new Map<string, string>();
const MAX_KEY_TEXTS = 4_096;

function keyText(key: string): string {
  let text = keyTexts.get(key);
  if (text === undefined) {
    text = `${JSON.stringify(key)}:`;
    if (key.length <= SHORT_STRING && keyTexts.size < MAX_KEY_TEXTS) keyTexts.set(key, text);
  }
  return text;
}

/**
 * `JSON.stringify(value)` when JSON writes `value` as it is, with nothing to copy, call or refuse
 * (plain objects and arrays of strings, finite numbers, booleans and null, no `toJSON`, no hole,
 * no `undefined` in an array, at most `PLAIN_DEPTH` deep); undefined otherwise, and the value goes
 * through `takeSnapshot`, which copies it as JSON would or says what it cannot hold.
 *
 * A value of up to `PIECEWISE_VALUES` values is checked and written in one pass, where a check then
 * `JSON.stringify` took two: for the small objects of most states it is the faster, `JSON.stringify`'s
 * call costing more than their text. A larger one is checked by `isPlainJson` and written by
 * `JSON.stringify`: built from thousands of pieces, a text costs more time and memory than a
 * second pass over the value.
 */
export function plainJsonText(value: unknown): string | undefined {
  piecesLeft = PIECEWISE_VALUES;
  const text = piecewiseText(value, 0);
  if (text !== TOO_LARGE) return text;
  return isPlainJson(value, 0) ? JSON.stringify(value) : undefined;
}

/** How many values `plainJsonText` writes a piece at a time before it leaves the value to `isPlainJson` and `JSON.stringify`. */
const PIECEWISE_VALUES = 256;
/** Said by `piecewiseText` of a value with more than `PIECEWISE_VALUES` values in it. */
const TOO_LARGE: unique symbol = Symbol('too large');
let piecesLeft = 0;

/** `plainJsonText` a piece at a time, or `TOO_LARGE` once it has met `PIECEWISE_VALUES` values. */
function piecewiseText(value: unknown, depth: number): string | undefined | typeof TOO_LARGE {
  if (--piecesLeft < 0) return TOO_LARGE;
  switch (typeof value) {
    case 'string':
      return value.length <= SHORT_STRING && VERBATIM_STRING.test(value) ? `"${value}"` : JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? `${value}` : undefined;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      return undefined;
  }
  if (value === null) return 'null';
  if (depth >= PLAIN_DEPTH || typeof (value as { toJSON?: unknown }).toJSON === 'function') return undefined;
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) {
      // A hole or undefined (JSON writes null) is left to the copy, which names it.
      const item = i in value ? piecewiseText(value[i], depth + 1) : undefined;
      if (typeof item !== 'string') return item;
      text += i === 0 ? item : `,${item}`;
    }
    return `${text}]`;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return undefined;
  let text = '{';
  let first = true;
  // Own enumerable string keys, in JSON's order.
  for (const key of Object.keys(value)) {
    const field = (value as Record<string, unknown>)[key];
    // A key holding undefined is left out by JSON, as by the copy.
    if (field === undefined) continue;
    const fieldText = piecewiseText(field, depth + 1);
    if (typeof fieldText !== 'string') return fieldText;
    text += first ? keyText(key) + fieldText : `,${keyText(key)}${fieldText}`;
    first = false;
  }
  return `${text}}`;
}

/** True when JSON writes `value` as it is, with nothing to copy, call or refuse: what `piecewiseText` accepts, checked without writing. */
function isPlainJson(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (depth >= PLAIN_DEPTH || typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      // A hole or undefined (JSON writes null), or anything else JSON does not keep as it is.
      if (!(i in value) || !isPlainJson(value[i], depth + 1)) return false;
    }
    return true;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key of Object.keys(value)) {
    const field = (value as Record<string, unknown>)[key];
    // A key holding undefined is left out by JSON, as by the copy.
    if (field !== undefined && !isPlainJson(field, depth + 1)) return false;
  }
  return true;
}

/** A JSON copy of part of agent `agentId`'s snapshot (at `path`), or the `invalid_state` error saying what in it JSON cannot hold. */
function persistable(agentId: string, value: unknown, path: (string | number)[]): unknown {
  const copied = snapshotCopy(value, path);
  if (!copied.ok) throw new RuntimeError(unpersistableError(agentId, copied.error), agentId);
  return copied.value;
}

/**
 * Snapshots of `agents`, and of the agents kept in a store only (`stored`: their ids, and how to
 * read one), parents first; every agent that cannot be persisted, or read back, is named in one
 * error, and none is returned.
 */
export function persistAll(agents: readonly SnapshotSource[], stored?: { ids: readonly string[]; read(id: string): unknown }): AgentSnapshot[] {
  const snapshots: AgentSnapshot[] = [];
  const failures: RuntimeError[] = [];
  for (const agent of agents) {
    try {
      snapshots.push(takeSnapshot(agent));
    } catch (error) {
      if (!(error instanceof RuntimeError)) throw error;
      failures.push(error);
    }
  }
  for (const id of stored?.ids ?? []) {
    try {
      const snapshot = stored!.read(id);
      if (snapshot === undefined) throw new RuntimeError(errorInfo('unknown_agent', `agent '${id}' is passivated but its snapshot is no longer in the store`, { subject: id }), id);
      snapshots.push(snapshot as AgentSnapshot);
    } catch (error) {
      failures.push(error instanceof RuntimeError ? error : new RuntimeError(toErrorInfo(error, 'store_failed'), id));
    }
  }
  const count = agents.length + (stored?.ids.length ?? 0);
  if (failures.length === 0) return orderParentsFirst(snapshots);
  const agentIds = failures.map((failure) => failure.agentId ?? '');
  const message = `persistAll: ${failures.length === 1 ? `1 agent of ${count}` : `${failures.length} agents of ${count}`} cannot be persisted, so none was: ${failures.map((failure) => failure.message).join('; ')}`;
  const info = errorInfo('invalid_state', message, { details: { reason: 'unpersistable', agents: agentIds, errors: failures.map((failure) => failure.toInfo()) } });
  throw new RuntimeError(info, failures.length === 1 ? agentIds[0] : undefined);
}

/** Orders snapshots so that each parent comes before its children; parent links that form a cycle are an `invalid_snapshot` error. */
export function orderParentsFirst(snapshots: readonly AgentSnapshot[]): AgentSnapshot[] {
  const byId = new Map(snapshots.map((snapshot) => [snapshot?.id, snapshot]));
  const ordered: AgentSnapshot[] = [];
  const placed = new Set<AgentSnapshot>();
  const placing = new Set<AgentSnapshot>();
  const place = (snapshot: AgentSnapshot, path: string[]) => {
    if (placed.has(snapshot)) return;
    if (placing.has(snapshot)) {
      const cycle = [...path.slice(path.indexOf(snapshot.id)), snapshot.id].map((id) => `'${id}'`).join(' → ');
      throw new RuntimeError(errorInfo('invalid_snapshot', `cannot restore: the parent links of the snapshots form a cycle: ${cycle}`, { subject: snapshot.id }));
    }
    placing.add(snapshot);
    const parent = snapshot?.parent !== undefined ? byId.get(snapshot.parent) : undefined;
    if (parent) place(parent, [...path, snapshot.id]);
    placing.delete(snapshot);
    placed.add(snapshot);
    ordered.push(snapshot);
  };
  for (const snapshot of snapshots) place(snapshot, []);
  return ordered;
}

/**
 * Of snapshots in parents-first order, those that wait for skills to load before they can be
 * restored, with the skills each waits for: the ones `loading` names skills for, and every
 * descendant of one (restored after its parent, as always; it may wait for nothing of its own).
 */
export function waitingForSkills(ordered: readonly AgentSnapshot[], loading: (snapshot: AgentSnapshot) => string[]): Map<string, string[]> {
  const waiting = new Map<string, string[]>();
  for (const snapshot of ordered) {
    const skills = loading(snapshot);
    if (skills.length > 0 || (snapshot.parent !== undefined && waiting.has(snapshot.parent))) waiting.set(snapshot.id, skills);
  }
  return waiting;
}

// ── Reading snapshots back ──────────────────────────────────────────────────────────────────

/** What reading a snapshot back needs from the system restoring it. */
export interface RestoreHost {
  /** The definitions it knows, by name. */
  readonly definitions: ReadonlyMap<string, AgentDefinition<object>>;
  isRunning(agentId: string): boolean;
  /** A skill it knows by name. */
  resolveSkill(name: string): AnySkill | undefined;
}

/** A snapshot read back: what starting its agent again takes. */
export interface RestorePlan {
  definition: AgentDefinition<object>;
  agent: Agent<object>;
  /** Its parent, when that is running; otherwise the agent is restored without one. */
  parent: string | undefined;
  /** The parent the snapshot names, when that is not running. */
  orphanOf: string | undefined;
  /** The lifecycle of each skill, as the snapshot recorded it. */
  lifecycles: Map<string, LifecycleState>;
  /** Its scheduled signals, with their due times in milliseconds. */
  scheduled: Array<{ due: number; signal: Signal }>;
  /** Taken before the `mount` hooks of the skills it was spawned with had finished. */
  starting: boolean;
}

const LIFECYCLE_STATES: ReadonlySet<LifecycleState> = new Set(['active', 'inactive', 'failed']);

/**
 * Reads a snapshot back (`ref.persist()` output, after a JSON round trip or from a store),
 * checking all of it: anything wrong is a `RuntimeError` (`invalid_snapshot`, or
 * `duplicate_agent` when its agent is running) that says what.
 */
export function readSnapshot(snapshot: unknown, host: RestoreHost): RestorePlan {
  const bad = (message: string) => new RuntimeError(errorInfo('invalid_snapshot', `cannot restore: ${message}`));
  if (!isPlainObject(snapshot) || snapshot.format !== 'skillstate/agent@1') throw bad("not an agent snapshot (format 'skillstate/agent@1')");
  const data = snapshot as unknown as AgentSnapshot;
  if (typeof data.id !== 'string' || !isPlainObject(data.agent)) throw bad('the snapshot has no id or no agent');
  const badId = agentIdProblem(data.id);
  if (badId) throw bad(badId.message);
  const definition = host.definitions.get(data.definition);
  if (!definition) {
    throw bad(`agent '${data.id}' was made by definition '${String(data.definition)}', which this system does not know; pass it in createAgentSystem({ definitions }) or system.register() it`);
  }
  // The registry is keyed by the agent's own id: a snapshot whose two ids differ would take the place of another agent.
  if (data.agent.id !== data.id) throw bad(`the snapshot of '${data.id}' holds agent '${String(data.agent.id)}'; the two ids must be the same`);
  if (host.isRunning(data.id)) throw new RuntimeError(errorInfo('duplicate_agent', `an agent with id '${data.id}' is already running`, { subject: data.id }), data.id);
  const restored = definition.restore(data.agent, { skills: { get: (name) => host.resolveSkill(name) } });
  if (!restored.ok) throw new RuntimeError(restored.error, data.id);
  const parent = data.parent !== undefined && host.isRunning(data.parent) ? data.parent : undefined;
  const lifecycles = isPlainObject(data.lifecycles) ? (data.lifecycles as Record<string, unknown>) : {};
  for (const [skill, state] of Object.entries(lifecycles)) {
    // Each names a lifecycle actor (`<agent>/skills/<skill>`): a key no skill can have could name another actor.
    if (!SKILL_NAME.test(skill)) throw bad(`agent '${data.id}' has a lifecycle for '${skill}', which is not a skill name (1 to 64 letters, digits, "_" or "-")`);
    if (!LIFECYCLE_STATES.has(state as LifecycleState)) throw bad(`agent '${data.id}' has lifecycle '${String(state)}' for skill '${skill}'; expected active, inactive or failed`);
    // A skill unmounted before the snapshot was taken has its lifecycle `inactive`; no other.
    if (state !== 'inactive' && !restored.value.mounted.some((record) => record.name === skill)) {
      throw bad(`agent '${data.id}' has lifecycle '${String(state)}' for skill '${skill}', which is not mounted on it; expected inactive`);
    }
  }
  const scheduled = scheduledSignals(data);
  if (typeof scheduled === 'string') throw bad(`agent '${data.id}': ${scheduled}`);
  return {
    definition,
    agent: restored.value,
    parent,
    orphanOf: data.parent !== undefined && parent === undefined ? data.parent : undefined,
    lifecycles: new Map(Object.entries(lifecycles as Record<string, LifecycleState>)),
    scheduled,
    starting: data.starting === true,
  };
}

/** The snapshot's scheduled signals with their due times in milliseconds, or what is wrong with them. */
function scheduledSignals(snapshot: AgentSnapshot): Array<{ due: number; signal: Signal }> | string {
  if (snapshot.scheduled === undefined) return [];
  if (!Array.isArray(snapshot.scheduled)) return 'scheduled must be an array of { due, signal }';
  const entries: Array<{ due: number; signal: Signal }> = [];
  for (const [index, entry] of snapshot.scheduled.entries()) {
    if (!isPlainObject(entry)) return `scheduled[${index}] is not an object with due and signal`;
    const due = typeof entry.due === 'string' ? Date.parse(entry.due) : Number.NaN;
    if (Number.isNaN(due)) return `scheduled[${index}] has due ${JSON.stringify(entry.due)}, which is not an ISO 8601 time`;
    let signal: Signal;
    try {
      signal = toSignal(entry.signal as Signal);
    } catch (error) {
      return `scheduled[${index}] holds an invalid signal: ${(error as Error).message}`;
    }
    entries.push({ due, signal });
  }
  return entries;
}

/** The names of the skills a snapshot has mounted, as far as it can be read (checked when it is restored). */
export function mountedSkillNames(snapshot: unknown): string[] {
  const mounted = isPlainObject(snapshot) && isPlainObject(snapshot.agent) && Array.isArray(snapshot.agent.mounted) ? (snapshot.agent.mounted as unknown[]) : [];
  const names: string[] = [];
  for (const record of mounted) if (isPlainObject(record) && typeof record.name === 'string') names.push(record.name);
  return names;
}

/**
 * Restores several snapshots, parents before children whatever their order. All or nothing: when
 * one cannot be restored (or parent links form a cycle), `undo` is given the agents restored so
 * far, parents first, and the error is thrown.
 */
export function restoreParentsFirst<TRef>(snapshots: readonly unknown[], restore: (snapshot: AgentSnapshot) => TRef, undo: (restored: readonly TRef[]) => void): TRef[] {
  const restored: TRef[] = [];
  try {
    for (const snapshot of orderParentsFirst(snapshots as AgentSnapshot[])) restored.push(restore(snapshot));
  } catch (error) {
    undo(restored);
    throw error;
  }
  return restored;
}

// ── Stores ─────────────────────────────────────────────────────────────────────────────────

/**
 * Keeps snapshots in memory (as JSON text, so what comes back is a copy that went through JSON).
 * Takes no options: one given is refused (`invalid_options`), not ignored.
 */
export function createMemoryStore(): SnapshotStore {
  // An options bag, ignored, would leave its author believing it did something.
  const extra = extraArguments('createMemoryStore', arguments, [], 'createSqliteStore({ path }) is the store that takes options');
  if (extra) throw new RuntimeError(extra);
  const texts = new Map<string, string>();
  return {
    async save(snapshot) {
      texts.set(snapshot.id, snapshotText(snapshot));
    },
    async load(id) {
      const text = texts.get(id);
      return text === undefined ? undefined : (JSON.parse(text) as AgentSnapshot);
    },
    async delete(id) {
      return texts.delete(id);
    },
    async list() {
      return [...texts.keys()];
    },
  };
}

const SUFFIX = '.agent.json';
/**
 * The longest encoded id kept as a file name; a longer one (file names hold at most 255 bytes)
 * is named by its hash, with this marker, which an encoded id never holds, before the suffix.
 */
const MAX_NAME_BYTES = 200;
const HASHED = '%%';

/** The file name of agent `id`'s snapshot: its id, encoded, or the hash of a long one. */
function fileName(id: string): string {
  const encoded = encodeURIComponent(id);
  if (Buffer.byteLength(encoded) <= MAX_NAME_BYTES) return `${encoded}${SUFFIX}`;
  return `${createHash('sha256').update(id).digest('hex')}${HASHED}${SUFFIX}`;
}

/** Writes `text` to `file` whole or not at all: a temporary file of its own, flushed to disk, then renamed over it. */
async function writeAtomically(file: string, text: string): Promise<void> {
  // Unique per write (64 random bits): two writes of one file, from this process or another, never share one.
  const temporary = `${file}.${randomBytes(8).toString('hex')}.tmp`;
  try {
    const handle = await open(temporary, 'w');
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {});
    throw error;
  }
}

/**
 * Keeps snapshots as `<dir>/<encoded id>.agent.json` (an id too long for a file name is named by
 * its hash, and `list` reads it from the snapshot). Saves and deletes of one agent through
 * this store are carried out one after another, in the order they were made, so the last save
 * wins; each snapshot is turned into text when `save` is called, so changing it afterwards
 * changes nothing saved. Takes the folder only: options given after it are refused
 * (`invalid_options`), not ignored.
 */
export function createFileStore(dir: string): SnapshotStore {
  const extra = extraArguments('createFileStore', arguments, ['the folder'], 'createSqliteStore({ path }) is the store that takes options');
  if (extra) throw new RuntimeError(extra);
  const fileOf = (id: string) => join(dir, fileName(id));
  /** The last write or delete of each agent still under way: the next one waits for it. */
  const pending = new Map<string, Promise<unknown>>();
  const inTurn = <T>(id: string, work: () => Promise<T>): Promise<T> => {
    const before = pending.get(id);
    const mine = before === undefined ? work() : before.then(work, work);
    const settled = mine.catch(() => {});
    pending.set(id, settled);
    void settled.then(() => {
      if (pending.get(id) === settled) pending.delete(id);
    });
    return mine;
  };
  return {
    async save(snapshot) {
      const text = `${snapshotText(snapshot, 2)}\n`;
      await inTurn(snapshot.id, async () => {
        await mkdir(dir, { recursive: true });
        await writeAtomically(fileOf(snapshot.id), text);
      });
    },
    async load(id) {
      let text: string;
      try {
        text = await readFile(fileOf(id), 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
      try {
        return JSON.parse(text) as AgentSnapshot;
      } catch (error) {
        throw new RuntimeError(errorInfo('invalid_snapshot', `snapshot file ${fileOf(id)} is not valid JSON: ${(error as Error).message}`, { subject: fileOf(id) }), id);
      }
    },
    delete(id) {
      return inTurn(id, async () => {
        try {
          await rm(fileOf(id));
          return true;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
          throw error;
        }
      });
    },
    async list() {
      let names: string[];
      try {
        names = await readdir(dir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw error;
      }
      const ids: string[] = [];
      for (const name of names) {
        if (!name.endsWith(SUFFIX)) continue;
        const stem = name.slice(0, -SUFFIX.length);
        if (!stem.endsWith(HASHED)) {
          ids.push(decodeURIComponent(stem));
          continue;
        }
        // Named by the hash of a long id: the id is the snapshot's.
        const file = join(dir, name);
        const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT') return undefined; // deleted meanwhile
          throw error;
        });
        if (text === undefined) continue;
        const id = idIn(text);
        if (id === undefined || fileName(id) !== name) {
          throw new RuntimeError(errorInfo('invalid_snapshot', `snapshot file ${file} does not hold the snapshot of an agent whose id it is named after`, { subject: file }));
        }
        ids.push(id);
      }
      return ids;
    },
  };
}

/** The `id` of a snapshot's text, if it is one. */
function idIn(text: string): string | undefined {
  try {
    const id: unknown = (JSON.parse(text) as { id?: unknown }).id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}
