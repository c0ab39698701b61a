/**
 * Validating a folder of skills: `validateSkillTree(dir)` validates `dir` itself when it holds a
 * SKILL.md, and otherwise every skill folder below it, searched as discovery searches (hidden
 * folders, `node_modules` and `.git` left out, links followed once, depth bounded), so
 * `skillstate validate skills/` reports each skill instead of failing on the parent.
 *
 * Every folder the search passes over is reported with discovery's words and level: nothing is
 * left out silently. A folder that could not be read or lies past the depth limit may hold a
 * skill that was never checked, so the tree is not valid; hidden and ignored folders, folders
 * seen twice through links and folders holding no SKILL.md are notes.
 *
 * I/O: reads folders and SKILL.md files. Never writes.
 */
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import type { Dirent } from 'node:fs';
import path from 'node:path';
import { optionsProblem } from '../core/options.js';
import { ManifestError } from './errors.js';
import { manifestSpecProblem, type ManifestSpec } from './fields.js';
import { MANIFEST_NAMES } from './folder.js';
import { neverSearched, skippedFolder, type FolderSkip, type SkippedFolder } from './skipped-folder.js';
import { validateSkillDir, type ValidationResult } from './validate.js';

/** The default depth of the search, as discovery's: a skill directly in `dir` is one level down. */
export const DEFAULT_TREE_DEPTH = 4;

/** What `validateSkillTree` found: a result per skill checked, and every folder passed over. */
export interface TreeValidation {
  /** One result per skill folder, or one for `dir` itself when it is a skill, not a folder, or holds no skill. */
  results: ValidationResult[];
  /** Every folder below `dir` that was not checked, and why, in folder order. */
  skipped: SkippedFolder[];
  /** Every result is valid and no folder was passed over for a reason above `info`. */
  valid: boolean;
}

/** The error of a path that is simply not there (not a reason to report it). */
function missing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * Whether `dir` holds a manifest: `true`, `false`, or the error that kept it from being known.
 * Anything by that name counts, even a FIFO, a folder or a broken link: validating it says what is wrong.
 */
async function holdsManifest(dir: string): Promise<boolean | Error> {
  for (const name of MANIFEST_NAMES) {
    try {
      // A link to nothing counts too: validating the folder reports it as the reference does.
      await lstat(path.join(dir, name));
      return true;
    } catch (error) {
      if (!missing(error)) return error as Error;
    }
  }
  return false;
}

async function isFolder(parent: string, item: Dirent): Promise<boolean> {
  if (item.isDirectory()) return true;
  // Links are followed: a link to a folder counts as a folder.
  return item.isSymbolicLink() && ((await stat(path.join(parent, item.name)).catch(() => undefined))?.isDirectory() ?? false);
}

/** A folder searched, and whether a skill folder was found below it (or may be: something below was passed over). */
interface Searched {
  dir: string;
  depth: number;
  parent: Searched | undefined;
  holds: boolean;
}

/** Orders paths folder by folder, so that a folder's contents follow it. */
function byFolder(a: string, b: string): number {
  const x = a.split(path.sep);
  const y = b.split(path.sep);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
  return x.length - y.length;
}

/**
 * The skill folders at or below `dir`, in name order: `dir` alone when it holds a SKILL.md; else
 * every folder below it that does (not looking inside them), at most `maxDepth` levels down; and
 * every folder the search passed over. The search goes level by level, as discovery's does, so a
 * folder reached both directly and through a link is checked where it lies and the link is the
 * one passed over.
 */
