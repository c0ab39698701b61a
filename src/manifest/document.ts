/**
 * The document-skill interface: a name, a description, an optional
 * version, and an async `load()` that returns the instructions and the resources as readers
 * keyed by relative path, each read only when asked for. A SKILL.md folder is one
 * implementation (`folder.ts`); `defineDocumentSkill` builds one from memory, and users can
 * implement the interface over a database or a remote store the same way.
 *
 * Pure: no I/O (in-memory skills hold their content).
 */
import type { AnyAction } from '../core/action.js';
import type { Diagnostic } from '../core/diagnostics.js';
import { manifestError } from './errors.js';
import { checkManifestFields, type SkillManifest } from './fields.js';
import type { TriggerSpec } from './triggers.js';

/** Options of reading a document skill resource. */
export interface ResourceReadOptions {
  /** Read at most this many bytes (readers may return fewer; in-memory readers may ignore it). */
  maxBytes?: number;
}

/** One resource of a skill, read on demand. */
export interface SkillResource {
  /** Size in bytes, when known without reading. */
  readonly size?: number | undefined;
  read(options?: ResourceReadOptions): Promise<Uint8Array | string>;
}

/** What `load()` returns: the instructions and the resources, by relative path. */
export interface LoadedSkill {
  instructions: string;
  resources: Map<string, SkillResource>;
  /**
   * The folder the resources live in, when they are files: a path that is not among them is
   * then checked against it, so one that leads outside is refused rather than reported missing.
   */
  root?: string;
  /** What loading noticed (resources skipped, links leaving the root...). */
  diagnostics?: Diagnostic[];
}

/**
 * A document skill. Only `name`, `description`, `version` and `load` are required; the optional
 * fields let the registry disclose and activate it without loading it.
 */
export interface DocumentSkill {
  readonly name: string;
  readonly description: string;
  readonly version?: string | undefined;
  load(): Promise<LoadedSkill>;
  /** The checked manifest, when the skill has one (folders do). */
  readonly manifest?: SkillManifest | undefined;
  /** The skill's folder, for path resolution, resources on disk, toolsets and scripts. */
  readonly rootPath?: string | undefined;
  /** The SKILL.md file, when there is one. */
  readonly file?: string | undefined;
  /** Actions the skill contributes once loaded (folders get them from their toolsets). */
  loadActions?(): Promise<readonly AnyAction[]>;
  /**
   * Set for a skill served by an MCP server: the label the app gave the server and the skill's
   * URI there. Such a skill is never trusted: it brings no actions and runs no scripts.
   */
  readonly origin?: { readonly server: string; readonly uri: string } | undefined;
}

/** What `defineDocumentSkill` takes: a document skill implemented in code. */
export interface DocumentSkillDefinition {
  name: string;
  description: string;
  version?: string;
  /** The body a model reads when the skill is activated. */
  instructions: string;
  /** Resources by relative path: text, bytes, or a function producing either on demand. */
  resources?: Record<string, string | Uint8Array | (() => Promise<string | Uint8Array>)>;
  triggers?: Partial<TriggerSpec>;
  briefDescription?: string;
  defaultEnabled?: boolean;
  /** Keep the skill out of disclosure and automatic loading: it is loaded only by its name. */
  disableModelInvocation?: boolean;
  /** Actions (made by `defineAction`) the skill brings when it is activated. */
  actions?: readonly AnyAction[];
  metadata?: Record<string, unknown>;
}

/**
 * Defines a document skill held in memory. Its fields are checked by the same rules as a
 * SKILL.md's; a definition that cannot work throws a `ManifestError` (`invalid_manifest`).
 */
export function defineDocumentSkill(definition: DocumentSkillDefinition): DocumentSkill {
  const data: Record<string, unknown> = { name: definition.name, description: definition.description };
  if (definition.version !== undefined) data.version = definition.version;
  if (definition.triggers !== undefined) data.triggers = definition.triggers;
  if (definition.briefDescription !== undefined) data.brief_description = definition.briefDescription;
  if (definition.defaultEnabled !== undefined) data.default_enabled = definition.defaultEnabled;
  if (definition.disableModelInvocation !== undefined) data['disable-model-invocation'] = definition.disableModelInvocation;
  if (definition.metadata !== undefined) data.metadata = definition.metadata;
  const { manifest, problems } = checkManifestFields(data);
  const errors = problems.filter((problem) => problem.level !== 'advice');
  if (!manifest || errors.length) {
    const name = typeof definition.name === 'string' ? definition.name : '?';
    throw manifestError('invalid_manifest', `document skill '${name}': ${errors.map((problem) => problem.message).join('; ')}`, {
      skill: name,
      issues: errors.map((problem) => ({ path: [problem.field], message: problem.message })),
    });
  }
  if (typeof definition.instructions !== 'string') {
    throw manifestError('invalid_manifest', `document skill '${manifest.id}': instructions must be a string`, { skill: manifest.id });
  }
  const entries = Object.entries(definition.resources ?? {});
  const actions = definition.actions ?? [];
  return {
    name: manifest.id,
    description: manifest.description,
    version: manifest.version,
    manifest,
    async load() {
      const resources = new Map<string, SkillResource>();
      for (const [key, value] of entries) {
        resources.set(key, {
          size: typeof value === 'string' ? Buffer.byteLength(value) : typeof value === 'function' ? undefined : value.byteLength,
          read: async () => (typeof value === 'function' ? value() : value),
        });
      }
      return { instructions: definition.instructions, resources };
    },
    loadActions: async () => actions,
  };
}
