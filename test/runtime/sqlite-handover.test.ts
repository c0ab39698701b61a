/**
 * Batches reach the SQLite store's database thread two ways: in shared memory (a few slots, for
 * batches of rows that fit one) and as messages (batches with deletes, rows too long for a slot, a
 * lone surrogate in their text, or given while every slot is full); their commits are heard back
 * from shared memory or by message. What a caller relies on is the same either way: batches
 * written in the order they were given, each commit answered once it is written and in that order,
 * every row's text exactly as given, and a failure failing its batch and those given before it was
 * reported, whatever way each came.
 */
import Database from 'libsql';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createSqliteStore } from '../../src/index.js';
import type { StoreBatch } from '../../src/runtime/persistence.js';
import { refusingDatabase, rowTexts, tempFolders } from './fixtures.js';

const databaseFile = tempFolders('sqlite-handover').database;

type Row = StoreBatch['save'][number];

/** A row whose snapshot says which write it is. */
function row(id: string, version: number, padding = ''): Row {
  return { id, parent: undefined, definition: 'note', snapshot: JSON.stringify({ id, version, padding }) };
}

/** Commits each batch without waiting for the one before, and records the order their answers came in. */
async function commitAll(store: ReturnType<typeof createSqliteStore>, batches: StoreBatch[]): Promise<number[]> {
  const answered: number[] = [];
  await Promise.all(batches.map((batch, i) => Promise.resolve(store.commit(batch)).then(() => answered.push(i))));
  return answered;
}

