/**
 * `skillstate list`: the discovered skills with their source, version and path, then the
 * shadowed duplicates and every warning and skipped folder of the scan. Exits 1 when a folder
 * was skipped as invalid (or a named source is missing), unless `--allow-skipped`.
 */
import type { Diagnostic } from '../../core/diagnostics.js';
import { parseCommandArgs, type Command } from '../io.js';
import { describeSources, discoverFromFlags, SOURCE_HELP, SOURCE_OPTIONS, sourcesFromFlags } from '../sources.js';

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n');
}

export const listCommand: Command = {
  name: 'list',
  help: `Usage: skillstate list [--json] [--verbose] [--allow-skipped] [sources]

Lists the skills found in the skill sources, each with its source, version and folder; then the
skills shadowed by a same-named skill of a more specific source, and every warning and skipped
folder (with --verbose, also the informational notes). Untrusted project skills are marked.

Exit code 1 when a skill folder was skipped (invalid SKILL.md, over a limit, too deep) or a
source you named is missing; --allow-skipped exits 0 all the same.

${SOURCE_HELP}`,
  async run(args, io) {
    const { values } = parseCommandArgs({ args, options: { ...SOURCE_OPTIONS, json: { type: 'boolean' }, verbose: { type: 'boolean', short: 'v' }, 'allow-skipped': { type: 'boolean' } } });
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    const registry = await discoverFromFlags(values, io, { report: false });
    const entries = registry.entries({ includeDisabled: true });
    const skipped = registry.diagnostics.filter(isSkip);
    const code = skipped.length && !values['allow-skipped'] ? 1 : 0;
    if (values.json) {
      const skills = entries.map((entry) => ({ name: entry.name, source: entry.source, version: entry.version, path: entry.rootPath, enabled: entry.enabled, trusted: entry.trusted, description: entry.briefDescription }));
      io.out(`${JSON.stringify({ skills, shadowed: registry.shadowed, skipped: skipped.length, diagnostics: registry.diagnostics }, null, 2)}\n`);
      return code;
    }
    if (!entries.length) {
      const places = describeSources(sourcesFromFlags(values), registry.diagnostics);
      io.out(places.length ? `No skills found. Looked in:\n${places.map((place) => `  ${place}\n`).join('')}` : 'No skills found: every source was left out.\n');
    }
    else {
      const rows = [['NAME', 'SOURCE', 'VERSION', 'PATH']];
      for (const entry of entries) {
        const marks = [entry.enabled ? '' : ' (disabled)', entry.trusted ? '' : ' (untrusted)'].join('');
        rows.push([`${entry.name}${marks}`, entry.source, entry.version ?? '-', entry.rootPath ?? '-']);
      }
      io.out(`${table(rows)}\n`);
    }
    if (registry.shadowed.length) {
      io.out('\nShadowed:\n');
      for (const clash of registry.shadowed) io.out(`  ${clash.name}: ${clash.shadowed.source} ${clash.shadowed.path ?? ''} is shadowed by ${clash.kept.source} ${clash.kept.path ?? ''}\n`);
    }
    // A shadowed skill is listed under Shadowed, not again under Warnings.
    const notes = registry.diagnostics.filter((item) => (values.verbose || item.level !== 'info') && item.code !== 'skill_shadowed');
    if (notes.length) {
      io.out('\nWarnings:\n');
      for (const note of notes) io.out(`  ${note.level}: ${note.message}\n`);
    }
    if (skipped.length) {
      const what = `${skipped.length} ${skipped.length === 1 ? 'problem' : 'problems'}: skill folders skipped or sources missing (listed under Warnings)`;
      io.err(values['allow-skipped'] ? `note: ${what}\n` : `error: ${what}; --allow-skipped exits 0 all the same\n`);
    }
    return code;
  },
};

/** A folder skipped for a reason worth failing on (not a hidden folder or a link seen twice), or a named source missing. */
function isSkip(item: Diagnostic): boolean {
  return (item.code === 'skill_skipped' || item.code === 'source_missing') && item.level !== 'info';
}
