/**
 * Functions of the runtime that take no options refuse one given to them (`invalid_options`)
 * rather than ignore it: `createMemoryStore({ … })`, `createFileStore(dir, { … })`,
 * `chatMessage(text, { … })`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chatMessage, createFileStore, createMemoryStore, RuntimeError, SignalError } from '../../src/index.js';

/** What `fn` throws, failing the test when it does not throw. */
function thrownBy(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

describe('stores that take no options', () => {
  it('createMemoryStore refuses an options bag', () => {
    const error = thrownBy(() => (createMemoryStore as (options: unknown) => unknown)({ x: 1 }));
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({ code: 'invalid_options', subject: 'createMemoryStore' });
    expect(error.message).toBe('createMemoryStore takes no options, got an object: createSqliteStore({ path }) is the store that takes options');
    expect(() => (createMemoryStore as (options: unknown) => unknown)(undefined)).not.toThrow();
  });

  it('createFileStore refuses an options bag after the folder', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'skillstate-store-'));
    try {
      const error = thrownBy(() => (createFileStore as (dir: string, options: unknown) => unknown)(dir, { pretty: true }));
      expect(error).toBeInstanceOf(RuntimeError);
      expect(error).toMatchObject({ code: 'invalid_options', subject: 'createFileStore' });
      expect(error.message).toBe('createFileStore takes the folder only, no options, got an object: createSqliteStore({ path }) is the store that takes options');
      const store = createFileStore(dir);
      await store.save({ id: 'a', definition: 'x', state: {}, mounted: [] } as unknown as Parameters<typeof store.save>[0]);
      expect(await store.list()).toEqual(['a']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('chatMessage', () => {
  it('refuses options after the text, saying how to give a signal options', () => {
    const error = thrownBy(() => (chatMessage as (text: string, options: unknown) => unknown)('hi', { bogus: 1 }));
    expect(error).toBeInstanceOf(SignalError);
    expect(error).toMatchObject({ code: 'invalid_options', subject: 'chatMessage' });
    expect(error.message).toBe("chatMessage takes the text only, no options, got an object: for a signal with options, write createSignal('chat.message', { text }, options)");
    expect(chatMessage('hi')).toMatchObject({ type: 'chat.message', data: { text: 'hi' } });
    // What map gives a callback (an index, the array) is no options bag.
    expect(['a', 'b'].map(chatMessage).map((signal) => signal.data)).toEqual([{ text: 'a' }, { text: 'b' }]);
  });
});