describe('batches handed to the database thread in shared memory and as messages', () => {
  it('writes batches given both ways in the order they were given, and answers them in that order', async () => {
    const path = await databaseFile();
    const store = createSqliteStore({ path });
    // Alternating: small rows (a slot), a delete (a message), a row longer than a slot holds (a message).
    const long = 'x'.repeat(200_000);
    const batches: StoreBatch[] = [
      { save: [row('a', 1), row('gone', 1)], delete: [] },
      { save: [row('a', 2, long)], delete: [] },
      { save: [row('a', 3)], delete: ['gone'] },
      { save: [row('a', 4)], delete: [] },
      { save: [row('gone', 2), row('b', 1, long)], delete: [] },
      { save: [row('b', 2)], delete: [] },
    ];
    const answered = await commitAll(store, batches);
    store.close();
    expect(answered).toEqual([0, 1, 2, 3, 4, 5]);
    expect(rowTexts(path)).toEqual(new Map([['a', row('a', 4).snapshot], ['gone', row('gone', 2).snapshot], ['b', row('b', 2).snapshot]]));
  });

  it('writes 3,000 batches given at once (more than the slots, and than the outcomes shared memory holds), each answered once, in order, round after round', async () => {
    const path = await databaseFile();
    const store = createSqliteStore({ path });
    // Those past the outcomes shared memory holds are answered by message, between others heard from
    // it: which ones depends on how far the database's thread runs ahead, so several rounds.
    for (let round = 0; round < 6; round++) {
      const batches: StoreBatch[] = Array.from({ length: 3_000 }, (_, i) => ({ save: [row(`agent-${i % 7}`, round * 3_000 + i)], delete: [] }));
      const answered = await commitAll(store, batches);
      expect(answered).toEqual(batches.map((_, i) => i));
    }
    store.close();
    const rows = rowTexts(path);
    expect(rows.size).toBe(7);
    for (let agent = 0; agent < 7; agent++) {
      const last = 15_000 + 2_999 - ((2_999 - agent) % 7);
      expect(rows.get(`agent-${agent}`)).toBe(row(`agent-${agent}`, last).snapshot);
    }
  });

  it('answers in order a commit heard of by message and those written after it while this thread read them from shared memory', async () => {
    const path = await databaseFile();
    const store = createSqliteStore({ path });
    const answered: string[] = [];
    const track = (name: string, commit: void | Promise<void>) => Promise.resolve(commit).then(() => answered.push(name));
    // Long to write: this thread stops reading commits from shared memory while it waits (after a
    // millisecond without one), so the database's thread answers it by message.
    const long = track('long', store.commit({ save: Array.from({ length: 3_000 }, (_, i) => row(`many-${i}`, i)), delete: [] }));
    await sleep(5);
    // Blocked (no message heard) until the long batch is surely written; then given more, whose
    // commits land in shared memory while its message still waits to be heard.
    const block = (ms: number) => {
      for (const until = Date.now() + ms; Date.now() < until; );
    };
    block(300);
    const after = [1, 2, 3, 4, 5].map((n) => track(`after-${n}`, store.commit({ save: [row('a', n)], delete: [] })));
    block(100);
    await Promise.all([long, ...after]);
    store.close();
    expect(answered).toEqual(['long', 'after-1', 'after-2', 'after-3', 'after-4', 'after-5']);
  });

  it('keeps every character of ids, definitions and snapshots of one to four UTF-8 bytes each, beside ASCII ones, U+FEFF first included', async () => {
    const path = await databaseFile();
    const store = createSqliteStore({ path });
    // Pieces are cut by their lengths in UTF-16 units: text whose UTF-8 bytes outnumber them must land whole.
    // U+FEFF first: a decoder left to its defaults drops it as a byte order mark, and every piece after it moves.
    const odd = ['\u{FEFF}bom-first', 'plain', 'é-2-bytes', '€-3-bytes', '😀-4-bytes', 'mixed é€😀 \u{10FFFF}', '\u{FFFF}'];
    const rows = odd.map((id, i): Row => ({ id, parent: i > 0 ? odd[i - 1] : undefined, definition: `définition-${id}`, snapshot: JSON.stringify({ id, text: id.repeat(50) }) }));
    await commitAll(store, rows.map((r) => ({ save: [r], delete: [] })));
    await store.commit({ save: rows, delete: [] });
    expect(odd.map((id) => store.read(id))).toEqual(rows.map((r) => JSON.parse(r.snapshot)));
    store.close();
    const db = new Database(path, { readonly: true });
    const back = db.prepare('SELECT id, parent, definition, snapshot FROM agents ORDER BY rowid').all();
    db.close();
    expect(back).toEqual(rows.map((r) => ({ id: r.id, parent: r.parent ?? null, definition: r.definition, snapshot: r.snapshot })));
  });

  it('answers a commit given while the database thread looks at the bell in waits of its own, one while it waits on the bell, one after it went back to sleep, and one that takes longer than the agents thread listens', async () => {
    const path = await databaseFile();
    const store = createSqliteStore({ path });
    await store.commit({ save: [row('a', 0)], delete: [] });
    // Within the two milliseconds the database thread looks at the bell in short waits of its own.
    for (const until = performance.now() + 0.5; performance.now() < until; );
    await store.commit({ save: [row('a', 0.5)], delete: [] });
    // Past those, within the ten it waits on the bell to be woken.
    await sleep(4);
    await store.commit({ save: [row('a', 1)], delete: [] });
    // Past the ten milliseconds the database thread stays after a batch: a slot's batch must wake it.
    await sleep(30);
    await store.commit({ save: [row('a', 2)], delete: [] });
    await sleep(30);
    // Thousands of rows: written in more than the millisecond the agents' thread reads commits from shared memory.
    const many = Array.from({ length: 2_000 }, (_, i) => row(`many-${i}`, i));
    await store.commit({ save: many, delete: [] });
    await store.commit({ save: [row('a', 3)], delete: [] });
    store.close();
    const rows = rowTexts(path);
    expect(rows.get('a')).toBe(row('a', 3).snapshot);
    expect(rows.size).toBe(2_001);
  });

  it('fails a batch that cannot be written and refuses those given before its failure was heard, whichever way each came', async () => {
    const path = await databaseFile();
    refusingDatabase(path, 'refused');
    const store = createSqliteStore({ path });
    const given = [
      store.commit({ save: [row('a', 1)], delete: [] }),
      store.commit({ save: [row('refused', 1)], delete: [] }),
      store.commit({ save: [row('a', 2, 'x'.repeat(200_000))], delete: [] }),
      store.commit({ save: [row('a', 3)], delete: [] }),
    ];
    const outcomes = await Promise.allSettled(given);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'rejected']);
    expect(String((outcomes[1] as PromiseRejectedResult).reason.message)).toContain('agent refused is refused here');
    expect((outcomes[2] as PromiseRejectedResult).reason).toMatchObject({ code: 'store_failed', details: { reason: 'write_failed' } });
    // Given once the failure was heard: written.
    await store.commit({ save: [row('a', 4)], delete: [] });
    store.close();
    expect(rowTexts(path)).toEqual(new Map([['a', row('a', 4).snapshot]]));
  });
  it('uses no processor time at rest: both threads stop looking for each other once batches stop', async () => {
    const path = await databaseFile();
    const store = createSqliteStore({ path });
    for (let i = 0; i < 200; i++) await store.commit({ save: [row('a', i)], delete: [] });
    await sleep(50);
    // Either thread still looking (spinning) would use the whole 400 ms of one core.
    const before = process.cpuUsage();
    await sleep(400);
    const used = process.cpuUsage(before);
    store.close();
    expect((used.user + used.system) / 1000).toBeLessThan(100);
  });
});
