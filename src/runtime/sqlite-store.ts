/**
 * An embedded SQLite database as the store of a durable system: one row per agent (its snapshot as
 * JSON text), written in transactions of many agents at once (group commit). The driver is
 * `libsql`, whose API is synchronous: a batch of snapshots is written and committed before the
 * answers it holds back are given, with no await in between.
 *
 * One writer: the database is opened in WAL mode with `locking_mode=EXCLUSIVE` and its write lock
 * taken at once and kept until `close()`, so a second system (in this process or another) that
 * opens the same file is refused with `store_failed` (`reason: 'locked'`) instead of writing
 * beside the first. The lock dies with the process that holds it. The schema carries a version
 * (`PRAGMA user_version`); an older one is migrated on open, a newer one is refused.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'libsql';
import { errorInfo } from '../core/errors.js';
import { RuntimeError } from '../core/runtime-error.js';
import { storedAgent, type AgentSnapshot, type DurableStore, type StoreBatch } from './persistence.js';

/** The schema version this code writes; `MIGRATIONS[n]` takes a database from version n to n + 1. */
export const SQLITE_SCHEMA_VERSION = 1;

const MIGRATIONS: readonly string[] = [
  // 0 → 1: agents by id, with the parent kept beside the snapshot for a look without parsing it.
  `CREATE TABLE agents (
     id TEXT PRIMARY KEY,
     parent TEXT,
     definition TEXT NOT NULL,
     snapshot TEXT NOT NULL,
     saved_at INTEGER NOT NULL
   ) STRICT`,
];

/** Options of `createSqliteStore`. */
export interface SqliteStoreOptions {
  /** The database file; made with its folder when missing. */
  path: string;
}

/** A `DurableStore` on an SQLite file, made by `createSqliteStore`. */
export interface SqliteStore extends DurableStore {
  /** The database file, resolved. */
  readonly path: string;
}

/** The `store_failed` error for the database at `path`. */
function storeFailed(path: string, reason: 'locked' | 'newer_schema' | 'write_failed' | 'open_failed', message: string, cause?: unknown): RuntimeError {
  const info = errorInfo('store_failed', message, { subject: path, details: { reason, path } });
  if (cause !== undefined) Object.defineProperty(info, 'cause', { value: cause, enumerable: false });
  return new RuntimeError(info);
}

/** The SQLite error code of a driver error (`SQLITE_BUSY`), if it has one. */
function sqliteCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Opens (or makes) the SQLite database at `path` as a store: WAL, one writer, the schema migrated
 * to `SQLITE_SCHEMA_VERSION`. Throws `store_failed` when another system holds the database
 * (`reason: 'locked'`), when its schema is newer than this code (`'newer_schema'`), or when it
 * cannot be opened (`'open_failed'`).
 */
