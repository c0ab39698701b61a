/**
 * Confinement: turning a relative path a model or a user supplied into a real path that is
 * guaranteed to lie inside a skill's root. The path's syntax is checked first (no absolute
 * paths, no `..`, no NUL, no drive letters), then the real path (every symbolic link resolved)
 * is compared with the root's real path, so a link that leaves the skill is refused too.
 *
 * I/O: `fs.promises.realpath` only. Never reads or writes file contents.
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';

export type Confined =
  | { ok: true; relative: string; real: string }
  | { ok: false; reason: 'absolute' | 'parent' | 'invalid' | 'escapes' | 'missing'; message: string };

/** Normalises a relative path (`./a//b` → `a/b`), or says why it is not an acceptable one. */
export function normalizeRelative(input: string): { ok: true; relative: string } | { ok: false; reason: 'absolute' | 'parent' | 'invalid'; message: string } {
  if (typeof input !== 'string' || input.trim() === '' || input.includes('\0')) {
    return { ok: false, reason: 'invalid', message: 'the path must be a non-empty relative path without NUL characters' };
  }
  const unified = input.replace(/\\/g, '/');
  if (unified.startsWith('/') || /^[A-Za-z]:/.test(unified) || path.isAbsolute(input)) {
    return { ok: false, reason: 'absolute', message: `'${input}' is an absolute path; give a path relative to the skill's root` };
  }
  const parts = unified.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.includes('..')) {
    return { ok: false, reason: 'parent', message: `'${input}' contains '..'; only paths inside the skill's root are allowed` };
  }
  if (parts.length === 0) return { ok: false, reason: 'invalid', message: `'${input}' names the skill's root, not a file` };
  return { ok: true, relative: parts.join('/') };
}

/** True when `real` is `root` or lies under it (both already real paths). */
export function isInside(root: string, real: string): boolean {
  const relative = path.relative(root, real);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/**
 * Resolves `input` under `root`, following symbolic links, and checks that the result stays in
 * the root. A path that does not exist is reported as `missing` (after the syntax checks).
 */
export async function confine(root: string, input: string): Promise<Confined> {
  const normal = normalizeRelative(input);
  if (!normal.ok) return normal;
  let realRoot: string;
  try {
    realRoot = await realpath(root);
  } catch {
    return { ok: false, reason: 'missing', message: `the skill's root '${root}' does not exist` };
  }
  let real: string;
  try {
    real = await realpath(path.join(realRoot, normal.relative));
  } catch {
    return { ok: false, reason: 'missing', message: `'${normal.relative}' does not exist in the skill` };
  }
  if (!isInside(realRoot, real)) {
    return { ok: false, reason: 'escapes', message: `'${normal.relative}' resolves to '${real}', outside the skill's root '${realRoot}'` };
  }
  return { ok: true, relative: normal.relative, real };
}
