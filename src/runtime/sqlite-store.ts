/**
 * An embedded SQLite database as the store of a durable system: one row per agent (its snapshot as
 * JSON text), written in transactions of many agents at once (group commit).
 *
 * The database belongs to a worker thread of its own, which runs the driver (`libsql`, whose API
 * is synchronous): a batch is written there while the agents go on taking steps here, and the
 * answers it holds are given once the worker says it committed. Batches go to the worker through
 * shared memory when they can, and their commits come back the same way, read between steps
 * (`sqlite-handover.ts`); the others, and failures, go as messages. Opening, reading and closing
 * are synchronous requests: the caller waits for the worker's reply (`Atomics.wait`, then
 * `receiveMessageOnPort`), so a system restores its agents before `createAgentSystem` returns.
 * Requests and batches are carried out in the order they were made, whichever way each went: a
 * system hands a batch over while the last one is written (`inOrder`), and the worker starts it as
 * soon as that one commits. Once a batch fails, the worker refuses those handed over before the
 * failure was reported here, which may hold steps that followed the failed ones.
 *
 * One writer: the database is opened in WAL mode with `locking_mode=EXCLUSIVE` and its write lock
 * taken at once and kept until `close()`, so a second system (in this process or another) that
 * opens the same file is refused with `store_failed` (`reason: 'locked'`) instead of writing
 * beside the first. The lock dies with the process that holds it. The schema carries a version
 * (`PRAGMA user_version`); an older one is migrated on open, a newer one is refused.
 */
import { mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { errorInfo } from '../core/errors.js';
import { unknownOption } from '../core/options.js';
import { RuntimeError } from '../core/runtime-error.js';
import { HEAR_COMMITS, storedAgent, type AgentSnapshot, type DurableStore, type PiecedRow, type StoreBatch, type StoredEntry } from './persistence.js';
import { Durability } from './durability.js';
import { HEAD_PIECES, ROW_PIECES } from './row-pieces.js';
import { CONTROL, Handover, OUTCOMES, SLOT, SLOT_BYTES, SLOT_FIELDS, SLOTS, THREAD } from './sqlite-handover.js';
import { whyUnwritable } from './unwritable.js';

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
  /**
   * Rows read at a time when a system opens the store (`loadPages`): a system holds one page of
   * snapshots as it opens, whatever the store's size. A positive integer; 5,000 when left out. A
   * page holds fewer when their snapshots add up to more than 2^26 characters.
   */
  pageSize?: number;
}

/** A `DurableStore` on an SQLite file, made by `createSqliteStore`. */
export interface SqliteStore extends DurableStore {
  /** The database file, resolved. */
  readonly path: string;
  /** The stored snapshot of agent `id`, read synchronously; undefined when none is stored. */
  read(id: string): AgentSnapshot | undefined;
  /** Every stored agent, `pageSize` rows at a time (fewer for large snapshots), in the order the agents were first stored. */
  loadPages(): Iterable<StoredEntry[]>;
}

/** The keys `SqliteStoreOptions` takes. */
const SQLITE_STORE_OPTIONS = { path: true, pageSize: true } as const satisfies Record<keyof SqliteStoreOptions, true>;

/** Rows a page holds when `pageSize` is left out: a few MiB of text for agents of ordinary size. */
const DEFAULT_PAGE_SIZE = 5_000;

/**
 * How long the database's thread stays for the next batch after its last one before it goes back
 * to its event loop, how long of that it looks at the bell at most and at least, how long it then
 * looks at it every `POLL_MS` in waits of its own, before it waits on it to be woken (see the
 * worker's `serve`). It stays past the agents' thread's pauses (a garbage collection of a
 * millisecond, say): from a wait on the bell, it starts the next batch sooner than from its event
 * loop, where a message must wake it. While it looks in waits of its own, the agents' thread does
 * not wake it: waking a thread is a system call, which on a virtual machine can hold the agents'
 * thread for a tenth of a millisecond.
 */
const AWAKE_AFTER_COMMIT_MS = 10;
const LOOK_MS = 1;
const SPIN_MS = 0.05;
const POLL_FOR_MS = 2;
const POLL_MS = 0.1;

/**
 * The cores are crowded once the database's thread, of the time it wanted a core (it ran, or was
 * ready to run), spent more than `CROWDED_SHARE` waiting for one in two spells in a row (of
 * `CROWD_WINDOW_MS` or more each), and no longer after a spell in which it spent less than
 * `UNCROWDED_SHARE` so (Linux says how long in `/proc/thread-self/schedstat`; elsewhere the cores
 * are never counted crowded): one spell alone can be crowded by the process's own helper threads
 * (its garbage collector's, its compiler's) on an idle machine. Then neither thread spins on its
 * core for the other's news (that core is wanted elsewhere: by the other thread, or another
 * process): the database's thread goes to its short waits at once, and the agents' thread reads
 * commits for `CROWDED_LISTEN_MS` at most.
 */
const CROWD_WINDOW_MS = 20;
const CROWDED_SHARE = 0.25;
const UNCROWDED_SHARE = 0.15;
const CROWDED_LISTEN_MS = 0.05;

/**
 * While batches follow one another without a pause, how long the database's thread goes without
 * looking whether the database and its log are still the files it opened (see `checkFiles` in the
 * worker's source).
 */
const FILE_CHECK_MS = 1;

/**
 * How long the agents' thread keeps reading commits from shared memory while none comes (see
 * `listen`) before it waits for the database's thread's message instead.
 */
const LISTEN_MS = 1;

/** How many agents' standard heads the database's thread keeps at most (then it forgets them all and makes them again). */
const MAX_HEADS = 16_384;

/**
 * The most characters one text between the two threads holds: a page of rows read (their
 * snapshots as one JSON text) ends before it, and a batch of rows longer than it goes to the
 * database's thread as the rows are, not as one text (`rowsText`). Agents with states of
 * megabytes each would otherwise make a text longer than a string can be (about 2^29
 * characters). A row longer than this is a page of its own.
 */
