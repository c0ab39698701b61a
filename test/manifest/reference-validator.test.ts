/**
 * The Agent Skills reference validator (skills-ref, Python) ported onto `validateSkillDir`: its
 * own test cases, run on real folders, and one table holding every message the reference can
 * produce with an input that produces it. Expected messages are written from the reference's
 * source (f-strings filled in by hand), character for character.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { discoverSkills } from '../../src/index.js';
import { parseSkillManifest, validateSkillDir } from '../../src/manifest/index.js';
import { referenceYamlRefusal } from '../../src/manifest/reference-yaml.js';
import { validateSkillTree } from '../../src/manifest/validate-tree.js';
import { tree } from './tree.js';

const ALLOWED = "['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'name']";

/** A folder `dir` under a fresh temporary root, holding SKILL.md with `content`. */
async function skillDir(dir: string, content: string, file = 'SKILL.md'): Promise<string> {
  const root = await tree();
  const folder = path.join(root, dir);
  await mkdir(folder, { recursive: true });
  await writeFile(path.join(folder, file), content);
  return folder;
}

const md = (frontMatter: string, body = 'Body\n') => `---\n${frontMatter}\n---\n${body}`;

async function errorsOf(dir: string, content: string): Promise<string[]> {
  return (await validateSkillDir(await skillDir(dir, content), { spec: 'agentskills' })).errors;
}

