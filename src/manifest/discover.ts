/**
 * Discovery: finding SKILL.md folders under the skill sources — project (`./.agent/skills`),
 * user (`~/.agent/skills`), bundled (the application's own skills folder, when the caller names
 * one), extra paths, and skillstate's example skills asked for by name — and building a registry
 * from them. On a name clash the more specific source wins (project > user > bundled > extra >
 * example: extra paths add skills, they never replace ones the project, the user or the
 * application provide); within one source, the skill whose folder bears its name wins (see
 * `name-clash.ts`); a warning names both paths. skillstate's own example skills are never
 * scanned unless named: a library's examples must not reach a user's model unasked.
 *
 * The walk reads front matter only (bodies wait for activation), skips hidden folders,
 * `node_modules` and `.git`, bounds depth, folder count and skill count, follows symbolic links
 * by real path (a cycle ends, a skill reached twice loads once), and reports every folder it
 * skips as a diagnostic. Plain files (such as the code skills beside the bundled folders) are not
 * folders and are passed over without a word.
 *
 * I/O: reads directories and the start of SKILL.md files. Never writes.
 */
import { existsSync, readdirSync, realpathSync, statSync, type Dirent } from 'node:fs';
import { stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { diagnostic, type Diagnostic } from '../core/diagnostics.js';
import { describeValue } from '../core/plain.js';
import { optionsProblem, unknownOption } from '../core/options.js';
import { ManifestError, manifestError } from './errors.js';
import { loadSkillFolder, type FolderSkillOptions } from './folder.js';
import { neverSearched, skippedFolder, skippedFolderDiagnostic, type FolderSkip } from './skipped-folder.js';
import { TrustGate, type TrustPolicy } from './trust.js';
import { FolderWatcher } from './watch.js';
import { DocumentSkillRegistry, type RegistryOptions, type ScanResult, type ShadowedSkill, type WatchOptions } from './document-registry.js';
import { skillEntry, type SkillEntry, type SkillSourceKind } from './skill-entry.js';
import { lookupKey } from './skill-identifier.js';
import { settleClash, shadowedDiagnostic, type Claim } from './name-clash.js';

/** The folder holding the package's package.json, above `from` (the sources, or the build in `dist/`). */
function packageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(from, '..', '..');
  }
}

/** The folder of skillstate's example skills (`skills/` at the package's root): the demo's, never discovered unasked. */
export const EXAMPLE_SKILLS_DIR = path.join(packageRoot(fileURLToPath(new URL('.', import.meta.url))), 'skills');

/**
 * Where to look: exactly the sources named. `false` (or leaving a field out) means the source is
 * not scanned, so `{ bundled: './skills' }` scans that folder alone; `defaultSkillSources({
 * bundled: './skills' })` adds it to the project and user folders.
 */
export interface SkillSources {
  /** The project's skills (default `<cwd>/.agent/skills`): untrusted until trusted. */
  project?: string | false;
  /** The user's skills (default `<home>/.agent/skills`). */
  user?: string | false;
  /** The application's own skills folder, the one it ships; no default. */
  bundled?: string | false;
  /** More folders of skills, or single skill folders. */
  extra?: readonly string[];
  /** skillstate's example skills, by name (`csv-tools`, `hello-extended`): only these are added. */
  examples?: readonly string[];
}

/** Options of `defaultSkillSources`: where the project and user folders are, and the sources to add to them. */
export interface DefaultSkillSourcesOptions {
  /** The project's folder, holding `.agent/skills` (default: the working directory). */
  cwd?: string;
  /** The user's home, holding `.agent/skills` (default: the home directory). */
  home?: string;
  /** The application's own skills folder, added to the defaults. */
  bundled?: string;
  /** More folders of skills, or single skill folders, added to the defaults. */
  extra?: readonly string[];
  /** skillstate's example skills to add, by name. */
  examples?: readonly string[];
}

/** The keys `DefaultSkillSourcesOptions` takes. */
const DEFAULT_SOURCES_OPTIONS = { cwd: true, home: true, bundled: true, extra: true, examples: true } as const satisfies Record<keyof DefaultSkillSourcesOptions, true>;