const MAX_TEXT = 2 ** 26;

/** Where the database's thread finds things in the shared memory of `Handover`. */
const HANDOVER_LAYOUT = { ...CONTROL, ...SLOT, ...THREAD, slots: SLOTS, slotBytes: SLOT_BYTES, slotFields: SLOT_FIELDS, outcomes: OUTCOMES };

/** What wakes the database's thread asleep in its event loop when a batch was put in a slot. */
const BELL_MESSAGE = { type: 'bell' };

/** How long a synchronous request (open, read, close) waits for the database's thread before it gives up. */
const REQUEST_TIMEOUT_MS = 60_000;

type StoreFailure = 'locked' | 'newer_schema' | 'write_failed' | 'open_failed' | 'in_use' | 'closed';

/** The `store_failed` error for the database at `path`. */
function storeFailed(path: string, reason: StoreFailure, message: string): RuntimeError {
  return new RuntimeError(errorInfo('store_failed', message, { subject: path, details: { reason, path } }));
}

/** What the worker says went wrong: the driver's message and SQLite code, or a schema too new. */
interface WorkerError {
  message: string;
  code?: string;
  newerSchema?: number;
  /** Why the database is not a skillstate store (another program's, or changed by hand). */
  foreign?: string;
  /** A commit refused, not tried: it was given before an earlier one's failure was reported. */
  refused?: boolean;
}

/**
 * The driver's words for a failure, with what to do when SQLite found the file damaged (its
 * pages cut short or overwritten): the driver says only that the "disk image is malformed".
 */
function driverWords(error: WorkerError): string {
  if (error.code?.startsWith('SQLITE_CORRUPT')) return `the file is damaged (${error.message}); put back a copy of it, or move it aside to start an empty store there`;
  return error.message;
}

/**
 * The worker, as source run with `eval` (so it is the same file whether the package runs compiled
 * or from its TypeScript sources). It owns the only connection to the database. It reads as a
 * script and as a module alike, and so takes no `require` from its scope: a program run as
 * `node --input-type=module -e …` has its workers' eval'd source read as a module.
 */
