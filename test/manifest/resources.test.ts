/**
 * Text or binary: a resource is returned as text only when every byte returned is text (UTF-8,
 * no NUL), wherever in the file the first binary byte sits; nothing past the size limit is read
 * to decide.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { discoverSkills } from '../../src/index.js';
import { looksBinary, readSkillResource } from '../../src/manifest/resources.js';
import { simpleSkill, tree } from './tree.js';

const text = (bytes: number) => Buffer.from('plain text line\n'.repeat(Math.ceil(bytes / 16)).slice(0, bytes));
const euro = Buffer.from('€'); // three bytes: E2 82 AC

async function readAs(content: Buffer, maxBytes?: number) {
  const root = await tree({ 'res/SKILL.md': simpleSkill('res'), 'res/file.dat': content });
  const registry = await discoverSkills({ extra: [root] });
  return readSkillResource('res', await registry.content('res'), 'file.dat', maxBytes === undefined ? {} : { maxBytes });
}

describe('readSkillResource: text or binary', () => {
  it.each([
    ['a NUL byte after 9,000 bytes of text', Buffer.concat([text(9000), Buffer.from([0x41, 0x00, 0x42])])],
    ['bytes that are not UTF-8 after 9,000 bytes of text', Buffer.concat([text(9000), Buffer.from([0xff, 0xfe, 0x80, 0x41])])],
    ['a NUL byte as the very last byte of 200 KiB', Buffer.concat([text(200 * 1024), Buffer.from([0x00])])],
    ['a character cut off by the end of the file', Buffer.concat([text(9000), euro.subarray(0, 2)])],
  ])('binary: %s', async (_name, content) => {
    const read = await readAs(content);
    expect(read).toMatchObject({ binary: true, text: undefined, size: content.length });
  });

  it.each([
    ['text with a three-byte character across the 8 KiB mark', Buffer.concat([text(8191), euro, text(1000)])],
    ['text whose last character is multi-byte', Buffer.concat([text(9000), euro])],
  ])('text: %s', async (_name, content) => {
    const read = await readAs(content);
    expect(read).toMatchObject({ binary: false, truncated: false, text: content.toString('utf8') });
    expect(read.text).not.toContain('\uFFFD');
  });

  it('decides on the bytes it returns: binary past the limit is not read, a character cut by the limit is dropped', async () => {
    const binaryLater = Buffer.concat([text(1000), Buffer.from([0x00, 0xff])]);
    expect(await readAs(binaryLater, 1000)).toMatchObject({ binary: false, truncated: true, text: text(1000).toString('utf8') });
    const cutCharacter = Buffer.concat([text(999), euro, text(10)]);
    expect(await readAs(cutCharacter, 1000)).toMatchObject({ binary: false, truncated: true, text: text(999).toString('utf8') });
    const binaryWithin = Buffer.concat([text(900), Buffer.from([0xc3, 0x28]), text(500)]);
    expect(await readAs(binaryWithin, 1000)).toMatchObject({ binary: true, text: undefined });
  });

  it('looksBinary: all the bytes, not a prefix; a cut character at the end only counts when the bytes are the whole file', () => {
    expect(looksBinary(Buffer.concat([text(20_000), Buffer.from([0x00])]))).toBe(true);
    expect(looksBinary(Buffer.concat([text(20_000), Buffer.from([0xc0, 0x80])]))).toBe(true);
    expect(looksBinary(Buffer.concat([text(20_000), euro]))).toBe(false);
    expect(looksBinary(Buffer.concat([text(20_000), euro.subarray(0, 1)]))).toBe(true);
    expect(looksBinary(Buffer.concat([text(20_000), euro.subarray(0, 1)]), false)).toBe(false);
  });

  it('read_skill_resource describes a file that turns binary after 9,000 bytes, asked for by absolute path too', async () => {
    const content = Buffer.concat([text(9000), Buffer.from([0x89, 0x00, 0xff, 0x10])]);
    const root = await tree({ 'res/SKILL.md': simpleSkill('res'), 'res/late.bin.txt': content });
    const registry = await discoverSkills({ extra: [root] });
    const { cmd, createSkillTools, defineAgent } = await import('../../src/index.js');
    const agent = defineAgent({ name: 'a', skills: [createSkillTools(registry)], registry }).new();
    const outcome = await cmd(agent, { action: 'read_skill_resource', params: { skill: 'res', path: path.join(root, 'res', 'late.bin.txt') } });
    expect(outcome.results[0]).toMatchObject({ ok: true, output: { binary: true, content: `[binary file of ${content.length} bytes: not shown]` } });
  });
});
