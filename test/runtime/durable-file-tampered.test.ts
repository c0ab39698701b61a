/**
 * The database file of a running durable system deleted, replaced or damaged by someone else. A
 * step is answered only once it is in the file at the store's path: one written into a file no
 * longer there (deleted, or moved aside for another) fails with `store_failed`, naming the path,
 * and the agent stays at its last written state. (Under continuous load the files are looked at
 * once a millisecond: the writes of up to that long after the file went may be answered.) A
 * damaged file refused on open says why it could not be read, not how closing it failed. Rows
 * edited by hand into something no system wrote are each reported by the id of their row and left
 * in the file.
 */
import { unlinkSync } from 'node:fs';
import { rename, truncate, unlink } from 'node:fs/promises';
import { join, dirname } from 'node:path';
import Database from 'libsql';
import { describe, expect, it } from 'vitest';
import { createSqliteStore, RuntimeError, type ErrorInfo } from '../../src/index.js';
import { NotesAgent, createSignal, defineAction, defineAgent, defineSkill, itemsOf, quietSystem, result, systemPerTest, thrown, z, tempFolders } from './fixtures.js';

const systems = systemPerTest();
const databaseFile = tempFolders('tampered').database;

/** A system on a new database at `path`, its unhandled errors collected in `errors`, with an agent that wrote one note. */
async function runningWithOneNote(path: string, errors: ErrorInfo[] = []) {
  const system = systems.start({ definitions: [NotesAgent], store: createSqliteStore({ path }), onUnhandledError: (error) => errors.push(error) });
  const agent = system.spawn(NotesAgent, { id: 'n1' });
  await agent.call(createSignal('notes.add_now', { item: 'a' }));
  return { system, agent };
}

/** What the promise rejects with, as its info. */
async function rejection(promise: Promise<unknown>): Promise<ErrorInfo> {
  const error = await promise.then(() => undefined, (thrown: unknown) => thrown);
  expect(error).toBeInstanceOf(RuntimeError);
  return (error as RuntimeError).toInfo();
}

describe('a database file taken from under a running system', () => {
  it.each([
    ['deleted', (path: string) => unlink(path)],
    ['replaced by another database moved over it', async (path: string) => {
      const other = join(dirname(path), 'other.db');
      createSqliteStore({ path: other }).close();
      await rename(other, path);
    }],
  ])('%s: a step is not answered as written; the agent stays at its last written state and says so at every step', async (_how, takeAway) => {
    const path = await databaseFile();
    const errors: ErrorInfo[] = [];
    const { system, agent } = await runningWithOneNote(path, errors);
    await takeAway(path);

    for (const item of ['b', 'c']) {
      const failed = await rejection(agent.call(createSignal('notes.add_now', { item })));
      expect(failed).toMatchObject({ code: 'store_failed', subject: path, details: { reason: 'write_failed', path } });
      expect(failed.message).toContain(`${path} is no longer the database this store opened`);
      // Back at the state written before the file went: nothing answered is missing, nothing failed applied.
      expect(itemsOf(agent)).toEqual(['a']);
    }
    await system.shutdown();
    // The shutdown's report says the same, not the driver's words for a file it cannot write.
    const closing = errors.filter((error) => error.message.includes('closing'));
    expect(closing.map((error) => error.message)).toEqual([expect.stringContaining(`${path} is no longer the database this store opened`)]);
  });

  it("its write-ahead log deleted: a step is not answered as written, and shutting down copies what the log held into the database", async () => {
    const path = await databaseFile();
    const { system, agent } = await runningWithOneNote(path);
    // The answered step is in the log, not yet in the database: deleting the log takes it.
    await unlink(`${path}-wal`);

    const failed = await rejection(agent.call(createSignal('notes.add_now', { item: 'b' })));
    expect(failed).toMatchObject({ code: 'store_failed', subject: path, details: { reason: 'write_failed', path } });
    expect(failed.message).toContain(`${path}-wal, the write-ahead log of the database, is no longer the one this store opened`);
    expect(itemsOf(agent)).toEqual(['a']);
    await system.shutdown();

    const reopened = systems.start({ definitions: [NotesAgent], store: createSqliteStore({ path }) });
    expect(itemsOf(reopened.get('n1')!)).toEqual(['a']);
  });
});

describe('a database file deleted while batches follow one another without a pause', () => {
  it('is noticed all the same: the batches after it are refused, not answered as written', async () => {
    const path = await databaseFile();
    const store = createSqliteStore({ path });
    const batch = (n: number) => ({ save: Array.from({ length: 20 }, (_, i) => ({ id: `a${i}`, parent: undefined, definition: 'note', snapshot: JSON.stringify({ id: `a${i}`, n }) })), delete: [] as string[] });
    // The first write after opening looks at the files whatever the time: done before the stream.
    await store.commit(batch(-1));
    const batches = Array.from({ length: 4_000 }, (_, n) => batch(n));
    // Given at once, faster than the database's thread writes them: it goes from one to the next
    // without a pause. The file is taken away after the first thousand are given.
    const given = batches.map((each, n) => {
      if (n === 1_000) unlinkSync(path);
      return Promise.resolve(store.commit(each));
    });
    const outcomes = await Promise.allSettled(given);
    // Closing says so too: what it would copy into the file goes nowhere.
    expect(() => store.close()).toThrow(`${path} is no longer the database this store opened`);
    const first = outcomes.findIndex((outcome) => outcome.status === 'rejected');
    // Within a moment of it going, not only once that thread found nothing left to write.
    expect(first).toBeGreaterThanOrEqual(0);
    expect(first).toBeLessThan(2_000);
    expect(outcomes.slice(first).every((outcome) => outcome.status === 'rejected')).toBe(true);
    const reasons = outcomes.slice(first).map((outcome) => String((outcome as PromiseRejectedResult).reason.message));
    expect(reasons[0]).toContain(`${path} is no longer the database this store opened`);
    expect(reasons.slice(1).every((reason) => reason.includes('not written: the batch given before it failed'))).toBe(true);
  });
});

