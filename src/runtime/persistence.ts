/**
 * Where agent snapshots are kept, and what a snapshot may hold. A store holds `AgentSnapshot`s by
 * agent id; the in-memory store is the default, the file store writes one JSON file per agent
 * (atomically: write to a temporary file of its own, flush it, then rename), so a crash never
 * leaves half a snapshot, and saves of one agent through one store land in the order they were
 * made.
 *
 * A snapshot is plain JSON: `snapshotCopy` copies a value as JSON carries it, and says where the
 * first value JSON cannot hold is, rather than letting `JSON.stringify` lose it or throw later.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { errorInfo, type ErrorInfo } from '../core/errors.js';
import type { AgentSnapshot } from './agent-ref.js';
import { RuntimeError } from '../core/runtime-error.js';

/** Where agent snapshots are saved: `createMemoryStore`, `createFileStore`, or your own. */
export interface SnapshotStore {
  save(snapshot: AgentSnapshot): Promise<void>;
  load(id: string): Promise<AgentSnapshot | undefined>;
  delete(id: string): Promise<boolean>;
  /** Ids of the stored agents. */
  list(): Promise<string[]>;
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
function snapshotText(snapshot: AgentSnapshot, indent?: number): string {
  const checked = snapshotCopy(snapshot);
  if (!checked.ok) throw new RuntimeError(unpersistableError(String(snapshot?.id), checked.error), typeof snapshot?.id === 'string' ? snapshot.id : undefined);
  return JSON.stringify(checked.value, null, indent);
}

// ── Stores ─────────────────────────────────────────────────────────────────────────────────

/** Keeps snapshots in memory (as JSON text, so what comes back is a copy that went through JSON). */
export function createMemoryStore(): SnapshotStore {
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
 * changes nothing saved.
 */
export function createFileStore(dir: string): SnapshotStore {
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
