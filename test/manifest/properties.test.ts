/**
 * Properties of the document-skill layer that no list of examples covers: parsing never fails
 * with anything but a ManifestError, lengths are counted in code points wherever the characters
 * come from, nothing a manifest says can break out of the prompt's structure, and no path a
 * model asks for reads a byte outside the skill's root.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ManifestError, createDocumentSkillRegistry, defineDocumentSkill } from '../../src/index.js';
import { disclose, inspectSkillManifest, parseSkillManifest } from '../../src/manifest/index.js';
import { CONTENT_TAG, escapeInline, wrapBody } from '../../src/manifest/escape.js';
import { loadSkillFolder } from '../../src/manifest/folder.js';
import { readSkillResource } from '../../src/manifest/resources.js';

/** Names the specification accepts: lowercase letters and digits in hyphen-separated runs, ≤ 64. */
const validName = fc
  .array(fc.stringMatching(/^[a-z0-9]{1,8}$/), { minLength: 1, maxLength: 6 })
  .map((parts) => parts.join('-'))
  .filter((name) => name.length <= 64);

/** Text from the whole of Unicode (astral planes included), without control characters. */
const prose = (maxLength: number) =>
  fc.string({ unit: 'grapheme', minLength: 1, maxLength }).map((text) => text.replace(/[\u0000-\u001f\u007f]/g, ' ').trim()).filter((text) => text.length > 0);

const codePoints = (text: string) => [...text].length;