const WORKER_SOURCE = `
const { workerData, parentPort } = process.getBuiltinModule('node:worker_threads');
const load = process.getBuiltinModule('node:module').createRequire(workerData.driver);
const { path, port, migrations, version: latest, head: HEAD } = workerData;
// A driver that cannot load (no binary for this platform) is the first request's error, not a silent worker.
let Database, unloadable;
try { Database = load(workerData.driver); } catch (error) { unloadable = error; }
const flag = new Int32Array(workerData.flag);
let db, upserts, remove, select, all, page;
// The files opened, the database and its write-ahead log, as their device and inode (see checkFiles).
const { statSync } = process.getBuiltinModule('node:fs');
const wal = path + '-wal';
let opened, openedWal;
// The rows' bodies sent once and referred to by number since (see rowsText), in the order sent.
let bodies = [];
// The standard heads made so far, by agent id (see standardHead).
let heads = new Map();
// The standard head of a row (HEAD's pieces around its id and definition as JSON), made once per
// agent: an agent's rows share it from step to step. The id and definition come cut from a batch's
// text, so what is kept is a copy of each (JSON.parse of their JSON), which does not hold that text.
function standardHead(id, definition) {
  const kept = heads.get(id);
  if (kept !== undefined && kept.definition === definition) return kept.head;
  const idText = JSON.stringify(id), definitionText = JSON.stringify(definition);
  const head = HEAD[0] + idText + HEAD[1] + definitionText + HEAD[2] + idText + HEAD[3] + definitionText + HEAD[4];
  if (heads.size >= workerData.maxHeads) heads = new Map();
  heads.set(JSON.parse(idText), { definition: JSON.parse(definitionText), head });
  return head;
}
// The era of the commit that last failed: commits of that era or before were given before the
// failure was reported, and may hold steps that followed the failed ones; they are refused.
let refusedEra = -1;

function failure(error) {
  return { message: error && error.message ? String(error.message) : String(error), code: error && typeof error.code === 'string' ? error.code : undefined, newerSchema: error && error.newerSchema, foreign: error && error.foreign };
}
// Why the database at schema version \`version\` is not a store of ours (another program's, or one
// changed by hand), or undefined: at version 0 it holds no table yet; at the latest version its
// agents table has the latest columns.
function foreignSchema(version) {
  if (version === 0) {
    // SQLite's own tables (sqlite_sequence, sqlite_stat1) make no database another program's.
    const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite!_%' ESCAPE '!' ORDER BY name").all().map((row) => row.name);
    return tables.length === 0 ? undefined : 'it holds tables (' + tables.join(', ') + ') and no skillstate schema version';
  }
  if (version !== latest) return undefined;
  const columns = db.prepare('PRAGMA table_info(agents)').all().map((row) => row.name).join(', ');
  if (columns === 'id, parent, definition, snapshot, saved_at') return undefined;
  return columns === '' ? 'it has no agents table' : 'its agents table has the columns (' + columns + ')';
}
function open() {
  if (unloadable) throw unloadable;
  db = new Database(path, { timeout: 0 });
  try {
    db.exec('PRAGMA locking_mode = EXCLUSIVE');
    // Another program's database is left as it was: looked at before anything is changed (WAL included).
    const foreign = foreignSchema(db.prepare('PRAGMA user_version').get().user_version);
    if (foreign !== undefined) throw Object.assign(new Error('foreign schema'), { foreign });
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = NORMAL');
    db.exec('BEGIN EXCLUSIVE');
    const version = db.prepare('PRAGMA user_version').get().user_version;
    if (version > latest) throw Object.assign(new Error('newer schema'), { newerSchema: version });
    for (let at = version; at < latest; at++) db.exec(migrations[at]);
    if (version !== latest) db.exec('PRAGMA user_version = ' + latest);
    db.exec('COMMIT');
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    db.close();
    throw error;
  }
  opened = identity(path);
  openedWal = identity(wal);
  try { schedstat = openSync('/proc/thread-self/schedstat', 'r'); } catch {}
  upserts = new Map();
  remove = db.prepare('DELETE FROM agents WHERE id = ?');
  select = db.prepare('SELECT snapshot FROM agents WHERE id = ?');
  all = db.prepare('SELECT id, snapshot FROM agents ORDER BY rowid');
  // By rowid from where the last page ended: a page is its own query, whatever was written between two.
  page = db.prepare('SELECT rowid, id, snapshot FROM agents WHERE rowid > ? ORDER BY rowid LIMIT ?');
}
// A file's device and inode; null when there is no such file, undefined when it cannot be told (a
// folder on the path this process may no longer search, while its handle still writes the file).
function identity(file) {
  try {
    return statSync(file, { bigint: true, throwIfNoEntry: false }) ?? null;
  } catch {
    return undefined;
  }
}
function same(file, was) {
  const now = identity(file);
  if (was == null || now === undefined) return true;
  return now !== null && now.ino === was.ino && now.dev === was.dev;
}
function moved(message) {
  return Object.assign(new Error(message), { code: 'SKILLSTATE_MOVED' });
}
function checkDatabase() {
  if (!same(path, opened)) throw moved(path + ' is no longer the database this store opened (it was deleted, or another file was moved there): nothing is written to it any more; shut the system down, then put the file back or open a store anew');
}
// A connection keeps writing to a file deleted, or moved aside for another, while it is open:
// what it commits then is in no file at the path, and is lost with the process. So are the
// commits its log holds when the log is deleted, those made before included: they reach the
// database only when it is closed (closing copies them in, through the file it still holds). A
// commit is refused (rolled back) when a path no longer names the file opened.
//
// Looked at before the commit of the first batch after this thread found none to write, and
// while batches follow one another without a pause, before a commit every checkMs: two calls into
// the file system a batch cost this thread a tenth of its time under load. So under load, the
// commits of up to that long after a file was taken away may land in it.
let checkedAt = -Infinity, pausedSinceCheck = true;
function checkFiles() {
  if (!pausedSinceCheck && performance.now() - checkedAt < workerData.checkMs) return;
  // A file found taken away: every write after it looks again, however soon it comes.
  checkedAt = -Infinity;
  checkDatabase();
  // Made with the first write when opening wrote nothing.
  openedWal ??= identity(wal);
  if (!same(wal, openedWal)) throw moved(wal + ', the write-ahead log of the database, is no longer the one this store opened (it was deleted, or another file was moved there): nothing is written to it any more; shut the system down, which copies what the log held into ' + path);
  checkedAt = performance.now();
  pausedSinceCheck = false;
}
// Rows are written up to MAX_ROWS_AT_ONCE by one statement (one call into SQLite and one program
// run for them all, instead of one a row: it halves what a row costs to write). Statements are
// made for powers of two of rows, as batches need them.
const MAX_ROWS_AT_ONCE = 64;
function upsertOf(rows) {
  let statement = upserts.get(rows);
  if (statement === undefined) {
    statement = db.prepare('INSERT INTO agents (id, parent, definition, snapshot, saved_at) VALUES ' + Array(rows).fill('(?, ?, ?, ?, ?)').join(', ') + ' ON CONFLICT (id) DO UPDATE SET parent = excluded.parent, definition = excluded.definition, snapshot = excluded.snapshot, saved_at = excluded.saved_at');
    upserts.set(rows, statement);
  }
  return statement;
}
// Writes rows given as their five values each, one after another in values.
function upsertAll(values) {
  for (let at = 0, left = values.length / 5; left > 0; ) {
    let rows = MAX_ROWS_AT_ONCE;
    while (rows > left) rows >>= 1;
    upsertOf(rows).run(values.slice(at, at + rows * 5));
    at += rows * 5;
    left -= rows;
  }
}
function commit(batch) {
  const now = Date.now();
  const values = [];
  try {
    db.exec('BEGIN');
    if (batch.save.lengths) {
      // One text for the rows' pieces and the length of each (see rowsText): id, parent ('' for none),
      // definition, head (-1: the standard one), state, body (-1 - its number in the table when it
      // was sent before), end (-1: the standard one).
      const { text, lengths } = batch.save;
      let at = 0;
      for (let field = 0; field < lengths.length; field += 7) {
        const id = text.slice(at, (at += lengths[field]));
        const parent = text.slice(at, (at += lengths[field + 1]));
        const definition = text.slice(at, (at += lengths[field + 2]));
        const head = lengths[field + 3] < 0 ? standardHead(id, definition) : text.slice(at, (at += lengths[field + 3]));
        const state = text.slice(at, (at += lengths[field + 4]));
        const body = lengths[field + 5] < 0 ? bodies[-1 - lengths[field + 5]] : text.slice(at, (at += lengths[field + 5]));
        const end = lengths[field + 6] < 0 ? (parent === '' ? '}' : ',"parent":' + JSON.stringify(parent) + '}') : text.slice(at, (at += lengths[field + 6]));
        values.push(id, parent === '' ? null : parent, definition, head + state + body + end, now);
      }
    } else {
      for (const agent of batch.save) values.push(agent.id, agent.parent === undefined ? null : agent.parent, agent.definition, agent.snapshot, now);
    }
    upsertAll(values);
    for (const id of batch.delete) remove.run(id);
    checkFiles();
    db.exec('COMMIT');
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw error;
  }
}
function close() {
  // The driver keeps the connection (and so the write lock) while prepared statements live:
  // leaving WAL lets the lock go now, so the next system can open the file at once.
  try {
    checkDatabase();
    db.exec('PRAGMA journal_mode = DELETE');
    db.exec('PRAGMA locking_mode = NORMAL');
    db.exec('SELECT 1 FROM agents LIMIT 1');
  } finally {
    try {
      db.close();
    } finally {
      if (schedstat !== undefined) stopMeasuringCrowd();
    }
  }
}
const requests = {
  open,
  close,
  load: (request) => { const row = select.get(request.id); return row === undefined ? undefined : row.snapshot; },
  all: () => all.all().map((row) => [row.id, row.snapshot]),
  // A page of rows as one JSON text, [id, snapshot, id, snapshot, ...]: one string to copy and to parse.
  // It ends early (full) before a row that would take it past maxText characters: a page of
  // agents with large states would be longer than a string can be. It holds one row at least.
  pageText: (request) => {
    let text = '', last = request.after, count = 0, full = false;
    for (const row of page.iterate(request.after, request.limit)) {
      const entry = JSON.stringify(row.id) + ',' + row.snapshot;
      if (count > 0 && text.length + entry.length >= request.maxText) { full = true; break; }
      text += (text === '' ? '[' : ',') + entry; last = row.rowid; count++;
    }
    return { text: text === '' ? '[]' : text + ']', last, count, full };
  },
  // The same page row by row, when its text does not parse.
  pageRows: (request) => page.all(request.after, request.limit).map((row) => [row.id, row.snapshot]),
};
// The batches handed over in shared memory (see sqlite-handover.ts), and where things are in it.
const { layout } = workerData;
const control = new Int32Array(workerData.shared.control);
const slotText = new Uint8Array(workerData.shared.text);
const slotFields = new Int32Array(workerData.shared.fields);
const outcomes = new Int32Array(workerData.shared.outcomes);
// A first row whose id begins with U+FEFF keeps it: by default the decoder drops it as a byte order mark.
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
// How crowded the cores are, as this thread finds them: of the time it wanted a core (ran, or was
// ready to run), the share it spent waiting for one, over spells of crowdWindowMs or more of its
// work. Linux says both (the first two numbers of the thread's schedstat, in nanoseconds), read from
// a file opened once; where there is none, the cores are never counted crowded.
const { openSync, readSync, closeSync } = process.getBuiltinModule('node:fs');
let schedstat, crowded = false, crowdedSpells = 0, spellFrom = 0, ranFrom = 0, waitedFrom = 0;
const schedText = new Uint8Array(64);
// The first two numbers of the schedstat line (ran, waited), in milliseconds.
function readSchedstat() {
  const read = readSync(schedstat, schedText, 0, schedText.length, 0);
  const times = [0, 0];
  for (let at = 0, field = 0; field < 2; field++, at++) {
    let ns = 0;
    for (; at < read && schedText[at] >= 48 && schedText[at] <= 57; at++) ns = ns * 10 + schedText[at] - 48;
    times[field] = ns / 1e6;
  }
  return times;
}
function stopMeasuringCrowd() {
  try { closeSync(schedstat); } catch {}
  schedstat = undefined;
  crowded = false;
  Atomics.store(control, layout.crowded, 0);
}
function judgeCrowd(now) {
  if (schedstat === undefined || now - spellFrom < workerData.crowdWindowMs) return;
  let ran, waited;
  try { [ran, waited] = readSchedstat(); } catch { stopMeasuringCrowd(); return; }
  const wanted = ran - ranFrom + (waited - waitedFrom);
  const share = wanted > 0 ? (waited - waitedFrom) / wanted : 0;
  spellFrom = now;
  ranFrom = ran;
  waitedFrom = waited;
  crowdedSpells = share > workerData.crowdedShare ? crowdedSpells + 1 : 0;
  const found = crowded ? share >= workerData.uncrowdedShare : crowdedSpells >= 2;
  if (found !== crowded) {
    crowded = found;
    Atomics.store(control, layout.crowded, crowded ? 1 : 0);
  }
}
// The id of the next batch to write: batches are written in the order they were given, whether
// they came in a slot or as a message.
let next = 0;
// Batches that came as messages, by id, until their turn.
const given = new Map();
// The request (open, read, close) waiting for the batches given before it.
let asked;
// Batch id's rows, taken out of its slot (which is free again), or undefined when no slot holds it.
function fromSlot(id) {
  for (let slot = 0; slot < layout.slots; slot++) {
    const head = layout.heads + slot * layout.slotHead;
    if (Atomics.load(control, head) !== layout.full || control[head + 1] !== (id | 0)) continue;
    const from = slot * layout.slotBytes;
    const text = decoder.decode(slotText.subarray(from, from + control[head + 3]));
    const lengths = slotFields.slice(slot * layout.slotFields, slot * layout.slotFields + control[head + 4]);
    const era = control[head + 2];
    Atomics.store(control, head, layout.free);
    return { type: 'commit', id, era, batch: { save: { text, lengths }, delete: [] } };
  }
  return undefined;
}
function accept(message) {
  if (message.type === 'commit') given.set(message.id, message);
  else if (message.type !== 'bell') asked = message;
}
function write(request) {
  // Taken whether or not the batch is written: the batches after it refer to them.
  const save = request.batch.save;
  if (save.reset) bodies = [];
  if (save.defined) for (const body of save.defined) bodies.push(body);
  let error;
  if (request.era <= refusedEra) error = { message: 'not written: the batch given before it failed', refused: true };
  else {
    try { commit(request.batch); } catch (thrown) { error = failure(thrown); refusedEra = request.era; }
  }
  // Written: its outcome goes in the ring (unless the agents' thread is so far behind that it would
  // overwrite one not heard yet), and needs no message while the agents' thread reads the ring.
  if (error === undefined && (((request.id | 0) - Atomics.load(control, layout.heard)) | 0) < layout.outcomes) {
    Atomics.store(outcomes, request.id & (layout.outcomes - 1), (request.id + 1) | 0);
    if (Atomics.load(control, layout.listening) === 1) return;
  }
  parentPort.postMessage({ id: request.id, error });
}
// Answers a request; false once the store is closed.
function answer(request) {
  let reply;
  try { reply = { value: requests[request.type](request) }; } catch (thrown) { reply = { error: failure(thrown) }; }
  port.postMessage(reply);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
  if (request.type === 'close') { port.close(); return false; }
  return true;
}
// Writes every batch and answers every request given so far, in order: how many, or -1 once closed.
function drain() {
  for (let done = 0; ; done++) {
    let batch = given.get(next) ?? fromSlot(next);
    if (batch === undefined) {
      // Read up to the batch due, not on past it: a caller posting batches faster than they are
      // written would otherwise keep this thread reading, and writing none, until it stopped.
      for (let message; !given.has(next) && (message = receiveMessageOnPort(port)) !== undefined; ) accept(message.message);
      batch = given.get(next);
    }
    if (batch !== undefined) {
      given.delete(next);
      next++;
      write(batch);
    } else if (asked !== undefined && asked.batchesBefore <= next) {
      const request = asked;
      asked = undefined;
      if (!answer(request)) return -1;
    } else {
      // None left to write: the next batch's files are looked at, however soon it comes (see checkFiles).
      pausedSinceCheck = true;
      return done;
    }
  }
}
// When this thread last did something, and how long before that it had done the one before.
let lastDone = 0, cadence = Infinity;
// After the last thing done, the next batch is usually on its way: this thread stays for it a
// while (awakeMs) before it goes back to its event loop, where only a message wakes it. Staying,
// it looks at the bell for twice the time between its last two batches when that was shorter than
// lookMs (spinMs at least; only spinMs when it was longer; not at all while the cores are
// crowded), then, until pollForMs after its last batch, every pollMs in waits of its own, and then
// waits on it: the agents' thread wakes it as it rings (Atomics.notify), which costs that thread a
// system call. Batches that come often are so taken as they come, at the cost of this thread's
// core; a batch that comes after a while wakes it.
function serve() {
  Atomics.store(control, layout.thread, layout.busy);
  for (let until = performance.now() + workerData.awakeMs; ; ) {
    const bell = Atomics.load(control, layout.bell);
    const done = drain();
    if (done < 0) return;
    let now = performance.now();
    if (done > 0) {
      cadence = now - lastDone;
      lastDone = now;
      until = now + workerData.awakeMs;
      judgeCrowd(now);
    } else if (now >= until) {
      Atomics.store(control, layout.thread, layout.asleep);
      // Rung as this thread fell asleep, by a thread that saw it awake and so posted nothing: looked at again.
      if (Atomics.load(control, layout.bell) === bell) return;
      Atomics.store(control, layout.thread, layout.busy);
    } else {
      const looking = crowded ? 0 : lastDone + (cadence < workerData.lookMs ? Math.min(workerData.lookMs, Math.max(workerData.spinMs, 2 * cadence)) : workerData.spinMs);
      while (now < looking && Atomics.load(control, layout.bell) === bell) now = performance.now();
      if (Atomics.load(control, layout.bell) !== bell) continue;
      if (now - lastDone < workerData.pollForMs) {
        Atomics.wait(control, layout.bell, bell, Math.min(workerData.pollMs, until - now));
        continue;
      }
      Atomics.store(control, layout.thread, layout.waiting);
      Atomics.wait(control, layout.bell, bell, until - now);
      Atomics.store(control, layout.thread, layout.busy);
    }
  }
}
const { receiveMessageOnPort } = process.getBuiltinModule('node:worker_threads');
port.on('message', (message) => {
  accept(message);
  serve();
});
`;

