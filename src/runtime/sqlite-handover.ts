/**
 * Batches handed from the agents' thread to the database's thread through shared memory, and
 * their commits heard back the same way: neither thread waits on a message for the other.
 *
 * - A batch of rows (their text and the length of each piece, see `rowsText` in
 *   `sqlite-store.ts`) is put in a free slot: its text as UTF-8, its lengths as they are, then the
 *   slot marked full. The database's thread takes the slots in the order of their batches' ids,
 *   between the batches that came as messages (those with new bodies or deletes, those too large
 *   for a slot, those given while every slot was full).
 * - The bell: rung after each batch or request is given. The database's thread, having nothing to
 *   do, looks at it in short waits of its own for a while, then waits on it to be woken
 *   (`Atomics.notify`), then goes back to its event loop, where only a message wakes it; the
 *   agents' thread reads where it is to know which.
 * - Whether the cores are crowded, as the database's thread finds them (see `crowded`).
 * - A commit's outcome: its id (plus one) in the outcome ring once written. The agents' thread
 *   reads the ring between steps and while it waits (`listen`), and gives the answers the commit
 *   held. While it listens, the database's thread sends no message for a commit; once it stops
 *   listening, every commit is also answered by a message, as is every failure.
 *
 * Each pairing of a store and a load below (the bell and where the thread is; a commit's outcome
 * and whether the agents' thread listens) is made with `Atomics` on both sides, so that of two
 * threads acting at once, at least one sees what the other did.
 */

/** Batches in shared memory at once; more wait for a slot as messages. */
export const SLOTS = 4;
/** The bytes of text a slot holds: a batch of longer rows goes as a message. */
export const SLOT_BYTES = 131_072;
/** Seven lengths a row (see `rowsText`): a slot holds 2,048 rows. */
export const SLOT_FIELDS = 7 * 2_048;
/** Commits whose outcomes the ring holds ahead of the agents' thread; a power of two. */
export const OUTCOMES = 1_024;

/** Where things are in the control array: shared counters and flags, then each slot's head. */
export const CONTROL = {
  /** Rung (incremented) after each batch or request given. */
  bell: 0,
  /** Where the database's thread is: `THREAD`. */
  thread: 1,
  /** The id of the first commit the agents' thread has not heard of yet (its low 32 bits). */
  heard: 2,
  /** 1 while the agents' thread reads commits from the ring (see `listen`): no message is sent for one then. */
  listening: 3,
  /** 1 while the database's thread finds the cores crowded: neither thread spins on its core for the other's news then. */
  crowded: 4,
  /** The first slot's head; each head is `SLOT_HEAD` numbers: state (`SLOT`), batch id, era, bytes of text, lengths. */
  heads: 5,
  slotHead: 5,
} as const;

/** A slot's state. */
export const SLOT = { free: 0, full: 1 } as const;

/**
 * Where the database's thread is: writing or looking at the bell (`busy`: nothing wakes it), waiting
 * on the bell to be woken (`Atomics.notify`), or asleep in its event loop (woken by a message).
 */
export const THREAD = { busy: 0, waiting: 1, asleep: 2 } as const;

/** A batch's rows as one text and the lengths of its pieces (see `rowsText`). */
export interface SlotRows {
  text: string;
  lengths: Int32Array;
}

const encoder = new TextEncoder();

/** Whether `text` holds no lone surrogate: UTF-8 cannot carry one, and would put U+FFFD in its place. */
const wellFormed = (text: string): boolean => (text as string & { isWellFormed(): boolean }).isWellFormed();

/** The shared memory of one store: made by the agents' thread, given to the database's thread. */
export class Handover {
  readonly control = new Int32Array(new SharedArrayBuffer(4 * (CONTROL.heads + SLOTS * CONTROL.slotHead)));
  readonly text = new Uint8Array(new SharedArrayBuffer(SLOTS * SLOT_BYTES));
  readonly fields = new Int32Array(new SharedArrayBuffer(4 * SLOTS * SLOT_FIELDS));
  readonly outcomes = new Int32Array(new SharedArrayBuffer(4 * OUTCOMES));
  /** Each slot's text, as a view made once. */
  private readonly places = Array.from({ length: SLOTS }, (_, slot) => this.text.subarray(slot * SLOT_BYTES, (slot + 1) * SLOT_BYTES));
  /** The slot tried first: slots are filled in turn, so the oldest is free first. */
  private turn = 0;

  /** What the database's thread is given to find these (see the worker's source). */
  get shared() {
    return { control: this.control.buffer, text: this.text.buffer, fields: this.fields.buffer, outcomes: this.outcomes.buffer };
  }

  /**
   * Puts batch `id`'s rows in a free slot; false when none is free or they do not fit (the batch
   * then goes as a message). Rows whose text holds a lone surrogate go as a message too.
   */
  put(id: number, era: number, rows: SlotRows): boolean {
    if (rows.lengths.length > SLOT_FIELDS || rows.text.length > SLOT_BYTES) return false;
    let slot = -1;
    for (let tried = 0; tried < SLOTS; tried++) {
      const at = (this.turn + tried) % SLOTS;
      if (Atomics.load(this.control, CONTROL.heads + at * CONTROL.slotHead) === SLOT.free) {
        slot = at;
        break;
      }
    }
    if (slot < 0 || !wellFormed(rows.text)) return false;
    const { read, written } = encoder.encodeInto(rows.text, this.places[slot]!);
    if (read !== rows.text.length) return false;
    this.fields.set(rows.lengths, slot * SLOT_FIELDS);
    const head = CONTROL.heads + slot * CONTROL.slotHead;
    this.control[head + 1] = id | 0;
    this.control[head + 2] = era;
    this.control[head + 3] = written;
    this.control[head + 4] = rows.lengths.length;
    Atomics.store(this.control, head, SLOT.full);
    this.turn = (slot + 1) % SLOTS;
    return true;
  }

  /**
   * Rings the bell after something was given: wakes the database's thread if it waits on it.
   * True when that thread is asleep in its event loop and no message was posted (`posted`): the
   * caller then posts one to wake it.
   */
  ring(posted: boolean): boolean {
    Atomics.add(this.control, CONTROL.bell, 1);
    const thread = Atomics.load(this.control, CONTROL.thread);
    if (thread === THREAD.waiting) Atomics.notify(this.control, CONTROL.bell, 1);
    return thread === THREAD.asleep && !posted;
  }

  /** Whether commit `id` was written (its outcome in the ring). */
  written(id: number): boolean {
    return Atomics.load(this.outcomes, id & (OUTCOMES - 1)) === ((id + 1) | 0);
  }

  /** The agents' thread has heard of every commit before `id`: the ring may hold outcomes up to `OUTCOMES` past it. */
  heard(id: number): void {
    Atomics.store(this.control, CONTROL.heard, id | 0);
  }

  /** Whether the database's thread last found the cores crowded. */
  crowded(): boolean {
    return Atomics.load(this.control, CONTROL.crowded) === 1;
  }

  /** The agents' thread reads the ring (true) or waits for messages (false). */
  listening(on: boolean): void {
    Atomics.store(this.control, CONTROL.listening, on ? 1 : 0);
  }
}
