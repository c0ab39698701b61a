/**
 * The skills a registry serves under MCP's Skills extension (`io.modelcontextprotocol/skills`):
 * for each, the entry `skills/list` and `skills/get` answer with (`uri`, the front matter verbatim
 * as JSON, every file once with its `sha256:` digest and size) and the files `resources/read`
 * may send, byte for byte.
 *
 * A skill is served when it is a folder whose `SKILL.md` obeys the Agent Skills specification (as
 * `validateSkillDir` checks it), whose front matter is strict YAML, which is trusted, and which
 * stays within the extension's limits (512 files, 16 MiB). Any other is left out, with a
 * diagnostic saying why (reported once per registry and reason); the tool path (`load_skill`)
 * still offers it as before. Untrusted project skills are left out because a served `SKILL.md` is
 * the file as it is, with no room for the notice the tool path puts before its body.
 *
 * The files of a skill are those `read_skill_resource` lists (hidden files, `node_modules`, `.git`
 * and links leaving the root are not served), plus `SKILL.md`. Everything is computed afresh on
 * each request from the folder, with digests cached by size and modification time.
 *
 * I/O: reads the skills' folders.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { diagnostic, type Diagnostic, type DiagnosticListener } from '../core/diagnostics.js';
import { isPlainObject } from '../core/plain.js';
import { inPool } from '../manifest/discover.js';
import type { DocumentSkillRegistry } from '../manifest/document-registry.js';
import { DEFAULT_MAX_ALIAS_COUNT, splitFrontMatter } from '../manifest/frontmatter.js';
import { listResources } from '../manifest/resources.js';
import type { SkillEntry } from '../manifest/skill-entry.js';
import { validateSkillDir } from '../manifest/validate.js';
import { forgetDigests, servedFileInfo, type ServedFileInfo } from './served-file.js';

/** The extension's identifier, under `capabilities.extensions`. */
export const SKILLS_EXTENSION = 'io.modelcontextprotocol/skills';
/** The extension's limit on files per skill, `SKILL.md` included. */
export const MAX_SKILL_FILES = 512;
/** The extension's limit on the total size of a skill's files, in bytes (16 MiB). */
export const MAX_SKILL_BYTES = 16 * 1024 * 1024;

/** The file that makes a folder a skill, and whose URI names the skill. */
export const MANIFEST = 'SKILL.md';
/** The URI scheme of skill resources. */
export const SKILL_SCHEME = 'skill://';

/** One file of a skill entry. */
export interface SkillResourceEntry {
  uri: string;
  digest: string;
  size: number;
}

/** A skill entry of `skills/list` and `skills/get`. */
export interface SkillExtensionEntry {
  uri: string;
  frontmatter: { name: string; description: string; [field: string]: unknown };
  resources: SkillResourceEntry[];
}

/** A served skill: its entry, and its files by path relative to its root (`SKILL.md` included). */
export interface ServedSkill {
  readonly name: string;
  readonly root: string;
  readonly entry: SkillExtensionEntry;
  readonly files: ReadonlyMap<string, ServedFileInfo>;
  /** Files of the folder not served (links leaving the root, broken links, FIFOs...), one warning each. */
  readonly diagnostics: readonly Diagnostic[];
}

/** Why a registered skill is not served: the diagnostic reported for it. */
export interface SkippedSkill {
  readonly name: string;
  readonly skipped: Diagnostic;
}

/** The URI of a file of a skill (`SKILL.md` by default); a path `''` names the skill's root folder. */
export function skillFileUri(skill: string, relative: string = MANIFEST): string {
  const encoded = relative === '' ? '' : `/${relative.split('/').map(encodeURIComponent).join('/')}`;
  return `${SKILL_SCHEME}${encodeURIComponent(skill)}${encoded}`;
}

/**
 * Splits `skill://<name>[/<path>]` into the skill's name and the path (`''` for the root folder);
 * undefined when the URI is not of that form or has a malformed percent-escape.
 */
