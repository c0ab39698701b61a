/**
 * Hot reload: a watcher that keeps a discovered registry in step with its folders, and the
 * running agents that follow it.
 *
 * Each folder the last scan looked at is watched with `node:fs` `watch` (one inotify, FSEvents or
 * ReadDirectoryChanges watch per folder, not recursive), and so is every folder inside each skill
 * (its resources). Watching folder by folder, by the paths discovery walked, is what makes
 * symbolic links work: the watch follows a linked skill folder to its target, where a recursive
 * watch of the source would not descend into links. Events are gathered until the folders have
 * been quiet for `debounceMs`, then applied in one batch:
 *
 * - an event inside a known skill folder reloads that skill's front matter only (the registry's
 *   other skills are untouched: this is the cheap path, a single folder read); a SKILL.md that
 *   is now invalid keeps the old version and reports `skill_reload_failed`;
 * - anything else (a folder added or removed in a source, a SKILL.md removed or renamed, a
 *   skill's name changed) scans the sources again, as `refresh()` does.
 *
 * A watched folder removed and made again (`git checkout` of another branch, `rm -rf skills && cp
 * -r ... skills`) is a new folder that the old watch no longer sees: a watch whose own folder is
 * removed or renamed is made anew at the next batch, on whatever folder then has the path. A
 * folder that is gone with nothing watching where it would come back (a source folder: its parent
 * is no folder of skills), and a source that was missing when the watch started, gets a lookout:
 * a watch on its nearest existing parent that waits for the next folder of its path to appear,
 * then scans again (and, while the source is still missing, looks out from the folder that
 * appeared, one level nearer). Only a lookout that cannot be made (the system refuses the watch) is
 * lost: a `skill_watch_lost` warning says so, and `refresh()` brings the folder back.
 *
 * Then agents followed with `follow(system)` are brought up to date: a changed skill mounted on an
 * agent is loaded again through the agent's own `load_skill` action (a step in its mailbox, so the
 * agent sees the new body and tools from its next step on, with its slice kept or the change
 * refused); a removed one is unmounted. Each refusal and removal is a diagnostic, reported to the
 * registry and to the system followed (its `onDiagnostic` listeners, about the agent). A skill still
 * in its folder whose SKILL.md no longer loads is not removed, whether its own edit or a rescan
 * found it so: it keeps its previous version (`skill_reload_failed`).
 *
 * I/O: watches folders, reads skill folders. Never writes.
 */
import { watch, type FSWatcher } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { diagnostic, type Diagnostic } from '../core/diagnostics.js';
import { diagnosticSinkOf } from '../core/diagnostic-sink.js';
import { describeThrown } from '../core/errors.js';
import { ManifestError } from './errors.js';
import { loadSkillFolder, type FolderSkillOptions } from './folder.js';
import { type DocumentSkillRegistry, type FolderWatch, type RunningAgents, type SkillChange, type WatchOptions } from './document-registry.js';
import { skillEntry, type SkillEntry } from './skill-entry.js';

/** Folders watched inside one skill (its resources); deeper or further ones are not. */
const MAX_FOLDERS_PER_SKILL = 64;
const RESOURCE_DEPTH = 4;

/** The folders below a skill's root, breadth first, hidden ones and `node_modules` left out. */
async function resourceFolders(root: string): Promise<string[]> {
  const found: string[] = [];
  let level = [root];
  for (let depth = 0; depth < RESOURCE_DEPTH && level.length && found.length < MAX_FOLDERS_PER_SKILL; depth++) {
    const next: string[] = [];
    for (const dir of level) {
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const item of entries) {
        if (item.name.startsWith('.') || item.name === 'node_modules') continue;
        const child = path.join(dir, item.name);
        const isDir = item.isDirectory() || (item.isSymbolicLink() && (await stat(child).catch(() => undefined))?.isDirectory() === true);
        if (isDir && found.length < MAX_FOLDERS_PER_SKILL) {
          found.push(child);
          next.push(child);
        }
      }
    }
    level = next;
  }
  return found;
}

/** Whether `dir` is a folder now. */
function isFolder(dir: string): Promise<boolean> {
  return stat(dir).then(
    (info) => info.isDirectory(),
    () => false,
  );
}

/** `dir`, or its nearest parent that is a folder now (the root of the file system at worst). */
async function nearestFolder(dir: string): Promise<string> {
  for (let at = dir; ; at = path.dirname(at)) {
    if (at === path.dirname(at) || (await isFolder(at))) return at;
  }
}

