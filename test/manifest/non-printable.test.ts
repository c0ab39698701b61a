/**
 * Characters outside YAML's printable set in front matter. The reference validator reads front
 * matter with strictyaml, whose reader (ruamel.yaml's) refuses every code point but tab, LF, CR,
 * U+0020–U+007E, NEL, U+00A0–U+D7FF, U+E000–U+FFFD and U+10000–U+10FFFF before it reads any YAML:
 * `--spec agentskills` refuses them with the reader's own words (the reference itself crashes on
 * them); `--spec skillstate` and loading accept them, with a warning naming the character.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { discoverSkills } from '../../src/index.js';
import { validateSkillDir } from '../../src/manifest/index.js';
import { NON_PRINTABLE, referenceYamlRefusal } from '../../src/manifest/reference-yaml.js';
import { tree } from './tree.js';

/** A SKILL.md whose description holds `character`: at position 30 of the text the reference loads. */
const withCharacter = (character: string) => `---\nname: ctl\ndescription: A bell${character} rings\n---\n\n# Body\n`;

const refused = (hex: string, position = 30) => `Invalid YAML in frontmatter: unacceptable character #x${hex}: special characters are not allowed\n  in "<unicode string>", position ${position}`;

describe('--spec agentskills', () => {
  it.each([
    ['U+0000', '\0', '0000'],
    ['U+0007 (bell)', '\x07', '0007'],
    ['U+000B (vertical tab)', '\x0b', '000b'],
    ['U+000C (form feed)', '\x0c', '000c'],
    ['U+001B (escape)', '\x1b', '001b'],
    ['U+007F (delete)', '\x7f', '007f'],
    ['U+0080 (a C1 control)', '\x80', '0080'],
    ['U+009F (a C1 control)', '\x9f', '009f'],
    ['U+FFFE', '\ufffe', 'fffe'],
    ['U+FFFF', '\uffff', 'ffff'],
  ])('refuses %s with the reader error, naming the character and its position', async (_label, character, hex) => {
    const root = await tree({ 'ctl/SKILL.md': withCharacter(character) });
    const result = await validateSkillDir(path.join(root, 'ctl'), { spec: 'agentskills' });
    expect(result).toMatchObject({ valid: false, errors: [refused(hex)] });
  });

  it.each([
    ['NEL (U+0085)', '\x85'],
    ['a no-break space', '\xa0'],
    ['U+FEFF inside a value', '\ufeff'],
    ['a private-use character', '\ue000'],
    ['an emoji', '😀'],
    ['a tab inside quotes', "'\t'"],
  ])('lets %s through its reader', async (_label, character) => {
    const root = await tree({ 'ctl/SKILL.md': withCharacter(character) });
    const result = await validateSkillDir(path.join(root, 'ctl'), { spec: 'agentskills' });
    expect(result.errors.filter((message) => message.includes('unacceptable character'))).toEqual([]);
  });

  it('counts the position in code points from the line break after the opening ---, the first character refused', async () => {
    const text = '---\nname: ctl\ndescription: >\n  Büro 😀 text\n  and more\x1b[1m and\x07\n---\n';
    const root = await tree({ 'ctl/SKILL.md': text });
    expect((await validateSkillDir(path.join(root, 'ctl'), { spec: 'agentskills' })).errors).toEqual([refused('001b', 50)]);
    expect(referenceYamlRefusal('name: ctl\ndescription: >\n  Büro 😀 text\n  and more\x1b[1m and\x07\n')).toMatchObject({ construct: 'a non-printable character', character: 'U+001B', line: 5, column: 11 });
  });

  it('refuses it in a comment or a key too, before any other YAML the reference refuses', async () => {
    const root = await tree({
      'comment/SKILL.md': '---\nname: comment\n# note\x07\ndescription: d\n---\n',
      'first/SKILL.md': '---\nname: first\ndescription: [flow]\nlicense: x\x07\n---\n',
    });
    expect((await validateSkillDir(path.join(root, 'comment'), { spec: 'agentskills' })).errors).toEqual([refused('0007', 21)]);
    expect((await validateSkillDir(path.join(root, 'first'), { spec: 'agentskills' })).errors).toEqual([refused('0007', 43)]);
  });

  it('says nothing of control characters in the body, which the reference does not load as YAML', async () => {
    const root = await tree({ 'ctl/SKILL.md': '---\nname: ctl\ndescription: Rings a bell.\n---\n\n# Bell \x07\x1b[0m\n' });
    expect(await validateSkillDir(path.join(root, 'ctl'), { spec: 'agentskills' })).toMatchObject({ valid: true, errors: [] });
  });
});

describe('--spec skillstate and loading', () => {
  it('accept the skill, with a warning naming the character and where it is', async () => {
    const root = await tree({ 'ctl/SKILL.md': withCharacter('\x07') });
    const result = await validateSkillDir(path.join(root, 'ctl'), { spec: 'skillstate' });
    expect(result).toMatchObject({ valid: true, errors: [] });
    const warning = `front matter line 3 uses a non-printable character (U+0007, column 20), which the Agent Skills reference validator refuses (Invalid YAML in frontmatter); skillstate reads it as YAML`;
    expect(result.warnings).toEqual([expect.objectContaining({ code: 'manifest_reference_syntax', message: expect.stringContaining(warning) })]);

    const registry = await discoverSkills({ extra: [root] });
    expect(registry.names()).toEqual(['ctl']);
    expect(registry.diagnostics).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'manifest_reference_syntax', skill: 'ctl', details: expect.objectContaining({ construct: 'a non-printable character', line: 3, column: 20 }) })]));
  });
});

describe('the set refused', () => {
  it('is the reader’s: every code point but tab, LF, CR, U+0020–U+007E, NEL, U+00A0–U+D7FF, U+E000–U+FFFD and above U+FFFF', () => {
    const printable = (point: number) =>
      point === 0x09 || point === 0x0a || point === 0x0d || (point >= 0x20 && point <= 0x7e) || point === 0x85 || (point >= 0xa0 && point <= 0xd7ff) || (point >= 0xe000 && point <= 0xfffd) || point >= 0x10000;
    const wrong: string[] = [];
    for (let point = 0; point <= 0x10ffff; point += point < 0x11000 ? 1 : 0x1000) {
      if (point >= 0xd800 && point <= 0xdfff) continue; // no UTF-8 text holds a lone surrogate
      if (NON_PRINTABLE.test(String.fromCodePoint(point)) === printable(point)) wrong.push(point.toString(16));
    }
    expect(wrong).toEqual([]);
  });
});