/** A batch's rows as the database's thread takes them: the text of their pieces, and where each piece is (see `rowsText`). */
interface RowsText {
  text: string;
  /**
   * Seven a row: the length of its id, parent, definition, head, state, body and end in `text`; -1
   * for a standard head or end, and -1 - n for a body sent before as the nth. One array: each
   * typed array in a message costs the copy about as much as the text.
   */
  lengths: Int32Array;
  /** Bodies numbered from this batch on, after those sent before (after none, when `reset`). */
  defined: string[];
  reset: boolean;
}

/** How many bodies the database's thread keeps at most (then it forgets them all, and they are sent again). */
const MAX_BODIES = 1_024;
/** A longer body (an agent with many children) is sent with its row, not kept. */
const MAX_KEPT_BODY = 4_096;

/**
 * The numbers of the row bodies sent to the database's thread so far: a body is the same from step
 * to step, and shared by the agents of a definition, so it is sent once and referred to after.
 */
class SentBodies {
  private numbers = new Map<string, number>();

  /** `body`'s number, giving it the next one (and adding it to `defined`) when it is new and may be kept; -1 when it is sent with its row. */
  number(body: string, defined: string[]): number {
    let number = this.numbers.get(body);
    if (number !== undefined) return number;
    if (body.length > MAX_KEPT_BODY || this.numbers.size >= MAX_BODIES) return -1;
    number = this.numbers.size;
    this.numbers.set(body, number);
    defined.push(body);
    return number;
  }

