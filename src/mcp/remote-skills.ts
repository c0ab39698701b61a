/**
 * `mountMcpSkills(registry, options)`: the skills an MCP server publishes under the Skills
 * extension (`io.modelcontextprotocol/skills`), as document skills of a registry — the host side.
 *
 * - On connecting, `skills/list` is read page by page, and nothing else: no file is fetched
 *   ahead of need. An entry with a missing or malformed `resources`, `"dynamic"` resources (they
 *   cannot be verified), a name that is not its URI's last segment or breaks the naming rules, or
 *   over the extension's limits (512 files, 16 MiB) is refused with a diagnostic. When the
 *   connection drops it is opened again and the listing read again.
 * - Each entry is registered with its origin (the label the app gave the server, and the URI);
 *   the label, never `serverInfo.name`, names the server. A name a local skill or another
 *   server's skill already holds gets a qualified name (`<label>__<name>`) and a diagnostic:
 *   nothing is shadowed.
 * - Such a skill is never trusted: no actions, no scripts, its `allowed-tools` pre-approves
 *   nothing; catalogs show the server after its description, and wherever the model reads its
 *   body, the body starts with a notice naming the server and the URI. It has no root path here.
 * - It is loaded only through the registry's loading path (`load_skill`, preloading, tier-3
 *   disclosure): its `SKILL.md` is read from the same server, its size and digest checked
 *   against the held entry, its front matter compared field by field. Its resources are the
 *   files the held entry lists, read from the same server and checked the same way when asked
 *   for; any other path is not one of the skill's. On a mismatch the content is not used
 *   (`skill_unverified`), and the entry is fetched again with `skills/get` and replaces the
 *   registered one.
 * - Verified bytes are cached in memory, per mount and digest: never on disk, so never on a
 *   discovery path. `close()` removes the skills from the registry and drops the cache.
 *
 * I/O: the MCP connection only.
 */
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { ReadResourceResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { diagnostic, type Diagnostic, type DiagnosticListener } from '../core/diagnostics.js';
import { describeValue } from '../core/plain.js';
import { RuntimeError } from '../core/runtime-error.js';
import type { DocumentSkill, LoadedSkill, SkillResource } from '../manifest/document.js';
import type { DocumentSkillRegistry } from '../manifest/document-registry.js';
import { manifestError } from '../manifest/errors.js';
import { checkManifestFields, type SkillManifest } from '../manifest/fields.js';
import { splitFrontMatter } from '../manifest/frontmatter.js';
import { skillEntry } from '../manifest/skill-entry.js';
import { DEFAULT_LIMITS, McpConnection, McpFailure, mcpErrorInfo, type ConnectionLimits } from './connection.js';
import { MANIFEST, MAX_SKILL_BYTES, MAX_SKILL_FILES, SKILLS_EXTENSION, verbatimFrontMatter, type SkillResourceEntry } from './skill-catalog.js';
import { addressOf, type McpHttpSkillOptions, type McpStdioSkillOptions } from './skill.js';

/** Options of `mountMcpSkills`: the server (a command or a URL) and the label that names it. */
export type McpSkillsOptions = (Pick<McpStdioSkillOptions, 'command' | 'args' | 'env' | 'cwd'> | Pick<McpHttpSkillOptions, 'url' | 'headers'>) & {
  /**
   * The label the app gives the server: the origin named to the model and in diagnostics, and
   * the prefix of a qualified name. A skill name (letters, digits, `_`, `-`).
   */
  name: string;
  /** Milliseconds to connect (default 10,000). */
  connectTimeout?: number;
  /** Milliseconds a request may take, and the whole listing (every page of `skills/list`) too (default 30,000). */
  callTimeout?: number;
  /** Receives each diagnostic (refused entries, qualified names, ignored fields, re-listings), also reported to the registry. */
  onDiagnostic?: DiagnosticListener;
};

/** The skills of one MCP server mounted in a registry. */
export interface McpSkillsMount {
  /** The server's label. */
  readonly name: string;
  /** The names the server's skills are registered under now (qualified ones included). */
  skills(): string[];
  /** Every diagnostic of this mount so far. */
  readonly diagnostics: readonly Diagnostic[];
  /**
   * Confirms a skill URI the server pointed to (in its instructions, or in another skill) with
   * `skills/get`, and registers it as a listed entry would be. Resolves with the name it is
   * registered under; rejects with `skill_not_found` when the server serves no such skill or
   * the entry is refused.
   */
  add(uri: string): Promise<string>;
  /** Removes the server's skills from the registry, drops the cache and closes the connection. */
  close(): Promise<void>;
}

/** The most `skills/list` pages read from one server before it counts as misbehaving. */
const MAX_LIST_PAGES = 1_000;
/** The most skills one server may list: past it the listing is given up before any entry is held. */
const MAX_LISTED_SKILLS = 10_000;
/** The most bytes of entries (as JSON) one server's listing may hold, every page together. */
const MAX_LISTING_BYTES = 64 * 1024 * 1024;
/** Room past the largest skill for base64 and the JSON-RPC envelope, in one `resources/read` answer. */
const READ_BYTES = Math.ceil((MAX_SKILL_BYTES * 4) / 3) + 64 * 1024;
/** What a qualified name puts between the server's label and the skill's name. */
const QUALIFIER = '__';

const Digest = z.string().regex(/^sha256:[0-9a-f]{64}$/, 'a digest is sha256: and 64 lowercase hex digits');
const WireEntry = z
  .object({
    uri: z.string().min(1),
    frontmatter: z.object({ name: z.string(), description: z.string() }).loose(),
    resources: z.union([z.array(z.object({ uri: z.string().min(1), digest: Digest, size: z.number().int().nonnegative() }).loose()), z.literal('dynamic')]),
  })
  .loose();
const ListResult = z.object({ skills: z.array(z.unknown()), nextCursor: z.string().optional() }).loose();
const GetResult = z.object({ skill: z.unknown() }).loose();

/** An entry as the host holds it: checked, with its files by path relative to the skill's root. */
interface HeldEntry {
  readonly uri: string;
  readonly frontmatter: Record<string, unknown>;
  readonly files: ReadonlyMap<string, SkillResourceEntry>;
  readonly manifest: SkillManifest;
  /** Front-matter fields that a skill served over MCP does not get (toolsets, scripts, allowed-tools). */
  readonly ignored: string[];
  /** The skill path's leading segments (`acme/billing` of `skill://acme/billing/refunds/SKILL.md`). */
  readonly prefix: string[];
}

type Checked = { ok: true; held: HeldEntry } | { ok: false; reason: 'malformed' | 'dynamic' | 'name' | 'over_limits' | 'invalid'; message: string; uri?: string };

/** A path relative to a skill's root, from the segments of a URI; undefined when a segment is empty, `.`, `..` or badly escaped. */
function relativePath(segments: readonly string[]): string | undefined {
  try {
    const decoded = segments.map(decodeURIComponent);
    return decoded.every((segment) => segment !== '' && segment !== '.' && segment !== '..' && !segment.includes('/') && !segment.includes('\\')) ? decoded.join('/') : undefined;
  } catch {
    return undefined;
  }
}

/** Checks an entry from the wire against the extension's rules. */
export function checkEntry(raw: unknown): Checked {
  const uri = typeof (raw as { uri?: unknown })?.uri === 'string' ? (raw as { uri: string }).uri : undefined;
  const parsed = WireEntry.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { ok: false, reason: 'malformed', message: `its entry is malformed at '${issue.path.join('.') || '(root)'}': ${issue.message}`, ...(uri ? { uri } : {}) };
  }
  const entry = parsed.data;
  if (entry.resources === 'dynamic') return { ok: false, reason: 'dynamic', message: 'its resources are "dynamic": its files cannot be verified against digests, and this host does not load such skills', uri: entry.uri };
  const suffix = `/${MANIFEST}`;
  const scheme = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.exec(entry.uri)?.[0];
  if (!scheme || !entry.uri.endsWith(suffix)) return { ok: false, reason: 'malformed', message: `its uri does not name a ${MANIFEST}`, uri: entry.uri };
  const root = entry.uri.slice(0, -suffix.length);
  const skillPath = root.slice(scheme.length).split('/');
  const decoded = relativePath(skillPath);
  const name = entry.frontmatter.name;
  if (!decoded || decoded.split('/').at(-1) !== name) return { ok: false, reason: 'name', message: `its name '${name}' is not the last segment of its uri`, uri: entry.uri };
  const { manifest, problems } = checkManifestFields(entry.frontmatter);
  const errors = problems.filter((problem) => problem.level !== 'advice');
  if (!manifest || errors.length || manifest.id !== name) {
    return { ok: false, reason: 'invalid', message: `its front matter breaks the Agent Skills specification: ${errors.map((problem) => problem.message).join('; ') || `'${name}' is not a valid skill name`}`, uri: entry.uri };
  }
  const files = new Map<string, SkillResourceEntry>();
  let total = 0;
  for (const file of entry.resources) {
    const relative = file.uri.startsWith(`${root}/`) ? relativePath(file.uri.slice(root.length + 1).split('/')) : undefined;
    if (!relative) return { ok: false, reason: 'malformed', message: `its resource ${file.uri} is not a file within the skill`, uri: entry.uri };
    if (files.has(relative)) return { ok: false, reason: 'malformed', message: `its resource ${file.uri} is listed twice`, uri: entry.uri };
    files.set(relative, { uri: file.uri, digest: file.digest, size: file.size });
    total += file.size;
  }
  if (!files.has(MANIFEST)) return { ok: false, reason: 'malformed', message: `its resources do not list its ${MANIFEST}`, uri: entry.uri };
  if (files.size > MAX_SKILL_FILES || total > MAX_SKILL_BYTES) {
    return { ok: false, reason: 'over_limits', message: `it has ${files.size} files of ${total} bytes in all, over the extension's limits of ${MAX_SKILL_FILES} files and ${MAX_SKILL_BYTES} bytes`, uri: entry.uri };
  }
  const ignored = [manifest.toolsets.length ? 'toolsets' : '', manifest.scripts.length ? 'scripts' : '', manifest.allowedTools.length ? 'allowed-tools' : ''].filter(Boolean);
  return { ok: true, held: { uri: entry.uri, frontmatter: entry.frontmatter, files, manifest, ignored, prefix: skillPath.slice(0, -1) } };
}