/** The `node:fs` watcher behind `registry.watch()`. */
export class FolderWatcher implements FolderWatch {
  readonly #registry: DocumentSkillRegistry;
  readonly #debounceMs: number;
  readonly #folderOptions: FolderSkillOptions;
  /** Watched folder → the skill it belongs to (undefined: a source or a folder of skills). */
  readonly #owners = new Map<string, string | undefined>();
  readonly #watchers = new Map<string, FSWatcher>();
  /** Watched folders whose own watch saw them removed or renamed: watched anew at the next sync. */
  readonly #stale = new Set<string>();
  /** A folder gone with nothing watching its place → the watch on its nearest existing parent (`at`) that waits for it. */
  readonly #lookouts = new Map<string, { watcher: FSWatcher; at: string }>();
  /** Folders whose lookout ended (their parent went too): looked out for again at the next sync. */
  readonly #orphans = new Set<string>();
  /** Skill root → the folders inside it, as last listed. */
  readonly #inside = new Map<string, string[]>();
  readonly #pending = new Set<string>();
  readonly #listeners = new Set<(change: SkillChange) => void>();
  readonly #followed = new Set<RunningAgents>();
  #timer: NodeJS.Timeout | undefined;
  #queue: Promise<void> = Promise.resolve();
  #closed = false;
  /** A batch is scanning the sources again (it watches what it finds itself). */
  #rescanning = false;

  constructor(registry: DocumentSkillRegistry, options: WatchOptions, folderOptions: FolderSkillOptions) {
    this.#registry = registry;
    this.#debounceMs = options.debounceMs ?? 50;
    this.#folderOptions = folderOptions;
    if (options.onChange) this.#listeners.add(options.onChange);
  }

