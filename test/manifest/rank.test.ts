import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cmd, createDocumentSkillRegistry, createSkillTools, defineAgent, defineDocumentSkill, discoverSkills, type DocumentSkillDefinition } from '../../src/index.js';
import { disclose, parseSkillManifest } from '../../src/manifest/index.js';
import { planDisclosure, rankSkills } from '../../src/manifest/disclose.js';
import { bodyHeadings, relevanceTerms, strongMatches, type RelevanceScore } from '../../src/manifest/rank.js';
import { skillMd, tree } from './tree.js';

function registryOf(...definitions: DocumentSkillDefinition[]) {
  const registry = createDocumentSkillRegistry();
  for (const definition of definitions) registry.register(defineDocumentSkill(definition));
  return registry;
}

const skill = (name: string, description: string, instructions = `# ${name}\n\nSteps.`, extra: Partial<DocumentSkillDefinition> = {}): DocumentSkillDefinition => ({
  name,
  description,
  instructions,
  ...extra,
});

const pdf = skill('pdf-tools', 'Merge, split and fill PDF files. Use when the user works with PDF documents.');
const sheets = skill('spreadsheet', 'Read and chart Excel workbooks and CSV tables.');
const slides = skill('slide-deck', 'Build presentation slides with speaker notes.');
const gif = skill('slack-gif-creator', 'Animated images optimised for chat.');
const scores = (...values: number[]): RelevanceScore[] => values.map((score, i) => ({ name: `s${i}`, score, terms: [] }));

describe('relevance terms', () => {
  it('folds case, drops stop words, stems, and splits hyphenated words', () => {
    expect(relevanceTerms('Please MERGE these PDFs for me')).toEqual(['merg', 'pdf']);
    expect(relevanceTerms('merging pdf files')).toEqual(['merg', 'pdf', 'file']);
    expect(relevanceTerms('slack-gif-creator')).toEqual(['slack', 'gif', 'creator']);
  });
});