  /** Forgets every body once the table is full, before a batch: true when it did. */
  resetWhenFull(): boolean {
    if (this.numbers.size < MAX_BODIES) return false;
    this.numbers.clear();
    return true;
  }
}

/**
 * The rows of a batch as one text and the length of each of its pieces, in order, seven a row:
 * id, parent ('' for none; an id is never empty), definition, then the snapshot as head, state,
 * body and end (`row-pieces.ts`). A row made by `storedRow` sends its state, its head and end only
 * when they are not the standard ones (the database's thread makes those from the id, definition
 * and parent), and its body by number once sent; any other row sends its snapshot whole as its
 * head. Copying one string (and arrays of numbers) to the database's thread costs a fraction of
 * copying as many objects, and the lengths let that thread cut the text without reading it.
 * Undefined when a field is not a string, or when the rows' snapshots add up to more than
 * `MAX_TEXT` characters, and the rows then go as they are.
 */
function rowsText(rows: StoreBatch['save'], sent: SentBodies): RowsText | undefined {
  // Checked before any body is numbered: rows that go as they are must not leave numbers the database's thread never got.
  let length = 0;
  for (const row of rows) {
    if (typeof row.id !== 'string' || typeof (row.parent ?? '') !== 'string' || typeof row.definition !== 'string' || typeof row.snapshot !== 'string') return undefined;
    length += row.snapshot.length;
  }
  if (length > MAX_TEXT) return undefined;
  let text = '';
  const lengths = new Int32Array(rows.length * 7);
  const defined: string[] = [];
  const reset = sent.resetWhenFull();
  for (let row = 0, at = 0; row < rows.length; row++, at += 7) {
    const agent = rows[row] as PiecedRow;
    const parent = agent.parent ?? '';
    text += agent.id + parent + agent.definition;
    lengths[at] = agent.id.length;
    lengths[at + 1] = parent.length;
    lengths[at + 2] = agent.definition.length;
    const pieces = agent[ROW_PIECES];
    if (pieces === undefined) {
      // The snapshot whole, as its head; no state, body or end.
      text += agent.snapshot;
      lengths[at + 3] = agent.snapshot.length;
      continue;
    }
    if (pieces.head === undefined) lengths[at + 3] = -1;
    else {
      text += pieces.head;
      lengths[at + 3] = pieces.head.length;
    }
    text += pieces.state;
    lengths[at + 4] = pieces.state.length;
    const body = sent.number(pieces.body, defined);
    if (body >= 0) lengths[at + 5] = -1 - body;
    else {
      text += pieces.body;
      lengths[at + 5] = pieces.body.length;
    }
    if (pieces.end === undefined) lengths[at + 6] = -1;
    else {
      text += pieces.end;
      lengths[at + 6] = pieces.end.length;
    }
  }
  return { text, lengths, defined, reset };
}

