/**
 * The options every command that needs skills shares — `--project`, `--user`, `--bundled`,
 * `--path`, `--example`, `--trust-file` — and the discovery they lead to, with a progress
 * indicator when the scan is slow.
 *
 * I/O: through `discoverSkills` only.
 */
import path from 'node:path';
import type { ParseArgsConfig } from 'node:util';
import type { Diagnostic } from '../core/diagnostics.js';
import { defaultSkillSources, discoverSkills, type SkillSources } from '../manifest/discover.js';
import type { DocumentSkillRegistry } from '../manifest/document-registry.js';
import type { CliIO } from './io.js';
import { withProgress } from './progress.js';

export const SOURCE_OPTIONS = {
  project: { type: 'string' },
  user: { type: 'string' },
  bundled: { type: 'string' },
  'no-bundled': { type: 'boolean' },
  'no-user': { type: 'boolean' },
  'no-project': { type: 'boolean' },
  path: { type: 'string', multiple: true },
  example: { type: 'string', multiple: true },
  'trust-file': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

export const SOURCE_HELP = `Skill sources (precedence: project > user > bundled > --path > --example):
  --project <dir>   project skills (default ./.agent/skills; untrusted until 'skillstate trust')
  --user <dir>      user skills (default ~/.agent/skills)
  --bundled <dir>   your application's own skills folder (none by default)
  --path <dir>      an extra folder of skills, or one skill folder (repeatable)
  --example <name>  one of skillstate's example skills, by name (repeatable)
  --trust-file <f>  the trust file (default ~/.agent/trusted-skills.json)
  --no-project, --no-user, --no-bundled   leave a source out`;

export interface SourceFlags {
  project?: string | undefined;
  user?: string | undefined;
  bundled?: string | undefined;
  'no-bundled'?: boolean | undefined;
  'no-user'?: boolean | undefined;
  'no-project'?: boolean | undefined;
  path?: string[] | undefined;
  example?: string[] | undefined;
  'trust-file'?: string | undefined;
}

/**
 * Discovers skills from the sources the flags describe. What the scan found wrong (folders
 * skipped, sources missing, warnings) and every skill shadowed by a same-named one are written to
 * stderr, unless `report` is false (for `list`, which shows them itself).
 */
export async function discoverFromFlags(flags: SourceFlags, io: CliIO, options: { report?: boolean } = {}): Promise<DocumentSkillRegistry> {
  const registry = await scan(flags, io);
  if (options.report !== false) reportDiscovery(registry, io);
  return registry;
}

/** The scan's warnings and shadowed skills, one line each, on stderr (info-level notes are left to `list --verbose`). */
function reportDiscovery(registry: DocumentSkillRegistry, io: CliIO): void {
  // A shadowed skill is said once, by the clash below, not again by its diagnostic.
  for (const note of registry.diagnostics) if (note.level !== 'info' && note.code !== 'skill_shadowed') io.err(`skillstate: ${note.level}: ${note.message}\n`);
  for (const clash of registry.shadowed) {
    const where = (side: { source: string; path?: string | undefined }) => `${side.source}${side.path ? ` (${side.path})` : ''}`;
    io.err(`skillstate: skill '${clash.name}' of ${where(clash.shadowed)} is shadowed by the one of ${where(clash.kept)}\n`);
  }
}

/** The sources the flags describe: the project and user folders unless left out, and what the flags add. */
export function sourcesFromFlags(flags: SourceFlags): SkillSources {
  const defaults = defaultSkillSources();
  return {
    project: flags['no-project'] ? false : (flags.project ?? defaults.project),
    user: flags['no-user'] ? false : (flags.user ?? defaults.user),
    bundled: flags['no-bundled'] || flags.bundled === undefined ? false : flags.bundled,
    extra: flags.path ?? [],
    examples: flags.example ?? [],
  };
}

/**
 * Where the sources look, one line each (`project  /app/.agent/skills (missing)`), for a scan
 * that found nothing; a folder is marked missing when the scan's diagnostics say so.
 */
export function describeSources(sources: SkillSources, diagnostics: readonly Diagnostic[]): string[] {
  const missing = new Set(diagnostics.filter((note) => note.code === 'source_missing').map((note) => note.subject));
  const lines: [string, string][] = [];
  for (const kind of ['project', 'user', 'bundled'] as const) {
    const place = sources[kind];
    if (typeof place === 'string') lines.push([kind, path.resolve(place)]);
  }
  for (const extra of sources.extra ?? []) lines.push(['path', path.resolve(extra)]);
  for (const name of sources.examples ?? []) lines.push(['example', name]);
  const width = Math.max(0, ...lines.map(([kind]) => kind.length));
  return lines.map(([kind, place]) => `${kind.padEnd(width)}  ${place}${missing.has(place) ? ' (missing)' : ''}`);
}

function scan(flags: SourceFlags, io: CliIO): Promise<DocumentSkillRegistry> {
  return withProgress(io, 'scanning skill folders', () =>
    discoverSkills(sourcesFromFlags(flags), flags['trust-file'] === undefined ? {} : { trustFile: flags['trust-file'] }),
  );
}
