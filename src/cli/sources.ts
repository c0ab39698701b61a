/**
 * The options every command that needs skills shares — `--project`, `--user`, `--no-bundled`,
 * `--path` — and the discovery they lead to, with a progress indicator when the scan is slow.
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
  'no-bundled': { type: 'boolean' },
  'no-user': { type: 'boolean' },
  'no-project': { type: 'boolean' },
  path: { type: 'string', multiple: true },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

export const SOURCE_HELP = `Skill sources (precedence: project > user > bundled > --path):
  --project <dir>   project skills (default ./.agent/skills)
  --user <dir>      user skills (default ~/.agent/skills)
  --path <dir>      an extra folder of skills, or one skill folder (repeatable)
  --no-project, --no-user, --no-bundled   leave a default source out`;

export interface SourceFlags {
  project?: string | undefined;
  user?: string | undefined;
  'no-bundled'?: boolean | undefined;
  'no-user'?: boolean | undefined;
  'no-project'?: boolean | undefined;
  path?: string[] | undefined;
}

/** Discovers skills from the sources the flags describe. */
export function discoverFromFlags(flags: SourceFlags, io: CliIO): Promise<DocumentSkillRegistry> {
  const defaults = defaultSkillSources();
  return withProgress(io, 'scanning skill folders', () =>
    discoverSkills({
      project: flags['no-project'] ? false : (flags.project ?? defaults.project),
      user: flags['no-user'] ? false : (flags.user ?? defaults.user),
      bundled: flags['no-bundled'] ? false : defaults.bundled,
      extra: flags.path ?? [],
    }),
  );
}