export function createSqliteStore(options: SqliteStoreOptions): SqliteStore {
  if (typeof options?.path !== 'string' || options.path === '') {
    throw new RuntimeError(errorInfo('invalid_options', `createSqliteStore needs { path }, the database file, got ${JSON.stringify(options?.path)}`, { subject: 'path', details: { option: 'path', value: options?.path } }));
  }
  const path = resolve(options.path);
  let db: Database.Database;
  try {
    mkdirSync(dirname(path), { recursive: true });
    // timeout 0: a database held by another writer is refused at once rather than waited for.
    db = new Database(path, { timeout: 0 });
  } catch (error) {
    throw storeFailed(path, 'open_failed', `cannot open the database ${path}: ${(error as Error).message}`, error);
  }
  try {
    db.exec('PRAGMA locking_mode = EXCLUSIVE');
    db.exec('PRAGMA journal_mode = WAL');
    // In WAL mode, NORMAL keeps every commit through a crash of the process; a power loss may
    // take back the last commits (FULL would sync each one to disk, at several times the cost).
    db.exec('PRAGMA synchronous = NORMAL');
    // Taking the write lock now, and keeping it: a second writer is refused when it opens.
    db.exec('BEGIN EXCLUSIVE');
    migrate(db, path);
    db.exec('COMMIT');
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    db.close();
    if (error instanceof RuntimeError) throw error;
    if (sqliteCode(error) === 'SQLITE_BUSY' || sqliteCode(error) === 'SQLITE_LOCKED') {
      throw storeFailed(path, 'locked', `the database ${path} is open for writing by another system (one writer at a time); close that system first`, error);
    }
    throw storeFailed(path, 'open_failed', `cannot open the database ${path}: ${(error as Error).message}`, error);
  }

  const upsert = db.prepare('INSERT INTO agents (id, parent, definition, snapshot, saved_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET parent = excluded.parent, definition = excluded.definition, snapshot = excluded.snapshot, saved_at = excluded.saved_at');
  const remove = db.prepare('DELETE FROM agents WHERE id = ?');
  const select = db.prepare('SELECT snapshot FROM agents WHERE id = ?');
  const ids = db.prepare('SELECT id FROM agents ORDER BY rowid');
  const all = db.prepare('SELECT id, snapshot FROM agents ORDER BY rowid');
  let closed = false;

  const parse = (id: string, text: string): AgentSnapshot => {
    try {
      return JSON.parse(text) as AgentSnapshot;
    } catch (error) {
      throw new RuntimeError(errorInfo('invalid_snapshot', `the stored snapshot of agent '${id}' in ${path} is not valid JSON: ${(error as Error).message}`, { subject: id }), id);
    }
  };
  const open = () => {
    if (closed) throw storeFailed(path, 'write_failed', `the database ${path} is closed`);
  };
  const commit = (batch: StoreBatch): void => {
    open();
    const now = Date.now();
    try {
      db.exec('BEGIN');
      for (const agent of batch.save) upsert.run(agent.id, agent.parent ?? null, agent.definition, agent.snapshot, now);
      for (const id of batch.delete) remove.run(id);
      db.exec('COMMIT');
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw storeFailed(path, 'write_failed', `writing ${batch.save.length + batch.delete.length} agent(s) to ${path} failed: ${(error as Error).message}`, error);
    }
  };

  return {
    path,
    commit,
    loadAll() {
      open();
      return (all.all() as Array<{ id: string; snapshot: string }>).map((row) => {
        try {
          return { id: row.id, snapshot: parse(row.id, row.snapshot) };
        } catch (error) {
          return { id: row.id, error: error as RuntimeError };
        }
      });
    },
    async save(snapshot) {
      commit({ save: [storedAgent(snapshot)], delete: [] });
    },
    async load(id) {
      open();
      const row = select.get(id) as { snapshot: string } | undefined;
      return row === undefined ? undefined : parse(id, row.snapshot);
    },
    async delete(id) {
      open();
      const existed = select.get(id) !== undefined;
      commit({ save: [], delete: [id] });
      return existed;
    },
    async list() {
      open();
      return (ids.all() as Array<{ id: string }>).map((row) => row.id);
    },
    close() {
      if (closed) return;
      closed = true;
      try {
        // The driver keeps the connection (and so the write lock) while prepared statements
        // live: leaving WAL lets the lock go now, so the next system can open the file at once.
        db.exec('PRAGMA journal_mode = DELETE');
        db.exec('PRAGMA locking_mode = NORMAL');
        db.exec('SELECT 1 FROM agents LIMIT 1');
      } finally {
        db.close();
      }
    },
  };
}

/** Brings the schema to `SQLITE_SCHEMA_VERSION`, inside the open transaction; a newer one is refused. */
function migrate(db: Database.Database, path: string): void {
  const version = (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
  if (version > SQLITE_SCHEMA_VERSION) {
    throw storeFailed(path, 'newer_schema', `the database ${path} has schema version ${version}, written by a newer skillstate; this one reads up to version ${SQLITE_SCHEMA_VERSION}`);
  }
  for (let at = version; at < SQLITE_SCHEMA_VERSION; at++) db.exec(MIGRATIONS[at]!);
  if (version !== SQLITE_SCHEMA_VERSION) db.exec(`PRAGMA user_version = ${SQLITE_SCHEMA_VERSION}`);
}