export async function findSkillFolders(dir: string, options: { maxDepth?: number } = {}): Promise<{ folders: string[]; skipped: SkippedFolder[] }> {
  const maxDepth = options.maxDepth ?? DEFAULT_TREE_DEPTH;
  const folders: string[] = [];
  const skipped: SkippedFolder[] = [];
  const seen = new Map<string, string>();
  /** Marks the folders above as holding (or possibly holding) a skill. */
  const holding = (from: Searched | undefined) => {
    for (let folder = from; folder && !folder.holds; folder = folder.parent) folder.holds = true;
  };
  const passOver = (folder: string, skip: FolderSkip, parent: Searched | undefined) => {
    const item = skippedFolder(folder, skip);
    skipped.push(item);
    if (item.level !== 'info') holding(parent);
  };
  const unreadable = (folder: Searched, error: unknown) => passOver(folder.dir, { reason: 'unreadable', error: (error as Error).message }, folder.parent);
  const containers: Searched[] = [];
  let level: Searched[] = [{ dir, depth: 0, parent: undefined, holds: false }];
  while (level.length) {
    const next: Searched[] = [];
    for (const folder of level) {
      let real: string;
      try {
        real = await realpath(folder.dir);
      } catch (error) {
        if (!missing(error)) unreadable(folder, error);
        continue;
      }
      const firstSeen = seen.get(real);
      if (firstSeen !== undefined) {
        passOver(folder.dir, { reason: 'already_seen', real, firstSeen }, folder.parent);
        continue;
      }
      seen.set(real, folder.dir);
      const manifest = await holdsManifest(folder.dir);
      if (manifest instanceof Error) {
        unreadable(folder, manifest);
        continue;
      }
      if (manifest) {
        folders.push(folder.dir);
        holding(folder.parent);
        continue;
      }
      let items: Dirent[];
      try {
        items = await readdir(folder.dir, { withFileTypes: true });
      } catch (error) {
        if (!missing(error)) unreadable(folder, error);
        continue;
      }
      if (folder.depth > 0) containers.push(folder);
      items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const item of items) {
        if (!(await isFolder(folder.dir, item))) continue;
        const child = path.join(folder.dir, item.name);
        const never = neverSearched(item.name);
        if (never) passOver(child, { reason: never }, folder);
        else if (folder.depth + 1 > maxDepth) passOver(child, { reason: 'too_deep', maxDepth, root: dir }, folder);
        else next.push({ dir: child, depth: folder.depth + 1, parent: folder, holds: false });
      }
    }
    level = next;
  }
  for (const container of containers) if (!container.holds) passOver(container.dir, { reason: 'no_skill_md' }, undefined);
  return { folders: folders.sort(byFolder), skipped: skipped.sort((a, b) => byFolder(a.dir, b.dir)) };
}

/** Options of `validateSkillTree`: the field set to validate against, and how deep to look for skill folders. */
export interface TreeValidationOptions {
  spec?: ManifestSpec;
  maxDepth?: number;
}

/** The options `validateSkillTree` takes: one entry per key of `TreeValidationOptions`. */
const TREE_VALIDATION_OPTIONS = { spec: true, maxDepth: true } as const satisfies Record<keyof TreeValidationOptions, true>;

/**
 * Validates `dir` strictly: as one skill when it holds a SKILL.md (or is not a folder, or its
 * SKILL.md cannot be read, or it holds no skill at all: then its own result says why), else each
 * skill folder below it. Folders the search passed over are in `skipped`. Throws `invalid_options`
 * for an option it does not take or a `spec` that is not a `ManifestSpec`.
 */
export async function validateSkillTree(dir: string, options: TreeValidationOptions = {}): Promise<TreeValidation> {
  // Refused before any folder is read: a misspelled `spce`, or a `spec` of no known value, would judge every skill by the default.
  const refused = optionsProblem('validateSkillTree', options, TREE_VALIDATION_OPTIONS, "{ spec: 'agentskills' }") ?? manifestSpecProblem(options.spec);
  if (refused) throw new ManifestError(refused);
  // What each folder is validated with: the search's own options stay here.
  const judged = options.spec === undefined ? {} : { spec: options.spec };
  const done = (results: ValidationResult[], skipped: SkippedFolder[] = []): TreeValidation => ({
    results,
    skipped,
    valid: results.every((result) => result.valid) && skipped.every((item) => item.level === 'info'),
  });
  if (!(await stat(dir).catch(() => undefined))?.isDirectory() || (await holdsManifest(dir)) !== false) return done([await validateSkillDir(dir, judged)]);
  const { folders, skipped } = await findSkillFolders(dir, options);
  if (!folders.length) {
    const own = await validateSkillDir(dir, judged);
    return done([{ ...own, errors: [...own.errors, `No skill folder (one holding a SKILL.md) found in ${dir}`] }], skipped);
  }
  const results: ValidationResult[] = [];
  for (const folder of folders) results.push(await validateSkillDir(folder, judged));
  return done(results, skipped);
}
