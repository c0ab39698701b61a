/**
 * The document-skill registry: every known document skill by name (its entry: manifest facts,
 * source, root path, triggers), and the skills already loaded as `SkillSpec`s. It is a
 * `SkillResolver` — `get(name)` answers synchronously for loaded skills, which is what restoring
 * an agent from JSON needs — and `load(names)` loads named skills first. Each registry is a value
 * the caller owns; two registries never share state.
 *
 * Skills come from discovery (`discoverSkills` builds a registry and `refresh()` scans again),
 * from a folder registered on the spot (`registerPath`, how preloading by path works), or from
 * memory (`register`). A name registered twice keeps the later registration and reports the
 * earlier one as shadowed.
 *
 * I/O: only through the skills' own `load()` and the scanner it was given.
 */
import path from 'node:path';
import type { AnyAction } from '../core/action.js';
import { diagnostic, type Diagnostic, type DiagnosticListener } from '../core/diagnostics.js';
import { errorInfo } from '../core/errors.js';
import { optionsProblem, unknownOption } from '../core/options.js';
import { describeGiven, describeValue } from '../core/plain.js';
import type { SkillResolver } from '../core/skill-registry.js';
import type { AnySkill } from '../core/skill.js';
import type { DocumentSkill, LoadedSkill } from './document.js';
import { ManifestError, manifestError } from './errors.js';
import { skillEntry, type SkillEntry, type SkillSourceKind } from './skill-entry.js';
import { lookupKey } from './skill-identifier.js';
import { loadSkillFolder, type FolderSkillOptions } from './folder.js';
import { bodyHeadings } from './rank.js';
import { documentSkillSpec } from './spec.js';
import { skippedFolderNamed } from './skipped-folder.js';

/** A skill that lost a name clash to another. */
export interface ShadowedSkill {
  name: string;
  kept: { source: SkillSourceKind; path: string | undefined };
  shadowed: { source: SkillSourceKind; path: string | undefined };
}

/** A loaded skill: its entry, its `SkillSpec` and what `load()` returned. */
export interface ActivatedSkill {
  entry: SkillEntry;
  spec: AnySkill;
  loaded: LoadedSkill;
}

/** What a scan of skill sources produced (see `scanSkillSources`). */
export interface ScanResult {
  entries: SkillEntry[];
  shadowed: ShadowedSkill[];
  diagnostics: Diagnostic[];
  /** Every folder the scan looked at (sources, folders of folders, skill folders): what a watcher watches. */
  folders?: string[];
  /** Sources that are no folder (missing, or a file in their place): a watcher waits for them to appear. */
  missing?: string[];
}

/** Options of `createDocumentSkillRegistry`. */
export interface RegistryOptions extends FolderSkillOptions {
  onDiagnostic?: DiagnosticListener;
  /** Re-runs discovery; set by `discoverSkills`. */
  scan?: () => Promise<ScanResult>;
  /** @internal Makes the watcher `watch()` starts; set by `discoverSkills`. */
  watcher?: (registry: DocumentSkillRegistry, options: WatchOptions) => FolderWatch;
}

/** What one applied batch of file changes did to the registry. */
export interface SkillChange {
  /** Skills that appeared. */
  added: string[];
  /** Skills whose SKILL.md or resources changed (reloaded on next use; running agents follow). */
  changed: string[];
  /** Skills that are gone. */
  removed: string[];
  /** What went wrong or was refused while applying the change (the old version stays). */
  diagnostics: Diagnostic[];
  /** Milliseconds spent bringing the registry and the watches up to date (not the quiet period, not the agents). */
  durationMs: number;
}

/** @internal A watcher as the registry drives it: started once, and told when `refresh()` scanned again (resolves once it watches what the scan found). */
export type FolderWatch = SkillWatcher & { start(): Promise<void>; rescanned(): Promise<void> };