describe('every message of the reference validator, with an input producing it', () => {
  const long = 'a'.repeat(70);
  const table: [message: string, dir: string, content: string][] = [
    ['Missing required file: SKILL.md', 'my-skill', ''],
    ['SKILL.md must start with YAML frontmatter (---)', 'my-skill', '# No frontmatter here'],
    ['SKILL.md frontmatter not properly closed with ---', 'my-skill', '---\nname: my-skill\ndescription: A test skill\n'],
    ['SKILL.md frontmatter must be a YAML mapping', 'my-skill', md('- just\n- a\n- list')],
    [`Unexpected fields in frontmatter: unknown_field. Only ${ALLOWED} are allowed.`, 'my-skill', md('name: my-skill\ndescription: A test skill\nunknown_field: should not be here')],
    ['Missing required field in frontmatter: name', 'my-skill', md('description: A test skill')],
    ["Field 'name' must be a non-empty string", 'my-skill', md('name:\ndescription: A test skill')],
    [`Skill name '${long}' exceeds 64 character limit (70 chars)`, long, md(`name: ${long}\ndescription: A test skill`)],
    ["Skill name 'MySkill' must be lowercase", 'MySkill', md('name: MySkill\ndescription: A test skill')],
    ['Skill name cannot start or end with a hyphen', '-my-skill', md('name: -my-skill\ndescription: A test skill')],
    ['Skill name cannot contain consecutive hyphens', 'my--skill', md('name: my--skill\ndescription: A test skill')],
    ["Skill name 'my_skill' contains invalid characters. Only letters, digits, and hyphens are allowed.", 'my_skill', md('name: my_skill\ndescription: A test skill')],
    ["Directory name 'wrong-name' must match skill name 'correct-name'", 'wrong-name', md('name: correct-name\ndescription: A test skill')],
    ['Missing required field in frontmatter: description', 'my-skill', md('name: my-skill')],
    ["Field 'description' must be a non-empty string", 'my-skill', md('name: my-skill\ndescription: "   "')],
    ['Description exceeds 1024 character limit (1100 chars)', 'my-skill', md(`name: my-skill\ndescription: ${'x'.repeat(1100)}`)],
    ["Field 'compatibility' must be a string", 'my-skill', md('name: my-skill\ndescription: A test skill\ncompatibility:\n  - python')],
    ['Compatibility exceeds 500 character limit (550 chars)', 'my-skill', md(`name: my-skill\ndescription: A test skill\ncompatibility: ${'x'.repeat(550)}`)],
  ];

  it.each(table)('%s', async (message, dir, content) => {
    const folder = content === '' ? path.join(await tree(), dir) : await skillDir(dir, content);
    if (content === '') await mkdir(folder);
    expect((await validateSkillDir(folder, { spec: 'agentskills' })).errors).toEqual([message]);
  });

  it('Path does not exist: <path>, Not a directory: <path>', async () => {
    const root = await tree({ 'file.txt': 'test' });
    expect((await validateSkillDir(path.join(root, 'nonexistent'))).errors).toEqual([`Path does not exist: ${path.join(root, 'nonexistent')}`]);
    expect((await validateSkillDir(path.join(root, 'file.txt'))).errors).toEqual([`Not a directory: ${path.join(root, 'file.txt')}`]);
  });

  it('Invalid YAML in frontmatter: <the loader says why> (test_invalid_yaml)', async () => {
    // strictyaml refuses the flow sequence before it could find the bracket unclosed.
    expect(await errorsOf('my-skill', md('name: [invalid\ndescription: broken'))).toEqual([
      'Invalid YAML in frontmatter: While scanning\n  in "<unicode string>", line 2, column 7:\n    name: [invalid\n          ^ (line: 2)\n' +
        "Found ugly disallowed JSONesque flow mapping (surround with ' and ' to make text appear literally)\n" +
        '  in "<unicode string>", line 2, column 8:\n    name: [invalid\n           ^ (line: 2)',
    ]);
    // YAML invalid for other reasons: the reason is skillstate's parser's, after the reference's prefix.
    const errors = await errorsOf('my-skill', md('name: my-skill\ndescription: "unclosed'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^Invalid YAML in frontmatter: \S/);
  });
});

describe("the reference's own test cases (test_validator.py, test_parser.py)", () => {
  it.each<[string, string, string]>([
    ['test_valid_skill', 'my-skill', md('name: my-skill\ndescription: A test skill', '# My Skill\n')],
    ['test_valid_with_all_fields', 'my-skill', md('name: my-skill\ndescription: A test skill\nlicense: MIT\nmetadata:\n  author: Test')],
    ['test_allowed_tools_accepted', 'my-skill', md('name: my-skill\ndescription: A test skill\nallowed-tools: Bash(jq:*) Bash(git:*)')],
    ['test_i18n_chinese_name', '技能', md('name: 技能\ndescription: A skill with Chinese name')],
    ['test_i18n_russian_name_with_hyphens', 'мой-навык', md('name: мой-навык\ndescription: A skill with Russian name')],
    ['test_i18n_russian_lowercase_valid', 'навык', md('name: навык\ndescription: A skill with Russian lowercase name')],
    ['test_valid_compatibility', 'my-skill', md('name: my-skill\ndescription: A test skill\ncompatibility: Requires Python 3.11+')],
    ['test_nfkc_normalization (decomposed name, composed folder)', 'caf\u00e9', md('name: cafe\u0301\ndescription: A test skill')],
  ])('%s: valid', async (_label, dir, content) => {
    const result = await validateSkillDir(await skillDir(dir, content), { spec: 'agentskills' });
    expect(result.errors).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('test_i18n_russian_uppercase_rejected: uppercase in any script must be lowercase', async () => {
    expect(await errorsOf('НАВЫК', md('name: НАВЫК\ndescription: A skill with Russian uppercase name'))).toEqual(["Skill name 'НАВЫК' must be lowercase"]);
    expect(await errorsOf('ΔΕΛΤΑ', md('name: ΔΕΛΤΑ\ndescription: Greek'))).toEqual(["Skill name 'ΔΕΛΤΑ' must be lowercase"]);
  });

  it('test_find_skill_md_accepts_lowercase: skill.md is read when SKILL.md is absent', async () => {
    const result = await validateSkillDir(await skillDir('my-skill', md('name: my-skill\ndescription: A test skill'), 'skill.md'));
    expect(result).toMatchObject({ valid: true, manifest: { name: 'my-skill', description: 'A test skill' } });
  });

  it('test_read_with_metadata: metadata values are strings as written', () => {
    const { manifest } = parseSkillManifest(md('name: my-skill\ndescription: A test skill\nmetadata:\n  author: Test Author\n  version: 1.0'));
    expect(manifest.metadata).toEqual({ author: 'Test Author', version: '1.0' });
  });

  it('test_read_with_allowed_tools', () => {
    expect(parseSkillManifest(md('name: my-skill\ndescription: A test skill\nallowed-tools: Bash(jq:*) Bash(git:*)')).manifest.allowedTools).toEqual(['Bash(jq:*)', 'Bash(git:*)']);
  });
});

describe('names are Unicode, exactly as the reference validator rules', () => {
  it.each([
    ['技能', []],
    ['мой-навык', []],
    ['навык', []],
    ['δοκιμή-2', []],
    ['pdf-tools', []],
    ['ﬁle', []], // the ligature folds to "file" under NFKC, and the folder is compared after folding
  ])('%s is a valid name in a folder of the same name', async (name, expected) => {
    expect(await errorsOf(name, md(`name: ${name}\ndescription: x`))).toEqual(expected);
  });

  it('refuses uppercase of any script with "must be lowercase"', async () => {
    for (const name of ['Навык', 'PDF', 'Δ-skill']) {
      expect(await errorsOf(name, md(`name: ${name}\ndescription: x`))).toEqual([`Skill name '${name}' must be lowercase`]);
    }
  });

  it('refuses combining marks and symbols (not letters or digits in Python terms)', async () => {
    const name = 'कौशल'; // Devanagari vowel signs are marks, not letters
    expect(await errorsOf(name, md(`name: ${name}\ndescription: x`))).toEqual([`Skill name '${name}' contains invalid characters. Only letters, digits, and hyphens are allowed.`]);
    expect(await errorsOf('a✓b', md('name: a✓b\ndescription: x'))).toEqual(["Skill name 'a✓b' contains invalid characters. Only letters, digits, and hyphens are allowed."]);
  });

  it('counts the length in characters after NFKC normalisation', async () => {
    const cjk = '技'.repeat(64); // 64 characters, 192 UTF-8 bytes
    expect(await errorsOf(cjk, md(`name: ${cjk}\ndescription: x`))).toEqual([]);
    const over = '技'.repeat(65);
    expect(await errorsOf(over, md(`name: ${over}\ndescription: x`))).toEqual([`Skill name '${over}' exceeds 64 character limit (65 chars)`]);
    // "㎏" is one character that NFKC turns into two ("kg"): 63 of them are 126 characters.
    const folded = '㎏'.repeat(63);
    expect(await errorsOf('kg'.repeat(63), md(`name: ${folded}\ndescription: x`))).toEqual([`Skill name '${'kg'.repeat(63)}' exceeds 64 character limit (126 chars)`]);
  });

  it('strips white space as Python does before checking', async () => {
    expect(await errorsOf('my-skill', md('name: "\\x1f my-skill \\x85"\ndescription: x'))).toEqual([]);
  });

  it.each([['技能'], ['мой-навык'], ['δοκιμή-2']])('a skill named %s in another script validates with no warning and loads', async (name) => {
    const folder = await skillDir(name, md(`name: ${name}\ndescription: A skill whose name is not in Latin letters`));
    const result = await validateSkillDir(folder);
    expect(result).toMatchObject({ valid: true, errors: [], warnings: [] });
    const registry = await discoverSkills({ bundled: false, extra: [path.dirname(folder)] });
    expect(registry.names()).toEqual([name]);
    expect((await registry.activate(name)).spec.name).toBe(name);
  });
});

describe('metadata values are strings, as written in the source', () => {
  it.each<[string, Record<string, unknown>]>([
    ['version: 1.0', { version: '1.0' }],
    ['version: 1.10', { version: '1.10' }],
    ['build: 007', { build: '007' }],
    ['hex: 0x1F', { hex: '0x1F' }],
    ['beta: true', { beta: 'true' }],
    ['beta: yes', { beta: 'yes' }],
    ['empty:', { empty: '' }],
    ['nothing: ~', { nothing: '~' }],
    ['big: 12345678901234567890', { big: '12345678901234567890' }],
    ['1.0: first', { '1.0': 'first' }],
    ['quoted: "1.0"', { quoted: '1.0' }],
  ])('%s', (line, expected) => {
    expect(parseSkillManifest(md(`name: my-skill\ndescription: x\nmetadata:\n  ${line}`)).manifest.metadata).toEqual(expected);
  });

  it('the flow form reads the same: metadata: { version: 1.0 }', () => {
    expect(parseSkillManifest(md('name: my-skill\ndescription: x\nmetadata: { version: 1.0, n: 2 }')).manifest.metadata).toEqual({ version: '1.0', n: '2' });
  });

  it('the standard text fields are read as written too: name: 2024', async () => {
    expect(await errorsOf('2024', md('name: 2024\ndescription: 42'))).toEqual([]);
    expect(parseSkillManifest(md('name: "2024"\ndescription: 42\ncompatibility: 3.10')).manifest).toMatchObject({ name: '2024', description: '42', compatibility: '3.10' });
  });
});

/**
 * Edge cases found by comparing skillstate with skills-ref on real trees. Each expected list is
 * what `skills-ref validate` prints for the folder, derived from its source (parser.py,
 * validator.py) and from strictyaml's (the loader it reads front matter with): strictyaml
 * refuses flow collections, anchors, tags, tabs outside quotes and comments, and keys given
 * twice, and its error text is ruamel.yaml's marked error — the context, a position and the line
 * with a caret under the column (`^ (line: N)`), then the problem and its position. The YAML it
 * reads starts right after the opening `---`, so its line numbers are the SKILL.md's.
 */
describe('strict verdicts and messages are the reference validator\'s, case by case', () => {
  const where = (line: number, column: number, text: string) =>
    `  in "<unicode string>", line ${line}, column ${column}:\n    ${text}\n${' '.repeat(3 + column)}^ (line: ${line})`;
  const flow = (line: number, column: number, text: string) =>
    `Invalid YAML in frontmatter: While scanning\n${where(line, column, text)}\nFound ugly disallowed JSONesque flow mapping (surround with ' and ' to make text appear literally)\n${where(line, column + 1, text)}`;
  const tab = (line: number, column: number, text: string) =>
    `Invalid YAML in frontmatter: while scanning for the next token\nfound character '\\t' that cannot start any token\n${where(line, column, text)}`;
  const emoji = '\u{1F600}'.repeat(1025); // 1,025 characters, 2,050 UTF-16 units

  const table: { case: string; dir: string; content: string; errors: string[] }[] = [
    {
      case: "skillstate's extension fields are foreign fields, with no message of skillstate's own",
      dir: 'my-skill',
      content: md(`name: my-skill\ndescription: ${'d'.repeat(600)}\nversion: "2"\nbrief_description: ${'b'.repeat(300)}\ntriggers:\n  keywords: 7\ndefault_enabled: maybe`),
      errors: [`Unexpected fields in frontmatter: brief_description, default_enabled, triggers, version. Only ${ALLOWED} are allowed.`],
    },
    { case: 'a flow sequence', dir: 'my-skill', content: md('name: my-skill\ndescription: A test skill\nallowed-tools: [Read, Bash]'), errors: [flow(4, 16, 'allowed-tools: [Read, Bash]')] },
    { case: 'a flow mapping', dir: 'my-skill', content: md('name: my-skill\ndescription: A test skill\nmetadata: {author: me}'), errors: [flow(4, 11, 'metadata: {author: me}')] },
    { case: 'a description starting with [', dir: 'my-skill', content: md('name: my-skill\ndescription: [beta] A test skill'), errors: [flow(3, 14, 'description: [beta] A test skill')] },
    {
      case: 'an anchor',
      dir: 'my-skill',
      content: md('name: my-skill\ndescription: &d A test skill'),
      errors: [
        `Invalid YAML in frontmatter: While scanning\n${where(3, 14, 'description: &d A test skill')}\nFound confusing disallowed anchor token (surround with ' and ' to make text appear literally)\n${where(3, 16, 'description: &d A test skill')}`,
      ],
    },
    {
      case: 'a tag (context at its end, problem at its start)',
      dir: 'my-skill',
      content: md('name: !!str my-skill\ndescription: A test skill'),
      errors: [`Invalid YAML in frontmatter: While scanning\n${where(2, 12, 'name: !!str my-skill')}\nFound disallowed tag tokens (do not specify types in markup)\n${where(2, 7, 'name: !!str my-skill')}`],
    },
    { case: 'an alias (no anchor can exist)', dir: 'my-skill', content: md('name: my-skill\ndescription: *d'), errors: [`Invalid YAML in frontmatter: found undefined alias 'd'\n${where(3, 14, 'description: *d')}`] },
    { case: 'a tab indenting a key', dir: 'my-skill', content: md('name: my-skill\ndescription: A test skill\nmetadata:\n\tauthor: me'), errors: [tab(5, 1, '\tauthor: me')] },
    { case: 'a tab after the colon', dir: 'my-skill', content: md('name:\tmy-skill\ndescription: A test skill'), errors: [tab(2, 6, 'name:\tmy-skill')] },
    { case: 'a tab inside a plain value', dir: 'my-skill', content: md('name: my-skill\ndescription: A\ttest skill'), errors: [tab(3, 15, 'description: A\ttest skill')] },
    { case: 'tabs inside quotes and comments are text', dir: 'my-skill', content: md('name: my-skill # the\tname\ndescription: "A\ttest skill"'), errors: [] },
    {
      case: 'a key given twice',
      dir: 'my-skill',
      content: md('name: my-skill\ndescription: A test skill\nname: my-skill'),
      errors: [`Invalid YAML in frontmatter: While parsing\n${where(4, 1, 'name: my-skill')}\nDuplicate key 'name' found\n${where(4, 5, 'name: my-skill')}`],
    },
    {
      case: 'a nested key given twice',
      dir: 'my-skill',
      content: md('name: my-skill\ndescription: A test skill\nmetadata:\n  author: a\n  author: b'),
      errors: [`Invalid YAML in frontmatter: While parsing\n${where(6, 3, '  author: b')}\nDuplicate key 'author' found\n${where(6, 9, '  author: b')}`],
    },
    { case: 'a byte-order mark: the file does not start with ---', dir: 'my-skill', content: `\ufeff${md('name: my-skill\ndescription: A test skill')}`, errors: ['SKILL.md must start with YAML frontmatter (---)'] },
    { case: 'CRLF line ends (Python reads them as LF)', dir: 'my-skill', content: '---\r\nname: my-skill\r\ndescription: A test skill\r\n---\r\nBody\r\n', errors: [] },
    { case: "YAML's ... does not close the front matter", dir: 'my-skill', content: '---\nname: my-skill\ndescription: A test skill\n...\nBody\n', errors: ['SKILL.md frontmatter not properly closed with ---'] },
    { case: 'an empty front matter', dir: 'my-skill', content: '---\n---\nBody\n', errors: ['SKILL.md frontmatter must be a YAML mapping'] },
    { case: 'a front matter of plain text', dir: 'my-skill', content: md('just some text'), errors: ['SKILL.md frontmatter must be a YAML mapping'] },
    { case: 'an Arabic name', dir: 'مهارة', content: md('name: مهارة\ndescription: A test skill'), errors: [] },
    { case: 'a Japanese name', dir: 'スキル', content: md('name: スキル\ndescription: A test skill'), errors: [] },
    { case: 'a Korean name', dir: '기술-도구', content: md('name: 기술-도구\ndescription: A test skill'), errors: [] },
    { case: 'NFKC: a ligature in the name, plain letters in the folder', dir: 'file', content: md('name: ﬁle\ndescription: A test skill'), errors: [] },
    { case: 'NFKC: full-width letters and hyphen', dir: 'my-skill', content: md('name: ｍｙ－ｓｋｉｌｌ\ndescription: A test skill'), errors: [] },
    {
      case: 'NFKC: messages name the normalised name, the folder as it is',
      dir: 'ﬁles',
      content: md('name: ＦＩＬＥ\ndescription: A test skill'),
      errors: ["Skill name 'FILE' must be lowercase", "Directory name 'ﬁles' must match skill name 'FILE'"],
    },
    {
      case: 'a name with spaces',
      dir: 'active-directory-attacks',
      content: md('name: Active Directory Attacks\ndescription: A test skill'),
      errors: [
        "Skill name 'Active Directory Attacks' must be lowercase",
        "Skill name 'Active Directory Attacks' contains invalid characters. Only letters, digits, and hyphens are allowed.",
        "Directory name 'active-directory-attacks' must match skill name 'Active Directory Attacks'",
      ],
    },
    { case: 'a name with a dot', dir: 'my.skill', content: md('name: my.skill\ndescription: A test skill'), errors: ["Skill name 'my.skill' contains invalid characters. Only letters, digits, and hyphens are allowed."] },
    {
      case: 'a description over 1024 characters counts characters, not UTF-16 units',
      dir: 'my-skill',
      content: md(`name: my-skill\ndescription: ${emoji}`),
      errors: ['Description exceeds 1024 character limit (1025 chars)'],
    },
    {
      case: 'both required fields missing',
      dir: 'my-skill',
      content: md('license: MIT'),
      errors: ['Missing required field in frontmatter: name', 'Missing required field in frontmatter: description'],
    },
    {
      case: 'foreign fields come first, sorted, then the name, the description, the compatibility',
      dir: 'my-skill',
      content: md(`zeta: 1\nname: My_Skill\nalpha: 2\ndescription: "  "\ncompatibility: ${'c'.repeat(501)}`),
      errors: [
        `Unexpected fields in frontmatter: alpha, zeta. Only ${ALLOWED} are allowed.`,
        "Skill name 'My_Skill' must be lowercase",
        "Skill name 'My_Skill' contains invalid characters. Only letters, digits, and hyphens are allowed.",
        "Directory name 'my-skill' must match skill name 'My_Skill'",
        "Field 'description' must be a non-empty string",
        'Compatibility exceeds 500 character limit (501 chars)',
      ],
    },
    { case: 'metadata as a list (the reference does not check it)', dir: 'my-skill', content: md('name: my-skill\ndescription: A test skill\nmetadata:\n  - a\n  - b'), errors: [] },
    { case: 'metadata as text', dir: 'my-skill', content: md('name: my-skill\ndescription: A test skill\nmetadata: by me'), errors: [] },
    { case: 'nested metadata', dir: 'my-skill', content: md('name: my-skill\ndescription: A test skill\nmetadata:\n  author:\n    name: me'), errors: [] },
    { case: 'license and allowed-tools as lists', dir: 'my-skill', content: md('name: my-skill\ndescription: A test skill\nlicense:\n  - MIT\nallowed-tools:\n  - Read'), errors: [] },
    { case: 'a name that does not match its folder', dir: 'pdf', content: md('name: pdf-tools\ndescription: A test skill'), errors: ["Directory name 'pdf' must match skill name 'pdf-tools'"] },
  ];

  it.each(table)('$case', async ({ dir, content, errors }) => {
    const result = await validateSkillDir(await skillDir(dir, content), { spec: 'agentskills' });
    expect(result.errors).toEqual(errors);
    expect(result.valid).toBe(errors.length === 0);
    expect(result.warnings).toEqual([]);
  });

  it('a SKILL.md that is a broken symbolic link: the single message of a missing file', async () => {
    const root = await tree();
    const folder = path.join(root, 'my-skill');
    await mkdir(folder);
    await symlink(path.join(root, 'nowhere.md'), path.join(folder, 'SKILL.md'));
    expect((await validateSkillDir(folder, { spec: 'agentskills' })).errors).toEqual(['Missing required file: SKILL.md']);
    // Named through its parent, it is still found and checked, with the same single message.
    const tree_ = await validateSkillTree(root, { spec: 'agentskills' });
    expect(tree_.results.map((result) => [result.dir, result.errors])).toEqual([[folder, ['Missing required file: SKILL.md']]]);
  });

  it('where the reference is plainly broken, skillstate differs on purpose: a --- inside a value does not end the front matter', async () => {
    const content = md('description: Splits a---b in two\nname: my-skill');
    // skills-ref splits the file at the first "---" anywhere: its front matter is "description: Splits a",
    // and it reports ['Missing required field in frontmatter: name'].
    expect(await errorsOf('my-skill', content)).toEqual([]);
    expect(parseSkillManifest(content).manifest.description).toBe('Splits a---b in two');
  });

  it('a long line is cut around the column, as ruamel prints it', async () => {
    const line = `description: ${'x'.repeat(50)} ok\ttail ${'y'.repeat(40)}`;
    const errors = await errorsOf('my-skill', md(`name: my-skill\n${line}`));
    // The tab is at column 67 (0-based 66). ruamel keeps 32 characters either side of it once a
    // side passes 36, marking the cut with " ... ": 32 before, then the tab, "tail " and 26 y.
    const snippet = ` ... ${line.slice(66 - 32, 66)}\ttail ${'y'.repeat(26)} ... `;
    expect(errors).toEqual([`Invalid YAML in frontmatter: while scanning for the next token\nfound character '\\t' that cannot start any token\n  in "<unicode string>", line 3, column 67:\n    ${snippet}\n${' '.repeat(4 + 32 + 5)}^ (line: 3)`]);
  });
});

describe('tabs in a block scalar', () => {
  // Asked tab by tab, where each tab's line starts used to be searched for backwards: a line of a
  // million tabs took minutes; each tab now costs the same, so this takes milliseconds.
  it('are text past the indentation and refused within it, however many a line holds', () => {
    expect(referenceYamlRefusal('name: x\ndescription: |\n  a\tb\n  \tc\n')).toBeUndefined();
    expect(referenceYamlRefusal('name: x\ndescription: |\n  a\n\tc\n')).toMatchObject({ construct: 'a tab', line: 5, column: 1 });
    const tabs = '\t'.repeat(1_000_000);
    expect(referenceYamlRefusal(`name: x\ndescription: |\n  a${tabs}b\n`)).toBeUndefined();
    expect(referenceYamlRefusal(`name: x\ndescription: |\n  a${tabs}b\n\tc\n`)).toMatchObject({ construct: 'a tab', line: 5, column: 1 });
  });
});