describe('a damaged database opened', () => {
  it('is refused with what reading it found, naming the file, not with the failure to close it', async () => {
    const path = await databaseFile();
    const blob = z.object({ text: z.string().default('') });
    const Big = defineAgent({
      name: 'big_agent',
      skills: [defineSkill({ name: 'blob', schema: blob, actions: [defineAction({ name: 'fill', description: 'Fill the blob', input: z.object({ length: z.number() }), state: blob, run: ({ length }) => result(null, { state: { text: 'x'.repeat(length) } }) })], routes: [{ path: 'blob.fill', target: { action: 'fill' } }] })],
    });
    const first = quietSystem({ definitions: [Big], store: createSqliteStore({ path }) });
    // Rows over more pages than the WAL holds before it is copied into the file, so that cutting the file loses some.
    for (let i = 0; i < 50; i++) await first.spawn(Big, { id: `b${i}` }).call(createSignal('blob.fill', { length: 200_000 }));
    // Cut short while the system runs: its shutdown cannot write the file back whole either.
    await truncate(path, 8_192);
    await first.shutdown();

    const error = thrown(() => quietSystem({ definitions: [Big], store: createSqliteStore({ path }) })) as RuntimeError;
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error.toInfo()).toMatchObject({ code: 'store_failed', subject: path, details: { reason: 'open_failed', path } });
    expect(error.message).toContain('the file is damaged');
    expect(error.message).not.toContain('closing');
  });
});

describe('rows edited by hand', () => {
  /** A file of agents a…e, each with one note, whose rows `edit` changes; then the system opened on it, and what it reported. */
  async function openedAfter(edit: (db: Database.Database, snapshotOf: (id: string) => Record<string, unknown>) => void) {
    const path = await databaseFile();
    const first = systems.start({ definitions: [NotesAgent], store: createSqliteStore({ path }) });
    for (const id of ['a', 'b', 'c', 'd', 'e']) await first.spawn(NotesAgent, { id }).call(createSignal('notes.add_now', { item: id }));
    await first.shutdown();
    const db = new Database(path);
    edit(db, (id) => JSON.parse((db.prepare('SELECT snapshot FROM agents WHERE id = ?').get(id) as { snapshot: string }).snapshot) as Record<string, unknown>);
    db.close();
    const errors: ErrorInfo[] = [];
    const system = systems.start({ definitions: [NotesAgent], store: createSqliteStore({ path }), onUnhandledError: (error) => errors.push(error) });
    return { system, errors, path };
  }
  const setSnapshot = (db: Database.Database, id: string, snapshot: Record<string, unknown>, parent: string | null = null) =>
    db.prepare('UPDATE agents SET snapshot = ?, parent = ? WHERE id = ?').run(JSON.stringify(snapshot), parent, id);

  it('a row holding the snapshot of another id is reported by its own id, which stays taken', async () => {
    const { system, errors, path } = await openedAfter((db, snapshotOf) => setSnapshot(db, 'b', { ...snapshotOf('b'), id: 'elsewhere' }));
    expect(system.list().map((ref) => ref.id)).toEqual(['a', 'c', 'd', 'e']);
    expect(errors).toEqual([expect.objectContaining({ code: 'invalid_snapshot', subject: 'b', message: expect.stringContaining(`the stored snapshot of agent 'b' in ${path} is the snapshot of agent 'elsewhere'`) })]);
    expect(() => system.spawn(NotesAgent, { id: 'b' })).toThrow(expect.objectContaining({ code: 'duplicate_agent', subject: 'b' }));
  });

  it('agents whose parent links form a cycle are each reported and left in the file, not restored as the report says they are not', async () => {
    const { system, errors } = await openedAfter((db, snapshotOf) => {
      setSnapshot(db, 'b', { ...snapshotOf('b'), parent: 'c' }, 'c');
      setSnapshot(db, 'c', { ...snapshotOf('c'), parent: 'b' }, 'b');
    });
    expect(system.list().map((ref) => ref.id)).toEqual(['a', 'd', 'e']);
    expect(errors.map((error) => [error.code, error.subject])).toEqual([
      ['invalid_snapshot', 'b'],
      ['invalid_snapshot', 'c'],
    ]);
    expect(errors[0]!.message).toContain("the parent links of the snapshots form a cycle: 'b' → 'c' → 'b'");
  });
});