/**
 * The default sources — `<cwd>/.agent/skills` (project) and `<home>/.agent/skills` (user) — plus
 * whatever `options` adds: the application's own folder (`bundled`), `extra` folders, `examples`
 * by name. What `discoverSkills()` scans with no argument, and what `skillstate list --bundled
 * <dir>` scans; skillstate's example skills are not among the defaults.
 *
 * @example
 * const registry = await discoverSkills(defaultSkillSources({ bundled: './skills' }));
 */
export function defaultSkillSources(options: DefaultSkillSourcesOptions = {}): SkillSources {
  const refused = optionsProblem('defaultSkillSources', options, DEFAULT_SOURCES_OPTIONS, "{ bundled: './skills' }");
  if (refused) throw new ManifestError(refused);
  return {
    project: path.join(options.cwd ?? process.cwd(), '.agent', 'skills'),
    user: path.join(options.home ?? os.homedir(), '.agent', 'skills'),
    bundled: options.bundled === undefined ? false : path.resolve(options.bundled),
    extra: [...(options.extra ?? [])],
    ...(options.examples === undefined ? {} : { examples: [...options.examples] }),
  };
}

/** The names of skillstate's example skills (folders with a SKILL.md under `EXAMPLE_SKILLS_DIR`). */
export function exampleSkillNames(): string[] {
  return readdirSync(EXAMPLE_SKILLS_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(EXAMPLE_SKILLS_DIR, entry.name, 'SKILL.md')))
    .map((entry) => entry.name)
    .sort();
}

/** The folder of the example skill `name`. Throws `skill_not_found`, listing the examples, for any other name. */
export function exampleSkillPath(name: string): string {
  const names = exampleSkillNames();
  if (!names.includes(name)) {
    throw manifestError('skill_not_found', `no example skill named '${name}'; the examples are: ${names.join(', ')}`, { subject: name, details: { available: names } });
  }
  return path.join(EXAMPLE_SKILLS_DIR, name);
}

/** Options of `discoverSkills`: which sources to scan and how. */
export interface DiscoverOptions extends FolderSkillOptions, Pick<RegistryOptions, 'onDiagnostic'> {
  /** How deep below a source skill folders may sit (default 4; a skill directly in the source is depth 1). */
  maxDepth?: number;
  /** At most this many skills (default 2,000); folders past it are skipped and reported. */
  maxSkills?: number;
  /** At most this many folders visited (default 20,000). */
  maxFolders?: number;
  /** Folders read at once (default 32). */
  concurrency?: number;
  /**
   * Which project skills may run code (their toolsets imported, their scripts run): `'all'`,
   * `'none'`, a function of the entry, or (default) those whose folder the trust file lists.
   */
  trust?: TrustPolicy;
  /** The trust file read by the default policy (default `~/.agent/trusted-skills.json`; `false`: none). */
  trustFile?: string | false;
  /** Keep the registry in step with the folders (`registry.watch()`); an object sets the watch options. */
  watch?: boolean | WatchOptions;
}

/** How much a discovery scan read. */
export interface ScanStats {
  folders: number;
  skills: number;
  /** Bytes of SKILL.md files read (front matter only). */
  bytesRead: number;
}

interface Container {
  path: string;
  found: number;
  /** A folder below it was passed over for a reason that may hide a skill (too deep, unreadable). */
  unsure: boolean;
  parent: Container | undefined;
}

interface Visit {
  dir: string;
  depth: number;
  parent: Container | undefined;
}

const SOURCE_ORDER = ['project', 'user', 'bundled', 'extra', 'example'] as const;

const SOURCE_KEYS = { project: true, user: true, bundled: true, extra: true, examples: true } as const satisfies Record<keyof SkillSources, true>;

/**
 * Throws `invalid_options` for sources that would scan nothing without a word: not an object, a
 * key it does not take (`paths` for `extra`), a folder that is not a string, a list that is not
 * one (a string's letters would each be taken for a folder).
 */
