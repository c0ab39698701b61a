/**
 * The options every command that needs skills shares — `--project`, `--user`, `--bundled`,
 * `--path`, `--example`, `--trust-file` — and the discovery they lead to, with a progress
 * indicator when the scan is slow.
 *
 * I/O: through `discoverSkills` only.
 */
import type { ParseArgsConfig } from 'node:util';
import { defaultSkillSources, discoverSkills } from '../manifest/discover.js';
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
  for (const note of registry.diagnostics) if (note.level !== 'info') io.err(`skillstate: ${note.level}: ${note.message}\n`);
  for (const clash of registry.shadowed) {
    const where = (side: { source: string; path?: string | undefined }) => `${side.source}${side.path ? ` (${side.path})` : ''}`;
    io.err(`skillstate: skill '${clash.name}' of ${where(clash.shadowed)} is shadowed by the one of ${where(clash.kept)}\n`);
  }
}

function scan(flags: SourceFlags, io: CliIO): Promise<DocumentSkillRegistry> {
  const defaults = defaultSkillSources();
  return withProgress(io, 'scanning skill folders', () =>
    discoverSkills(
      {
        project: flags['no-project'] ? false : (flags.project ?? defaults.project),
        user: flags['no-user'] ? false : (flags.user ?? defaults.user),
        bundled: flags['no-bundled'] || flags.bundled === undefined ? false : flags.bundled,
        extra: flags.path ?? [],
        examples: flags.example ?? [],
      },
      flags['trust-file'] === undefined ? {} : { trustFile: flags['trust-file'] },
    ),
  );
}
