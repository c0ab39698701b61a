/**
 * `skillstate disclose "<query>"`: the tier disclosure picks for a query and the exact text a
 * model would be given, with its size and anything the budget cut; with `--explain`, each
 * skill's trigger matches and relevance score, for authors tuning their descriptions.
 */
import { disclose, rankSkills, type Disclosure } from '../../manifest/disclose.js';
import type { RelevanceScore } from '../../manifest/rank.js';
import { parseCommandArgs, UsageError, type Command } from '../io.js';
import { discoverFromFlags, SOURCE_HELP, SOURCE_OPTIONS } from '../sources.js';

function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`${flag} must be a whole number, not '${value}'`);
  return n;
}

export const discloseCommand: Command = {
  name: 'disclose',
  help: `Usage: skillstate disclose [options] [sources] "<query>"

Shows what progressive disclosure gives a model for the query: the tier (0 nothing, 1 breadcrumb,
2 catalog, 3 full documentation of the top matches), why, the size, and the exact text.

  --preload <name|dir>   always show this skill in full (repeatable; a folder is loaded on the spot)
  --max-skills <n>       matches shown in full (default 3)
  --budget-chars <n>     cut the text to this many characters
  --budget-tokens <n>    cut the text to about this many tokens
  --catalog-tokens <n>   budget of the catalog part, in tokens (default 1500)
  --recent <text>        an earlier turn of the conversation (repeatable, oldest first)
  --explain              show each skill's trigger matches and relevance score for the query
  --json                 print the whole result as JSON

${SOURCE_HELP}`,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs({
      args,
      allowPositionals: true,
      options: {
        ...SOURCE_OPTIONS,
        preload: { type: 'string', multiple: true },
        'max-skills': { type: 'string' },
        'budget-chars': { type: 'string' },
        'budget-tokens': { type: 'string' },
        'catalog-tokens': { type: 'string' },
        recent: { type: 'string', multiple: true },
        explain: { type: 'boolean' },
        json: { type: 'boolean' },
      },
    });
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    if (positionals.length !== 1) throw new UsageError('disclose needs exactly one query (quote it)');
    const registry = await discoverFromFlags(values, io);
    const budget = { chars: positiveInt(values['budget-chars'], '--budget-chars'), tokens: positiveInt(values['budget-tokens'], '--budget-tokens') };
    const catalogTokens = positiveInt(values['catalog-tokens'], '--catalog-tokens');
    const recent = values.recent ?? [];
    // Scored before disclosing: showing a skill reads its body, which adds its headings to the index.
    const scores = values.explain ? rankSkills(registry, positionals[0]!, { recent }) : [];
    const result = await disclose(registry, positionals[0]!, {
      preload: values.preload ?? [],
      maxSkills: positiveInt(values['max-skills'], '--max-skills'),
      budget,
      recent,
      ...(catalogTokens === undefined ? {} : { catalogBudget: { tokens: catalogTokens } }),
    });
    if (values.explain) {
      io.out(explain(scores, result));
      return 0;
    }
    if (values.json) {
      const { available: _available, ...rest } = result;
      io.out(`${JSON.stringify(rest, null, 2)}\n`);
      return 0;
    }
    io.out(`tier ${result.tier}: ${result.reason}\n`);
    io.out(`size: ${result.chars} characters, about ${result.tokens} tokens\n`);
    if (result.detailed.length) io.out(`shown in full: ${result.detailed.join(', ')}\n`);
    for (const note of result.diagnostics) io.out(`note: ${note.message}\n`);
    io.out(`----- text -----\n${result.text}${result.text.endsWith('\n') || !result.text ? '' : '\n'}----- end -----\n`);
    return 0;
  },
};

/** One line per skill: shown or not, trigger matches, relevance score and the words that scored. */
function explain(ranked: readonly RelevanceScore[], result: Disclosure): string {
  const scores = new Map(ranked.map((item) => [item.name, item]));
  const triggers = new Map(result.matches.map((match) => [match.name, match]));
  const rows = result.available
    .map((entry) => ({ entry, score: scores.get(entry.name)?.score ?? 0 }))
    .sort((a, b) => b.score - a.score || (a.entry.name < b.entry.name ? -1 : 1));
  const lines = [`tier ${result.tier}: ${result.reason}`, `size: ${result.chars} characters, about ${result.tokens} tokens`, ''];
  const width = Math.max(5, ...rows.map((row) => row.entry.name.length));
  lines.push(`${'skill'.padEnd(width)}  score   shown    why`);
  for (const { entry, score } of rows) {
    const shown = result.detailed.includes(entry.name) ? 'in full' : result.catalog.includes(entry.name) ? 'catalog' : 'cut';
    const why: string[] = [];
    const match = triggers.get(entry.name);
    if (match) why.push(`triggers: ${match.matched.join(', ')}`);
    const terms = scores.get(entry.name)?.terms;
    if (terms?.length) why.push(`words: ${terms.join(', ')}`);
    const { keywords, verbs, patterns } = entry.triggers;
    if (!keywords.length && !verbs.length && !patterns.length) why.push('no triggers');
    lines.push(`${entry.name.padEnd(width)}  ${score.toFixed(2).padStart(6)}  ${shown.padEnd(7)}  ${why.join('; ')}`);
  }
  return `${lines.join('\n')}\n`;
}
