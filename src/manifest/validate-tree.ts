/**
 * Validating a folder of skills: `validateSkillTree(dir)` validates `dir` itself when it holds a
 * SKILL.md, and otherwise every skill folder below it (hidden folders, `node_modules` and `.git`
 * left out, links followed once, depth bounded), so `skillstate validate skills/` reports each
 * skill instead of failing on the parent.
 *
 * I/O: reads folders and SKILL.md files. Never writes.
 */
import { readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ManifestSpec } from './fields.js';
import { MANIFEST_NAMES } from './folder.js';
import { validateSkillDir, type ValidationResult } from './validate.js';

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

async function hasManifest(dir: string): Promise<boolean> {
  for (const name of MANIFEST_NAMES) if (await isFile(path.join(dir, name))) return true;
  return false;
}

/**
 * The skill folders at or below `dir`, sorted: `dir` alone when it holds a SKILL.md; else every
 * folder below it that does (not looking inside them), at most `maxDepth` levels down.
 */
export async function findSkillFolders(dir: string, options: { maxDepth?: number } = {}): Promise<string[]> {
  const maxDepth = options.maxDepth ?? 4;
  const found: string[] = [];
  const seen = new Set<string>();
  const walk = async (folder: string, depth: number): Promise<void> => {
    const real = await realpath(folder).catch(() => undefined);
    if (real === undefined || seen.has(real)) return;
    seen.add(real);
    if (await hasManifest(folder)) {
      found.push(folder);
      return;
    }
    if (depth >= maxDepth) return;
    const names = (await readdir(folder).catch(() => [] as string[])).sort();
    for (const name of names) {
      if (name.startsWith('.') || name === 'node_modules') continue;
      const child = path.join(folder, name);
      if ((await stat(child).catch(() => undefined))?.isDirectory()) await walk(child, depth + 1);
    }
  };
  await walk(dir, 0);
  return found;
}

/**
 * Validates `dir` strictly: as one skill when it holds a SKILL.md (or is not a folder, or holds
 * no skill at all: then its own result says why), else each skill folder below it.
 */
export async function validateSkillTree(dir: string, options: { spec?: ManifestSpec; maxDepth?: number } = {}): Promise<ValidationResult[]> {
  if (!(await stat(dir).catch(() => undefined))?.isDirectory() || (await hasManifest(dir))) return [await validateSkillDir(dir, options)];
  const folders = await findSkillFolders(dir, options);
  if (!folders.length) {
    const own = await validateSkillDir(dir, options);
    return [{ ...own, errors: [...own.errors, `No skill folder (one holding a SKILL.md) found in ${dir}`] }];
  }
  const results: ValidationResult[] = [];
  for (const folder of folders) results.push(await validateSkillDir(folder, options));
  return results;
}
