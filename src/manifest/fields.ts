/**
 * The manifest's fields and their rules. The Agent Skills reference validator (skills-ref) is
 * the authority for the standard fields — `name`, `description`, `license`, `compatibility`,
 * `metadata`, `allowed-tools` — and its messages are reproduced word for word. skillstate's extension fields
 * (`version`, `toolsets`, `scripts`, `triggers`, `default_enabled`, `brief_description`) are
 * checked in the same style.
 *
 * Names follow the reference: lowercase letters of any script, digits and hyphens (`pdf-tools`,
 * `мой-навык`, `技能`), compared with the folder's name after NFKC normalisation, lengths counted
 * in code points after normalisation.
 *
 * Each problem has a level: `fatal` (the skill cannot be loaded at all), `spec` (an error for
 * strict validation, a warning when loading leniently), `unloadable` (valid by the
 * specification, but skillstate cannot load it: a warning for strict validation, an error when
 * loading) or `advice` (a warning either way). Lengths count code points, not UTF-16 units.
 * With `spec: 'agentskills'` only the problems the reference reports are reported: the fields it
 * does not check (`license`, `allowed-tools`, `metadata`, any extension field) get no message.
 *
 * A name keeps the form it is written in; a name that cannot be an identifier loads under one
 * derived from it (`skill-identifier.ts`), with a warning giving both.
 *
 * Pure: no I/O.
 */
import { closestName, didYouMean } from '../core/closest-name.js';
import { errorInfo, type ErrorInfo } from '../core/errors.js';
import { describeGiven, isPlainObject } from '../core/plain.js';
import { normalizeRelative } from './confine.js';
import { skillIdentifier } from './skill-identifier.js';
import { compileTriggerPattern, type TriggerSpec } from './triggers.js';

export const MAX_NAME_LENGTH = 64;
export const MAX_DESCRIPTION_LENGTH = 1024;
/** The description length skills using the extension fields keep within: advice, not an error. */
export const EXTENSION_DESCRIPTION_LENGTH = 500;
export const MAX_COMPATIBILITY_LENGTH = 500;
export const MAX_BRIEF_LENGTH = 200;

