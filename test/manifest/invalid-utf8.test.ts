/**
 * Invalid UTF-8 in a SKILL.md is reported — a warning naming the file and the byte offset when
 * loading, an error when validating strictly — never silently replaced by U+FFFD.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { discoverSkills } from '../../src/index.js';
import { validateSkillDir } from '../../src/manifest/index.js';
import { invalidUtf8Offset } from '../../src/manifest/utf8.js';
import { tree } from './tree.js';

const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'utf8') : Buffer.from(part))));

describe('invalidUtf8Offset locates the first byte that is not UTF-8', () => {
  it.each<[string, Buffer, number]>([
    ['valid ASCII', bytes('plain text'), -1],
    ['valid multi-byte text', bytes('技能 мой-навык 😀'), -1],
    ['a Latin-1 é', bytes('caf', [0xe9], ' ok'), 3],
    ['a lone continuation byte', bytes('ab', [0x80]), 2],
    ['an overlong two-byte form', bytes('a', [0xc0, 0xaf]), 1],
    ['an overlong three-byte form', bytes('ab', [0xe0, 0x80, 0xaf]), 2],
    ['a UTF-16 surrogate', bytes('x', [0xed, 0xa0, 0x80]), 1],
    ['past U+10FFFF', bytes('x', [0xf4, 0x90, 0x80, 0x80]), 1],
    ['a lead byte F5', bytes([0xf5, 0x80, 0x80, 0x80]), 0],
    ['a sequence cut short by another character', bytes('é', [0xe2, 0x82], 'x'), 2],
    ['a sequence cut short by the end', bytes('ok', [0xe2, 0x82]), 2],
  ])('%s', (_label, input, expected) => {
    expect(invalidUtf8Offset(input)).toBe(expected);
  });

  it('a sequence cut by the end of a prefix is not an error when more follows', () => {
    expect(invalidUtf8Offset(bytes('ok', [0xe2, 0x82]), false)).toBe(-1);
    expect(invalidUtf8Offset(bytes('ok', [0xff]), false)).toBe(2);
  });
});

describe('a SKILL.md holding invalid UTF-8 is reported with the file and the byte offset', () => {
  const head = '---\nname: latin\ndescription: Caf';
  const file = (root: string) => path.join(root, 'latin', 'SKILL.md');

  it('in the front matter: discovery loads the skill with a warning naming file and offset', async () => {
    const root = await tree({ 'latin/SKILL.md': bytes(head, [0xe9], ' menu.\n---\n# Body\n') });
    const registry = await discoverSkills({ bundled: false, extra: [root] });
    expect(registry.names()).toEqual(['latin']);
    const warning = registry.diagnostics.find((d) => d.code === 'manifest_invalid_utf8');
    expect(warning).toMatchObject({ level: 'warning', skill: 'latin', details: { file: file(root), offset: Buffer.byteLength(head) } });
    expect(warning?.message).toBe(`${file(root)}: byte ${Buffer.byteLength(head)} is not valid UTF-8; invalid bytes were read as U+FFFD`);
  });

  it('in the body, past what discovery reads: reported when the skill is loaded', async () => {
    const front = `---\nname: latin\ndescription: Fine here.\n---\n# Body\n\n${'text '.repeat(2000)}na`;
    const root = await tree({ 'latin/SKILL.md': bytes(front, [0xef, 0xbb], 've\n') });
    const registry = await discoverSkills({ bundled: false, extra: [root] });
    expect(registry.diagnostics.filter((d) => d.code === 'manifest_invalid_utf8')).toEqual([]);
    await registry.content('latin');
    expect(registry.diagnostics.find((d) => d.code === 'manifest_invalid_utf8')).toMatchObject({ details: { file: file(root), offset: Buffer.byteLength(front) } });
  });

  it('strict validation makes it an error naming the offset', async () => {
    const root = await tree({ 'latin/SKILL.md': bytes(head, [0xe9], ' menu.\n---\n# Body\n') });
    const result = await validateSkillDir(path.join(root, 'latin'));
    expect(result.valid).toBe(false);
    expect(result.errors).toEqual([`SKILL.md is not valid UTF-8: byte ${Buffer.byteLength(head)} is not part of a UTF-8 character`]);
  });

  it('a valid character cut by the reading chunk is not reported', async () => {
    // 'é' is two bytes; 700 of them put a character across the first 1,024-byte read.
    const root = await tree({ 'wide/SKILL.md': `---\nname: wide\ndescription: "${'é'.repeat(700)}"\n---\n# Body\n` });
    const registry = await discoverSkills({ bundled: false, extra: [root] });
    expect(registry.names()).toEqual(['wide']);
    expect(registry.entry('wide')!.description).toBe('é'.repeat(700));
    expect(registry.diagnostics.filter((d) => d.code === 'manifest_invalid_utf8')).toEqual([]);
    expect((await validateSkillDir(path.join(root, 'wide'))).errors).toEqual([]);
  });
});