/** The running agents a watcher keeps up to date: an agent system, or anything listing agent refs. */
export interface RunningAgents {
  list(): readonly {
    readonly id: string;
    getSnapshot(): { mounted: readonly { name: string }[]; registeredActions: readonly string[] };
    run(instruction: { action: string; skill?: string; params?: Record<string, unknown> }): Promise<unknown>;
    unmount(skill: string): Promise<unknown>;
  }[];
}

/** Options of watching skill folders for changes. */
export interface WatchOptions {
  /** Quiet time after the last file event before the changes are applied (default 50 ms). */
  debounceMs?: number;
  /** Called after each applied batch of changes. */
  onChange?: (change: SkillChange) => void;
}

/** Keeps a registry in step with its folders (see `registry.watch()`). */
export interface SkillWatcher {
  /** Folders being watched. */
  readonly folders: number;
  readonly closed: boolean;
  /** Listens to applied changes; returns the function that stops listening. */
  onChange(listener: (change: SkillChange) => void): () => void;
  /** Resolves with the next applied change (for tests and tools that wait for one). */
  nextChange(): Promise<SkillChange>;
  /**
   * Makes the running agents of `agents` follow changes: an agent with a changed skill mounted
   * gets the new version at its next step (through its `load_skill` action: its slice kept when
   * the new schema accepts it, else refused with a diagnostic and the old version kept); an
   * agent with a removed skill mounted has it unmounted, with a diagnostic. Returns the function
   * that stops following.
   */
  follow(agents: RunningAgents): () => void;
  /** Stops watching. */
  close(): void;
}

/** The keys `RegistryOptions` takes. */
const REGISTRY_OPTIONS = { onDiagnostic: true, scan: true, watcher: true, maxManifestBytes: true, maxAliasCount: true } as const satisfies Record<keyof RegistryOptions, true>;

/** The keys `WatchOptions` takes. */
const WATCH_OPTIONS = { debounceMs: true, onChange: true } as const satisfies Record<keyof WatchOptions, true>;

/** The registry of document skills: every known skill by name, loaded on demand; a `SkillResolver` for agent systems. */
export class DocumentSkillRegistry implements SkillResolver {
  readonly #entries = new Map<string, SkillEntry>();
  /** The lookup keys of the entries (see `#lookupKeys`); undefined until made, or after a removal. */
  #keys: Map<string, string> | undefined;
  /** Skills registered by hand (memory, path): kept across `refresh()`. */
  readonly #pinned = new Set<string>();
  readonly #activated = new Map<string, Promise<ActivatedSkill>>();
  readonly #contents = new Map<string, Promise<LoadedSkill>>();
  readonly #specs = new Map<string, AnySkill>();
  /** The headings of every body read so far, by skill name (relevance ranking uses them). */
  readonly #headings = new Map<string, string>();
  #headingsRevision = 0;
  readonly #options: RegistryOptions;
  #diagnostics: Diagnostic[] = [];
  #shadowed: ShadowedSkill[] = [];
  #revision = 0;
  #folders: readonly string[] = [];
  #missing: readonly string[] = [];
  /** Skills the last scan found in their folder but could not load, kept in their previous version. */
  #stale: ReadonlySet<string> = new Set();
  #watcher: FolderWatch | undefined;

  constructor(options: RegistryOptions = {}) {
    this.#options = options;
  }

  /** Grows by one on every change: caches keyed on a registry compare it. */
  get revision(): number {
    return this.#revision;
  }

  /** Grows by one each time a body's headings become known (see `headings`). */
  get headingsRevision(): number {
    return this.#headingsRevision;
  }

  /** The headings of the skill's body, one per line, once its body has been read; undefined before. */
  headings(name: string): string | undefined {
    return this.#headings.get(name);
  }

  /** Every diagnostic of the last scan and of later registrations. */
  get diagnostics(): readonly Diagnostic[] {
    return this.#diagnostics;
  }

