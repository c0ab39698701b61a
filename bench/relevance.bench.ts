/**
 * Relevance ranking for skills without triggers, in two parts.
 *
 * The evaluation: the published skills in `bench/corpus/` (each corpus alone, and both together)
 * and the requests of `bench/corpus/requests.ts`, none naming its skill. Per corpus: the share of
 * requests whose right skill is named within the first 1,500 tokens (6,000 characters) of the
 * text disclosure gives with its defaults; the same share when the whole text is held to 1,500
 * tokens; the share whose right skill is shown in full (tier 3); and the mean size of the text.
 * The anchor is the catalog in name order cut to 1,500 tokens, which is what disclosure gave
 * before ranking. Discovery is fresh for each corpus, so no body has been read and headings do not
 * count yet (the "cold" case, the first request of a session).
 *
 * The cost: 1,000 generated skills without triggers, each with a description of realistic length
 * — building the index, and `planDisclosure` per query, against the trigger-only plan over the
 * same skills.
 */
import path from 'node:path';
import { createDocumentSkillRegistry, defineDocumentSkill, discoverSkills, type DocumentSkillRegistry } from '../src/index.js';
import { disclose } from '../src/manifest/index.js';
import { planDisclosure } from '../src/manifest/disclose.js';
import { TriggerIndex } from '../src/manifest/match.js';
import { RelevanceIndex } from '../src/manifest/rank.js';
import { REQUESTS, type EvalRequest } from './corpus/requests.js';
import { benchSource, compare, formatNs, pairedRatio, type ReportRow } from './harness.js';

const CORPUS = benchSource('corpus/');
const WINDOW_TOKENS = 1500;
const WINDOW_CHARS = WINDOW_TOKENS * 4;

/** Whether the text names one of the right skills (a catalog line or a detail heading) within `limit` characters. */
function names(text: string, right: readonly string[], limit = Infinity): boolean {
  return right.some((name) => {
    const at = Math.min(...[`**${name}**`, `#### ${name}\n`].map((mark) => text.indexOf(mark)).filter((i) => i >= 0));
    return at < limit;
  });
}

interface Figures {
  requests: number;
  within: number;
  budgeted: number;
  full: number;
  anchor: number;
  meanChars: number;
}

async function evaluate(discover: () => Promise<DocumentSkillRegistry>, requests: readonly EvalRequest[]): Promise<Figures> {
  let within = 0;
  let budgeted = 0;
  let full = 0;
  let anchor = 0;
  let chars = 0;
  // Before ranking: every skill without triggers put the whole catalog, in name order, under the budget.
  const byName = await disclose(await discover(), 'list skills', { budget: { tokens: WINDOW_TOKENS } });
  for (const { request, right } of requests) {
    // A fresh registry per request: no body read yet, as at the start of a session.
    const shown = await disclose(await discover(), request);
    if (names(shown.text, right, WINDOW_CHARS)) within++;
    if (shown.detailed.some((name) => right.includes(name))) full++;
    chars += shown.chars;
    const held = await disclose(await discover(), request, { budget: { tokens: WINDOW_TOKENS } });
    if (names(held.text, right)) budgeted++;
    if (names(byName.text, right)) anchor++;
  }
  return { requests: requests.length, within, budgeted, full, anchor, meanChars: chars / requests.length };
}

const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(0)}% (${part}/${whole})`;

/**
 * Decoys for the crowded corpus: skills whose names and descriptions are made of the published
 * skills' own description words, shuffled (a fixed seed), so that every request meets many
 * partial matches and the catalog cannot fit in the window.
 */
function decoys(registry: DocumentSkillRegistry, count: number): DocumentSkillRegistry {
  const vocabulary = [...new Set(registry.entries().flatMap((entry) => entry.description.toLowerCase().match(/[a-z]{3,}/g) ?? []))].sort();
  let seed = 12345;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const word = () => vocabulary[Math.floor(next() * vocabulary.length)]!;
  for (let i = 0; i < count; i++) {
    const words = Array.from({ length: 25 }, word);
    registry.register(defineDocumentSkill({ name: `${word()}-${word()}-${i}`, description: `${words.slice(0, 10).join(' ')}. Use when ${words.slice(10).join(' ')}.`, instructions: `# Decoy ${i}` }));
  }
  return registry;
}

const DECOYS = 500;