/** The `sha256:` digest of bytes. */
function digestOf(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** Mounts the skills of the MCP server `options` names into `registry` (see the module's notes). */
export async function mountMcpSkills(registry: DocumentSkillRegistry, options: McpSkillsOptions): Promise<McpSkillsMount> {
  const mount = new RemoteSkills(registry, options);
  await mount.connected();
  return mount;
}

/** One server's skills in one registry. */
class RemoteSkills implements McpSkillsMount {
  readonly name: string;
  readonly diagnostics: Diagnostic[] = [];
  readonly #registry: DocumentSkillRegistry;
  readonly #options: McpSkillsOptions;
  readonly #limits: ConnectionLimits;
  #connection: McpConnection | undefined;
  #opening: Promise<McpConnection> | undefined;
  #closed = false;
  /** Held entries by the name they are registered under. */
  readonly #held = new Map<string, HeldEntry>();
  /** The name each held entry is registered under, by its URI: a listing is read in one pass. */
  readonly #names = new Map<string, string>();
  /** Verified bytes by URI and digest: a file whose digest the held entry still names is not read again. */
  readonly #cache = new Map<string, Buffer>();

  constructor(registry: DocumentSkillRegistry, options: McpSkillsOptions) {
    if (typeof registry?.register !== 'function' || typeof registry.replaceEntry !== 'function') {
      throw new RuntimeError({ code: 'invalid_options', message: `mountMcpSkills needs the document skill registry to add the server's skills to (createDocumentSkillRegistry() or discoverSkills() makes one), got ${describeValue(registry)}`, subject: 'registry', details: { option: 'registry', value: describeValue(registry) } });
    }
    if (typeof options?.name !== 'string' || !/^[\p{L}\p{N}][\p{L}\p{M}\p{N}_-]{0,31}$/u.test(options.name)) {
      throw new RuntimeError({ code: 'invalid_config', message: `mountMcpSkills needs a label 'name' of 1 to 32 letters, digits, '_' or '-' (got ${JSON.stringify(options?.name)})`, subject: String(options?.name) });
    }
    this.name = options.name;
    this.#registry = registry;
    this.#options = options;
    this.#limits = { connectTimeout: options.connectTimeout ?? DEFAULT_LIMITS.connectTimeout, callTimeout: options.callTimeout ?? DEFAULT_LIMITS.callTimeout, maxOutputBytes: READ_BYTES };
  }

  skills(): string[] {
    return [...this.#held.keys()].sort();
  }

  #report(level: 'info' | 'warning', code: string, message: string, skill: string | undefined, details: Record<string, unknown>): void {
    const item = diagnostic(level, code, `MCP server '${this.name}': ${message}`, { skill, subject: typeof details.uri === 'string' ? details.uri : this.name, details: { server: this.name, ...details } });
    this.diagnostics.push(item);
    this.#registry.report(item);
    this.#options.onDiagnostic?.(item);
  }

  /** The connection, opened (and the listing read) when there is none. */
  connected(): Promise<McpConnection> {
    if (this.#closed) return Promise.reject(new RuntimeError({ code: 'mcp_unreachable', message: `MCP server '${this.name}': its skills were unmounted`, subject: this.name }));
    if (this.#connection?.state === 'ready') return Promise.resolve(this.#connection);
    return (this.#opening ??= this.#open().finally(() => (this.#opening = undefined)));
  }

  async #open(): Promise<McpConnection> {
    const connection = new McpConnection(this.name, addressOf(this.#options), this.#limits, { onDropped: (failure) => this.#dropped(connection, failure) }, { listTools: false });
    try {
      await connection.open();
    } catch (error) {
      const failure = error as McpFailure;
      throw new RuntimeError(mcpErrorInfo(failure, `mountMcpSkills '${this.name}': ${failure.message}`, { subject: this.name }));
    }
    const capabilities = connection.serverCapabilities;
    if (!capabilities?.extensions?.[SKILLS_EXTENSION] || !capabilities.resources) {
      await connection.close();
      throw new RuntimeError({ code: 'mcp_protocol_error', message: `mountMcpSkills '${this.name}': the server does not declare the Skills extension (${SKILLS_EXTENSION}) with resources`, subject: this.name });
    }
    this.#connection = connection;
    try {
      await this.#list(connection);
    } catch (error) {
      this.#connection = undefined;
      await connection.close();
      throw error instanceof McpFailure ? new RuntimeError(mcpErrorInfo(error, `mountMcpSkills '${this.name}': ${error.message}`, { subject: this.name })) : error;
    }
    if (this.#closed) await connection.close();
    return connection;
  }

  /** The connection dropped: open it again, which lists the skills again. */
  #dropped(connection: McpConnection, why: McpFailure): void {
    if (this.#connection !== connection || this.#closed) return;
    this.#connection = undefined;
    this.#report('warning', 'mcp_skills_relisted', `the connection dropped (${why.message}); connecting again to list its skills again`, undefined, {});
    this.connected().catch((error: Error) => this.#report('warning', 'mcp_skills_unreachable', `${error.message}; its skills stay registered and the next load connects again`, undefined, {}));
  }

  /**
   * Reads every page of `skills/list` and brings the registry in step with it. The listing as a
   * whole is bounded (pages, skills, bytes, and `callTimeout` for every page together): a server
   * that pages for ever, slowly or with huge entries, is given up before anything is registered.
   */
  async #list(connection: McpConnection): Promise<void> {
    const listed: unknown[] = [];
    const deadline = Date.now() + this.#limits.callTimeout;
    let cursor: string | undefined;
    let pages = 0;
    let bytes = 0;
    do {
      if (++pages > MAX_LIST_PAGES) throw new McpFailure('mcp_protocol_error', `the server kept paging skills/list past ${MAX_LIST_PAGES} pages`);
      const left = deadline - Date.now();
      if (left <= 0) throw new McpFailure('mcp_timeout', `listing its skills took longer than ${this.#limits.callTimeout} ms (callTimeout) over ${pages - 1} pages of skills/list`);
      const page = await connection.request('skills/list', cursor === undefined ? {} : { cursor }, ListResult, left);
      listed.push(...page.skills);
      if (listed.length > MAX_LISTED_SKILLS) throw new McpFailure('mcp_protocol_error', `the server listed more than ${MAX_LISTED_SKILLS} skills in skills/list`);
      bytes += Buffer.byteLength(JSON.stringify(page.skills));
      if (bytes > MAX_LISTING_BYTES) throw new McpFailure('mcp_protocol_error', `the server's skills/list entries came to more than ${MAX_LISTING_BYTES} bytes over ${pages} pages`);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    const seen = new Set<string>();
    for (const raw of listed) {
      const uri = this.#accept(raw, seen);
      if (uri) seen.add(uri);
    }
    for (const [name, held] of this.#held) if (!seen.has(held.uri)) this.#remove(name, 'it is no longer listed');
  }

  /** Registers (or keeps, or replaces) one entry; the URI it holds, or undefined when refused. */
  #accept(raw: unknown, seen: ReadonlySet<string> = new Set()): string | undefined {
    // A listing that finishes after `close()` registers nothing.
    if (this.#closed) return undefined;
    const checked = checkEntry(raw);
    if (!checked.ok) {
      this.#report('warning', 'mcp_skill_refused', `skill ${checked.uri ?? '(no uri)'} is refused: ${checked.message}`, undefined, { uri: checked.uri, reason: checked.reason });
      return undefined;
    }
    const { held } = checked;
    if (seen.has(held.uri)) {
      this.#report('warning', 'mcp_skill_refused', `skill ${held.uri} is refused: it is listed twice`, undefined, { uri: held.uri, reason: 'malformed' });
      return undefined;
    }
    const current = this.#names.get(held.uri);
    if (current !== undefined) {
      const name = current;
      const known = this.#held.get(name)!;
      if (isDeepStrictEqual(known.frontmatter, held.frontmatter) && isDeepStrictEqual(known.files, held.files)) return held.uri;
      this.#held.set(name, held);
      this.#registry.replaceEntry(skillEntry(this.#skill(name, held), 'mcp', [], false));
      return held.uri;
    }
    const name = this.#freeName(held);
    if (!name) {
      this.#report('warning', 'mcp_skill_refused', `skill ${held.uri} is refused: its name '${held.manifest.name}' and every qualified form of it are taken`, undefined, { uri: held.uri, reason: 'name_taken' });
      return undefined;
    }
    if (name !== held.manifest.name) {
      const holder = this.#registry.entry(held.manifest.name);
      const by = holder?.origin ? `MCP server '${holder.origin.server}' (${holder.origin.uri})` : `the ${holder?.source ?? 'registry'} skills`;
      this.#report('warning', 'mcp_skill_qualified', `skill '${held.manifest.name}' (${held.uri}) is registered as '${name}': ${by} already has a skill of that name, which it does not replace`, name, { uri: held.uri, name: held.manifest.name });
    }
    if (held.ignored.length) {
      this.#report('info', 'mcp_skill_untrusted', `skill '${name}' is served over MCP and never trusted: its ${held.ignored.join(', ')} are ignored`, name, { uri: held.uri, ignored: held.ignored });
    }
    this.#held.set(name, held);
    this.#names.set(held.uri, name);
    this.#registry.register(this.#skill(name, held), 'mcp');
    return held.uri;
  }

  /** The skill's own name when free, else `<label>__<name>`, else with the skill path's prefix too. */
  #freeName(held: HeldEntry): string | undefined {
    const { name } = held.manifest;
    const candidates = [name, `${this.name}${QUALIFIER}${name}`];
    if (held.prefix.length) candidates.push(`${this.name}${QUALIFIER}${held.prefix.join('_')}${QUALIFIER}${name}`);
    return candidates.find((candidate) => /^[\p{L}\p{N}][\p{L}\p{M}\p{N}_-]{0,63}$/u.test(candidate) && !this.#registry.has(candidate));
  }

  #remove(name: string, why: string): void {
    const held = this.#held.get(name);
    this.#held.delete(name);
    if (held) this.#names.delete(held.uri);
    if (this.#registry.entry(name)?.origin?.server === this.name) this.#registry.unregister(name);
    if (held) this.#report('info', 'mcp_skill_removed', `skill '${name}' (${held.uri}) is removed: ${why}`, name, { uri: held.uri });
  }

  /** The document skill of a held entry, registered as `name`. */
  #skill(name: string, held: HeldEntry): DocumentSkill {
    // No toolsets, no scripts, no pre-approved tools: a skill served over MCP runs nothing here.
    // Catalogs show the origin next to the description the server wrote.
    const briefDescription = `${held.manifest.briefDescription} (from MCP server '${this.name}')`;
    const manifest: SkillManifest = { ...held.manifest, id: name, name, briefDescription, toolsets: [], scripts: [], allowedTools: [] };
    return {
      name,
      description: manifest.description,
      version: manifest.version,
      manifest,
      origin: { server: this.name, uri: held.uri },
      load: () => this.#load(name, held),
    };
  }

  async #load(name: string, held: HeldEntry): Promise<LoadedSkill> {
    const bytes = await this.#read(name, held, MANIFEST);
    const front = verbatimFrontMatter(bytes.toString('utf8'));
    if (!front.ok || !isDeepStrictEqual(front.value, held.frontmatter)) {
      throw await this.#unverified(name, held, held.uri, 'frontmatter', `its front matter ${front.ok ? 'differs from' : `cannot be read (${front.message}), unlike`} the entry's`);
    }
    const split = splitFrontMatter(bytes.toString('utf8'), { reference: true });
    const instructions = split.ok ? split.value.body.replace(/^\n+/, '') : '';
    const resources = new Map<string, SkillResource>();
    for (const [relative, file] of held.files) {
      if (relative !== MANIFEST) resources.set(relative, { size: file.size, read: () => this.#read(name, held, relative) });
    }
    return { instructions, resources };
  }

  /** A file the held entry lists, read from this server and verified (or from the cache). */
  async #read(name: string, held: HeldEntry, relative: string): Promise<Buffer> {
    const file = held.files.get(relative);
    if (!file) throw await this.#unverified(name, held, relative, 'unlisted', 'the entry does not list it');
    const key = `${file.uri}\0${file.digest}`;
    const cached = this.#cache.get(key);
    if (cached) return cached;
    const connection = await this.connected();
    const result = await connection.request('resources/read', { uri: file.uri }, ReadResourceResultSchema).catch(async (error: unknown) => {
      // The read's limit holds any file an entry within the extension's limits may list, even as base64
      // (only a text made mostly of characters JSON escapes grows more): an answer past it is larger than the entry says.
      if (error instanceof McpFailure && error.reason === 'mcp_output_too_large') throw await this.#unverified(name, held, file.uri, 'size', error.details?.cutOff ? `the server answered more than ${String(error.details.size)} bytes (reading stopped there) where the entry says ${file.size}` : `the server answered ${String(error.details?.size)} bytes, discarded as they arrived, where the entry says ${file.size}`);
      throw error instanceof McpFailure ? new RuntimeError(mcpErrorInfo(error, `reading ${file.uri} of skill '${name}': ${error.message}`, { skill: name, subject: file.uri })) : error;
    });
    const content = result.contents.find((item) => item.uri === file.uri);
    if (!content) throw await this.#unverified(name, held, file.uri, 'missing', `the server answered without the file (${result.contents.map((item) => item.uri).join(', ') || 'no contents'})`);
    const bytes = 'text' in content && typeof content.text === 'string' ? Buffer.from(content.text, 'utf8') : Buffer.from(String((content as { blob?: unknown }).blob ?? ''), 'base64');
    if (bytes.length !== file.size) throw await this.#unverified(name, held, file.uri, 'size', `${bytes.length} bytes arrived where the entry says ${file.size}`);
    const digest = digestOf(bytes);
    if (digest !== file.digest) throw await this.#unverified(name, held, file.uri, 'digest', `its digest is ${digest} where the entry says ${file.digest}`);
    this.#cache.set(key, bytes);
    return bytes;
  }

  /** The error of a verification failure, once the entry has been fetched again with `skills/get`. */
  async #unverified(name: string, held: HeldEntry, uri: string, reason: 'size' | 'digest' | 'frontmatter' | 'unlisted' | 'missing', why: string) {
    const refreshed = await this.#refresh(name, held);
    return manifestError('skill_unverified', `skill '${name}' from MCP server '${this.name}': ${uri} is not used: ${why}; ${refreshed}`, { skill: name, subject: uri, details: { reason, server: this.name, uri } });
  }

  /** Fetches the entry again and puts it in place of the held one; says what came of it. */
  async #refresh(name: string, held: HeldEntry): Promise<string> {
    if (this.#held.get(name) !== held) return 'the entry has been fetched again since; load the skill again';
    let raw: unknown;
    try {
      raw = (await (await this.connected()).request('skills/get', { uri: held.uri }, GetResult)).skill;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (error instanceof McpFailure && error.details?.code === -32602) {
        this.#remove(name, `the server no longer serves it (${message})`);
        return 'the server no longer serves it, and it is removed';
      }
      return `fetching its entry again failed (${message})`;
    }
    const checked = checkEntry(raw);
    if (!checked.ok || checked.held.uri !== held.uri) {
      this.#remove(name, `its new entry is refused: ${checked.ok ? `it names ${checked.held.uri}` : checked.message}`);
      return 'its new entry is refused, and it is removed';
    }
    if (this.#held.get(name) === held) {
      this.#held.set(name, checked.held);
      this.#registry.replaceEntry(skillEntry(this.#skill(name, checked.held), 'mcp', [], false));
    }
    this.#report('info', 'mcp_skill_refreshed', `skill '${name}' (${held.uri}) was fetched again with skills/get after a verification failure`, name, { uri: held.uri });
    return 'its entry was fetched again with skills/get; load it again to use the current files';
  }

  async add(uri: string): Promise<string> {
    const connection = await this.connected();
    const known = this.#names.get(uri);
    if (known !== undefined) return known;
    let raw: unknown;
    try {
      raw = (await connection.request('skills/get', { uri }, GetResult)).skill;
    } catch (error) {
      throw manifestError('skill_not_found', `MCP server '${this.name}' serves no skill at ${uri}: ${(error as Error).message}`, { subject: uri });
    }
    const checked = checkEntry(raw);
    if (checked.ok && checked.held.uri !== uri) throw manifestError('skill_not_found', `MCP server '${this.name}' answered skills/get for ${uri} with the entry of ${checked.held.uri}`, { subject: uri });
    const accepted = this.#accept(raw);
    const name = accepted && this.#names.get(accepted);
    if (!name) throw manifestError('skill_not_found', `the skill MCP server '${this.name}' serves at ${uri} is refused (see the diagnostics)`, { subject: uri });
    return name;
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const name of [...this.#held.keys()]) {
      if (this.#registry.entry(name)?.origin?.server === this.name) this.#registry.unregister(name);
    }
    this.#held.clear();
    this.#names.clear();
    this.#cache.clear();
    const connection = this.#connection;
    this.#connection = undefined;
    await connection?.close();
    await this.#opening?.catch(() => undefined);
  }
}
