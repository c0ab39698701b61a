/**
 * `parseSkillManifest`: a SKILL.md's text in, its checked manifest and body out. Two modes:
 *
 * - lenient (the default, what discovery and loading use): accepts what real skills contain and
 *   reports each fix-up as a diagnostic — a BOM, CRLF line ends, an unquoted `: ` in a value, a
 *   name that does not match its folder, an over-long description, unknown fields, nested
 *   metadata, a refused trigger pattern (dropped), YAML syntax the reference validator refuses
 *   (flow style, anchors, tags, tabs) and characters its YAML reader refuses (control characters
 *   such as U+0007), a name that cannot be an identifier (loaded under one derived from it);
 * - strict (`strict: true`, what `validateSkillDir` and `skillstate validate` use): every
 *   problem of the specification is an error, in the reference validator's words. With
 *   `spec: 'agentskills'` the file is judged as the reference judges it: its reading of a BOM and
 *   of the closing `---`, and its YAML loader's refusals, in that loader's words.
 *
 * Fatal problems throw a `ManifestError` with code `invalid_manifest` naming the file; options
 * that cannot be read (a key `ParseOptions` does not have, an unknown `spec`) throw one with
 * `invalid_options` naming the option.
 *
 * Pure: no I/O.
 */
import { diagnostic, type Diagnostic } from '../core/diagnostics.js';
import { optionsProblem } from '../core/options.js';
import { ManifestError, manifestError } from './errors.js';
import { checkManifestFields, manifestSpecProblem, type FieldProblem, type ManifestSpec, type SkillManifest } from './fields.js';
import { INVALID_YAML, loadFrontMatterYaml, splitFrontMatter } from './frontmatter.js';
import { NON_PRINTABLE, referenceYamlRefusal } from './reference-yaml.js';