function checkSources(sources: SkillSources): void {
  if (typeof sources !== 'object' || sources === null || Array.isArray(sources)) {
    throw manifestError('invalid_options', `discoverSkills takes sources { project?, user?, bundled?, extra?, examples? } (or defaultSkillSources(...)), got ${describeValue(sources)}`, { subject: 'sources', details: { option: 'sources', value: describeValue(sources) } });
  }
  const unknown = unknownOption('discoverSkills sources', sources, SOURCE_KEYS, { path: 'extra', paths: 'extra' });
  if (unknown) throw new ManifestError(unknown);
  for (const key of ['project', 'user', 'bundled'] as const) {
    const value = sources[key];
    if (value !== undefined && value !== false && typeof value !== 'string') {
      throw manifestError('invalid_options', `discoverSkills sources: ${key} must be a folder (a string) or false, got ${describeValue(value)}`, { subject: key, details: { option: key, value: describeValue(value) } });
    }
  }
  for (const key of ['extra', 'examples'] as const) {
    const value = sources[key];
    if (value !== undefined && !(Array.isArray(value) && value.every((item) => typeof item === 'string'))) {
      throw manifestError('invalid_options', `discoverSkills sources: ${key} must be a list of ${key === 'extra' ? 'folders' : 'names'} (strings), got ${describeValue(value)}${typeof value === 'string' ? ` (write ${key}: [${JSON.stringify(value)}])` : ''}`, { subject: key, details: { option: key, value: describeValue(value) } });
    }
  }
}

/** The options `discoverSkills` takes: one entry per key of `DiscoverOptions`. */
const DISCOVER_OPTIONS = {
  maxDepth: true,
  maxSkills: true,
  maxFolders: true,
  concurrency: true,
  trust: true,
  trustFile: true,
  watch: true,
  maxManifestBytes: true,
  maxAliasCount: true,
  onDiagnostic: true,
} as const satisfies Record<keyof DiscoverOptions, true>;

/** Throws `invalid_options` for options that are not an object, or hold a key `discoverSkills` does not take (`wach` for `watch`). */
function checkDiscoverOptions(options: DiscoverOptions): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw manifestError('invalid_options', `discoverSkills takes options such as { watch: true } as its second argument, got ${describeValue(options)}`, { subject: 'options', details: { option: 'options', value: describeValue(options) } });
  }
  const unknown = unknownOption('discoverSkills', options, DISCOVER_OPTIONS);
  if (unknown) throw new ManifestError(unknown);
}

function sourceRoots(sources: SkillSources, diagnostics: Diagnostic[]): { kind: SkillSourceKind; path: string }[] {
  const roots: { kind: SkillSourceKind; path: string }[] = [];
  if (typeof sources.bundled === 'string' && sources.project === undefined && sources.user === undefined) {
    // An application folder given alone reads like an addition to the usual places; say it is not.
    diagnostics.push(
      diagnostic(
        'info',
        'source_not_scanned',
        `project and user skills are not scanned: the sources name 'bundled' only; defaultSkillSources({ bundled }) adds it to them (project: false and user: false say you meant it)`,
        { subject: 'project, user', details: { sources: ['project', 'user'] } },
      ),
    );
  }
  for (const kind of SOURCE_ORDER) {
    if (kind === 'extra') for (const extra of sources.extra ?? []) roots.push({ kind, path: path.resolve(extra) });
    else if (kind === 'example') {
      for (const name of sources.examples ?? []) {
        try {
          roots.push({ kind, path: exampleSkillPath(name) });
        } catch (error) {
          diagnostics.push(diagnostic('warning', 'source_missing', (error as Error).message, { subject: name }));
        }
      }
    } else {
      const value = sources[kind];
      if (typeof value === 'string') roots.push({ kind, path: path.resolve(value) });
    }
  }
  return roots;
}