  get shadowed(): readonly ShadowedSkill[] {
    return this.#shadowed;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The loaded `SkillSpec` named `name` (undefined until `load` or `activate`). Sync: a `SkillResolver`. */
  get(name: string): AnySkill | undefined {
    return this.#specs.get(name);
  }

  /** The entry registered as `name`, or whose name matches it as written or after NFKC (`file` finds `ﬁle`). */
  entry(name: string): SkillEntry | undefined {
    return this.#entries.get(this.#identifier(name));
  }

  /** Whether `name` finds a skill, as `entry` looks it up. */
  has(name: string): boolean {
    return this.#entries.has(this.#identifier(name));
  }

  /**
   * The identifier a name stands for: itself when registered, else the skill whose identifier or
   * manifest name equals it after NFKC (a skill loaded under a derived identifier is still found
   * by the name it was written with). Unchanged when nothing matches.
   */
  #identifier(name: string): string {
    if (this.#entries.has(name)) return name;
    return this.#lookupKeys().get(lookupKey(name)) ?? name;
  }

  /**
   * NFKC lookup key → the identifier of the first entry, in registration order, whose identifier
   * or manifest name has that key. Kept up as entries are added; made again after one is replaced
   * or removed (rare), so that a registry of many skills is not scanned at every lookup.
   */
  #lookupKeys(): Map<string, string> {
    if (this.#keys === undefined) {
      this.#keys = new Map();
      for (const entry of this.#entries.values()) this.#indexEntry(this.#keys, entry);
    }
    return this.#keys;
  }

  #indexEntry(keys: Map<string, string>, entry: SkillEntry): void {
    for (const written of [entry.name, entry.manifest?.name]) {
      if (written === undefined) continue;
      const key = lookupKey(written);
      if (!keys.has(key)) keys.set(key, entry.name);
    }
  }

  /** Registers `entry` under its identifier: a new one joins the lookup keys, one replaced has them made again. */
  #setEntry(entry: SkillEntry): void {
    const replacing = this.#entries.has(entry.name);
    this.#entries.set(entry.name, entry);
    if (replacing) this.#keys = undefined;
    else if (this.#keys !== undefined) this.#indexEntry(this.#keys, entry);
  }

  names(): string[] {
    return [...this.#entries.keys()].sort();
  }

  /** Entries sorted by name; disabled ones only with `includeDisabled`. */
  entries(options: { includeDisabled?: boolean } = {}): SkillEntry[] {
    return [...this.#entries.values()].filter((entry) => options.includeDisabled || entry.enabled).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  #report(item: Diagnostic): void {
    this.#diagnostics.push(item);
    this.#options.onDiagnostic?.(item);
  }

  #put(entry: SkillEntry): void {
    const previous = this.#entries.get(entry.name);
    if (previous && previous.skill !== entry.skill) {
      const clash: ShadowedSkill = {
        name: entry.name,
        kept: { source: entry.source, path: entry.rootPath },
        shadowed: { source: previous.source, path: previous.rootPath },
      };
      this.#shadowed.push(clash);
      this.#report(
        diagnostic('warning', 'skill_shadowed', `skill '${entry.name}' from ${describe(entry)} replaces the one from ${describe(previous)}`, {
          skill: entry.name,
          subject: entry.rootPath,
          details: { kept: clash.kept, shadowed: clash.shadowed },
        }),
      );
      this.#forget(entry.name);
    }
    this.#setEntry(entry);
    this.#revision++;
  }

  #forget(name: string): void {
    if (this.#headings.delete(name)) this.#headingsRevision++;
    this.#activated.delete(name);
    this.#contents.delete(name);
    this.#specs.delete(name);
  }

  /** Registers a document skill (from memory, or any implementation of the interface). */
  register(skill: DocumentSkill, source: SkillSourceKind = 'memory'): SkillEntry {
    if (typeof skill?.name !== 'string' || typeof skill.load !== 'function') {
      throw manifestError('invalid_manifest', 'register() needs a document skill: { name, description, load() }');
    }
    // A skill an MCP server serves is never trusted.
    const entry = skillEntry(skill, source, [], skill.origin === undefined);
    this.#put(entry);
    this.#pinned.add(entry.name);
    return entry;
  }

