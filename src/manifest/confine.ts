/**
 * Confinement: turning a path a model or a user supplied into a real path that is guaranteed to
 * lie inside a skill's root. An absolute path is accepted only when it lies inside the root (as
 * given or with the root's links resolved) and is then treated as the relative path it names;
 * the relative path's syntax is checked (no `..`, no NUL, no drive letters), then the real path
 * (every symbolic link resolved) is compared with the root's real path, so a link that leaves
 * the skill is refused too.
 *
 * I/O: `fs.promises.realpath` only. Never reads or writes file contents.
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';

export type Confined =
  | { ok: true; relative: string; real: string }
  | { ok: false; reason: 'absolute' | 'parent' | 'invalid' | 'escapes' | 'missing'; message: string };

/** True for a path that is absolute here or on Windows (`/a`, `\\a`, `C:\\a`, `C:/a`). */
export function isAbsolutePath(input: string): boolean {
  return path.isAbsolute(input) || /^(?:[\\/]|[A-Za-z]:)/.test(input);
}

/**
 * The relative path an absolute `input` names inside `root`, or a refusal when it lies outside.
 * The root is compared both as given and with its links resolved, so a path built from either
 * form is accepted; `..` segments are resolved first, so they cannot climb out.
 */
export async function absoluteToRelative(root: string, input: string): Promise<{ ok: true; relative: string } | { ok: false; reason: 'absolute' | 'invalid'; message: string }> {
  if (input.includes('\0')) return { ok: false, reason: 'invalid', message: 'the path must not contain NUL characters' };
  // A drive-letter path on POSIX (or a POSIX one on Windows) names no place under this root.
  if (!path.isAbsolute(input)) return { ok: false, reason: 'absolute', message: `'${input}' is an absolute path of another system; give a path relative to the skill's root` };
  const target = path.resolve(input);
  const roots = [path.resolve(root)];
  try {
    roots.push(await realpath(root));
  } catch {
    // A root that does not exist has no files: the comparison with the root as given decides.
  }
  for (const base of roots) {
    const relative = path.relative(base, target);
    if (relative === '' || relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) continue;
    return { ok: true, relative: relative.split(path.sep).join('/') };
  }
  return { ok: false, reason: 'absolute', message: `'${input}' is an absolute path outside the skill's root; give a path relative to the root, or an absolute path inside it` };
}

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
 * the root. With `allowAbsolute`, an absolute path inside the root is accepted as the relative
 * path it names. A path that does not exist is reported as `missing` (after the syntax checks).
 */
export async function confine(root: string, input: string, options: { allowAbsolute?: boolean } = {}): Promise<Confined> {
  let given = input;
  if (options.allowAbsolute && typeof input === 'string' && isAbsolutePath(input)) {
    const inside = await absoluteToRelative(root, input);
    if (!inside.ok) return inside;
    given = inside.relative;
  }
  const normal = normalizeRelative(given);
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