/**
 * Why the folder `folder` cannot be made: the nearest of it and its parents that exists is a file
 * (Node says `EEXIST` or `ENOTDIR`, naming neither the file nor the cause); undefined otherwise.
 */
function whyNoFolder(folder: string): string | undefined {
  for (let place = folder; dirname(place) !== place; place = dirname(place)) {
    let found: ReturnType<typeof statSync>;
    try {
      found = statSync(place, { throwIfNoEntry: false });
    } catch {
      continue; // ENOTDIR: a file further up is in the way
    }
    if (found !== undefined) return found.isDirectory() ? undefined : `${place} is a file, not a folder, so the database cannot be made below it`;
  }
  return undefined;
}

/**
 * Opens (or makes) the SQLite database at `path` as a store: WAL, one writer, the schema migrated
 * to `SQLITE_SCHEMA_VERSION`. Throws `store_failed` when another system holds the database
 * (`reason: 'locked'`), when its schema is newer than this code (`'newer_schema'`), or when it
 * cannot be opened (`'open_failed'`).
 */
export function createSqliteStore(options: SqliteStoreOptions): SqliteStore {
  if (typeof options === 'string') {
    throw new RuntimeError(errorInfo('invalid_options', `createSqliteStore takes an options object, got the string ${JSON.stringify(options)}: createSqliteStore({ path: ${JSON.stringify(options)} })`, { subject: 'path', details: { option: 'path', value: options } }));
  }
  // A misspelled option (or one of createAgentSystem's, such as durability) would be ignored without a word.
  const unknown = typeof options === 'object' && options !== null ? unknownOption('createSqliteStore', options, SQLITE_STORE_OPTIONS) : undefined;
  if (unknown) throw new RuntimeError(unknown);
  if (typeof options?.path !== 'string' || options.path === '') {
    throw new RuntimeError(errorInfo('invalid_options', `createSqliteStore needs { path }, the database file, got ${JSON.stringify(options?.path)}`, { subject: 'path', details: { option: 'path', value: options?.path } }));
  }
  // SQLite's name for a database in memory would be a file named so here: nothing in memory outlives the process.
  if (options.path === ':memory:') {
    throw new RuntimeError(errorInfo('invalid_options', `createSqliteStore needs a database file, got ':memory:': a store keeps agents across restarts, which a database in memory cannot; give a file such as './agents.db', or leave out store to keep agents in memory only`, { subject: 'path', details: { option: 'path', value: options.path } }));
  }
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  if (!Number.isSafeInteger(pageSize) || pageSize < 1) {
    throw new RuntimeError(errorInfo('invalid_options', `createSqliteStore's pageSize must be a positive integer, got ${String(pageSize)}`, { subject: 'pageSize', details: { option: 'pageSize', value: pageSize } }));
  }
  const path = resolve(options.path);
  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch (error) {
    throw storeFailed(path, 'open_failed', `cannot open the database ${path}: ${whyNoFolder(dirname(path)) ?? (error as Error).message}`);
  }
  // The driver's own words for a folder are a bare error number.
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory()) {
    throw storeFailed(path, 'open_failed', `cannot open the database ${path}: it is a folder; give the path of a database file, such as ${join(path, 'agents.db')}`);
  }
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const handover = new Handover();
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { path, port: port2, flag: flag.buffer, driver: createRequire(import.meta.url).resolve('libsql'), migrations: MIGRATIONS, version: SQLITE_SCHEMA_VERSION, head: HEAD_PIECES, awakeMs: AWAKE_AFTER_COMMIT_MS, lookMs: LOOK_MS, spinMs: SPIN_MS, pollForMs: POLL_FOR_MS, pollMs: POLL_MS, crowdWindowMs: CROWD_WINDOW_MS, crowdedShare: CROWDED_SHARE, uncrowdedShare: UNCROWDED_SHARE, checkMs: FILE_CHECK_MS, maxHeads: MAX_HEADS, shared: handover.shared, layout: HANDOVER_LAYOUT },
    transferList: [port2],
  });
  let closed = false;
  /** Why the store closed itself (its thread died, or did not answer): undefined when it was closed, or is open. */
  let stopped: string | undefined;
  /** Commits the worker has not confirmed yet, by request id. */
  const commits = new Map<number, { resolve(): void; reject(error: RuntimeError): void; rows: number }>();
  let nextId = 0;
  const sent = new SentBodies();
  /** Failures reported so far (refusals are not counted): commits given after one is reported are written again (see `inOrder`). */
  let era = 0;
  /** The first commit not answered yet: commits are answered in the order they were given. */
  let oldest = 0;
  let listening: ReturnType<typeof setImmediate> | undefined;
  /** When a commit was last heard of, or listening began. */
  let lastHeard = 0;
  /** After commits were answered: the database's thread keeps the process alive only while one is under way, and may write outcomes up to `OUTCOMES` past the first not answered. */
  const answered = () => {
    if (commits.size === 0) worker.unref();
    handover.heard(oldest);
  };
  /**
   * Answers the commits written since, in order, as the outcome ring says (see `Handover`): true
   * when it answered one. Called between steps: when none was written, it reads one number.
   */
  const hear = (): boolean => {
    if (oldest === nextId || !handover.written(oldest)) return false;
    do {
      const waiting = commits.get(oldest);
      commits.delete(oldest);
      oldest++;
      waiting?.resolve();
    } while (oldest < nextId && handover.written(oldest));
    answered();
    // Heard between steps as much as by listening: either keeps this thread listening.
    lastHeard = performance.now();
    return true;
  };
  /**
   * While commits are under way, this thread reads their outcomes at each turn of its event loop,
   * rather than sleeping until the database's thread's message wakes it (which takes an idle core
   * tens of microseconds, at every commit): for up to `LISTEN_MS` while none comes (while the cores
   * are crowded, `CROWDED_LISTEN_MS`), after which it waits for the messages.
   */
  const listen = () => {
    listening = undefined;
    hear();
    if (commits.size > 0 && performance.now() - lastHeard < (handover.crowded() ? CROWDED_LISTEN_MS : LISTEN_MS)) {
      listening = setImmediate(listen);
      return;
    }
    handover.listening(false);
    // Written as this thread stopped listening, by a thread that saw it listening and so sent no message.
    hear();
  };
  worker.on('message', (reply: { id: number; error?: WorkerError }) => {
    // Commits are answered in the order they were given: those written before it first (from the
    // ring), then it, then those written after it.
    hear();
    const waiting = commits.get(reply.id);
    if (waiting !== undefined) {
      commits.delete(reply.id);
      if (reply.id >= oldest) oldest = reply.id + 1;
      if (reply.error) {
        // Counted before the rejection is seen: a commit given from here on follows the failure, and is
        // written. A refusal is no new failure: counting it would have the commits given before the
        // next failure is reported written after it.
        if (reply.error.refused !== true) era++;
        waiting.reject(storeFailed(path, 'write_failed', `writing ${waiting.rows} agent(s) to ${path} failed: ${driverWords(reply.error)}`));
      } else waiting.resolve();
    }
    if (!hear()) answered();
  });
  worker.on('error', (error: Error) => {
    // The worker is gone (out of memory, say): later requests are refused at once, not waited on.
    // The commits it wrote before are answered as written first.
    hear();
    closed = true;
    stopped = `its thread stopped: ${error.message}`;
    for (const waiting of commits.values()) waiting.reject(storeFailed(path, 'write_failed', `the database ${path} stopped: ${error.message}`));
    commits.clear();
    oldest = nextId;
  });
  // The database's thread keeps the process alive only while a commit is under way (see commit):
  // after the listeners, as adding a 'message' listener refs the worker again.
  worker.unref();
  port1.unref();

  /** Sends a request and waits for the worker's reply. */
  const request = (message: { type: 'open' | 'close' | 'all' } | { type: 'load'; id: string } | { type: 'pageText'; after: number; limit: number; maxText: number } | { type: 'pageRows'; after: number; limit: number }): { value?: unknown; error?: WorkerError } => {
    Atomics.store(flag, 0, 0);
    // Carried out after every batch given before it.
    port1.postMessage({ ...message, batchesBefore: nextId });
    handover.ring(true);
    if (Atomics.wait(flag, 0, 0, REQUEST_TIMEOUT_MS) === 'timed-out') {
      void worker.terminate();
      closed = true;
      stopped = `it did not answer a ${message.type} request within ${REQUEST_TIMEOUT_MS / 1000} s`;
      throw storeFailed(path, message.type === 'open' ? 'open_failed' : 'write_failed', `the database ${path} did not answer a ${message.type} request within ${REQUEST_TIMEOUT_MS / 1000} s; it is closed`);
    }
    return receiveMessageOnPort(port1)!.message as { value?: unknown; error?: WorkerError };
  };
  /** A read request's answer; its failure is `store_failed` (`'open_failed'`). */
  const readReply = (message: Parameters<typeof request>[0]): unknown => {
    const reply = request(message);
    if (reply.error) throw storeFailed(path, 'open_failed', `reading ${path} failed: ${driverWords(reply.error)}`);
    return reply.value;
  };
  const usable = () => {
    if (stopped !== undefined) throw storeFailed(path, 'write_failed', `the database ${path} is closed: ${stopped}; open it again with createSqliteStore({ path })`);
    if (closed) throw storeFailed(path, 'closed', `the database ${path} is closed (its system shut down, or the store was closed); open it again with createSqliteStore({ path })`);
  };

  const opened = request({ type: 'open' });
  if (opened.error) {
    void worker.terminate();
    const { code, newerSchema, foreign, message } = opened.error;
    if (newerSchema !== undefined) {
      throw storeFailed(path, 'newer_schema', `the database ${path} has schema version ${newerSchema}, written by a newer skillstate (or it is another program's database); this one reads up to version ${SQLITE_SCHEMA_VERSION}`);
    }
    if (foreign !== undefined) {
      throw storeFailed(path, 'open_failed', `cannot open the database ${path}: it is not a skillstate store (${foreign}); it is left as it was: give another path, or move the file aside to start an empty store there`);
    }
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
      throw storeFailed(path, 'locked', `the database ${path} is open for writing by another system (one writer at a time); close that system first`);
    }
    if (code === 'SQLITE_NOTADB') {
      throw storeFailed(path, 'open_failed', `cannot open the database ${path}: the file is not an SQLite database (${message}); give another path, or move the file aside to start an empty store there`);
    }
    const unwritable = whyUnwritable(path) ?? (code?.startsWith('SQLITE_READONLY') ? 'the file or its folder is read-only' : undefined);
    if (unwritable !== undefined) {
      throw storeFailed(path, 'open_failed', `cannot open the database ${path} for writing: ${unwritable}; make the file and its folder writable, or give a path elsewhere (${message})`);
    }
    throw storeFailed(path, 'open_failed', `cannot open the database ${path}: ${driverWords(opened.error)}`);
  }

  const parse = (id: string, text: string): AgentSnapshot => {
    let snapshot: unknown;
    try {
      snapshot = JSON.parse(text);
    } catch (error) {
      throw new RuntimeError(errorInfo('invalid_snapshot', `the stored snapshot of agent '${id}' in ${path} is not valid JSON: ${(error as Error).message}`, { subject: id }), id);
    }
    // Named by its row: the id inside a damaged snapshot names no row of the file.
    const inside = typeof snapshot === 'object' && snapshot !== null ? (snapshot as { id?: unknown }).id : undefined;
    if (inside !== id) {
      throw new RuntimeError(errorInfo('invalid_snapshot', `the stored snapshot of agent '${id}' in ${path} is the snapshot of ${typeof inside === 'string' ? `agent '${inside}'` : 'no agent (it has no id)'}`, { subject: id }), id);
    }
    return snapshot as AgentSnapshot;
  };
  const rows = (): Array<[string, string]> => {
    usable();
    return readReply({ type: 'all' }) as Array<[string, string]>;
  };
  /** A page's text parsed; undefined when a row is not the JSON snapshot of its id. */
  const parsedPage = (text: string): StoredEntry[] | undefined => {
    let fields: unknown;
    try {
      fields = JSON.parse(text);
    } catch {
      return undefined;
    }
    if (!Array.isArray(fields) || fields.length % 2 !== 0) return undefined;
    const agents: StoredEntry[] = [];
    for (let at = 0; at < fields.length; at += 2) {
      const id: unknown = fields[at];
      const snapshot: unknown = fields[at + 1];
      // Its own id inside: a damaged row cannot have shifted its neighbours into the wrong places.
      if (typeof id !== 'string' || typeof snapshot !== 'object' || snapshot === null || (snapshot as { id?: unknown }).id !== id) return undefined;
      agents.push({ id, snapshot: snapshot as AgentSnapshot });
    }
    return agents;
  };
  /** The rows after rowid `after`, read one by one: each failure its own, named by its id. */
  const pageRowByRow = (after: number, limit: number): StoredEntry[] => {
    return (readReply({ type: 'pageRows', after, limit }) as Array<[string, string]>).map(([id, text]) => {
      try {
        return { id, snapshot: parse(id, text) };
      } catch (error) {
        return { id, error: error as RuntimeError };
      }
    });
  };
  /** Every stored agent, `pageSize` rows at a time, each page one text read and parsed whole (row by row when a row in it is damaged). */
  function* loadPages(): Generator<StoredEntry[]> {
    // Below every rowid SQLite gives.
    let after = Number.MIN_SAFE_INTEGER;
    for (;;) {
      usable();
      const { text, last, count, full } = readReply({ type: 'pageText', after, limit: pageSize, maxText: MAX_TEXT }) as { text: string; last: number; count: number; full: boolean };
      if (count === 0) return;
      yield parsedPage(text) ?? pageRowByRow(after, count);
      if (count < pageSize && !full) return;
      after = last;
    }
  }
  const commit = (batch: StoreBatch): Promise<void> => {
    usable();
    return new Promise((resolve, reject) => {
      const id = nextId;
      const rows = rowsText(batch.save, sent);
      // In shared memory when it can be; as a message with new bodies or deletes (rare), or when it is
      // too large for a slot or every slot is full.
      const slotted = rows !== undefined && batch.delete.length === 0 && rows.defined.length === 0 && !rows.reset && handover.put(id, era, rows);
      if (!slotted) port1.postMessage({ type: 'commit', id, era, batch: { save: rows ?? batch.save, delete: batch.delete } });
      nextId++;
      commits.set(id, { resolve, reject, rows: batch.save.length + batch.delete.length });
      // Kept alive while a commit is under way: its answers are waiting on it.
      worker.ref();
      if (handover.ring(!slotted)) port1.postMessage(BELL_MESSAGE);
      if (listening === undefined) {
        lastHeard = performance.now();
        handover.listening(true);
        listening = setImmediate(listen);
      }
    });
  };

  const store: SqliteStore = {
    path,
    commit,
    inOrder: true,
    loadPages,
    loadAll() {
      const agents: StoredEntry[] = [];
      // One by one: a large page can be too many arguments for one push.
      for (const page of loadPages()) for (const agent of page) agents.push(agent);
      return agents;
    },
    async save(snapshot) {
      await commit({ save: [storedAgent(snapshot)], delete: [] });
    },
    async load(id) {
      return this.read(id);
    },
    read(id) {
      usable();
      const text = readReply({ type: 'load', id });
      return text === undefined ? undefined : parse(id, text as string);
    },
    async delete(id) {
      const existed = (await this.load(id)) !== undefined;
      await commit({ save: [], delete: [id] });
      return existed;
    },
    async list() {
      return rows().map(([id]) => id);
    },
    close() {
      if (closed) return;
      // Closed under a running system, its agents would each fail their next write and be stopped.
      if (Durability.inUse(store)) {
        throw storeFailed(path, 'in_use', `the store ${path} is written to by a running system: shut that system down (system.shutdown() writes what is left and closes the store) instead of closing the store under it`);
      }
      closed = true;
      const reply = request({ type: 'close' });
      // Written before it, and not answered by a message while this thread listened.
      hear();
      void worker.terminate();
      if (reply.error) throw storeFailed(path, 'write_failed', `closing ${path} failed: ${driverWords(reply.error)}`);
    },
  };
  return Object.assign(store, { [HEAR_COMMITS]: hear });
}
