/**
 * `skillstate disclose "<query>"`: the tier disclosure picks for a query and the exact text a
 * model would be given, with its size and anything the budget cut.
 */
import { parseArgs } from 'node:util';
import { disclose } from '../../manifest/disclose.js';
import { UsageError, type Command } from '../io.js';
import { discoverFromFlags, SOURCE_HELP, SOURCE_OPTIONS } from '../sources.js';

function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`${flag} must be a whole number, not '${value}'`);
  return n;
}

export const discloseCommand: Command = {
  name: 'disclose',
  summary: 'show the tier and the exact prompt text for a query',
  help: `Usage: skillstate disclose [options] [sources] "<query>"

Shows what progressive disclosure gives a model for the query: the tier (0 nothing, 1 breadcrumb,
2 catalog, 3 full documentation of the top matches), why, the size, and the exact text.

  --preload <name|dir>   always show this skill in full (repeatable; a folder is loaded on the spot)
  --max-skills <n>       matches shown in full (default 3)
  --budget-chars <n>     cut the text to this many characters
  --budget-tokens <n>    cut the text to about this many tokens
  --json                 print the whole result as JSON

${SOURCE_HELP}`,
  async run(args, io) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        ...SOURCE_OPTIONS,
        preload: { type: 'string', multiple: true },
        'max-skills': { type: 'string' },
        'budget-chars': { type: 'string' },
        'budget-tokens': { type: 'string' },
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
    const result = await disclose(registry, positionals[0]!, {
      preload: values.preload ?? [],
      maxSkills: positiveInt(values['max-skills'], '--max-skills'),
      budget,
    });
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
