/**
 * A document skill as a `SkillSpec`: once loaded, a document skill is a skill like any code
 * skill — its body becomes the `instructions`, its toolsets' tools become its actions, and its
 * root path, source, version and manifest go into `metadata`. Mounting this spec on an agent is
 * what activating the skill means. Its state key is its name, unless the name is a key no state
 * slice may use (`constructor`, `prototype`, `toString`...): see `documentStateKey`.
 *
 * Pure: no I/O (the body and the actions are already loaded).
 */
import type { AnyAction } from '../core/action.js';
import { diagnostic, type Diagnostic } from '../core/diagnostics.js';
import { DefinitionError } from '../core/errors.js';
import { defineSkill, isReservedStateKey, type AnySkill } from '../core/skill.js';
import { parseAllowedTools, type AllowedToolEntry } from './allowed-tools.js';
import { manifestError } from './errors.js';
import type { LoadedSkill } from './document.js';
import type { SkillEntry } from './skill-entry.js';
import { bodyForModel } from './trust.js';

const SEMVER = /^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$/;

/** What the state key of a skill whose name is a reserved key adds to the name. */
const RESERVED_NAME_SUFFIX = '_skill';

/**
 * The state key of the document skill registered as `name`: the name itself, except for a name
 * that no state slice may use (`constructor` and `prototype`, which the specification accepts, or
 * `toString` and `hasOwnProperty`, loaded leniently; see `isReservedStateKey`): such a skill keeps
 * its slice under the name followed by `_skill` (`constructor_skill`). A name the specification
 * accepts never holds `_`, so among such names that key is no other skill's (one loaded leniently as
 * `constructor_skill` beside `constructor` is refused at mount, `state_key_conflict`). The mapping
 * depends on the name alone, so a reloaded skill keeps its key, and its slice.
 */
export function documentStateKey(name: string): string {
  return isReservedStateKey(name) ? `${name}${RESERVED_NAME_SUFFIX}` : name;
}

/** What a document skill's spec records in `metadata`. */
export interface DocumentSkillMetadata {
  kind: 'document';
  source: string;
  rootPath: string | undefined;
  file: string | undefined;
  version: string | undefined;
  briefDescription: string;
  resources: string[];
  /** `allowed-tools` as written. */
  allowedTools: string[];
  /**
   * `allowed-tools` read: the tools the skill pre-approves while it is active (they run without
   * asking for approval), when it is trusted. It restricts nothing.
   */
  preApproves: AllowedToolEntry[];
  license: string | undefined;
  /** False for a project skill not yet trusted: its toolsets were not imported. */
  trusted: boolean;
}

/**
 * Builds the `SkillSpec` of a loaded document skill. Throws `toolset_failed` if its actions do not
 * fit a skill (two of one name, say), and `invalid_manifest` for anything else `defineSkill`
 * refuses. Its `allowed-tools` are read into `preApproves`; `report` gets a diagnostic for each
 * entry that cannot be read, and one saying that an untrusted skill pre-approves nothing.
 */
export function documentSkillSpec(entry: SkillEntry, loaded: LoadedSkill, actions: readonly AnyAction[], report: (item: Diagnostic) => void = () => {}): AnySkill {
  const allowedTools = entry.manifest?.allowedTools ?? [];
  const read = parseAllowedTools(entry.name, allowedTools);
  for (const item of read.diagnostics) report(item);
  if (!entry.trusted && read.entries.length) {
    report(
      diagnostic('info', 'allowed_tools_untrusted', `skill '${entry.name}' is not trusted: its allowed-tools (${read.entries.map((item) => item.entry).join(' ')}) pre-approve nothing until it is trusted (skillstate trust ${entry.name})`, {
        skill: entry.name,
      }),
    );
  }
  const metadata: DocumentSkillMetadata = {
    kind: 'document',
    source: entry.source,
    rootPath: entry.rootPath,
    file: entry.file,
    version: entry.version,
    briefDescription: entry.briefDescription,
    resources: [...loaded.resources.keys()],
    allowedTools: [...allowedTools],
    preApproves: read.entries,
    license: entry.manifest?.license,
    trusted: entry.trusted,
  };
  try {
    return defineSkill({
      name: entry.name,
      stateKey: documentStateKey(entry.name),
      description: entry.description,
      category: 'document',
      tags: ['document', entry.source],
      vsn: entry.version !== undefined && SEMVER.test(entry.version) ? entry.version : undefined,
      instructions: bodyForModel(entry, loaded.instructions),
      actions,
      metadata: { ...metadata },
    });
  } catch (error) {
    if (!(error instanceof DefinitionError)) throw error;
    const field = (error.details as { field?: unknown } | undefined)?.field;
    if (typeof field === 'string' && /^actions\b/.test(field)) {
      throw manifestError('toolset_failed', `skill '${entry.name}': its tools cannot form a skill: ${error.message}`, { skill: entry.name }, error);
    }
    throw manifestError('invalid_manifest', `skill '${entry.name}' cannot be loaded: ${error.message}`, { skill: entry.name, subject: entry.file ?? entry.rootPath }, error);
  }
}

/** The metadata of a document skill's spec, or undefined for a code skill. */
export function documentMetadata(skill: AnySkill): DocumentSkillMetadata | undefined {
  return skill.metadata.kind === 'document' ? (skill.metadata as unknown as DocumentSkillMetadata) : undefined;
}
