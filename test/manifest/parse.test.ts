import { describe, expect, it } from 'vitest';
import { ManifestError } from '../../src/index.js';
import { parseSkillManifest, inspectSkillManifest } from '../../src/manifest/index.js';
import { codePointLength, firstSentence, pythonStrip } from '../../src/manifest/fields.js';
import { splitFrontMatter } from '../../src/manifest/frontmatter.js';

const fm = (yaml: string, body = '# Body\n') => `---\n${yaml}\n---\n${body}`;

/** Strict errors for a front matter, checked against a folder named `dir`. */
function strictErrors(text: string, dir = 'my-skill', spec?: 'agentskills' | 'skillstate'): string[] {
  return inspectSkillManifest(text, { strict: true, dirName: dir, spec }).errors;
}

describe('strict validation follows the reference validator', () => {
  const cases: [string, string, string[]][] = [
    ['no front matter', '# Title\n', ['SKILL.md must start with YAML frontmatter (---)']],
    ['front matter not closed', '---\nname: my-skill\ndescription: x\n', ['SKILL.md frontmatter not properly closed with ---']],
    ['not a mapping', fm('- a\n- b'), ['SKILL.md frontmatter must be a YAML mapping']],
    ['missing name', fm('description: Does things.'), ['Missing required field in frontmatter: name']],
    ['empty name', fm('name: ""\ndescription: Does things.'), ["Field 'name' must be a non-empty string"]],
    ['missing description', fm('name: my-skill'), ['Missing required field in frontmatter: description']],
    ['blank description', fm('name: my-skill\ndescription: "  "'), ["Field 'description' must be a non-empty string"]],
    ['uppercase name', fm('name: My-skill\ndescription: x'), ["Skill name 'My-skill' must be lowercase", "Directory name 'my-skill' must match skill name 'My-skill'"]],
    // That skillstate cannot load the name is a warning here: the reference reports only its own rules.
    ['leading hyphen', fm('name: -my-skill\ndescription: x'), ['Skill name cannot start or end with a hyphen', "Directory name 'my-skill' must match skill name '-my-skill'"]],
    ['double hyphen', fm('name: my--skill\ndescription: x'), ['Skill name cannot contain consecutive hyphens', "Directory name 'my-skill' must match skill name 'my--skill'"]],
    ['underscore', fm('name: my_skill\ndescription: x'), ["Skill name 'my_skill' contains invalid characters. Only letters, digits, and hyphens are allowed.", "Directory name 'my-skill' must match skill name 'my_skill'"]],
    ['folder mismatch', fm('name: other\ndescription: x'), ["Directory name 'my-skill' must match skill name 'other'"]],
    ['compatibility not a string', fm('name: my-skill\ndescription: x\ncompatibility: [a]'), ["Field 'compatibility' must be a string"]],
    ['allowed-tools not a list', fm('name: my-skill\ndescription: x\nallowed-tools: {a: 1}'), ["Field 'allowed-tools' must be either a string or a list of strings"]],
    ['allowed-tools items', fm('name: my-skill\ndescription: x\nallowed-tools: [Read, 3]'), ["Field 'allowed-tools' list items must all be strings"]],
    ['metadata not a map', fm('name: my-skill\ndescription: x\nmetadata: [a]'), ["Field 'metadata' must be a mapping"]],
    ['license not a string', fm('name: my-skill\ndescription: x\nlicense: [MIT]'), ["Field 'license' must be a string"]],
    ['bad version', fm('name: my-skill\ndescription: x\nversion: 1.0'), ["Field 'version' must be a semantic version (e.g. 1.0.0), got '1.0'"]],
    ['bad toolset', fm('name: my-skill\ndescription: x\ntoolsets: ["toolsets/index"]'), ['Toolset \'toolsets/index\' must have the form "path:Export" (e.g. "toolsets/index:HelloToolset")']],
    ['bad default_enabled', fm('name: my-skill\ndescription: x\ndefault_enabled: maybe'), ["Field 'default_enabled' must be true or false"]],
    ['bad trigger pattern', fm('name: my-skill\ndescription: x\ntriggers:\n  patterns: ["(a+)+$"]'), ["Trigger pattern '(a+)+$' has a nested quantifier (like (a+)+), which can take exponential time"]],
    ['invalid regex', fm('name: my-skill\ndescription: x\ntriggers:\n  patterns: ["(unclosed"]'), ["Trigger pattern '(unclosed' is not a valid regular expression: Invalid regular expression: /(unclosed/: Unterminated group"]],
    ['unknown trigger key', fm('name: my-skill\ndescription: x\ntriggers:\n  nouns: [a]'), ['Unexpected fields in triggers: nouns. Only keywords, verbs and patterns are allowed.']],
    ['bad scripts', fm('name: my-skill\ndescription: x\nscripts: run.sh'), ["Field 'scripts' must be a list of paths or {name, path, description} mappings"]],
  ];
  it.each(cases)('%s', (_label, text, expected) => {
    expect(strictErrors(text)).toEqual(expected);
  });

  it('lists unknown fields in the reference wording', () => {
    expect(strictErrors(fm('name: my-skill\ndescription: x\nauthor: me\nzeta: 1'))).toEqual([
      "Unexpected fields in frontmatter: author, zeta. Only ['allowed-tools', 'brief_description', 'compatibility', 'default_enabled', 'description', 'license', 'metadata', 'name', 'scripts', 'toolsets', 'triggers', 'version'] are allowed.",
    ]);
    expect(strictErrors(fm('name: my-skill\ndescription: x\nversion: 1.0.0'), 'my-skill', 'agentskills')).toEqual([
      "Unexpected fields in frontmatter: version. Only ['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'name'] are allowed.",
    ]);
  });

  it('counts lengths in code points, not UTF-16 units', () => {
    const emoji = '😀'.repeat(1024); // 2048 UTF-16 units, 1024 code points: within the limit
    expect(codePointLength(emoji)).toBe(1024);
    expect(strictErrors(fm(`name: my-skill\ndescription: "${emoji}"`))).toEqual([]);
    expect(strictErrors(fm(`name: my-skill\ndescription: "${emoji}x"`))).toEqual(['Description exceeds 1024 character limit (1025 chars)']);
    const name = 'é'.repeat(65);
    expect(strictErrors(fm(`name: ${name}\ndescription: x`), name)).toContain(`Skill name '${name}' exceeds 64 character limit (65 chars)`);
    expect(strictErrors(fm(`name: my-skill\ndescription: x\ncompatibility: "${'ü'.repeat(501)}"`))).toEqual(['Compatibility exceeds 500 character limit (501 chars)']);
  });

  it('compares the name with the folder after NFKC normalisation', () => {
    // "ﬁ" (U+FB01) normalises to "fi"
    expect(strictErrors(fm('name: fi-skill\ndescription: x'), 'ﬁ-skill')).toEqual([]);
  });

  it('throws a typed invalid_manifest error naming the file', () => {
    try {
      parseSkillManifest('# no front matter', { file: '/skills/x/SKILL.md' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ManifestError);
      expect((error as ManifestError).code).toBe('invalid_manifest');
      expect((error as ManifestError).message).toBe('/skills/x/SKILL.md: SKILL.md must start with YAML frontmatter (---)');
    }
  });

  it('bounds YAML alias expansion', () => {
    const bomb = [
      'name: my-skill',
      'description: x',
      'a: &a [x, x, x, x, x, x, x, x, x]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]',
      'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]',
      'e: [*d, *d, *d, *d, *d, *d, *d, *d, *d]',
    ].join('\n');
    expect(() => parseSkillManifest(fm(bomb))).toThrow(/alias/);
  });

  it('refuses a manifest over the size limit', () => {
    const text = fm('name: my-skill\ndescription: x', 'x'.repeat(300 * 1024));
    expect(() => parseSkillManifest(text)).toThrow(/over the 262144-byte limit/);
  });
});

describe('lenient loading accepts real skills and says what it fixed', () => {
  const codes = (text: string, dirName = 'pdf') => parseSkillManifest(text, { dirName }).diagnostics.map((d) => d.code);

  it('reads CRLF and a BOM, with a note for each', () => {
    const text = '\uFEFF---\r\nname: pdf\r\ndescription: Work with PDFs.\r\n---\r\n# PDF\r\n';
    const parsed = parseSkillManifest(text, { dirName: 'pdf' });
    expect(parsed.manifest.name).toBe('pdf');
    expect(parsed.body).toBe('# PDF\n');
    expect(codes(text)).toEqual(['manifest_bom', 'manifest_crlf']);
  });

  it('keeps a body full of --- horizontal rules intact', () => {
    const body = '# Guide\n\n---\n\nPart two\n\n---\n\nPart three\n';
    const parsed = parseSkillManifest(fm('name: pdf\ndescription: x', body), { dirName: 'pdf' });
    expect(parsed.body).toBe(body);
  });

  it('reads block-scalar and quoted descriptions', () => {
    expect(parseSkillManifest(fm('name: pdf\ndescription: >\n  Folded text\n  on two lines.')).manifest.description).toBe('Folded text on two lines.');
    expect(parseSkillManifest(fm('name: pdf\ndescription: |\n  Line one.\n  Line two.')).manifest.description).toBe('Line one.\nLine two.');
    expect(parseSkillManifest(fm("name: pdf\ndescription: 'It''s quoted: fine.'")).manifest.description).toBe("It's quoted: fine.");
  });

  it('recovers a description holding an unquoted ": " and warns', () => {
    const text = fm('name: pdf\ndescription: Use this skill when: the user has a PDF\nlicense: Proprietary. LICENSE.txt has complete terms');
    const parsed = parseSkillManifest(text, { dirName: 'pdf' });
    expect(parsed.manifest.description).toBe('Use this skill when: the user has a PDF');
    expect(parsed.diagnostics).toEqual([
      expect.objectContaining({ level: 'warning', code: 'manifest_yaml_recovered', message: "field 'description' holds an unquoted ': ', which is invalid YAML; it was read as a quoted string" }),
    ]);
    expect(strictErrors(text, 'pdf')[0]).toMatch(/^Invalid YAML in frontmatter: Nested mappings are not allowed in compact mappings/);
  });

  it('accepts nested metadata with a warning', () => {
    const parsed = parseSkillManifest(fm('name: pdf\ndescription: x\nmetadata:\n  author: me\n  tags:\n    - a\n    - b'), { dirName: 'pdf' });
    expect(parsed.manifest.metadata).toEqual({ author: 'me', tags: ['a', 'b'] });
    expect(codes(fm('name: pdf\ndescription: x\nmetadata:\n  tags:\n    - a'))).toEqual(['manifest_metadata_nested']);
  });

  it('registers a skill whose name does not match its folder under its manifest name, with a warning', () => {
    const parsed = parseSkillManifest(fm('name: pdf-tools\ndescription: x'), { dirName: 'pdf' });
    expect(parsed.manifest.name).toBe('pdf-tools');
    expect(parsed.diagnostics[0]!.message).toBe("Directory name 'pdf' must match skill name 'pdf-tools'; the skill is registered under its manifest name");
  });

  it('accepts an over-long description with a warning, and warns past 500 for seed-style skills', () => {
    const long = 'a'.repeat(1100);
    expect(codes(fm(`name: pdf\ndescription: ${long}`))).toEqual(['manifest_description_long']);
    const seedStyle = fm(`name: pdf\ndescription: ${'b'.repeat(600)}\nversion: 1.0.0`);
    expect(codes(seedStyle)).toEqual(['manifest_description_long']);
    expect(strictErrors(seedStyle, 'pdf')).toEqual([]);
    expect(codes(fm(`name: pdf\ndescription: ${'b'.repeat(600)}`))).toEqual([]);
  });

  it('drops a refused trigger pattern with a warning and keeps the skill', () => {
    const parsed = parseSkillManifest(fm('name: pdf\ndescription: x\ntriggers:\n  keywords:\n    - pdf\n  patterns:\n    - "(a+)+$"\n    - "\\\\.pdf\\\\b"'));
    expect(parsed.manifest.triggers.patterns).toEqual(['\\.pdf\\b']);
    expect(parsed.diagnostics.map((d) => d.code)).toEqual(['trigger_pattern_refused']);
  });

  it('reads the extended fields: version, toolsets, scripts, triggers, default_enabled, brief_description', () => {
    const parsed = parseSkillManifest(
      fm(
        'name: hello\ndescription: Greets people. Also waves.\nversion: 1.2.3\ntoolsets: ["toolsets/index:HelloToolset"]\nscripts:\n  - scripts/a.sh\n  - {name: b, path: scripts/b.py, description: Bee}\ntriggers:\n  keywords: [hello]\n  verbs: [wave]\ndefault_enabled: false',
      ),
    );
    const m = parsed.manifest;
    expect(m.version).toBe('1.2.3');
    expect(m.toolsets).toEqual([{ ref: 'toolsets/index:HelloToolset', path: 'toolsets/index', exportName: 'HelloToolset' }]);
    expect(m.scripts).toEqual([
      { name: 'a.sh', path: 'scripts/a.sh', description: undefined },
      { name: 'b', path: 'scripts/b.py', description: 'Bee' },
    ]);
    expect(m.triggers).toEqual({ keywords: ['hello'], verbs: ['wave'], patterns: [] });
    expect(m.defaultEnabled).toBe(false);
    // No brief_description: catalogs show the whole description.
    expect(m.briefDescription).toBe('Greets people. Also waves.');
  });

  it('keeps "version: 1.0" as written rather than the number 1', () => {
    expect(parseSkillManifest(fm('name: pdf\ndescription: x\nversion: 1.0')).manifest.version).toBe('1.0');
  });

  it('still refuses what cannot be loaded: a missing description', () => {
    expect(() => parseSkillManifest(fm('name: pdf'), { file: 'a/SKILL.md' })).toThrow('a/SKILL.md: Missing required field in frontmatter: description');
  });
});

describe('front matter helpers', () => {
  it('splits at the first closing delimiter', () => {
    const split = splitFrontMatter('---\na: 1\n---\nbody\n---\nmore\n');
    expect(split).toEqual({ ok: true, value: { yaml: 'a: 1\n', body: 'body\n---\nmore\n', bom: false, crlf: false } });
  });

  it("strips white space as Python's str.strip() does, at once however long a run inside the text", () => {
    expect(pythonStrip('\x1c\u0085 a b \u3000\t')).toBe('a b');
    expect(pythonStrip('\ufeffa\ufeff')).toBe('\ufeffa\ufeff');
    expect(pythonStrip(' \t\n ')).toBe('');
    // A regular expression for the trailing run retried at every tab of this one: minutes.
    const tabs = '\t'.repeat(1_000_000);
    expect(pythonStrip(` a${tabs}b `)).toBe(`a${tabs}b`);
  });

  it('derives the brief description from the first sentence', () => {
    expect(firstSentence('Extract text from PDFs. Then more.')).toBe('Extract text from PDFs.');
    expect(firstSentence('Version 1.2 of the tool\nhandles files')).toBe('Version 1.2 of the tool handles files');
  });
});
