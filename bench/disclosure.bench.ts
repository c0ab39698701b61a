/**
 * Disclosure over 1,000 skills with triggers: `planDisclosure` (the tier decision and ranking)
 * and the full `disclose` (bodies already loaded, text rendered), per query, against a naive
 * anchor measured in the same rounds — a scan of every skill testing a precompiled
 * word-boundary regex per keyword and verb, and each pattern.
 */
import { createDocumentSkillRegistry, defineDocumentSkill } from '../src/index.js';
import { disclose } from '../src/manifest/index.js';
import { planDisclosure } from '../src/manifest/disclose.js';
import { compare, formatNs, pairedRatio, type ReportRow } from './harness.js';

const COUNT = 1000;
const QUERIES = [
  'please greet Bob and say hello',
  'summarize the quarterly report for topic512',
  'what is the weather like today in Paris',
  'can you do7 the task13 thing for me',
  'open invoice-2024.pdf and merge it',
  'I would like to plan a trip to the mountains next week with friends',
];

export async function run(): Promise<ReportRow[]> {
  const registry = createDocumentSkillRegistry();
  const naive: { name: string; tests: RegExp[] }[] = [];
  for (let i = 0; i < COUNT; i++) {
    const keywords = [`task${i % 37}`, `topic${i}`, `area${i % 101}`];
    const verbs = [`do${i % 11}`, `run${i % 13}`];
    const patterns = i % 10 === 0 ? [`invoice-\\d+\\.pdf`, `report\\s+for\\s+topic${i}`] : [];
    registry.register(
      defineDocumentSkill({ name: `skill-${i}`, description: `Skill ${i}. Does things.`, instructions: `# Skill ${i}\n\nSteps for skill ${i}.`, triggers: { keywords, verbs, patterns } }),
    );
    naive.push({ name: `skill-${i}`, tests: [...keywords, ...verbs].map((w) => new RegExp(`\\b${w}\\b`, 'i')).concat(patterns.map((p) => new RegExp(p, 'i'))) });
  }
  for (const query of QUERIES) for (const match of planDisclosure(registry, query).detailed) await registry.content(match);
  let q = 0;
  let sink = 0;
  const [scan, plan, full] = await compare([
    {
      name: 'naive scan',
      fn: () => {
        const query = QUERIES[q++ % QUERIES.length]!;
        for (const skill of naive) if (skill.tests.some((t) => t.test(query))) sink++;
      },
    },
    { name: 'plan', fn: () => { sink += planDisclosure(registry, QUERIES[q++ % QUERIES.length]!).matches.length; } },
    { name: 'disclose', fn: async () => { sink += (await disclose(registry, QUERIES[q++ % QUERIES.length]!)).chars; } },
  ]);
  if (sink < 0) console.log(sink);
  return [
    { suite: 'disclosure', name: `naive scan, ${COUNT} skills (anchor)`, value: formatNs(scan!.ns) },
    { suite: 'disclosure', name: `planDisclosure, ${COUNT} skills`, value: formatNs(plan!.ns), anchor: `naive ${formatNs(scan!.ns)}`, ratio: pairedRatio(plan!, scan!), target: '≤ 0.2 ms', pass: plan!.ns <= 200_000 },
    { suite: 'disclosure', name: `disclose (rendered text), ${COUNT} skills`, value: formatNs(full!.ns), anchor: `naive ${formatNs(scan!.ns)}`, ratio: pairedRatio(full!, scan!), target: '≤ 0.2 ms', pass: full!.ns <= 200_000 },
  ];
}
