/**
 * Signal and agent ids: nanoid's format (21 characters of its URL-safe alphabet), random, and
 * never repeated, also across the refills of the random pool they are cut from.
 */
import { urlAlphabet } from 'nanoid';
import { describe, expect, it } from 'vitest';
import { ID_LENGTH, randomId } from '../../src/core/id.js';

/** More ids than one pool holds (1,024), so the run goes through several refills. */
const COUNT = 5_000;

describe('randomId', () => {
  const ids = Array.from({ length: COUNT }, () => randomId());

  it('is 21 characters of the URL-safe alphabet, as nanoid makes them', () => {
    expect(ID_LENGTH).toBe(21);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{21}$/);
  });

  it('does not repeat, within a pool or across refills', () => {
    expect(new Set(ids).size).toBe(COUNT);
  });

  it('uses every character of the alphabet, each about equally often', () => {
    const counts = new Map<string, number>();
    for (const id of ids) for (const char of id) counts.set(char, (counts.get(char) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual([...urlAlphabet].sort());
    // 105,000 characters over 64: about 1,640 each; a bias of the byte-to-character mapping
    // (a character twice as likely, or never drawn) lands far outside these bounds.
    const expected = (COUNT * ID_LENGTH) / 64;
    for (const count of counts.values()) {
      expect(count).toBeGreaterThan(expected * 0.8);
      expect(count).toBeLessThan(expected * 1.2);
    }
  });
});