async function evaluationRows(): Promise<ReportRow[]> {
  const both = ['anthropics-skills', 'openai-skills'];
  const corpora: { name: string; dirs: string[]; requests: readonly EvalRequest[]; decoys?: number }[] = [
    { name: 'anthropics-skills', dirs: ['anthropics-skills'], requests: REQUESTS.filter((r) => r.corpus === 'anthropics-skills') },
    { name: 'openai-skills', dirs: ['openai-skills'], requests: REQUESTS.filter((r) => r.corpus === 'openai-skills') },
    { name: 'both together', dirs: both, requests: REQUESTS },
    { name: `both + ${DECOYS} decoys`, dirs: both, requests: REQUESTS, decoys: DECOYS },
  ];
  const rows: ReportRow[] = [];
  for (const corpus of corpora) {
    const discover = async () => {
      const registry = await discoverSkills({ extra: corpus.dirs.map((dir) => path.join(CORPUS, dir)) });
      return corpus.decoys ? decoys(registry, corpus.decoys) : registry;
    };
    const registry = await discover();
    const f = await evaluate(discover, corpus.requests);
    const label = `${corpus.name} (${registry.size} skills, ${f.requests} requests)`;
    rows.push(
      { suite: 'relevance', name: `${label}: right skill within ${WINDOW_TOKENS} tokens`, value: pct(f.within, f.requests), anchor: `name order: ${pct(f.anchor, f.requests)}`, target: '≥ 90%', pass: f.within / f.requests >= 0.9 },
      { suite: 'relevance', name: `${label}: right skill in a text held to ${WINDOW_TOKENS} tokens`, value: pct(f.budgeted, f.requests), target: '≥ 90%', pass: f.budgeted / f.requests >= 0.9 },
      { suite: 'relevance', name: `${label}: right skill shown in full (tier 3)`, value: pct(f.full, f.requests), target: 'reported' },
      { suite: 'relevance', name: `${label}: mean text size`, value: `${Math.round(f.meanChars)} chars (~${Math.round(f.meanChars / 4)} tokens)`, target: 'reported' },
    );
  }
  return rows;
}

const COUNT = 1000;
const VOCABULARY =
  'merge split fill form pdf chart table spreadsheet workbook slide deck presentation speaker notes deploy server container image gif animation report summary plan review ticket issue sprint cycle meeting agenda wiki page document research brief citation brand color font theme poster canvas art sketch test browser screenshot console log pipeline build release tag commit branch pull request comment database query schema migration index cache token model prompt api sdk stream tool agent workflow install package dependency audit security scan secret key invoice receipt archive email newsletter status update'.split(
    ' ',
  );

function description(i: number): string {
  const pick = (k: number) => VOCABULARY[(i * 7919 + k * 104729) % VOCABULARY.length]!;
  const words = Array.from({ length: 30 }, (_, k) => pick(k));
  return `Helps with ${words.slice(0, 6).join(' ')} tasks. Use when the user asks to ${words.slice(6, 14).join(' ')}, or mentions ${words.slice(14, 30).join(', ')}.`;
}

const QUERIES = [
  'can you merge these two pdf files into one report',
  'the pull request pipeline fails on the release branch, check the logs',
  'prepare an agenda for the sprint review meeting',
  'what is the weather like today in Paris',
  'make an animated gif poster with our brand colors',
  'audit the dependency packages for security issues and secret keys',
];

async function costRows(): Promise<ReportRow[]> {
  const registry = createDocumentSkillRegistry();
  const triggered = createDocumentSkillRegistry();
  for (let i = 0; i < COUNT; i++) {
    const name = `skill-${i}`;
    registry.register(defineDocumentSkill({ name, description: description(i), instructions: `# Skill ${i}` }));
    const words = description(i).split(/\W+/).filter(Boolean);
    triggered.register(defineDocumentSkill({ name, description: description(i), instructions: `# Skill ${i}`, triggers: { keywords: words.slice(2, 5), verbs: words.slice(10, 12) } }));
  }
  const entries = registry.entries();
  let q = 0;
  let sink = 0;
  const [triggerBuild, build] = await compare(
    [
      { name: 'trigger index', fn: () => { sink += new TriggerIndex(entries).untriggered; } },
      { name: 'build', fn: () => { sink += new RelevanceIndex(entries).size; } },
    ],
    { rounds: 9, roundMs: 200, warmupMs: 300 },
  );
  const [anchor, plan] = await compare([
    { name: 'triggers only', fn: () => { sink += planDisclosure(triggered, QUERIES[q++ % QUERIES.length]!).matches.length; } },
    { name: 'relevance', fn: () => { sink += planDisclosure(registry, QUERIES[q++ % QUERIES.length]!).ranked.length; } },
  ]);
  if (sink < 0) console.log(sink);
  return [
    { suite: 'relevance', name: `build the index, ${COUNT} skills (${Math.round(entries.reduce((n, e) => n + e.description.length, 0) / COUNT)}-char descriptions)`, value: formatNs(build!.ns), anchor: `trigger index: ${formatNs(triggerBuild!.ns)}`, ratio: pairedRatio(build!, triggerBuild!), target: '≤ 50 ms', pass: build!.ns <= 50e6 },
    { suite: 'relevance', name: `planDisclosure with ranking, ${COUNT} skills without triggers`, value: formatNs(plan!.ns), anchor: `triggers only: ${formatNs(anchor!.ns)}`, ratio: pairedRatio(plan!, anchor!), target: '≤ 0.2 ms', pass: plan!.ns <= 200_000 },
  ];
}

export async function run(): Promise<ReportRow[]> {
  // Timings first, before the evaluation has filled the heap.
  const cost = await costRows();
  return [...(await evaluationRows()), ...cost];
}
