/**
 * Resources: the files of a skill besides its SKILL.md, listed when the skill is loaded and read
 * only when asked for. `readSkillResource` is what the `read_skill_resource` tool and the
 * `skillstate read` command use: a path relative to the skill's root, or an absolute path inside
 * it (`..`, paths outside the root and links leaving it are refused), regular files only (a FIFO,
 * socket or device is refused without being opened for a blocking read), binary files reported
 * rather than dumped, size capped, and a missing file answered with the list of files that exist
 * (and the likely one, when only the letter case differs).
 *
 * I/O: reads the skill's folder. Never writes, never follows a path outside the skill's root.
 */
import type { Dirent, Stats } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { diagnostic, type Diagnostic } from '../core/diagnostics.js';
import { absoluteToRelative, confine, isAbsolutePath, isInside, normalizeRelative } from './confine.js';
import type { LoadedSkill, ResourceReadOptions, SkillResource } from './document.js';
import { ManifestError, manifestError } from './errors.js';
import { fileKind, NotRegularFileError, openRegularFile } from './regular.js';
import { invalidUtf8Offset } from './utf8.js';

export const DEFAULT_MAX_RESOURCE_BYTES = 256 * 1024;
export const MAX_LISTED_RESOURCES = 1000;
/** Entries not offered that are named one by one; the rest are counted in one more diagnostic. */
export const MAX_SKIPPED_NAMED = 100;
const MAX_LIST_DEPTH = 8;
const SKIPPED = new Set(['node_modules', '.git']);

/** A resource read from disk, checked to stay inside `root` every time it is read. */
export function fileResource(root: string, relative: string, size?: number): SkillResource {
  return {
    size,
    async read(options: ResourceReadOptions = {}) {
      const confined = await confine(root, relative);
      if (!confined.ok) {
        const code = confined.reason === 'missing' ? 'resource_not_found' : 'resource_refused';
        throw manifestError(code, confined.message, { subject: relative, details: { reason: confined.reason } });
      }
      let opened: Awaited<ReturnType<typeof openRegularFile>>;
      try {
        opened = await openRegularFile(confined.real);
      } catch (error) {
        if (!(error instanceof NotRegularFileError)) throw error;
        throw manifestError('resource_refused', `'${relative}' is a ${error.kind}, not a regular file; it is not read`, { subject: relative, details: { reason: 'not_a_file', kind: error.kind } });
      }
      const { handle, info } = opened;
      try {
        const limit = Math.min(info.size, options.maxBytes ?? info.size);
        const buffer = Buffer.alloc(limit);
        let offset = 0;
        while (offset < limit) {
          const { bytesRead } = await handle.read(buffer, offset, limit - offset, offset);
          if (bytesRead === 0) break;
          offset += bytesRead;
        }
        return buffer.subarray(0, offset);
      } finally {
        await handle.close();
      }
    },
  };
}

/**
 * Lists the files under a skill's root (SKILL.md excluded), following links that stay inside
 * the root. Hidden entries, `node_modules` and `.git` are not listed; links leaving the root,
 * link cycles, folders that cannot be listed, files that cannot be looked at (a permission, a
 * file removed meanwhile) and lists past 1,000 files are reported, and the rest is listed.
 */