/** Runs `fn` over `items` with at most `limit` at once; results in input order. */
export async function inPool<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** Scans the sources and returns the winning entries, the shadowed ones and every diagnostic. */
export async function scanSkillSources(sources: SkillSources, options: DiscoverOptions = {}): Promise<ScanResult & { stats: ScanStats }> {
  const maxDepth = options.maxDepth ?? 4;
  const maxSkills = options.maxSkills ?? 2000;
  const maxFolders = options.maxFolders ?? 20_000;
  const concurrency = options.concurrency ?? 32;
  const diagnostics: Diagnostic[] = [];
  const skipped = (subject: string, reason: string, message: string, level: 'info' | 'warning' | 'error' = 'warning', extra: Record<string, unknown> = {}) =>
    diagnostics.push(diagnostic(level, 'skill_skipped', message, { subject, details: { reason, ...extra } }));
  /** A folder passed over by the search, in the words tree validation uses too; a possible skill makes its containers unsure. */
  const passedOver = (dir: string, skip: FolderSkip, container: Container | undefined) => {
    const item = skippedFolder(dir, skip);
    diagnostics.push(skippedFolderDiagnostic(item));
    if (item.level !== 'info') for (let c = container; c && !c.unsure; c = c.parent) c.unsure = true;
  };
  const stats: ScanStats = { folders: 0, skills: 0, bytesRead: 0 };
  const folders: string[] = [];
  const missing: string[] = [];
  const winners = new Map<string, Claim>();
  const shadowed: ShadowedSkill[] = [];
  const seenReal = new Map<string, string>();
  const roots = sourceRoots(sources, diagnostics);
  const trust = roots.some((root) => root.kind === 'project') ? await TrustGate.load(options.trust, options.trustFile) : { gate: new TrustGate('all', new Set()), diagnostics: [] };
  diagnostics.push(...trust.diagnostics);

  for (const root of roots) {
    try {
      if (!(await stat(root.path)).isDirectory()) {
        diagnostics.push(diagnostic('warning', 'source_missing', `${root.kind} skills source ${root.path} is not a folder`, { subject: root.path }));
        missing.push(root.path);
        continue;
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        // The usual places may well be empty; a path someone named should exist.
        const level = root.kind === 'project' || root.kind === 'user' ? 'info' : 'warning';
        diagnostics.push(diagnostic(level, 'source_missing', `${root.kind} skills source ${root.path} does not exist`, { subject: root.path }));
        missing.push(root.path);
      } else {
        diagnostics.push(diagnostic('warning', 'source_missing', `${root.kind} skills source ${root.path} cannot be read: ${(error as Error).message}`, { subject: root.path }));
      }
      continue;
    }
    const containers: Container[] = [];
    let level: Visit[] = [{ dir: root.path, depth: 0, parent: undefined }];
    while (level.length) {
      const outcomes = await inPool(level, concurrency, (visit) => visitFolder(visit, options));
      const nextLevel: Visit[] = [];
      for (const [i, outcome] of outcomes.entries()) {
        const visit = level[i]!;
        if (outcome.kind === 'gone') continue;
        if (outcome.kind === 'unreadable') {
          passedOver(visit.dir, { reason: 'unreadable', error: outcome.error }, visit.parent);
          continue;
        }
        if (stats.folders >= maxFolders) {
          skipped(visit.dir, 'over_folder_limit', `${visit.dir} skipped: more than ${maxFolders} folders visited`);
          for (let c = visit.parent; c && !c.unsure; c = c.parent) c.unsure = true;
          continue;
        }
        stats.folders++;
        const firstSeen = seenReal.get(outcome.real);
        if (firstSeen !== undefined) {
          passedOver(visit.dir, { reason: 'already_seen', real: outcome.real, firstSeen }, visit.parent);
          continue;
        }
        seenReal.set(outcome.real, visit.dir);
        folders.push(visit.dir);
        // A SKILL.md is there, usable or not: its containers are not empty.
        if (outcome.kind !== 'container') for (let c = visit.parent; c; c = c.parent) c.found++;
        if (outcome.kind === 'invalid') {
          skipped(visit.dir, 'invalid_manifest', `${visit.dir} skipped: ${outcome.error.message}`, 'error', { code: outcome.error.code });
          continue;
        }
        if (outcome.kind === 'skill') {
          stats.bytesRead += outcome.bytesRead;
          if (stats.skills >= maxSkills) {
            skipped(visit.dir, 'over_skill_limit', `${visit.dir} skipped: more than ${maxSkills} skills`);
            continue;
          }
          stats.skills++;
          let entry = skillEntry(outcome.result.skill, root.kind, outcome.result.diagnostics);
          diagnostics.push(...outcome.result.diagnostics);
          if (!trust.gate.trusts(entry, outcome.real)) {
            entry = { ...entry, trusted: false };
            diagnostics.push(
              diagnostic('info', 'skill_untrusted', `${root.kind} skill '${entry.name}' (${entry.rootPath}) is not trusted: its toolsets are not imported and its scripts do not run until it is trusted (skillstate trust ${entry.name})`, {
                skill: entry.name,
                subject: entry.rootPath,
              }),
            );
          }
          // Names equal after NFKC (`café` composed or decomposed) are one name: lookups find either.
          const key = lookupKey(entry.name);
          const held = winners.get(key);
          if (held) {
            const clash = settleClash(held, { entry, root: root.path });
            if (clash.kept.entry === entry) winners.set(key, clash.kept);
            shadowed.push({ name: clash.lost.name, kept: { source: clash.kept.entry.source, path: clash.kept.entry.rootPath }, shadowed: { source: clash.lost.source, path: clash.lost.rootPath } });
            diagnostics.push(shadowedDiagnostic(clash));
          } else winners.set(key, { entry, root: root.path });
          continue;
        }
        const container: Container = { path: visit.dir, found: 0, unsure: false, parent: visit.parent };
        if (visit.depth > 0) containers.push(container);
        for (const child of outcome.children) {
          if (child.skip) passedOver(child.dir, { reason: child.skip }, container);
          else if (visit.depth + 1 > maxDepth) passedOver(child.dir, { reason: 'too_deep', maxDepth, root: root.path }, container);
          else nextLevel.push({ dir: child.dir, depth: visit.depth + 1, parent: container });
        }
      }
      level = nextLevel;
    }
    for (const container of containers) {
      if (container.found === 0 && !container.unsure) passedOver(container.path, { reason: 'no_skill_md' }, undefined);
    }
  }
  return { entries: [...winners.values()].map((claim) => claim.entry), shadowed, diagnostics, stats, folders, missing };
}