export function parseSkillUri(uri: string): { skill: string; path: string } | undefined {
  if (!uri.startsWith(SKILL_SCHEME)) return undefined;
  const rest = uri.slice(SKILL_SCHEME.length);
  const slash = rest.indexOf('/');
  const skill = slash < 0 ? rest : rest.slice(0, slash);
  const file = slash < 0 ? '' : rest.slice(slash + 1);
  if (!skill || (slash >= 0 && !file)) return undefined;
  try {
    return { skill: decodeURIComponent(skill), path: file.split('/').map(decodeURIComponent).join('/') };
  } catch {
    return undefined;
  }
}

/** Front matter parsed strictly as YAML into JSON data, or why it cannot be. */
export function verbatimFrontMatter(text: string): { ok: true; value: SkillExtensionEntry['frontmatter'] } | { ok: false; message: string } {
  const split = splitFrontMatter(text, { reference: true });
  if (!split.ok) return split;
  const doc = parseDocument(split.value.yaml, { uniqueKeys: true });
  if (doc.errors.length) return { ok: false, message: `its front matter is not strict YAML: ${doc.errors[0]!.message.split('\n')[0]}` };
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: DEFAULT_MAX_ALIAS_COUNT });
  } catch (error) {
    return { ok: false, message: `its front matter cannot be loaded: ${(error as Error).message}` };
  }
  if (!isPlainObject(data) || typeof data.name !== 'string' || typeof data.description !== 'string') {
    return { ok: false, message: 'its front matter is not a mapping with a string name and description' };
  }
  // A JSON round trip: what the wire carries, and what a client's YAML parser gives back.
  return { ok: true, value: JSON.parse(JSON.stringify(data)) as SkillExtensionEntry['frontmatter'] };
}

interface Manifest {
  readonly valid: { frontmatter: SkillExtensionEntry['frontmatter'] } | { reason: string };
}

/** Verdicts on SKILL.md files by folder name and digest: the same bytes are validated once. */
const manifests = new Map<string, Manifest>();

/** Forgets every cached digest and verdict: the next listing reads and validates every skill again (a cold start). */
export function forgetServedSkills(): void {
  forgetDigests();
  manifests.clear();
}

async function checkManifest(entry: SkillEntry, root: string, digest: string): Promise<Manifest> {
  const key = `${path.basename(root)}\0${digest}`;
  const known = manifests.get(key);
  if (known) return known;
  const validation = await validateSkillDir(root);
  let manifest: Manifest;
  if (!validation.valid) manifest = { valid: { reason: `it breaks the Agent Skills specification: ${validation.errors.join('; ')}` } };
  else {
    const parsed = verbatimFrontMatter(await readFile(path.join(root, MANIFEST), 'utf8'));
    manifest = { valid: parsed.ok ? { frontmatter: parsed.value } : { reason: parsed.message } };
  }
  if (manifests.size > 10_000) manifests.clear();
  manifests.set(key, manifest);
  return manifest;
}