/** The fields the Agent Skills specification allows. */
export const STANDARD_FIELDS = ['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'name'] as const;
/** The fields skillstate adds to the standard: versions, toolsets, scripts, triggers, catalog texts. */
export const EXTENSION_FIELDS = ['brief_description', 'default_enabled', 'scripts', 'toolsets', 'triggers', 'version'] as const;

/** Standard fields whose scalar values are text whatever YAML makes of them. */
const TEXT_FIELDS = ['name', 'description', 'license', 'compatibility'] as const;

/** Which field set strict validation accepts: the Agent Skills standard alone, or with skillstate's extension fields. */
export type ManifestSpec = 'agentskills' | 'skillstate';

/** Every `ManifestSpec`: one entry per value. */
const MANIFEST_SPECS = { agentskills: true, skillstate: true } as const satisfies Record<ManifestSpec, true>;

/**
 * The `invalid_options` error for a `spec` option that is not a `ManifestSpec` (`agentskillz`
 * would otherwise mean the default without a word), naming the values there are; undefined when
 * it is one or is not given.
 */
export function manifestSpecProblem(spec: unknown): ErrorInfo<'invalid_options'> | undefined {
  if (spec === undefined || (typeof spec === 'string' && Object.hasOwn(MANIFEST_SPECS, spec))) return undefined;
  const names = Object.keys(MANIFEST_SPECS);
  const meant = typeof spec === 'string' ? closestName(spec, names) : undefined;
  return errorInfo('invalid_options', `spec must be ${names.map((name) => `'${name}'`).join(' or ')}, got ${describeGiven(spec)}${didYouMean(meant)}`, {
    subject: 'spec',
    details: { option: 'spec', value: spec },
  });
}

/** Fields of the Agent Skills hosts that skillstate honours. */
export const HOST_FIELDS = ['disable-model-invocation'] as const;

/** `"toolsets/index:HelloToolset"`: a module path relative to the skill root and an export name. */
export interface ToolsetRef {
  ref: string;
  path: string;
  exportName: string;
}

/** A script the manifest declares: a path relative to the skill root, optionally named. */
export interface ScriptRef {
  name: string;
  path: string;
  description: string | undefined;
}

/** A SKILL.md front matter, checked and normalised. */
export interface SkillManifest {
  /** The name as written (white space stripped); compared with the folder's name and looked up after NFKC. */
  name: string;
  /**
   * The identifier the skill is registered and loaded under: `name` when it can be one, else one
   * derived from it (`Active Directory Attacks` is `active-directory-attacks`), with a warning.
   */
  id: string;
  description: string;
  /** `brief_description`, or the whole description on one line (`catalogDescription`): what catalogs show. */
  briefDescription: string;
  version: string | undefined;
  license: string | undefined;
  compatibility: string | undefined;
  allowedTools: string[];
  /**
   * Client-specific properties: string keys to string values, each as written in the source
   * (`version: 1.0` is "1.0"). Nested lists or mappings are kept as loaded, with a warning.
   */
  metadata: Record<string, unknown>;
  toolsets: ToolsetRef[];
  scripts: ScriptRef[];
  triggers: TriggerSpec;
  defaultEnabled: boolean;
  /** `disable-model-invocation`: the skill is loaded only by its name, never disclosed or picked automatically. */
  disableModelInvocation: boolean;
  /** Fields no specification defines, kept as they were. */
  extra: Record<string, unknown>;
}

/**
 * How bad a problem is: `fatal` (nothing can use the skill), `spec` (breaks the specification:
 * an error when validating strictly, a warning when loading), `unloadable` (the specification
 * allows it but skillstate cannot load it: a warning when validating, an error when loading) or
 * `advice` (a warning either way).
 */
export type ProblemLevel = 'fatal' | 'spec' | 'unloadable' | 'advice';

export interface FieldProblem {
  level: ProblemLevel;
  /** Stable diagnostic code, e.g. `manifest_name_mismatch`. */
  code: string;
  field: string;
  message: string;
}

export interface FieldOptions {
  /** The folder the SKILL.md sits in, for the name rule. */
  dirName?: string | undefined;
  spec?: ManifestSpec;
  /** Source text of top-level scalars that YAML did not read as strings (`version: 1.0` stays "1.0"). */
  sources?: Record<string, string>;
  /** Top-level keys left out of `data` (`__proto__`...): still unexpected fields, as the reference reports them. */
  droppedKeys?: readonly string[];
}

/** Length in code points, the unit every limit of the specification counts in. */
export function codePointLength(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** Python's white space (`str.isspace()`), which the reference validator strips. */
const PYTHON_SPACE = /^[\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/;

/**
 * `text.strip()` as Python does it (JavaScript's `trim()` differs on U+001C-U+001F, U+0085 and
 * U+FEFF). Walked from both ends: a regular expression for trailing white space retries at every
 * space of a long run inside the text, quadratic time on a value full of tabs.
 */
export function pythonStrip(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && PYTHON_SPACE.test(text[start]!)) start++;
  while (end > start && PYTHON_SPACE.test(text[end - 1]!)) end--;
  return text.slice(start, end);
}

/**
 * The description as catalogs show it: on one line (the line breaks of a YAML block scalar and
 * every run of white space become one space) and, past the specification's 1,024 code points
 * (a leniently loaded skill, which loading warns about), cut there with `…`.
 */
export function catalogDescription(description: string): string {
  const flat = description.replace(/\s+/g, ' ').trim();
  if (flat.length <= MAX_DESCRIPTION_LENGTH) return flat;
  const chars = [...flat];
  return chars.length > MAX_DESCRIPTION_LENGTH ? `${chars.slice(0, MAX_DESCRIPTION_LENGTH - 1).join('')}…` : flat;
}

/** The description's first sentence, capped at 200 code points. */
export function firstSentence(description: string): string {
  const flat = description.replace(/\s+/g, ' ').trim();
  const end = /[.!?](?=\s|$)/u.exec(flat);
  const sentence = end ? flat.slice(0, end.index + 1) : flat;
  const chars = [...sentence];
  return chars.length > MAX_BRIEF_LENGTH ? `${chars.slice(0, MAX_BRIEF_LENGTH - 1).join('')}…` : sentence;
}

/** The fields whose checks the reference makes (its other standard fields it reads unchecked). */
const REFERENCE_CHECKED = new Set(['name', 'description', 'compatibility']);

/**
 * The specification gives `compatibility` 1 to 500 characters; the reference validator checks
 * only the upper bound, so an empty one is skillstate's finding alone.
 */
const COMPATIBILITY_EMPTY = 'manifest_compatibility_empty';

/** Whether the reference validator reports this problem (everything else is skillstate's own). */
function isReferenceProblem(level: ProblemLevel, code: string, field: string): boolean {
  if (level === 'advice' || level === 'unloadable' || code === COMPATIBILITY_EMPTY) return false;
  return code === 'manifest_unknown_fields' || REFERENCE_CHECKED.has(field);
}

/** Python's `repr` of a sorted list of strings, as the reference validator prints it. */
function pythonList(items: readonly string[]): string {
  return `[${items.map((item) => `'${item}'`).join(', ')}]`;
}

/** Checks front-matter data. Returns the manifest (unless a problem is fatal) and every problem. */
export function checkManifestFields(
  data: Record<string, unknown>,
  options: FieldOptions = {},
): { manifest: SkillManifest | undefined; problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  const spec = options.spec ?? 'skillstate';
  // The standard alone is judged as the reference judges it: what it does not check gets no message.
  const add = (level: ProblemLevel, code: string, field: string, message: string) => {
    if (spec !== 'agentskills' || isReferenceProblem(level, code, field)) problems.push({ level, code, field, message });
  };
  const allowed: readonly string[] = spec === 'agentskills' ? STANDARD_FIELDS : [...STANDARD_FIELDS, ...EXTENSION_FIELDS];
  const extended = spec !== 'agentskills' && EXTENSION_FIELDS.some((field) => field in data);

  // The hosts' fields are honoured, not listed: the message keeps the specification's field set.
  const honoured: readonly string[] = spec === 'agentskills' ? [] : HOST_FIELDS;
  const unexpected = [...Object.keys(data), ...(options.droppedKeys ?? [])]
    .filter((key) => !allowed.includes(key) && !honoured.includes(key))
    .sort();
  if (unexpected.length) {
    add('spec', 'manifest_unknown_fields', unexpected.join(', '), `Unexpected fields in frontmatter: ${unexpected.join(', ')}. Only ${pythonList([...allowed].sort())} are allowed.`);
  }

  // As in the reference, the standard text fields are read as written: `name: 2024` is "2024".
  const text: Record<string, unknown> = { ...data };
  for (const field of TEXT_FIELDS) if (typeof data[field] !== 'string' && options.sources?.[field] !== undefined) text[field] = options.sources[field];
  const named = checkName(text, options.dirName, add);
  const description = checkDescription(text, extended, add);
  const license = optionalString(text, 'license', add);
  const compatibility = optionalString(text, 'compatibility', add);
  if (compatibility !== undefined && codePointLength(compatibility) > MAX_COMPATIBILITY_LENGTH) {
    add('spec', 'manifest_compatibility_long', 'compatibility', `Compatibility exceeds ${MAX_COMPATIBILITY_LENGTH} character limit (${codePointLength(compatibility)} chars)`);
  }
  if (compatibility === '') add('spec', COMPATIBILITY_EMPTY, 'compatibility', `Field 'compatibility' must be 1-${MAX_COMPATIBILITY_LENGTH} characters if provided; it is empty`);
  const allowedTools = checkAllowedTools(data['allowed-tools'], add);
  const metadata = checkMetadata(data.metadata, add);
  const version = checkVersion(data.version, options.sources?.version, add);
  const toolsets = checkToolsets(data.toolsets, add);
  const scripts = checkScripts(data.scripts, add);
  const triggers = checkTriggers(data.triggers, add);
  let defaultEnabled = true;
  if (data.default_enabled !== undefined) {
    if (typeof data.default_enabled === 'boolean') defaultEnabled = data.default_enabled;
    else add('spec', 'manifest_field_invalid', 'default_enabled', "Field 'default_enabled' must be true or false");
  }
  let disableModelInvocation = false;
  if (data['disable-model-invocation'] !== undefined) {
    if (typeof data['disable-model-invocation'] === 'boolean') disableModelInvocation = data['disable-model-invocation'];
    else add('spec', 'manifest_field_invalid', 'disable-model-invocation', "Field 'disable-model-invocation' must be true or false");
  }
  let brief = optionalString(data, 'brief_description', add);
  if (brief !== undefined && codePointLength(brief) > MAX_BRIEF_LENGTH) {
    add('advice', 'manifest_brief_long', 'brief_description', `Brief description exceeds ${MAX_BRIEF_LENGTH} character limit (${codePointLength(brief)} chars); it is shortened in catalogs`);
    brief = firstSentence(brief);
  }

  const extra: Record<string, unknown> = {};
  const known: readonly string[] = [...STANDARD_FIELDS, ...EXTENSION_FIELDS, ...HOST_FIELDS];
  for (const key of Object.keys(data)) if (!known.includes(key)) extra[key] = data[key];
  if (named === undefined || description === undefined || problems.some((problem) => problem.level === 'fatal')) return { manifest: undefined, problems };
  return {
    manifest: {
      name: named.name,
      id: named.id,
      description,
      briefDescription: brief?.trim() || catalogDescription(description),
      version,
      license,
      compatibility,
      allowedTools,
      metadata,
      toolsets,
      scripts,
      triggers,
      defaultEnabled,
      disableModelInvocation,
      extra,
    },
    problems,
  };
}

type Add = (level: ProblemLevel, code: string, field: string, message: string) => void;

/** A required string field: present and not blank (as Python's `strip()` sees it), or a fatal problem. */
function requiredString(data: Record<string, unknown>, field: string, add: Add): string | undefined {
  if (!Object.hasOwn(data, field)) {
    add('fatal', 'manifest_missing_field', field, `Missing required field in frontmatter: ${field}`);
    return undefined;
  }
  const value = data[field];
  if (typeof value !== 'string' || !pythonStrip(value)) {
    add('fatal', 'manifest_field_invalid', field, `Field '${field}' must be a non-empty string`);
    return undefined;
  }
  return value;
}

function checkName(data: Record<string, unknown>, dirName: string | undefined, add: Add): { name: string; id: string } | undefined {
  const raw = requiredString(data, 'name', add);
  if (raw === undefined) return undefined;
  const written = pythonStrip(raw);
  // The reference checks, and names in its messages, the NFKC form; the skill keeps the name as written.
  const name = written.normalize('NFKC');
  const length = codePointLength(name);
  if (length > MAX_NAME_LENGTH) add('spec', 'manifest_name_format', 'name', `Skill name '${name}' exceeds ${MAX_NAME_LENGTH} character limit (${length} chars)`);
  if (name !== name.toLowerCase()) add('spec', 'manifest_name_format', 'name', `Skill name '${name}' must be lowercase`);
  if (name.startsWith('-') || name.endsWith('-')) add('spec', 'manifest_name_format', 'name', 'Skill name cannot start or end with a hyphen');
  if (name.includes('--')) add('spec', 'manifest_name_format', 'name', 'Skill name cannot contain consecutive hyphens');
  // Python's str.isalnum(): letters (L*) and numbers (N*) of any script; marks are not.
  if (!/^[\p{L}\p{N}-]+$/u.test(name)) {
    add('spec', 'manifest_name_format', 'name', `Skill name '${name}' contains invalid characters. Only letters, digits, and hyphens are allowed.`);
  }
  if (dirName !== undefined && dirName.normalize('NFKC') !== name) {
    add('spec', 'manifest_name_mismatch', 'name', `Directory name '${dirName}' must match skill name '${name}'`);
  }
  const id = skillIdentifier(written);
  if (id === undefined) {
    add('unloadable', 'manifest_name_unusable', 'name', `Skill name '${written}' cannot be used by skillstate: no identifier (letters, digits, '_' or '-', starting with a letter or digit) can be derived from it`);
    return { name: written, id: written };
  }
  if (id !== written) {
    add('advice', 'manifest_name_derived', 'name', `Skill name '${written}' cannot be used as an identifier (1 to 64 letters, digits, '_' or '-', starting with a letter or digit); the skill is registered and loaded as '${id}'`);
  }
  return { name: written, id };
}

function checkDescription(data: Record<string, unknown>, extended: boolean, add: Add): string | undefined {
  const description = requiredString(data, 'description', add);
  if (description === undefined) return undefined;
  const length = codePointLength(description);
  if (length > MAX_DESCRIPTION_LENGTH) {
    add('spec', 'manifest_description_long', 'description', `Description exceeds ${MAX_DESCRIPTION_LENGTH} character limit (${length} chars)`);
  } else if (extended && length > EXTENSION_DESCRIPTION_LENGTH) {
    add('advice', 'manifest_description_long', 'description', `Description is ${length} characters; skills using the extension fields keep it within ${EXTENSION_DESCRIPTION_LENGTH} (use brief_description for catalogs)`);
  }
  return description.trim();
}

function optionalString(data: Record<string, unknown>, field: string, add: Add): string | undefined {
  const value = data[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  add('spec', 'manifest_field_invalid', field, `Field '${field}' must be a string`);
  return undefined;
}

function checkAllowedTools(value: unknown, add: Add): string[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return value.split(/\s+/).filter(Boolean);
  if (Array.isArray(value)) {
    if (value.every((item) => typeof item === 'string')) return value as string[];
    add('spec', 'manifest_field_invalid', 'allowed-tools', "Field 'allowed-tools' list items must all be strings");
    return value.filter((item): item is string => typeof item === 'string');
  }
  add('spec', 'manifest_field_invalid', 'allowed-tools', "Field 'allowed-tools' must be either a string or a list of strings");
  return [];
}

function checkMetadata(value: unknown, add: Add): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (!isPlainObject(value)) {
    add('spec', 'manifest_field_invalid', 'metadata', "Field 'metadata' must be a mapping");
    return {};
  }
  const nested = Object.keys(value).filter((key) => typeof value[key] === 'object' && value[key] !== null);
  if (nested.length) {
    add('advice', 'manifest_metadata_nested', 'metadata', `Field 'metadata' should map keys to strings; ${nested.map((key) => `'${key}'`).join(', ')} ${nested.length > 1 ? 'hold' : 'holds'} nested values, kept as they are`);
  }
  return value;
}

const SEMVER = /^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$/;

function checkVersion(value: unknown, source: string | undefined, add: Add): string | undefined {
  if (value === undefined || value === null) return undefined;
  const text = typeof value === 'string' ? value : typeof value === 'number' ? (source ?? String(value)) : undefined;
  if (text === undefined) {
    add('spec', 'manifest_field_invalid', 'version', "Field 'version' must be a semantic version (e.g. 1.0.0)");
    return undefined;
  }
  if (!SEMVER.test(text)) add('spec', 'manifest_field_invalid', 'version', `Field 'version' must be a semantic version (e.g. 1.0.0), got '${text}'`);
  return text;
}

function stringList(value: unknown, field: string, add: Add): string[] {
  if (value === undefined || value === null) return [];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.some((item) => typeof item !== 'string')) {
    add('spec', 'manifest_field_invalid', field, `Field '${field}' must be a list of strings`);
    return Array.isArray(list) ? list.filter((item): item is string => typeof item === 'string') : [];
  }
  return list as string[];
}

function checkToolsets(value: unknown, add: Add): ToolsetRef[] {
  const refs: ToolsetRef[] = [];
  for (const ref of stringList(value, 'toolsets', add)) {
    const match = /^([^:]+):([A-Za-z_$][\w$]*)$/.exec(ref.trim());
    if (!match) {
      add('spec', 'manifest_toolset_invalid', 'toolsets', `Toolset '${ref}' must have the form "path:Export" (e.g. "toolsets/index:HelloToolset")`);
      continue;
    }
    if (!normalizeRelative(match[1]!).ok) {
      add('spec', 'manifest_toolset_invalid', 'toolsets', `Toolset '${ref}' must name a module by a path relative to the skill's folder, inside it`);
      continue;
    }
    refs.push({ ref, path: match[1]!, exportName: match[2]! });
  }
  return refs;
}

function checkScripts(value: unknown, add: Add): ScriptRef[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    add('spec', 'manifest_field_invalid', 'scripts', "Field 'scripts' must be a list of paths or {name, path, description} mappings");
    return [];
  }
  const scripts: ScriptRef[] = [];
  // A path out of the folder would be refused when run: say so when the skill is read.
  const inside = (path: string) => {
    const ok = normalizeRelative(path).ok;
    if (!ok) add('spec', 'manifest_script_invalid', 'scripts', `Script path '${path}' must be relative to the skill's folder and stay inside it`);
    return ok;
  };
  for (const item of value) {
    if (typeof item === 'string' && item.trim()) {
      if (inside(item)) scripts.push({ name: item.split('/').pop()!, path: item, description: undefined });
    } else if (isPlainObject(item) && typeof item.path === 'string') {
      const name = typeof item.name === 'string' ? item.name : item.path.split('/').pop()!;
      if (inside(item.path)) scripts.push({ name, path: item.path, description: typeof item.description === 'string' ? item.description : undefined });
    } else {
      add('spec', 'manifest_field_invalid', 'scripts', `Script entry ${JSON.stringify(item)} must be a path or a {name, path, description} mapping`);
    }
  }
  return scripts;
}