/** Characters without which front matter holds no syntax the reference's YAML loader refuses (bar a duplicate key). */
const MAYBE_REFUSED = /[[{&!*\t]/;

/** SKILL.md files larger than this are refused (front matter and body together). */
export const DEFAULT_MAX_MANIFEST_BYTES = 256 * 1024;

/** Options of `parseSkillManifest`. */
export interface ParseOptions {
  /** The file the text came from, named in errors and diagnostics. */
  file?: string;
  /** The folder name the skill's `name` must equal (after NFKC). */
  dirName?: string;
  /** Every specification problem is an error (default false: lenient). */
  strict?: boolean;
  /**
   * Field set accepted in strict mode (default `skillstate`: the standard plus skillstate's
   * extension fields). Any other value is refused (`invalid_options`).
   */
  spec?: ManifestSpec;
  maxAliasCount?: number;
  /** Refuse texts longer than this many UTF-8 bytes (default 256 KiB). */
  maxBytes?: number;
}

/** What `parseSkillManifest` returns: the manifest, the body, and the problems found. */
export interface ParsedManifest {
  manifest: SkillManifest;
  /** The markdown after the front matter (LF line ends, leading blank lines removed). */
  body: string;
  /** Warnings and notes about what was accepted leniently. */
  diagnostics: Diagnostic[];
  /** The front matter as loaded: prototype keys dropped, scalar metadata values as written. */
  data: Record<string, unknown>;
}

/** Problems found when reading a manifest without throwing (see `inspectSkillManifest`). */
export interface ManifestReport {
  parsed: ParsedManifest | undefined;
  /** Messages of problems that are errors in this mode, reference wording. */
  errors: string[];
  diagnostics: Diagnostic[];
}

/**
 * Parses a SKILL.md. Throws a `ManifestError` (`invalid_manifest`) naming the file when the
 * manifest cannot be used (or, with `strict`, breaks any rule); otherwise returns the manifest,
 * the body and the diagnostics.
 */
export function parseSkillManifest(text: string, options: ParseOptions = {}): ParsedManifest {
  refuseOptions('parseSkillManifest', options);
  const report = inspect(text, options);
  if (report.parsed && report.errors.length === 0) return report.parsed;
  const where = options.file ?? 'SKILL.md';
  throw manifestError('invalid_manifest', `${where}: ${report.errors.join('; ')}`, {
    subject: where,
    issues: report.errors.map((message) => ({ path: [], message })),
    details: { errors: report.errors },
  });
}

/**
 * Like `parseSkillManifest`, but returns every problem of the text instead of throwing. Options it
 * cannot read are thrown, as `parseSkillManifest` throws them.
 */
export function inspectSkillManifest(text: string, options: ParseOptions = {}): ManifestReport {
  refuseOptions('inspectSkillManifest', options);
  return inspect(text, options);
}

/** The options `parseSkillManifest` and `inspectSkillManifest` take: one entry per key of `ParseOptions`. */
const PARSE_OPTIONS = { file: true, dirName: true, strict: true, spec: true, maxAliasCount: true, maxBytes: true } as const satisfies Record<keyof ParseOptions, true>;

/**
 * Throws `invalid_options` for options `where` cannot read: not an object, a key `ParseOptions`
 * does not have (a misspelled `strcit` would validate leniently without a word), a `spec` that is
 * not a `ManifestSpec`.
 */
function refuseOptions(where: string, options: ParseOptions): void {
  const refused = optionsProblem(where, options, PARSE_OPTIONS, '{ strict: true }') ?? manifestSpecProblem(options.spec);
  if (refused) throw new ManifestError(refused);
}

function inspect(text: string, options: ParseOptions): ManifestReport {
  const file = options.file;
  const strict = options.strict === true;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_MANIFEST_BYTES;
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > maxBytes) {
    return { parsed: undefined, errors: [`SKILL.md is ${bytes} bytes, over the ${maxBytes}-byte limit`], diagnostics: [] };
  }
  // Strict validation against the standard alone gives the reference validator's verdict.
  const reference = strict && options.spec === 'agentskills';
  const split = splitFrontMatter(text, { reference });
  if (!split.ok) return { parsed: undefined, errors: [split.message], diagnostics: [] };
  const diagnostics: Diagnostic[] = [];
  const note = (level: 'info' | 'warning', code: string, message: string, details?: Record<string, unknown>) =>
    diagnostics.push(diagnostic(level, code, file ? `${file}: ${message}` : message, { subject: file, details }));
  if (split.value.bom) note('info', 'manifest_bom', 'a UTF-8 byte-order mark was removed');
  if (split.value.crlf) note('info', 'manifest_crlf', 'CRLF line ends were read as LF');

  const refusal = reference || MAYBE_REFUSED.test(split.value.yaml) || NON_PRINTABLE.test(split.value.yaml) ? referenceYamlRefusal(split.value.yaml, { duplicates: reference }) : undefined;
  if (refusal && reference) return { parsed: undefined, errors: [`${INVALID_YAML}${refusal.message}`], diagnostics };
  const loaded = loadFrontMatterYaml(split.value.yaml, { maxAliasCount: options.maxAliasCount ?? 100, repair: !strict });
  if (!loaded.ok) return { parsed: undefined, errors: [loaded.message], diagnostics };
  if (refusal) {
    note('warning', 'manifest_reference_syntax', `front matter line ${refusal.line} uses ${refusal.construct}${refusal.character ? ` (${refusal.character}, column ${refusal.column})` : ''}, which the Agent Skills reference validator refuses (Invalid YAML in frontmatter); skillstate reads it as YAML`, {
      construct: refusal.construct,
      line: refusal.line,
      column: refusal.column,
    });
  }
  for (const key of loaded.value.duplicates) {
    note('warning', 'manifest_duplicate_key', `key '${key}' is given more than once in the front matter; the last value is used`, { field: key });
  }
  for (const field of loaded.value.repaired) {
    note('warning', 'manifest_yaml_recovered', `field '${field}' holds an unquoted ': ', which is invalid YAML; it was read as a quoted string`, { field });
  }
  for (const at of loaded.value.dropped) {
    note('warning', 'manifest_key_dropped', `key '${at}' was dropped: keys named __proto__, constructor or prototype are never read from front matter`, { key: at });
  }
  const { manifest, problems } = checkManifestFields(loaded.value.data, {
    dirName: options.dirName,
    spec: options.spec,
    sources: loaded.value.sources,
    droppedKeys: loaded.value.dropped.filter((at) => !/[.[]/.test(at)),
  });
  const errors: string[] = [];
  for (const problem of problems) {
    const error = problem.level === 'fatal' || (strict ? problem.level === 'spec' : problem.level === 'unloadable');
    if (error) errors.push(problem.message);
    else note('warning', problem.code, describeLenient(problem), { field: problem.field });
  }
  const skill = manifest?.id;
  if (skill) for (const item of diagnostics) item.skill = skill;
  if (!manifest) return { parsed: undefined, errors, diagnostics };
  const body = split.value.body.replace(/^\n+/, '');
  return { parsed: { manifest, body, diagnostics, data: loaded.value.data }, errors, diagnostics };
}

/** The lenient reading of a problem: what the rule says and what was done about it. */
function describeLenient(problem: FieldProblem): string {
  switch (problem.code) {
    case 'manifest_name_mismatch':
      return `${problem.message}; the skill is registered under its manifest name`;
    case 'manifest_unknown_fields':
      return `${problem.message} They are kept in the manifest's extra fields.`;
    case 'trigger_pattern_refused':
      return `${problem.message}; the pattern is ignored`;
    case 'manifest_toolset_invalid':
      return `${problem.message}; the toolset is ignored`;
    case 'manifest_script_invalid':
      return `${problem.message}; the script is ignored`;
    default:
      return problem.message;
  }
}
