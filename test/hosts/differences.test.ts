/** The behaviours the hosts do not share are data (test/hosts/cases.ts), and the docs list exactly those. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HOST_DIFFERENCES } from './cases.js';

const docs = readFileSync(new URL('../../docs/restate.md', import.meta.url), 'utf8');
const section = docs.slice(docs.indexOf('### Where the hosts differ'), docs.indexOf('\n## ', docs.indexOf('### Where the hosts differ')));
const rows = section.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| behaviour') && !line.startsWith('| ---'));

describe('host differences', () => {
  it('docs/restate.md lists every difference of the table, as the table words it, and no other', () => {
    const expected = Object.values(HOST_DIFFERENCES).map((entry) => `| ${entry.behaviour} | ${entry['in-process']} | ${entry.restate} | ${entry.reason} |`);
    expect(rows).toEqual(expected);
  });

  it('each difference says what both hosts do and why', () => {
    for (const entry of Object.values(HOST_DIFFERENCES)) {
      for (const field of [entry.behaviour, entry['in-process'], entry.restate, entry.reason]) {
        expect(field.length).toBeGreaterThan(20);
        expect(field).not.toContain('|');
      }
    }
  });
});
