/**
 * Disclosure over 1,000 skills with triggers: `planDisclosure` (the tier decision and ranking)
 * and the full `disclose` (bodies already loaded, text rendered), per query, against a naive
 * anchor measured in the same rounds — a scan of every skill testing a precompiled
 * word-boundary regex per keyword and verb, and each pattern.
 *
 * The queries vary: 997 different ones, made from common words, the skills' trigger words and
 * numbers, and taken in turn, so no query comes back before the others have all been asked.
 */
import { createDocumentSkillRegistry, defineDocumentSkill } from '../src/index.js';
import { disclose } from '../src/manifest/index.js';
import { planDisclosure } from '../src/manifest/disclose.js';
import { compare, formatNs, pairedRatio, type ReportRow } from './harness.js';

const COUNT = 1000;
const WORDS = 'please can you the a for and with me it this that today next week report summary open merge plan trip check greet say hello weather file notes friends mountains quarterly thing'.split(' ');

/**
 * The `n`th query: common words, and in turn (as in six requests of an application) nothing a
 * skill knows, a skill's keyword with a pattern's phrase, a verb and a keyword dozens of skills
 * share, a file name a hundred skills' pattern takes, and a keyword of ten skills.
 */
function query(n: number): string {
  const word = (k: number) => WORDS[(n * 7919 + k * 104729) % WORDS.length]!;
  const words = [word(0), word(1), word(2), word(3), word(4), word(5)];
  const topic = (n * 613) % COUNT;
  const known = [[], [`topic${topic}`, `report for topic${topic}`], [], [`do${n % 11}`, `task${n % 37}`], [`invoice-${n}.pdf`], [`area${n % 101}`]][n % 6]!;
  for (const [i, term] of known.entries()) words.splice(1 + i * 3, 0, term);
  return words.join(' ');
}

const QUERIES = Array.from({ length: 997 }, (_, n) => query(n));

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
  // Bodies a disclosure may show in full are read once, as a running system would have them.
  for (let i = 0; i < COUNT; i++) await registry.content(`skill-${i}`);
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
    { suite: 'disclosure', name: `planDisclosure, ${COUNT} skills, ${QUERIES.length} varied queries`, value: formatNs(plan!.ns), anchor: `naive ${formatNs(scan!.ns)}`, ratio: pairedRatio(plan!, scan!), target: '≤ 0.2 ms', pass: plan!.ns <= 200_000 },
    { suite: 'disclosure', name: `disclose (rendered text), ${COUNT} skills, ${QUERIES.length} varied queries`, value: formatNs(full!.ns), anchor: `naive ${formatNs(scan!.ns)}`, ratio: pairedRatio(full!, scan!), target: '≤ 0.2 ms', pass: full!.ns <= 200_000 },
  ];
}
