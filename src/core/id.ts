/**
 * Random ids in nanoid's format: 21 characters of its URL-safe alphabet (`A-Za-z0-9_-`), each
 * from a byte of the crypto generator masked to 6 bits (the alphabet has 64 characters, so every
 * character is equally likely, as nanoid's are).
 *
 * Signals are made by the thousand, one id each. nanoid refills its random pool every 128 ids
 * and builds each id a character at a time; here the pool holds 1,024 ids' worth of bytes, turned
 * into the alphabet's characters once per refill, and an id is one string made from 21 of them.
 *
 * Pure: no I/O, no XState (the random bytes come from the Web Crypto API every runtime has).
 */
import { urlAlphabet } from 'nanoid';

/** The length of an id: nanoid's default. */
export const ID_LENGTH = 21;
const IDS_PER_POOL = 1024;
const POOL_SIZE = ID_LENGTH * IDS_PER_POOL;

/** The alphabet's character codes, by the 6-bit value they stand for. */
const CODES = Uint8Array.from(urlAlphabet, (char) => char.charCodeAt(0));

const pool = new Uint8Array(POOL_SIZE);
/** Where the next id's characters start; the pool is refilled when it is used up. */
let offset = POOL_SIZE;

function refill(): void {
  crypto.getRandomValues(pool);
  for (let i = 0; i < POOL_SIZE; i++) pool[i] = CODES[pool[i]! & 63]!;
  offset = 0;
}

/** A new random id: 21 characters of nanoid's URL-safe alphabet. */
export function randomId(): string {
  if (offset === POOL_SIZE) refill();
  const p = pool;
  const o = offset;
  offset = o + ID_LENGTH;
  // One call with the 21 characters: a string made at once, not grown character by character.
  return String.fromCharCode(
    p[o]!, p[o + 1]!, p[o + 2]!, p[o + 3]!, p[o + 4]!, p[o + 5]!, p[o + 6]!,
    p[o + 7]!, p[o + 8]!, p[o + 9]!, p[o + 10]!, p[o + 11]!, p[o + 12]!, p[o + 13]!,
    p[o + 14]!, p[o + 15]!, p[o + 16]!, p[o + 17]!, p[o + 18]!, p[o + 19]!, p[o + 20]!,
  );
}