  /** Loads the SKILL.md folder at `dir` and registers it under its manifest name (preloading by path). */
  async registerPath(dir: string): Promise<SkillEntry> {
    const folder = await loadSkillFolder(dir, this.#options);
    for (const item of folder.diagnostics) this.#report(item);
    const entry = skillEntry(folder.skill, 'path', folder.diagnostics);
    this.#put(entry);
    this.#pinned.add(entry.name);
    return entry;
  }

  unregister(name: string): boolean {
    this.#pinned.delete(name);
    this.#forget(name);
    const removed = this.#entries.delete(name);
    if (removed) {
      this.#keys = undefined;
      this.#revision++;
    }
    return removed;
  }

  #unknown(name: string): ManifestError {
    const known = this.names();
    const skipped = skippedFolderNamed(this.#diagnostics, name);
    return manifestError('skill_not_found', `no skill named '${name}'${skipped ? ` (${skipped})` : ''}; available: ${known.join(', ') || '(none)'}`, { subject: name, details: { available: known } });
  }

  /** The skill's body and resources (`load()`), read once and shared; toolsets are not imported. */
  content(wanted: string): Promise<LoadedSkill> {
    return this.#once(this.#contents, wanted, (name, entry) =>
      loadContent(entry).then((loaded) => {
        if (this.#entries.get(name) === entry) {
          for (const item of loaded.diagnostics ?? []) this.#report(item);
          this.#headings.set(name, bodyHeadings(loaded.instructions));
          this.#headingsRevision++;
        }
        return loaded;
      }),
    );
  }

  /**
   * Loads a skill (body, resources list, toolsets) and builds its `SkillSpec`, once: later calls
   * share the result. Throws `skill_not_found` (listing the known names), `invalid_manifest` or
   * `toolset_failed`.
   */
  activate(wanted: string): Promise<ActivatedSkill> {
    return this.#once(this.#activated, wanted, (name, entry) =>
      this.content(name).then(async (loaded) => {
        // An untrusted skill's toolsets are never imported: importing a module runs its code.
        const actions: readonly AnyAction[] = entry.trusted && entry.skill.loadActions ? await entry.skill.loadActions() : [];
        const report = (item: Diagnostic) => this.#entries.get(name) === entry && this.#report(item);
        const activated = { entry, spec: documentSkillSpec(entry, loaded, actions, report), loaded };
        if (this.#entries.get(name) === entry) this.#specs.set(name, activated.spec);
        return activated;
      }),
    );
  }

  /**
   * The work `make` does for skill `wanted`, done once and shared through `cache` (forgotten if it
   * fails, so a later call tries again); `skill_not_found` when no skill has that name.
   */
  #once<T>(cache: Map<string, Promise<T>>, wanted: string, make: (name: string, entry: SkillEntry) => Promise<T>): Promise<T> {
    const name = this.#identifier(wanted);
    const entry = this.#entries.get(name);
    if (!entry) return Promise.reject(this.#unknown(name));
    let pending = cache.get(name);
    if (!pending) {
      pending = make(name, entry);
      pending.catch(() => cache.delete(name));
      cache.set(name, pending);
    }
    return pending;
  }

  /** Loads the named skills so that `get()` resolves them synchronously (before restoring an agent). */
  async load(names: string | readonly string[]): Promise<AnySkill[]> {
    const list = typeof names === 'string' ? [names] : names;
    return Promise.all(list.map(async (name) => (await this.activate(name)).spec));
  }

