/**
 * The document-skill interface: a name, a description, an optional
 * version, and an async `load()` that returns the instructions and the resources as readers
 * keyed by relative path, each read only when asked for. A SKILL.md folder is one
 * implementation (`folder.ts`); `defineDocumentSkill` builds one from memory, and users can
 * implement the interface over a database or a remote store the same way.
 *
 * Pure: no I/O (in-memory skills hold their content).
 */
import { isAction, type AnyAction } from '../core/action.js';
import type { Diagnostic } from '../core/diagnostics.js';
import { DefinitionError } from '../core/errors.js';
import { unknownField } from '../core/options.js';
import { describeGiven, isPlainObject } from '../core/plain.js';
import { normalizeRelative } from './confine.js';
import { checkManifestFields, type FieldProblem, type SkillManifest } from './fields.js';
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

/** The fields `defineDocumentSkill` takes: one entry per key of `DocumentSkillDefinition`. */
const DEFINITION_FIELDS = {
  name: true,
  description: true,
  version: true,
  instructions: true,
  resources: true,
  triggers: true,
  briefDescription: true,
  defaultEnabled: true,
  disableModelInvocation: true,
  actions: true,
  metadata: true,
} as const satisfies Record<keyof DocumentSkillDefinition, true>;

/** The definition's field for each front matter field the definition's values are checked as. */
const MANIFEST_FIELD_OF: Readonly<Record<string, keyof DocumentSkillDefinition>> = {
  brief_description: 'briefDescription',
  default_enabled: 'defaultEnabled',
  'disable-model-invocation': 'disableModelInvocation',
};

type ResourceValue = NonNullable<DocumentSkillDefinition['resources']>[string];

/**
 * Defines a document skill held in memory. Its fields are checked by the same rules as a
 * SKILL.md's, and its resources as a folder's files are: a definition that cannot work throws a
 * `DefinitionError` (`invalid_skill`, `details.field` naming the field) when it is made — a field
 * `defineDocumentSkill` does not take (a misspelled `resourses`, with the field it probably
 * meant), a resource path that is absolute, holds `..` or is not written plainly (`./a.md`), or a
 * resource that is neither text, bytes nor a function.
 */
export function defineDocumentSkill(definition: DocumentSkillDefinition): DocumentSkill {
  if (typeof definition !== 'object' || definition === null || Array.isArray(definition)) {
    throw new DefinitionError({ code: 'invalid_skill', message: `defineDocumentSkill needs a definition object { name, description, instructions }, got ${describeGiven(definition)}` });
  }
  const written: unknown = definition.name;
  const refuse = (field: string, message: string): never => {
    throw new DefinitionError({
      code: 'invalid_skill',
      message: `document skill '${typeof written === 'string' ? written : '?'}': ${field} ${message}`,
      ...(typeof written === 'string' ? { skill: written } : {}),
      details: { field },
    });
  };
  const stray = unknownField(definition, DEFINITION_FIELDS, { of: 'a document skill definition' });
  if (stray) refuse(stray.field, stray.message);

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
    const name = typeof written === 'string' ? written : '?';
    const fieldOf = (field: string) => MANIFEST_FIELD_OF[field] ?? field;
    // The rules speak of front matter fields; the messages name the definition's.
    const messageOf = (problem: FieldProblem) =>
      Object.entries(MANIFEST_FIELD_OF).reduce((message, [field, own]) => message.replaceAll(`'${field}'`, `'${own}'`), problem.message);
    throw new DefinitionError({
      code: 'invalid_skill',
      message: `document skill '${name}': ${errors.map(messageOf).join('; ')}`,
      ...(typeof written === 'string' ? { skill: written } : {}),
      issues: errors.map((problem) => ({ path: [fieldOf(problem.field)], message: messageOf(problem) })),
      details: { field: fieldOf(errors[0]?.field ?? 'name') },
    });
  }
  if (typeof definition.instructions !== 'string') refuse('instructions', `must be a string (the body a model reads), got ${describeGiven(definition.instructions)}`);
  const entries = checkResources(definition.resources, refuse);
  const actions = definition.actions ?? [];
  if (!Array.isArray(actions)) refuse('actions', `must be an array of actions made by defineAction, got ${describeGiven(actions)}`);
  actions.forEach((action, i) => {
    if (!isAction(action)) refuse(`actions[${i}]`, 'is not an action made by defineAction');
  });
  const instructions = definition.instructions;
  return {
    name: manifest.id,
    description: manifest.description,
    version: manifest.version,
    manifest,
    async load() {
      const resources = new Map<string, SkillResource>();
      for (const [key, value] of entries) resources.set(key, memoryResource(value));
      return { instructions, resources };
    },
    loadActions: async () => actions,
  };
}

/**
 * The resources of a definition as `[path, value]` pairs, each checked as a folder's files are:
 * a path relative to the skill's root, written plainly (`docs/a.md`: no `..`, no leading `/` or
 * drive letter, no `./`, `//` or `\`), so that the path the model is offered is the one it can
 * read; a value that is text, bytes or a function. `refuse` throws for the first that is not.
 */
function checkResources(resources: unknown, refuse: (field: string, message: string) => never): [string, ResourceValue][] {
  if (resources === undefined) return [];
  if (resources instanceof Map) refuse('resources', 'must be an object of relative path → content, not a Map (write Object.fromEntries(map))');
  if (!isPlainObject(resources)) refuse('resources', `must be an object of relative path → text, bytes or a function returning either, got ${describeGiven(resources)}`);
  const entries = Object.entries(resources as Record<string, unknown>);
  for (const [key, value] of entries) {
    const field = `resources[${JSON.stringify(key)}]`;
    const normal = normalizeRelative(key);
    if (!normal.ok) refuse(field, `is not a path the skill can offer: ${normal.message}`);
    if (normal.relative !== key) refuse(field, `is not written as the model would ask for it: write '${normal.relative}'`);
    if (typeof value !== 'string' && !(value instanceof Uint8Array) && typeof value !== 'function') {
      refuse(field, `must be text (a string), bytes (a Uint8Array) or a function returning either, got ${describeGiven(value)}`);
    }
  }
  return entries as [string, ResourceValue][];
}

/** A resource held in memory; a function's result is checked when it is read, since only then is it known. */
function memoryResource(value: ResourceValue): SkillResource {
  if (typeof value !== 'function') return { size: typeof value === 'string' ? Buffer.byteLength(value) : value.byteLength, read: async () => value };
  return {
    size: undefined,
    async read() {
      const content: unknown = await value();
      if (typeof content !== 'string' && !(content instanceof Uint8Array)) {
        throw new TypeError(`its function returned ${describeGiven(content)}, not text (a string) or bytes (a Uint8Array)`);
      }
      return content;
    },
  };
}