export async function listResources(root: string): Promise<{ resources: Map<string, SkillResource>; diagnostics: Diagnostic[] }> {
  const resources = new Map<string, SkillResource>();
  const diagnostics: Diagnostic[] = [];
  const realRoot = await realpath(root);
  const seen = new Set<string>([realRoot]);
  // Set once the list is full: the walk stops there, with one diagnostic.
  let listFull = false;
  // Entries not offered: the first ones are named, the rest counted (a folder of thousands of
  // links out of the skill gives a hundred and one warnings, not thousands).
  let named = 0;
  let unnamed = 0;
  const skipped = (message: string, subject: string) => {
    if (named++ < MAX_SKIPPED_NAMED) diagnostics.push(diagnostic('warning', 'resource_skipped', message, { subject }));
    else unnamed++;
  };
  // `resolved`: `dir` is its own real path (no link on the way from the root), so an entry of it
  // that is not a link is its own real path too and needs no `realpath`.
  const walk = async (dir: string, prefix: string, depth: number, resolved: boolean): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    } catch (error) {
      const folder = prefix ? `'${prefix}'` : "the skill's folder";
      skipped(`${folder} cannot be listed (${reasonOf(error)}); its files are not offered`, dir);
      return;
    }
    for (const entry of entries) {
      if (listFull) return;
      const name = entry.name;
      if (name.startsWith('.') || SKIPPED.has(name)) continue;
      const relative = prefix ? `${prefix}/${name}` : name;
      if (!prefix && (name === 'SKILL.md' || name === 'skill.md')) continue;
      const full = path.join(dir, name);
      const plain = resolved && (entry.isFile() || entry.isDirectory());
      let real = full;
      if (!plain) {
        try {
          real = await realpath(full);
        } catch (error) {
          const why = (error as NodeJS.ErrnoException).code === 'ELOOP' ? 'is a link in a cycle of links' : (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'is a broken link' : `cannot be resolved (${reasonOf(error)})`;
          skipped(`'${relative}' ${why}; it is not offered`, full);
          continue;
        }
      }
      if (!isInside(realRoot, real)) {
        skipped(`'${relative}' links outside the skill's root (to '${real}'); it is not offered`, full);
        continue;
      }
      let info: Stats | undefined;
      try {
        info = plain && entry.isDirectory() ? undefined : await stat(real);
      } catch (error) {
        // Removed since it was listed, or in a folder that can be listed but not searched.
        skipped(`'${relative}' cannot be read (${reasonOf(error)}); it is not offered`, full);
        continue;
      }
      if (info === undefined || info.isDirectory()) {
        if (seen.has(real)) continue;
        seen.add(real);
        if (depth >= MAX_LIST_DEPTH) {
          skipped(`'${relative}' is nested deeper than ${MAX_LIST_DEPTH} levels; not listed`, full);
          continue;
        }
        await walk(full, relative, depth + 1, plain);
      } else if (info.isFile()) {
        if (resources.size >= MAX_LISTED_RESOURCES) {
          diagnostics.push(diagnostic('warning', 'resource_skipped', `more than ${MAX_LISTED_RESOURCES} files; '${relative}' and later ones are not listed`, { subject: full }));
          listFull = true;
          return;
        }
        resources.set(relative, fileResource(root, relative, info.size));
      } else {
        skipped(`'${relative}' is a ${fileKind(info)}, not a regular file; it is not offered`, full);
      }
    }
  };
  await walk(realRoot, '', 0, true);
  if (unnamed) diagnostics.push(diagnostic('warning', 'resource_skipped', `${unnamed} more entries are not offered either (only the first ${MAX_SKIPPED_NAMED} are named)`, { subject: root, details: { unnamed } }));
  return { resources, diagnostics };
}

/** Why a file system call failed, as its message says (`EACCES: permission denied, stat '…'`). */
function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** One resource of a document skill as read: its text (possibly cut) or why it was refused. */
export interface ResourceContent {
  path: string;
  /** Size in bytes of the whole resource (when known). */
  size: number | undefined;
  binary: boolean;
  /** The text, when the resource is text; up to `maxBytes`. */
  text: string | undefined;
  truncated: boolean;
}

/**
 * True when bytes are not text: a NUL byte anywhere, or anything that is not valid UTF-8. All of
 * the bytes are checked, so text is never returned with U+FFFD in place of what it held. With
 * `complete: false` (the bytes are the start of a longer file), a character cut off by the end
 * is not counted against them.
 */
export function looksBinary(bytes: Uint8Array, complete = true): boolean {
  return bytes.includes(0) || invalidUtf8Offset(bytes, complete) >= 0;
}