/** Serves one registered skill, or says why it is not served. */
export async function serveSkill(entry: SkillEntry): Promise<ServedSkill | SkippedSkill> {
  const skip = (reason: string, details: Record<string, unknown> = {}): SkippedSkill => ({
    name: entry.name,
    skipped: diagnostic('warning', 'skill_not_served', `skill '${entry.name}' is not served as an MCP skill (skills/list, resources): ${reason}; load_skill still offers it`, {
      skill: entry.name,
      subject: entry.file ?? entry.name,
      details: { reason: Object.keys(details)[0] ?? 'invalid', ...details },
    }),
  });
  if (!entry.rootPath || !entry.file) return skip('it was registered in memory and has no files to serve', { memory: true });
  if (path.basename(entry.file) !== MANIFEST) return skip(`its manifest is '${path.basename(entry.file)}', and the extension serves a SKILL.md`, { manifest: path.basename(entry.file) });
  if (!entry.trusted) return skip(`it is an untrusted project skill (trust it with 'skillstate trust ${entry.name}')`, { untrusted: true });
  const root = entry.rootPath;
  let listed: Awaited<ReturnType<typeof listResources>>;
  let manifestInfo: ServedFileInfo;
  try {
    [listed, manifestInfo] = await Promise.all([listResources(root), servedFileInfo(path.join(root, MANIFEST))]);
  } catch (error) {
    return skip(`its folder cannot be read: ${(error as Error).message}`, { unreadable: true });
  }
  const manifest = await checkManifest(entry, root, manifestInfo.digest);
  if ('reason' in manifest.valid) return skip(manifest.valid.reason, { invalid: true });
  const { frontmatter } = manifest.valid;
  if (frontmatter.name !== entry.name) return skip(`its front matter names it '${frontmatter.name}'`, { invalid: true });
  const count = listed.resources.size + 1;
  const listedBytes = [...listed.resources.values()].reduce((sum, file) => sum + (file.size ?? 0), manifestInfo.size);
  if (count > MAX_SKILL_FILES || listedBytes > MAX_SKILL_BYTES) {
    return skip(`it has ${count} files of ${listedBytes} bytes in all, over the extension's limits of ${MAX_SKILL_FILES} files and ${MAX_SKILL_BYTES} bytes per skill`, { over_limits: true, files: count, bytes: listedBytes });
  }
  const files = new Map<string, ServedFileInfo>([[MANIFEST, manifestInfo]]);
  try {
    for (const relative of listed.resources.keys()) files.set(relative, await servedFileInfo(path.join(root, relative)));
  } catch (error) {
    return skip(`a file changed while it was read: ${(error as Error).message}`, { unreadable: true });
  }
  const total = [...files.values()].reduce((sum, file) => sum + file.size, 0);
  if (total > MAX_SKILL_BYTES) return skip(`its files hold ${total} bytes, over the extension's limit of ${MAX_SKILL_BYTES} per skill`, { over_limits: true, files: count, bytes: total });
  const resources = [...files].map(([relative, info]) => ({ uri: skillFileUri(entry.name, relative), digest: info.digest, size: info.size }));
  const diagnostics = listed.diagnostics.map((item) => ({ ...item, skill: entry.name }));
  return { name: entry.name, root, entry: { uri: skillFileUri(entry.name), frontmatter, resources }, files, diagnostics };
}

/** Diagnostics already reported, per registry: a skill left out is said once, not on every request. */
const reported = new WeakMap<DocumentSkillRegistry, Set<string>>();

/** The default listener: warnings to stderr (never stdout, which a stdio server speaks on). */
export const stderrDiagnostics: DiagnosticListener = (item) => {
  process.stderr.write(`skillstate mcp: ${item.level}: ${item.message}\n`);
};

/** The skills of a registry under the extension, with each left-out skill reported once. */
export class SkillCatalog {
  readonly #registry: DocumentSkillRegistry;
  readonly #report: DiagnosticListener;

  constructor(registry: DocumentSkillRegistry, report: DiagnosticListener = stderrDiagnostics) {
    this.#registry = registry;
    this.#report = report;
  }

  #tell(result: ServedSkill | SkippedSkill): ServedSkill | SkippedSkill {
    let seen = reported.get(this.#registry);
    if (!seen) reported.set(this.#registry, (seen = new Set()));
    for (const item of 'skipped' in result ? [result.skipped] : result.diagnostics) {
      const key = `${result.name}\0${item.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      this.#report(item);
    }
    return result;
  }

  /** Every served skill, by name. */
  async list(): Promise<ServedSkill[]> {
    return (await this.page(0, Infinity)).skills;
  }

  /**
   * The served skills among the registry's enabled skills `offset` to `offset + size` (by name),
   * and the offset of the next page when there are more: only the skills of the page are read.
   */
  async page(offset: number, size: number): Promise<{ skills: ServedSkill[]; next: number | undefined }> {
    const entries = this.#registry.entries();
    const end = offset + size;
    const results = await inPool(entries.slice(offset, end), 16, (entry) => serveSkill(entry));
    const skills = results.map((result) => this.#tell(result)).filter((result): result is ServedSkill => !('skipped' in result));
    return { skills, next: end < entries.length ? end : undefined };
  }

  /** The skill named exactly `name`, served or skipped; undefined when the registry has none. */
  async get(name: string): Promise<ServedSkill | SkippedSkill | undefined> {
    const entry = this.#registry.entry(name);
    if (!entry || entry.name !== name) return undefined;
    return this.#tell(await serveSkill(entry));
  }
}