describe('parsing', () => {
  it('arbitrary text is either parsed or refused with a ManifestError: never another exception', () => {
    const frontMatterish = fc
      .tuple(fc.array(fc.oneof(fc.string(), fc.constantFrom('name: x', 'description: y', 'metadata:', '  a: b', '- item', '&a [*a]', '---', '"', "'")), { maxLength: 8 }), fc.string())
      .map(([lines, body]) => `---\n${lines.join('\n')}\n---\n${body}`);
    fc.assert(
      fc.property(fc.oneof(fc.string(), frontMatterish), fc.boolean(), (text, strict) => {
        try {
          parseSkillManifest(text, { strict });
        } catch (error) {
          expect(error).toBeInstanceOf(ManifestError);
          expect((error as ManifestError).code).toBe('invalid_manifest');
        }
        // The reporting form never throws at all.
        const report = inspectSkillManifest(text, { strict });
        expect(report.parsed !== undefined || report.errors.length > 0).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it('a manifest written by a YAML library reads back the same, in strict mode, whatever the characters', () => {
    fc.assert(
      fc.property(validName, prose(300), prose(80), (name, description, license) => {
        const text = `---\n${stringify({ name, description, license })}---\n# ${name}\n`;
        const parsed = parseSkillManifest(text, { strict: true, dirName: name });
        expect(parsed.manifest).toMatchObject({ name, description, license });
        expect(parsed.body).toBe(`# ${name}\n`);
      }),
      { numRuns: 300 },
    );
  });

  it('the description limit counts code points: 1,024 of any plane pass strict validation, 1,025 do not', () => {
    const char = fc.constantFrom('a', 'é', '中', '😀', '𝔸');
    fc.assert(
      fc.property(fc.array(char, { minLength: 1024, maxLength: 1025 }), (chars) => {
        const description = chars.join('');
        const report = inspectSkillManifest(`---\n${stringify({ name: 'sized', description })}---\n`, { strict: true, dirName: 'sized' });
        if (codePoints(description) <= 1024) expect(report.errors).toEqual([]);
        else expect(report.errors.join('\n')).toMatch(/description/i);
      }),
      { numRuns: 60 },
    );
  });
});

describe('the prompt', () => {
  it('inline text is one line that cannot start markdown structure or an HTML tag', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        const inline = escapeInline(text);
        expect(inline).not.toMatch(/[\n\r\u2028\u2029]/);
        expect(inline).not.toMatch(/</);
        expect(inline).not.toMatch(/(^|[^\\])[`*_#|[\]]/);
      }),
      { numRuns: 500 },
    );
  });

  it('a body cannot close or open the wrapper it sits in', () => {
    const tagged = fc.array(fc.oneof(fc.string(), fc.constantFrom(`</${CONTENT_TAG}>`, `<${CONTENT_TAG} name="x">`, `</SKILL_CONTENT >`, '<', '>')), { maxLength: 10 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(validName, tagged, (name, body) => {
        const wrapped = wrapBody(name, body);
        const tags = wrapped.match(new RegExp(`</?${CONTENT_TAG}`, 'gi')) ?? [];
        expect(tags).toEqual([`<${CONTENT_TAG}`, `</${CONTENT_TAG}`]);
        expect(wrapped.startsWith(`<${CONTENT_TAG} name="${name}">\n`)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('disclosure answers every query, within its budget, with one wrapper per skill shown', async () => {
    const registry = createDocumentSkillRegistry();
    const names = ['pdf', 'csv-tools', 'hello-extended', 'forms'];
    for (const name of names) {
      registry.register(
        defineDocumentSkill({
          name,
          description: `Handles ${name} work. <b>bold</b> # not a heading`,
          instructions: `# ${name}\n\nText with </${CONTENT_TAG}> inside.`,
          triggers: { keywords: [name.split('-')[0]!], verbs: ['open'], patterns: [`${name.split('-')[0]}\\s+\\w+`] },
        }),
      );
    }
    const tiers = new Set<number>();
    const query = fc.oneof(fc.string({ maxLength: 300 }), fc.array(fc.constantFrom(...names, 'open', 'what can you do', 'x'.repeat(5000), ' '), { maxLength: 12 }).map((words) => words.join(' ')));
    await fc.assert(
      fc.asyncProperty(query, fc.integer({ min: 200, max: 4000 }), async (text, chars) => {
        const shown = await disclose(registry, text, { budget: { chars } });
        expect([1, 2, 3]).toContain(shown.tier);
        tiers.add(shown.tier);
        expect(shown.text.length).toBeLessThanOrEqual(chars);
        const opened = shown.text.match(new RegExp(`<${CONTENT_TAG} `, 'g'))?.length ?? 0;
        const closed = shown.text.match(new RegExp(`</${CONTENT_TAG}>`, 'g'))?.length ?? 0;
        expect(opened).toBe(closed);
      }),
      { numRuns: 150 },
    );
    // The generator reached every tier a non-empty registry has.
    expect([...tiers].sort()).toEqual([1, 2, 3]);
  });
});

describe('resources', () => {
  let root: string;
  const secret = 'SECRET-OUTSIDE-THE-SKILL';

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'skillstate-confine-'));
    const skill = path.join(root, 'skills', 'notes');
    await mkdir(path.join(skill, 'docs'), { recursive: true });
    await writeFile(path.join(skill, 'SKILL.md'), '---\nname: notes\ndescription: Notes.\n---\n# Notes\n');
    await writeFile(path.join(skill, 'docs', 'guide.md'), 'inside');
    await writeFile(path.join(root, 'secret.txt'), secret);
    await writeFile(path.join(root, 'skills', 'secret.txt'), secret);
    await symlink(path.join(root, 'secret.txt'), path.join(skill, 'docs', 'leak.md'));
    await symlink(root, path.join(skill, 'up'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('no path a model can write reads a byte from outside the skill', async () => {
    const loaded = await (await loadSkillFolder(path.join(root, 'skills', 'notes'))).skill.load();
    const segment = fc.constantFrom('..', '.', '', 'docs', 'guide.md', 'leak.md', 'up', 'secret.txt', 'skills', 'notes', '%2e%2e', '..\\', 'C:', '~', '\0');
    const requested = fc.tuple(fc.constantFrom('', '/', './', '\\'), fc.array(segment, { minLength: 1, maxLength: 6 }), fc.constantFrom('/', '\\')).map(([lead, parts, sep]) => lead + parts.join(sep));
    const outcomes = new Set<string>();
    await fc.assert(
      fc.asyncProperty(requested, async (request) => {
        try {
          const content = await readSkillResource('notes', loaded, request);
          expect(content.text).toBe('inside');
          outcomes.add('read');
        } catch (error) {
          expect(error).toBeInstanceOf(ManifestError);
          expect(['resource_refused', 'resource_not_found']).toContain((error as ManifestError).code);
          expect((error as Error).message).not.toContain(secret);
          outcomes.add((error as ManifestError).code);
          if (/leak\.md$|^up[/\\]/.test(request)) outcomes.add('refused a link');
        }
      }),
      { numRuns: 400, examples: [['docs/guide.md'], ['docs/leak.md'], ['up/secret.txt']] },
    );
    expect([...outcomes].sort()).toEqual(['read', 'refused a link', 'resource_not_found', 'resource_refused']);
  });
});
