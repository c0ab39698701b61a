/**
 * A document skill as a `SkillSpec`: once loaded, a document skill is a skill like any code
 * skill — its body becomes the `instructions`, its toolsets' tools become its actions, and its
 * root path, source, version and manifest go into `metadata`. Mounting this spec on an agent is
 * what activating the skill means.
 *
 * Pure: no I/O (the body and the actions are already loaded).
 */
import type { AnyAction } from '../core/action.js';
import { ALLOWED_ACTIONS_KEY } from '../core/allowed.js';
import { DefinitionError } from '../core/errors.js';
import { defineSkill, type AnySkill } from '../core/skill.js';
import { manifestError } from './errors.js';
import type { LoadedSkill } from './document.js';
import type { SkillEntry } from './skill-entry.js';
import { bodyForModel } from './trust.js';

const SEMVER = /^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$/;

/** What a document skill's spec records in `metadata`. */
export interface DocumentSkillMetadata {
  kind: 'document';
  source: string;
  rootPath: string | undefined;
  file: string | undefined;
  version: string | undefined;
  briefDescription: string;
  resources: string[];
  allowedTools: string[];
  license: string | undefined;
  /** False for a project skill not yet trusted: its toolsets were not imported. */
  trusted: boolean;
}

/** The document-skill tools, which stay allowed whatever a skill's `allowed-tools` says (a model must be able to load and read skills). */
const SKILL_TOOL_ACTIONS = ['load_skill', 'list_skills', 'read_skill_resource', 'run_skill_script'];

/**
 * Builds the `SkillSpec` of a loaded document skill. Throws `toolset_failed` if its actions do not
 * fit a skill. Its `allowed-tools` become the spec's allowed actions: while it is mounted, only
 * those of the agent's actions (with its own and the document-skill tools) may run.
 */
export function documentSkillSpec(entry: SkillEntry, loaded: LoadedSkill, actions: readonly AnyAction[]): AnySkill {
  const allowedTools = entry.manifest?.allowedTools ?? [];
  const metadata: DocumentSkillMetadata = {
    kind: 'document',
    source: entry.source,
    rootPath: entry.rootPath,
    file: entry.file,
    version: entry.version,
    briefDescription: entry.briefDescription,
    resources: [...loaded.resources.keys()],
    allowedTools: [...allowedTools],
    license: entry.manifest?.license,
    trusted: entry.trusted,
  };
  try {
    return defineSkill({
      name: entry.name,
      description: entry.description,
      category: 'document',
      tags: ['document', entry.source],
      vsn: entry.version !== undefined && SEMVER.test(entry.version) ? entry.version : undefined,
      instructions: bodyForModel(entry, loaded.instructions),
      actions,
      metadata: allowedTools.length ? { ...metadata, [ALLOWED_ACTIONS_KEY]: [...allowedTools, ...SKILL_TOOL_ACTIONS] } : { ...metadata },
    });
  } catch (error) {
    if (!(error instanceof DefinitionError)) throw error;
    throw manifestError('toolset_failed', `skill '${entry.name}': its tools cannot form a skill: ${error.message}`, { skill: entry.name }, error);
  }
}

/** The metadata of a document skill's spec, or undefined for a code skill. */
export function documentMetadata(skill: AnySkill): DocumentSkillMetadata | undefined {
  return skill.metadata.kind === 'document' ? (skill.metadata as unknown as DocumentSkillMetadata) : undefined;
}