type FolderOutcome =
  | { kind: 'gone' }
  | { kind: 'unreadable'; error: string }
  | { kind: 'skill'; real: string; result: Awaited<ReturnType<typeof loadSkillFolder>>; bytesRead: number }
  | { kind: 'invalid'; real: string; error: ManifestError }
  | { kind: 'container'; real: string; children: { dir: string; skip: 'hidden' | 'ignored' | undefined }[] };

/** Visits between two yields to the event loop: the reads are synchronous (see `readManifestHeadSync`). */
const VISITS_PER_TURN = 64;
let visitsThisTurn = 0;

/**
 * Looks at one folder: a skill (front matter read), an invalid one, or a container of folders.
 * The file system calls are synchronous — a local folder answers in microseconds, and a thread
 * pool round trip per call was most of the cost of discovery — and the event loop is given a
 * turn every few dozen folders so that a large scan does not hold it.
 */
async function visitFolder(visit: Visit, options: FolderSkillOptions): Promise<FolderOutcome> {
  if (++visitsThisTurn >= VISITS_PER_TURN) {
    visitsThisTurn = 0;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  let real: string;
  try {
    real = realpathSync(visit.dir);
  } catch (error) {
    return vanished(error) ? { kind: 'gone' } : { kind: 'unreadable', error: (error as Error).message };
  }
  try {
    const result = await loadSkillFolder(visit.dir, options);
    return { kind: 'skill', real, result, bytesRead: result.bytesRead };
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error;
    if (error.code !== 'skill_not_found') return { kind: 'invalid', real, error };
  }
  let items: Dirent[];
  try {
    items = readdirSync(real, { withFileTypes: true });
  } catch (error) {
    return vanished(error) ? { kind: 'gone' } : { kind: 'unreadable', error: (error as Error).message };
  }
  items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const children: { dir: string; skip: 'hidden' | 'ignored' | undefined }[] = [];
  for (const item of items) {
    // Links are followed: a link to a folder counts as a folder.
    const isDir = item.isDirectory() || (item.isSymbolicLink() && isDirectorySync(path.join(visit.dir, item.name)));
    if (!isDir) continue;
    children.push({ dir: path.join(visit.dir, item.name), skip: neverSearched(item.name) });
  }
  return { kind: 'container', real, children };
}

/** The folder went away between listing and visiting (not a reason to report it). */
function vanished(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function isDirectorySync(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Discovers skills from `sources` (default: project and user; `defaultSkillSources({ bundled })`
 * adds the application's own folder to them, and `examples` names skillstate's examples; a
 * sources object is taken as it is, a field left out not scanned) and returns a registry
 * whose `refresh()` scans the same sources again. Every skipped folder, shadowed skill and
 * lenient fix-up is in `registry.diagnostics`.
 */
export async function discoverSkills(sources: SkillSources = defaultSkillSources(), options: DiscoverOptions = {}): Promise<DocumentSkillRegistry> {
  checkSources(sources);
  checkDiscoverOptions(options);
  const registry = new DocumentSkillRegistry({
    ...options,
    scan: () => scanSkillSources(sources, options),
    watcher: (owner, watchOptions) => new FolderWatcher(owner, watchOptions, options),
  });
  await registry.refresh();
  if (options.watch) await registry.watch(options.watch === true ? {} : options.watch);
  return registry;
}