  get folders(): number {
    return this.#watchers.size;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Watches the folders of the registry's last scan. */
  async start(): Promise<void> {
    await this.#sync(new Set());
  }

  /**
   * The registry scanned its sources again (`refresh()`): the folders it found are watched, after
   * the batch under way if any. Nothing to do for the scan of a batch, which watches them itself.
   */
  rescanned(): Promise<void> {
    if (this.#rescanning || this.#closed) return Promise.resolve();
    const synced = this.#queue.then(() => this.#sync(new Set()));
    this.#queue = synced.catch(() => {});
    return synced;
  }

  onChange(listener: (change: SkillChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  nextChange(): Promise<SkillChange> {
    return new Promise((resolve) => {
      const stop = this.onChange((change) => {
        stop();
        resolve(change);
      });
    });
  }

  follow(agents: RunningAgents): () => void {
    this.#followed.add(agents);
    return () => this.#followed.delete(agents);
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    for (const watcher of this.#watchers.values()) watcher.close();
    for (const lookout of this.#lookouts.values()) lookout.watcher.close();
    this.#watchers.clear();
    this.#lookouts.clear();
    this.#owners.clear();
    this.#listeners.clear();
    this.#followed.clear();
  }

  /**
   * Makes the watched folders those of the registry now; `relist` names skills whose inner folders
   * must be listed again. `note` receives the diagnostics of folders the watch lost.
   */
  async #sync(relist: ReadonlySet<string>, note: (item: Diagnostic) => void = (item) => this.#registry.report(item)): Promise<void> {
    const wanted = new Map<string, string | undefined>();
    const roots = new Map<string, string>();
    for (const entry of this.#registry.entries({ includeDisabled: true })) {
      if (entry.rootPath && entry.source !== 'path' && entry.source !== 'memory') roots.set(entry.rootPath, entry.name);
    }
    for (const dir of this.#registry.scannedFolders) wanted.set(dir, roots.get(dir));
    for (const [root, name] of roots) {
      wanted.set(root, name);
      let inside = this.#inside.get(root);
      if (!inside || relist.has(name)) this.#inside.set(root, (inside = await resourceFolders(root)));
      for (const dir of inside) wanted.set(dir, name);
    }
    for (const root of this.#inside.keys()) if (!roots.has(root)) this.#inside.delete(root);
    if (this.#closed) return;
    /** Folders watched until now, or wanted now, that are not there to watch. */
    const gone: string[] = [];
    for (const [dir, watcher] of this.#watchers) {
      if (wanted.has(dir) && !this.#stale.has(dir)) continue;
      watcher.close();
      this.#watchers.delete(dir);
      if (!wanted.has(dir)) gone.push(dir);
    }
    // Folders back under a path watched before: what was written in them between the scan and
    // their new watch would be seen by neither, so they are read once more when watched.
    const renewed = [...this.#stale, ...this.#lookouts.keys()].filter((dir) => wanted.has(dir));
    this.#stale.clear();
    gone.push(...this.#orphans);
    this.#orphans.clear();
    // Sources the scan found no folder at (missing since the watch started, or gone since): waited for.
    for (const dir of this.#registry.missingSources) if (!wanted.has(dir)) gone.push(dir);
    this.#owners.clear();
    for (const [dir, owner] of wanted) {
      this.#owners.set(dir, owner);
      if (this.#watchers.has(dir)) continue;
      try {
        const name = path.basename(dir);
        const watcher = watch(dir, (_event, file) => {
          // The folder itself removed or renamed: this watch follows the old folder, wherever it went.
          if (file === name) this.#stale.add(dir);
          this.#noted(dir);
        });
        // A watched folder that goes away ends its watch; its parent's watch reports the removal.
        watcher.on('error', () => {
          watcher.close();
          this.#watchers.delete(dir);
          this.#noted(path.dirname(dir));
        });
        this.#watchers.set(dir, watcher);
      } catch {
        // Gone between the scan and now.
        gone.push(dir);
      }
    }
    await this.#lookOut(gone, wanted, note);
    for (const dir of renewed) this.#noted(dir);
  }

  /**
   * Waits for each folder in `gone` whose place no watch sees (its parent is not watched): a
   * lookout on its nearest existing parent notes the next folder of its path appearing (or a
   * folder taking the place of the file found there). Lookouts for folders watched again end, and
   * so do those a folder nearer than theirs has appeared for (made again nearer).
   */
  async #lookOut(gone: readonly string[], wanted: ReadonlyMap<string, string | undefined>, note: (item: Diagnostic) => void): Promise<void> {
    for (const [dir, lookout] of this.#lookouts) {
      if (!wanted.has(dir)) continue;
      lookout.watcher.close();
      this.#lookouts.delete(dir);
    }
    const goneSet = new Set(gone);
    for (const dir of new Set(gone)) {
      const parent = path.dirname(dir);
      // Inside another folder gone (its lookout covers it), or in a watched one (its watch sees it come back).
      if (goneSet.has(parent) || wanted.has(parent)) {
        this.#lookouts.get(dir)?.watcher.close();
        this.#lookouts.delete(dir);
        continue;
      }
      // There again already (made again after the scan that found it gone): that scan is out of
      // date, so the sources are scanned once more. Something else in its place (a file) is waited
      // out like nothing: the lookout sees the folder come back.
      const back = await isFolder(dir);
      const at = await nearestFolder(parent);
      if (this.#closed) return;
      if (back) this.#noted(dir);
      const current = this.#lookouts.get(dir);
      if (current?.at === at) continue;
      current?.watcher.close();
      this.#lookouts.delete(dir);
      // The name, in `at`, of the next folder on the way to `dir` (`dir`'s own name when `at` is its parent).
      const next = path.relative(at, dir).split(path.sep)[0];
      const blind = () => {
        this.#lookouts.get(dir)?.watcher.close();
        this.#lookouts.delete(dir);
        this.#orphans.add(dir);
        this.#noted(dir);
      };
      try {
        const watcher = watch(at, (_event, file) => {
          if (file === null || file === next) return this.#noted(dir);
          // The folder watched itself removed or renamed: the lookout is blind now, and is made again at the next sync.
          if (file === path.basename(at)) blind();
        });
        watcher.on('error', blind);
        this.#lookouts.set(dir, { watcher, at });
      } catch (error) {
        note(
          diagnostic('warning', 'skill_watch_lost', `skills folder ${dir} is missing, and watching ${at} for it to appear failed (${describeThrown(error)}): the watch cannot see it come; call refresh() once it is there`, {
            subject: dir,
            details: { folder: dir, parent: at },
          }),
        );
      }
    }
  }

  #noted(dir: string): void {
    if (this.#closed) return;
    this.#pending.add(dir);
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#queue = this.#queue.then(() => this.#apply()).catch((error: unknown) => {
        this.#registry.report(diagnostic('error', 'skill_watch_failed', `applying skill folder changes failed: ${describeThrown(error)}`));
      });
    }, this.#debounceMs);
  }

  /** Applies the folder events gathered so far as one change. */
  async #apply(): Promise<void> {
    if (this.#closed || !this.#pending.size) return;
    const started = performance.now();
    const dirs = [...this.#pending];
    this.#pending.clear();
    const change: SkillChange = { added: [], changed: [], removed: [], diagnostics: [], durationMs: 0 };
    const touched = new Set<string>();
    let rescan = false;
    for (const dir of dirs) {
      if (!this.#owners.has(dir)) rescan = true;
      else {
        const owner = this.#owners.get(dir);
        if (owner === undefined) rescan = true;
        else touched.add(owner);
      }
    }
    if (!rescan) rescan = !(await this.#reloadEach(touched, change));
    if (rescan) await this.#rescan(touched, change);
    await this.#sync(touched, (item) => {
      change.diagnostics.push(item);
      this.#registry.report(item);
    });
    if (this.#closed) return;
    change.durationMs = performance.now() - started;
    await this.#updateAgents(change);
    for (const listener of [...this.#listeners]) listener(change);
  }

  /**
   * Reloads the front matter of each touched skill, in place. Returns false when only a rescan
   * can tell what happened (a SKILL.md gone, a name changed).
   */
  async #reloadEach(touched: ReadonlySet<string>, change: SkillChange): Promise<boolean> {
    const reloaded: SkillEntry[] = [];
    for (const name of touched) {
      const entry = this.#registry.entry(name);
      if (!entry?.rootPath) return false;
      try {
        const folder = await loadSkillFolder(entry.rootPath, this.#folderOptions);
        if (folder.skill.name !== name) return false;
        reloaded.push(skillEntry(folder.skill, entry.source, folder.diagnostics, entry.trusted));
      } catch (error) {
        if (error instanceof ManifestError && error.code === 'skill_not_found') return false;
        const item = diagnostic('error', 'skill_reload_failed', `skill '${name}' changed on disk but cannot be loaded: ${describeThrown(error)}; the previous version stays`, {
          skill: name,
          subject: entry.rootPath,
        });
        change.diagnostics.push(item);
        this.#registry.report(item);
      }
    }
    for (const entry of reloaded) {
      this.#registry.replaceEntry(entry);
      change.changed.push(entry.name);
    }
    return true;
  }

  /** Scans the sources again and works out what was added, changed and removed. */
  async #rescan(touched: ReadonlySet<string>, change: SkillChange): Promise<void> {
    const before = new Map(this.#registry.entries({ includeDisabled: true }).map((entry) => [entry.name, entry]));
    this.#rescanning = true;
    try {
      await this.#registry.refresh();
    } finally {
      this.#rescanning = false;
    }
    for (const entry of this.#registry.entries({ includeDisabled: true })) {
      const previous = before.get(entry.name);
      if (!previous) change.added.push(entry.name);
      else if (previous !== entry) change.changed.push(entry.name);
      // A SKILL.md that no longer loads keeps its previous version, loaded body included (the registry said so).
      else if (touched.has(entry.name) && !this.#registry.stale.has(entry.name)) {
        // Same front matter, but a resource or the body changed: forget what was loaded.
        this.#registry.replaceEntry(entry);
        change.changed.push(entry.name);
      }
    }
    for (const name of before.keys()) if (!this.#registry.has(name)) change.removed.push(name);
  }

  /** Brings the followed agents up to date with a change; waits until each agent has taken it. */
  async #updateAgents(change: SkillChange): Promise<void> {
    if (!change.changed.length && !change.removed.length) return;
    const changed = new Set(change.changed);
    const removed = new Set(change.removed);
    const pending: Promise<void>[] = [];
    for (const agents of this.#followed) {
      // Told to the system as well as to the registry: a program listening to the system hears what happened to its agents.
      const sink = diagnosticSinkOf(agents);
      for (const ref of agents.list()) {
        const note = (item: Diagnostic) => {
          change.diagnostics.push(item);
          this.#registry.report(item);
          sink?.(item, ref.id);
        };
        const view = ref.getSnapshot();
        for (const { name } of view.mounted) {
          if (removed.has(name)) {
            pending.push(
              ref.unmount(name).then(
                () => note(diagnostic('warning', 'skill_removed', `skill '${name}' was removed from disk; it was unmounted from agent '${ref.id}'`, { skill: name, subject: ref.id })),
                (error: unknown) => note(diagnostic('error', 'skill_removed', `skill '${name}' was removed from disk but could not be unmounted from agent '${ref.id}': ${describeThrown(error)}`, { skill: name, subject: ref.id })),
              ),
            );
          } else if (changed.has(name)) {
            const loader = view.registeredActions.find((action) => action.endsWith('/load_skill'));
            if (!loader) {
              note(diagnostic('warning', 'skill_reload_refused', `skill '${name}' changed on disk, but agent '${ref.id}' has no load_skill action to take the new version; it keeps the old one`, { skill: name, subject: ref.id }));
              continue;
            }
            pending.push(
              ref.run({ action: 'load_skill', skill: loader.slice(0, -'/load_skill'.length), params: { name } }).then(
                () => undefined,
                (error: unknown) => note(diagnostic('warning', 'skill_reload_refused', `skill '${name}' changed on disk, but agent '${ref.id}' refused the new version: ${describeThrown(error)}`, { skill: name, subject: ref.id })),
              ),
            );
          }
        }
      }
    }
    await Promise.all(pending);
  }
}