describe('ranking order', () => {
  it('ranks the skill whose description shares the query words first, with stemming', () => {
    const registry = registryOf(sheets, pdf, slides);
    expect(rankSkills(registry, 'could you merge two pdfs into one document').map((r) => r.name)).toEqual(['pdf-tools']);
    expect(rankSkills(registry, 'charting a workbook').map((r) => r.name)).toEqual(['spreadsheet']);
  });

  it('breaks ties by name, whatever the order skills were registered in', () => {
    const same = 'Convert audio files to text.';
    const registry = registryOf(skill('zeta', same), skill('alpha', same), skill('mid', same));
    const ranked = rankSkills(registry, 'convert this audio file');
    expect(ranked.map((r) => r.name)).toEqual(['alpha', 'mid', 'zeta']);
    expect(new Set(ranked.map((r) => r.score)).size).toBe(1);
    expect(ranked[0]!.terms).toEqual(['convert', 'audio', 'file']);
  });

  it('property: best score first, ties by name, each skill with exactly the query terms it has, whatever came before', () => {
    // Forty words, so a query can hold more terms than the 32 a bit mask keeps per skill.
    const words = Array.from({ length: 40 }, (_, i) => `word${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`);
    const termOf = (word: string) => relevanceTerms(word)[0]!;
    fc.assert(
      fc.property(
        fc.array(fc.uniqueArray(fc.integer({ min: 0, max: 39 }), { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 30 }),
        fc.array(fc.uniqueArray(fc.integer({ min: 0, max: 39 }), { minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 4 }),
        (descriptions, queries) => {
          const registry = registryOf(...descriptions.map((picked, i) => skill(`skill-${String(i).padStart(2, '0')}`, picked.map((w) => words[w]).join(' '))));
          for (const query of queries) {
            const ranked = rankSkills(registry, query.map((w) => words[w]).join(' '));
            const queryTerms = [...new Set(query.map((w) => termOf(words[w]!)))];
            const expected = descriptions
              .map((picked, i) => ({ name: `skill-${String(i).padStart(2, '0')}`, terms: queryTerms.filter((term) => picked.some((w) => termOf(words[w]!) === term)) }))
              .filter((item) => item.terms.length > 0);
            expect(ranked.map((r) => r.name).sort()).toEqual(expected.map((item) => item.name));
            for (const item of ranked) {
              expect([...item.terms]).toEqual(expected.find((e) => e.name === item.name)!.terms);
              expect(Object.isFrozen(item.terms)).toBe(true);
            }
            // Scores are ranked to 1/65,536: closer than that, they tie and go by name.
            const rounded = (score: number) => Math.round(score * 65536);
            for (let i = 1; i < ranked.length; i++) {
              const [a, b] = [ranked[i - 1]!, ranked[i]!];
              expect(rounded(a.score) > rounded(b.score) || (rounded(a.score) === rounded(b.score) && a.name < b.name)).toBe(true);
            }
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('counts the words of a hyphenated name, weighing them above the description', () => {
    const registry = registryOf(gif, skill('chat-helper', 'Answers questions about gif files and slack usage.'));
    // both mention gif and slack; the name carries more weight
    expect(rankSkills(registry, 'a gif for slack').map((r) => r.name)).toEqual(['slack-gif-creator', 'chat-helper']);
  });

  it("adds a body's headings once the body has been read", async () => {
    const registry = registryOf(skill('notes', 'Keeps notes.', '# Notes\n\n## Exporting to Markdown\n\n```\n# not a heading: in code\n```\n'), skill('other', 'Other things.'));
    expect(rankSkills(registry, 'export markdown')).toEqual([]);
    expect(rankSkills(registry, 'heading in code')).toEqual([]);
    await registry.content('notes');
    expect(rankSkills(registry, 'export markdown').map((r) => r.name)).toEqual(['notes']);
    expect(rankSkills(registry, 'heading in code')).toEqual([]);
  });

  it('earlier turns count, but less than the latest message', () => {
    const registry = registryOf(pdf, sheets, slides);
    expect(rankSkills(registry, 'now do the same for this one').map((r) => r.name)).toEqual([]);
    expect(rankSkills(registry, 'now do the same for this one', { recent: ['about the documents'] }).map((r) => r.name)).toEqual(['pdf-tools']);
    expect(rankSkills(registry, 'chart it please', { recent: ['about the documents'] }).map((r) => r.name)).toEqual(['spreadsheet', 'pdf-tools']);
    expect(rankSkills(registry, 'the documents please', { recent: ['chart it'] }).map((r) => r.name)).toEqual(['pdf-tools', 'spreadsheet']);
  });

  it('lists the catalog most relevant first, the rest by name', async () => {
    const registry = registryOf(sheets, pdf, slides, gif);
    const result = await disclose(registry, 'speaker notes for my slides and a csv table', { margin: 100 });
    expect(result.tier).toBe(2);
    expect(result.catalog).toEqual(['slide-deck', 'spreadsheet', 'pdf-tools', 'slack-gif-creator']);
  });

  it('triggers still win, and an explicit mention ranks first', async () => {
    const triggered = skill('invoices', 'Billing.', '# Invoices', { triggers: { keywords: ['invoice'] } });
    const registry = registryOf(pdf, triggered, sheets);
    // "pdf" makes pdf-tools a strong relevance match, but a trigger matched: only the trigger counts
    expect(planDisclosure(registry, 'turn this invoice into a pdf').detailed).toEqual(['invoices']);
    expect(planDisclosure(registry, 'use the spreadsheet skill on this invoice pdf').matches.map((m) => m.name)).toEqual(['spreadsheet', 'invoices']);
  });
});

describe('score margins', () => {
  it('a top score at least the margin above the next is a strong match', () => {
    expect(strongMatches(scores(9, 3, 1)).map((s) => s.score)).toEqual([9]);
    expect(strongMatches(scores(9, 7, 1)).map((s) => s.score)).toEqual([9, 7]);
    expect(strongMatches(scores(5))).toHaveLength(1);
    expect(strongMatches(scores(5, 0))).toHaveLength(1);
  });

  it('no clear gap, or a gap only after scores far below the best, means no strong match', () => {
    expect(strongMatches(scores(9, 8, 7.5, 7))).toEqual([]);
    expect(strongMatches(scores(10, 4, 1))).toHaveLength(1);
    expect(strongMatches(scores(10, 9, 4, 1))).toHaveLength(2);
    expect(strongMatches(scores(10, 9, 4, 1), { floor: 0.95 })).toEqual([]);
    expect(strongMatches(scores(9, 7, 1), { max: 1 })).toEqual([]);
    expect(strongMatches(scores(9, 7, 1), { margin: 10 })).toEqual([]);
    expect(strongMatches([])).toEqual([]);
    // two skills equally matched, and no other: which one is meant is not clear
    expect(strongMatches(scores(6, 5.5))).toEqual([]);
    expect(strongMatches(scores(6, 5.5, 0))).toEqual([]);
  });

  it('a strong match is shown in full (tier 3); an even match gives the ranked catalog (tier 2)', async () => {
    const strong = await disclose(registryOf(pdf, sheets, slides), 'merge these two PDF files');
    expect(strong).toMatchObject({ tier: 3, detailed: ['pdf-tools'] });
    expect(strong.reason).toBe("'pdf-tools' clearly matches the query best (relevance)");
    expect(strong.catalog[0]).toBe('pdf-tools');
    const even = await disclose(registryOf(pdf, sheets, slides), 'put the csv table and the pdf into slides');
    expect(even.tier).toBe(2);
    expect(even.detailed).toEqual([]);
    expect(even.reason).toBe('3 skills have no triggers; the catalog lists the most relevant first');
  });

  it('maxSkills bounds the strong matches shown in full', () => {
    const twins = [skill('pdf-merge', 'Merge PDF files.'), skill('pdf-split', 'Split PDF files.'), skill('doc-files', 'Word files.'), sheets];
    expect(planDisclosure(registryOf(...twins), 'pdf files').detailed).toEqual(['pdf-merge', 'pdf-split']);
    expect(planDisclosure(registryOf(...twins), 'pdf files', { maxSkills: 1 }).detailed).toEqual([]);
  });
});

describe('the catalog budget', () => {
  const many = Array.from({ length: 200 }, (_, i) =>
    skill(`tool-${String(i).padStart(3, '0')}`, `Handles widget batch ${i} for the warehouse team, with reports and exports of every kind.`),
  );

  it('is about 1,500 tokens by default: the most relevant stay, the cut line says how many and how to find them', async () => {
    const registry = registryOf(...many, skill('invoice-archive', 'Finds old invoices and receipts in the archive.'));
    const result = await disclose(registry, 'where are my old receipts from march, and the warehouse report');
    expect(result).toMatchObject({ tier: 3, detailed: ['invoice-archive'] });
    expect(result.catalog[0]).toBe('invoice-archive');
    const catalogPart = result.text.split('To load a skill')[0]!;
    expect(catalogPart.length).toBeLessThanOrEqual(1500 * 4);
    const cut = 201 - result.catalog.length;
    expect(cut).toBeGreaterThan(100);
    expect(result.cuts).toEqual([{ kind: 'catalog_entries', count: cut }]);
    expect(result.text).toContain(`- … ${cut} more skills, less relevant to this request: call \`list_skills\` with a query to find them\n`);
    expect(result.diagnostics.find((d) => d.code === 'disclosure_cut')?.message).toBe(`the budget left ${cut} skills out of the catalog`);
  });

  it('can be changed, and never cuts a skill shown in full', async () => {
    const registry = registryOf(...many, skill('invoice-archive', 'Finds old invoices and receipts in the archive.'));
    const small = await disclose(registry, 'find old receipts in the invoice archive', { catalogBudget: { chars: 300 } });
    expect(small.detailed).toEqual(['invoice-archive']);
    expect(small.catalog).toEqual(['invoice-archive']);
    const large = await disclose(registry, 'where are my old receipts from march', { catalogBudget: { tokens: 100_000 }, margin: 100 });
    expect(large.catalog).toHaveLength(201);
    expect(large.cuts).toEqual([]);
  });

  it('property: the text never exceeds the budget and always names what it cut', async () => {
    const words = ['pdf', 'merge', 'chart', 'table', 'slides', 'notes', 'deploy', 'server', 'image', 'gif', 'report', 'plan', 'review', 'ticket'];
    const description = fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 12 }).map((list) => `${list.join(' ')}.`);
    const definitions = fc.uniqueArray(fc.tuple(fc.stringMatching(/^[a-z]{1,6}(-[a-z]{1,6})?$/), description, fc.nat(3000)), { minLength: 1, maxLength: 60, selector: ([name]) => name });
    await fc.assert(
      fc.asyncProperty(
        definitions,
        fc.array(fc.constantFrom(...words, 'please', 'the', 'x'), { maxLength: 8 }),
        // The breadcrumb ("[60 skills available]") is the floor: budgets start above it.
        fc.integer({ min: 24, max: 20_000 }),
        fc.option(fc.integer({ min: 0, max: 3_000 }), { nil: undefined }),
        async (list, query, chars, catalogChars) => {
          const registry = registryOf(...list.map(([name, text, bodySize]) => skill(name, text, `# ${name}\n\n${'step '.repeat(bodySize / 5)}`)));
          const result = await disclose(registry, query.join(' '), { budget: { chars }, ...(catalogChars === undefined ? {} : { catalogBudget: { chars: catalogChars } }) });
          expect(result.chars).toBeLessThanOrEqual(chars);
          if (result.cuts.some((c) => c.kind === 'breadcrumb_only')) {
            expect(result.text).toBe(`[${list.length} skill${list.length === 1 ? '' : 's'} available]`);
            return;
          }
          const left = list.length - result.catalog.length;
          if (left > 0) expect(result.text).toMatch(new RegExp(`- … ${left} more skills?[,:].*call \`list_skills\``));
          else expect(result.text).not.toContain('more skill');
          for (const cut of result.cuts) {
            if (cut.kind === 'body_truncated' && result.text.includes(`#### ${cut.skill}\n`)) {
              expect(result.text).toContain(`characters cut: call \`load_skill\` with "${cut.skill}" for the full text]`);
            }
            if (cut.kind === 'skill_dropped') expect(result.catalog).toContain(cut.skill);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('front matter as published skills write it', () => {
  it('a key given twice loads with a warning, the last value winning', () => {
    const parsed = parseSkillManifest(skillMd('name: dup\ndescription: First.\nlicense: MIT\ndescription: Second wins.\nmetadata:\n  author: a\n  author: b'), { file: 'dup/SKILL.md' });
    expect(parsed.manifest.description).toBe('Second wins.');
    expect(parsed.manifest.metadata).toEqual({ author: 'b' });
    expect(parsed.diagnostics.filter((d) => d.code === 'manifest_duplicate_key').map((d) => [d.level, d.message])).toEqual([
      ['warning', "dup/SKILL.md: key 'description' is given more than once in the front matter; the last value is used"],
      ['warning', "dup/SKILL.md: key 'metadata.author' is given more than once in the front matter; the last value is used"],
    ]);
  });

  it('a key given twice is still an error when validating strictly', () => {
    expect(() => parseSkillManifest(skillMd('name: dup\ndescription: a\ndescription: b'), { strict: true })).toThrow(/Map keys must be unique/);
  });

  it('a duplicated version keeps the text of its last value', () => {
    expect(parseSkillManifest(skillMd('name: v\ndescription: d\nversion: 1.0\nversion: 2.10')).manifest.version).toBe('2.10');
  });

  it('a folder whose front matter repeats a key is discovered, with the warning', async () => {
    const root = await tree({ 'twice/SKILL.md': skillMd('name: twice\ndescription: Old.\ndescription: New description.') });
    const registry = await discoverSkills({ extra: [root] });
    expect(registry.entry('twice')?.description).toBe('New description.');
    expect(registry.diagnostics.map((d) => d.code)).toContain('manifest_duplicate_key');
  });
});

describe('disable-model-invocation', () => {
  const reserved = skill('deploy-prod', 'Deploy the merged PDF service to production.', '# Deploy\n\nCareful.', { disableModelInvocation: true });

  it('keeps the skill out of the catalog, of relevance and of matching by name', async () => {
    const registry = registryOf(reserved, sheets);
    expect(rankSkills(registry, 'deploy to production')).toEqual([]);
    const result = await disclose(registry, 'deploy prod now: deploy to production');
    expect(result.detailed).toEqual([]);
    expect(result.catalog).toEqual(['spreadsheet']);
    expect(result.text).not.toContain('deploy-prod');
    expect(result.available.map((e) => e.name)).toEqual(['spreadsheet']);
  });

  it('is read from SKILL.md, and the skill is still loaded by its name', async () => {
    const root = await tree({ 'release/SKILL.md': skillMd('name: release\ndescription: Cut a release of the app.\ndisable-model-invocation: true', '# Release\n\nTag it.\n') });
    const registry = await discoverSkills({ extra: [root] });
    expect(registry.entry('release')!.modelInvocable).toBe(false);
    expect(registry.entry('release')!.manifest!.extra).toEqual({});
    expect((await disclose(registry, 'cut a release of the app')).text).not.toContain('release**');
    const preloaded = await disclose(registry, 'cut a release', { preload: ['release'] });
    expect(preloaded.detailed).toEqual(['release']);
    const Agent = defineAgent({ name: 'assistant', skills: [createSkillTools(registry)], registry });
    const agent = Agent.new({ id: 'a' });
    const listed = await cmd(agent, { action: 'list_skills' });
    expect(listed.results[0]).toMatchObject({ ok: true, output: { count: 0, skills: [] } });
    const loaded = await cmd(agent, { action: 'load_skill', params: { name: 'release' } });
    expect(loaded.results[0]).toMatchObject({ ok: true, output: { skill: 'release' } });
  });

  it('must be true or false', () => {
    const parsed = parseSkillManifest(skillMd('name: x\ndescription: d\ndisable-model-invocation: "yes"'));
    expect(parsed.manifest.disableModelInvocation).toBe(false);
    expect(parsed.diagnostics.map((d) => d.message)).toContain("Field 'disable-model-invocation' must be true or false");
  });
});

describe('list_skills with a query', () => {
  it('returns the relevant skills, most relevant first, with their scores', async () => {
    const registry = registryOf(sheets, pdf, slides);
    const Agent = defineAgent({ name: 'assistant', skills: [createSkillTools(registry)], registry });
    const agent = Agent.new({ id: 'a' });
    const listed = await cmd(agent, { action: 'list_skills', params: { query: 'merge the pdf files, then chart them' } });
    const result = listed.results[0]!;
    if (!result.ok) throw new Error(result.error.message);
    const output = result.output as { count: number; total: number; skills: { name: string; score: number }[] };
    expect(output.skills.map((s) => s.name)).toEqual(['pdf-tools', 'spreadsheet']);
    expect(output.skills[0]!.score).toBeGreaterThan(output.skills[1]!.score);
    expect(output).toMatchObject({ count: 2, total: 3 });
  });
});

describe("a body's headings", () => {
  it.each([
    ['# Title', 'Title'],
    ['  ## Setup ##  ', 'Setup'],
    ['# C# basics', 'C# basics'],
    ['# Title\r', 'Title'],
    ['####### seven', ''],
    ['#no space', ''],
    ['```\n# in a fence\n```\n# after', 'after'],
  ])('%j reads as %j', (body, headings) => {
    expect(bodyHeadings(body)).toBe(headings);
  });

  // A heading matched by one regular expression with a lazy text and optional trailing space took
  // minutes on a line like these; a skill's body is anyone's to write.
  it('reads a heading of a long run of spaces or #s at once', () => {
    expect(bodyHeadings(`# a${' '.repeat(100_000)}b`)).toBe(`a${' '.repeat(100_000)}b`);
    expect(bodyHeadings(`# a${' #'.repeat(50_000)}b`)).toBe(`a${' #'.repeat(50_000)}b`);
    expect(bodyHeadings(`# a${'#'.repeat(100_000)} b`)).toBe(`a${'#'.repeat(100_000)} b`);
  });
});