function checkTriggers(value: unknown, add: Add): TriggerSpec {
  const triggers: TriggerSpec = { keywords: [], verbs: [], patterns: [] };
  if (value === undefined || value === null) return triggers;
  if (!isPlainObject(value)) {
    add('spec', 'manifest_field_invalid', 'triggers', "Field 'triggers' must be a mapping with keywords, verbs and patterns");
    return triggers;
  }
  const unknown = Object.keys(value).filter((key) => !['keywords', 'verbs', 'patterns'].includes(key));
  if (unknown.length) add('spec', 'manifest_field_invalid', 'triggers', `Unexpected fields in triggers: ${unknown.join(', ')}. Only keywords, verbs and patterns are allowed.`);
  triggers.keywords = stringList(value.keywords, 'triggers.keywords', add).filter((word) => word.trim());
  triggers.verbs = stringList(value.verbs, 'triggers.verbs', add).filter((word) => word.trim());
  for (const pattern of stringList(value.patterns, 'triggers.patterns', add)) {
    const compiled = compileTriggerPattern(pattern);
    if (compiled.ok) triggers.patterns.push(pattern);
    else add('spec', 'trigger_pattern_refused', 'triggers.patterns', `Trigger pattern '${pattern}' ${compiled.reason}`);
  }
  return triggers;
}
