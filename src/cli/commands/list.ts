/**
 * `skillstate list`: the discovered skills with their source, version and path, then the
 * shadowed duplicates and every warning and skipped folder of the scan.
 */
import { parseArgs } from 'node:util';
import type { Command } from '../io.js';
import { discoverFromFlags, SOURCE_HELP, SOURCE_OPTIONS } from '../sources.js';

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n');
}

export const listCommand: Command = {
  name: 'list',
  summary: 'list discovered skills, shadowed duplicates and warnings',
  help: `Usage: skillstate list [--json] [--verbose] [sources]

Lists the skills found in the skill sources, each with its source, version and folder; then the
skills shadowed by a same-named skill of a more specific source, and every warning and skipped
folder (with --verbose, also the informational notes).

${SOURCE_HELP}`,
  async run(args, io) {
    const { values } = parseArgs({ args, options: { ...SOURCE_OPTIONS, json: { type: 'boolean' }, verbose: { type: 'boolean', short: 'v' } } });
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    const registry = await discoverFromFlags(values, io);
    const entries = registry.entries({ includeDisabled: true });
    if (values.json) {
      const skills = entries.map((entry) => ({ name: entry.name, source: entry.source, version: entry.version, path: entry.rootPath, enabled: entry.enabled, description: entry.briefDescription }));
      io.out(`${JSON.stringify({ skills, shadowed: registry.shadowed, diagnostics: registry.diagnostics }, null, 2)}\n`);
      return 0;
    }
    if (!entries.length) io.out('No skills found.\n');
    else {
      const rows = [['NAME', 'SOURCE', 'VERSION', 'PATH']];
      for (const entry of entries) rows.push([entry.enabled ? entry.name : `${entry.name} (disabled)`, entry.source, entry.version ?? '-', entry.rootPath ?? '-']);
      io.out(`${table(rows)}\n`);
    }
    if (registry.shadowed.length) {
      io.out('\nShadowed:\n');
      for (const clash of registry.shadowed) io.out(`  ${clash.name}: ${clash.shadowed.source} ${clash.shadowed.path ?? ''} is shadowed by ${clash.kept.source} ${clash.kept.path ?? ''}\n`);
    }
    const notes = registry.diagnostics.filter((item) => values.verbose || item.level !== 'info');
    if (notes.length) {
      io.out('\nWarnings:\n');
      for (const note of notes) io.out(`  ${note.level}: ${note.message}\n`);
    }
    return 0;
  },
};