  /** A sync resolver over the loaded skills, for `definition.restore(data, { skills })`. */
  resolver(): SkillResolver {
    return { get: (name) => this.#specs.get(name) };
  }

  /** Scans the sources again: new skills appear, removed ones go, changed ones are reloaded on use. */
  async refresh(): Promise<readonly Diagnostic[]> {
    if (!this.#options.scan) return [];
    const result = await this.#options.scan();
    const kept = this.applyScan(result);
    // A folder the watch had lost (gone with its parent) is watched again once a scan finds it.
    if (this.#watcher && !this.#watcher.closed) await this.#watcher.rescanned();
    return [...result.diagnostics, ...kept];
  }

  /** @internal The folders the last scan looked at (what a watcher watches). */
  get scannedFolders(): readonly string[] {
    return this.#folders;
  }

  /** @internal The sources the last scan found no folder at (what a watcher waits for). */
  get missingSources(): readonly string[] {
    return this.#missing;
  }

  /** @internal Puts a reloaded entry in place of the one of the same name; its loaded body and spec are forgotten. */
  replaceEntry(entry: SkillEntry): void {
    this.#forget(entry.name);
    this.#setEntry(entry);
    for (const item of entry.diagnostics) this.#report(item);
    this.#revision++;
  }

  /** @internal Reports a diagnostic as the registry's own (a watcher's, for one). */
  report(item: Diagnostic): void {
    this.#report(item);
  }

  /** The watcher started by `watch()` (or `discoverSkills(sources, { watch: true })`), until it is closed. */
  get watcher(): SkillWatcher | undefined {
    return this.#watcher?.closed ? undefined : this.#watcher;
  }

  /**
   * Watches the folders of the discovered skills and keeps the registry up to date: added,
   * changed and removed SKILL.md files and resources are applied after a short quiet period (see
   * `SkillWatcher`). Running agents follow the changes once `watcher.follow(system)` is called.
   * Resolves once every folder is watched. Calling it again returns the same watcher.
   */
  async watch(options: WatchOptions = {}): Promise<SkillWatcher> {
    const unknown = typeof options === 'object' && options !== null ? unknownOption('watch', options, WATCH_OPTIONS) : errorInfo('invalid_options', `watch takes an options object such as { debounceMs: 50 }, got ${describeValue(options)}`);
    if (unknown) throw new ManifestError(unknown);
    const { debounceMs, onChange } = options;
    if (debounceMs !== undefined && (typeof debounceMs !== 'number' || !Number.isFinite(debounceMs) || debounceMs < 0)) {
      throw manifestError('invalid_options', `watch's debounceMs must be a number of milliseconds, 0 or more, got ${describeGiven(debounceMs)}`, { subject: 'debounceMs', details: { option: 'debounceMs', value: describeGiven(debounceMs) } });
    }
    if (onChange !== undefined && typeof onChange !== 'function') {
      throw manifestError('invalid_options', `watch's onChange must be a function, got ${describeGiven(onChange)}`, { subject: 'onChange', details: { option: 'onChange', value: describeGiven(onChange) } });
    }
    if (this.#watcher && !this.#watcher.closed) return this.#watcher;
    if (!this.#options.watcher) throw manifestError('invalid_manifest', 'watch() needs a registry made by discoverSkills: there are no folders to watch');
    const watcher = this.#options.watcher(this, options);
    this.#watcher = watcher;
    await watcher.start();
    return watcher;
  }

  /** @internal The skills the last scan found in their folder but could not load, kept in their previous version. */
  get stale(): ReadonlySet<string> {
    return this.#stale;
  }

  /**
   * @internal Replaces the discovered entries with a scan's; hand-registered skills stay on top. A
   * skill whose SKILL.md is still in its folder but no longer loads (saved half-written, say) keeps
   * its previous version (its front matter, and its body when it was loaded), as an edit to that
   * file alone does, with a `skill_reload_failed` error: taking it away would unmount it from the
   * agents that use it. So does one whose name a folder that lost it to the skill (a misnamed copy)
   * would take by that breakage. Returns the diagnostics it reported beyond the scan's.
   */
  applyScan(result: ScanResult): Diagnostic[] {
    const lostBefore = this.#shadowed;
    this.#folders = result.folders ?? [];
    this.#missing = result.missing ?? [];
    this.#diagnostics = [];
    this.#shadowed = [...result.shadowed];
    for (const item of result.diagnostics) this.#report(item);
    const next = new Map<string, SkillEntry>();
    for (const entry of result.entries) next.set(entry.name, entry);
    const stale = new Set<string>();
    const reported: Diagnostic[] = [];
    for (const [name, entry] of this.#entries) {
      if (this.#pinned.has(name) || entry.rootPath === undefined) continue;
      // Another folder holding the name now keeps it only if it would have had it anyway: one that
      // lost the name to this skill before (a misnamed copy of it) does not win it by its breakage.
      const claimant = next.get(name);
      if (claimant !== undefined && !lostBefore.some((clash) => clash.name === name && clash.shadowed.path === claimant.rootPath && clash.kept.path === entry.rootPath)) continue;
      const unloadable = result.diagnostics.find(
        (item) => item.code === 'skill_skipped' && (item.details as { reason?: unknown } | undefined)?.reason === 'invalid_manifest' && typeof item.subject === 'string' && path.resolve(item.subject) === entry.rootPath,
      );
      if (unloadable === undefined) continue;
      next.set(name, entry);
      stale.add(name);
      // The scan's words without their `<folder> skipped: `, which this message says its own way.
      const skippedAs = `${unloadable.subject as string} skipped: `;
      const why = unloadable.message.startsWith(skippedAs) ? unloadable.message.slice(skippedAs.length) : unloadable.message;
      const kept = diagnostic('error', 'skill_reload_failed', `skill '${name}' is still in ${entry.rootPath} but cannot be loaded: ${why}; the previous version stays`, {
        skill: name,
        subject: entry.rootPath,
      });
      reported.push(kept);
      if (claimant !== undefined) {
        const clash = { name, kept: { source: entry.source, path: entry.rootPath }, shadowed: { source: claimant.source, path: claimant.rootPath } };
        this.#shadowed = this.#shadowed.filter((known) => !(known.name === name && known.kept.path === claimant.rootPath));
        this.#shadowed.push(clash);
        reported.push(
          diagnostic('warning', 'skill_shadowed', `skill '${name}' in ${describe(claimant)} is still shadowed by ${describe(entry)}, whose previous version stays while its SKILL.md cannot be loaded`, {
            skill: name,
            subject: claimant.rootPath,
            details: { kept: clash.kept, shadowed: clash.shadowed },
          }),
        );
      }
    }
    for (const item of reported) this.#report(item);
    this.#stale = stale;
    for (const [name, entry] of this.#entries) {
      if (!this.#pinned.has(name)) continue;
      const discovered = next.get(name);
      if (discovered) {
        this.#shadowed.push({ name, kept: { source: entry.source, path: entry.rootPath }, shadowed: { source: discovered.source, path: discovered.rootPath } });
        this.#report(diagnostic('warning', 'skill_shadowed', `skill '${name}' registered from ${describe(entry)} shadows the one discovered in ${describe(discovered)}`, { skill: name, subject: discovered.rootPath }));
      }
      next.set(name, entry);
    }
    for (const [name, entry] of this.#entries) {
      const replacement = next.get(name);
      if (!replacement || replacement.file !== entry.file || replacement.trusted !== entry.trusted || JSON.stringify(replacement.manifest) !== JSON.stringify(entry.manifest)) this.#forget(name);
      else if (replacement !== entry) next.set(name, entry);
    }
    this.#entries.clear();
    this.#keys = undefined;
    for (const [name, entry] of next) this.#entries.set(name, entry);
    this.#revision++;
    return reported;
  }
}

function describe(entry: SkillEntry): string {
  return entry.rootPath ? `${entry.source} (${entry.rootPath})` : entry.source;
}

async function loadContent(entry: SkillEntry): Promise<LoadedSkill> {
  try {
    return await entry.skill.load();
  } catch (error) {
    if (error instanceof ManifestError) throw error;
    throw manifestError('invalid_manifest', `skill '${entry.name}' could not be loaded: ${(error as Error).message}`, { skill: entry.name, subject: entry.file }, error);
  }
}

/** Creates an empty registry; add skills with `register` or `registerPath`. */
export function createDocumentSkillRegistry(options: RegistryOptions = {}): DocumentSkillRegistry {
  const refused = optionsProblem('createDocumentSkillRegistry', options, REGISTRY_OPTIONS, '{ onDiagnostic }');
  if (refused) throw new ManifestError(refused);
  return new DocumentSkillRegistry(options);
}