function trimPartialUtf8(bytes: Uint8Array): number {
  let end = bytes.length;
  for (let back = 1; back <= 3 && end - back >= 0; back++) {
    const byte = bytes[end - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needed > back ? end - back : end;
  }
  return end;
}

/**
 * Reads one resource of a loaded skill by a path relative to its root, or by an absolute path
 * inside the root (for a skill with a folder). Throws a `ManifestError`: `resource_refused` for
 * `..`, paths outside the root, links leaving it and files that are not regular files;
 * `resource_not_found` listing the files that exist.
 */
export async function readSkillResource(
  skill: string,
  loaded: LoadedSkill,
  requested: string,
  options: { maxBytes?: number } = {},
): Promise<ResourceContent> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_RESOURCE_BYTES;
  let relative = requested;
  if (typeof requested === 'string' && loaded.root !== undefined && isAbsolutePath(requested)) {
    // The disclosure shows root paths and tells the model it may join them: accept the result.
    const inside = await absoluteToRelative(loaded.root, requested);
    if (!inside.ok) throw manifestError('resource_refused', `skill '${skill}': ${inside.message}`, { skill, subject: requested, details: { reason: inside.reason } });
    relative = inside.relative;
  }
  const normal = normalizeRelative(relative);
  if (!normal.ok) {
    throw manifestError('resource_refused', `skill '${skill}': ${normal.message}`, { skill, subject: requested, details: { reason: normal.reason } });
  }
  const resource = loaded.resources.get(normal.relative);
  if (!resource && loaded.root !== undefined) {
    const confined = await confine(loaded.root, normal.relative);
    if (!confined.ok && confined.reason === 'escapes') {
      throw manifestError('resource_refused', `skill '${skill}': '${normal.relative}' leads outside the skill's root (through a symbolic link); only files inside it can be read`, {
        skill,
        subject: normal.relative,
        details: { reason: 'escapes' },
      });
    }
    if (confined.ok) {
      const info = await stat(confined.real);
      if (!info.isFile() && !info.isDirectory()) {
        throw manifestError('resource_refused', `skill '${skill}': '${normal.relative}' is a ${fileKind(info)}, not a regular file; it is not read`, {
          skill,
          subject: normal.relative,
          details: { reason: 'not_a_file', kind: fileKind(info) },
        });
      }
    }
  }
  if (!resource) {
    const available = [...loaded.resources.keys()];
    const lower = normal.relative.toLowerCase();
    const likely = available.find((key) => key.toLowerCase() === lower);
    const hint = likely ? ` Did you mean '${likely}'?` : '';
    throw manifestError(
      'resource_not_found',
      `skill '${skill}' has no resource '${normal.relative}'.${hint} Available: ${available.length ? available.join(', ') : '(none)'}`,
      { skill, subject: normal.relative, details: { available, likely } },
    );
  }
  let content: Uint8Array | string;
  try {
    content = await resource.read({ maxBytes: maxBytes + 1 });
  } catch (error) {
    if (error instanceof ManifestError && error.code.startsWith('resource_')) {
      throw manifestError(error.code, `skill '${skill}': ${error.message}`, { skill, subject: normal.relative, details: error.details });
    }
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM') {
      // It is there, and this process may not read it: not a missing file.
      throw manifestError('resource_refused', `skill '${skill}': '${normal.relative}' may not be read: ${(error as Error).message}`, { skill, subject: normal.relative, details: { reason: 'unreadable' } });
    }
    throw manifestError('resource_not_found', `skill '${skill}': '${normal.relative}' could not be read: ${(error as Error).message}`, { skill, subject: normal.relative });
  }
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  const size = resource.size ?? (bytes.byteLength <= maxBytes ? bytes.byteLength : undefined);
  // Text or binary is decided on exactly the bytes that would be returned, all of them.
  const truncated = bytes.byteLength > maxBytes;
  const shown = truncated ? bytes.subarray(0, maxBytes) : bytes;
  if (looksBinary(shown, !truncated)) return { path: normal.relative, size, binary: true, text: undefined, truncated: false };
  const kept = truncated ? shown.subarray(0, trimPartialUtf8(shown)) : shown;
  return { path: normal.relative, size, binary: false, text: Buffer.from(kept).toString('utf8'), truncated };
}
