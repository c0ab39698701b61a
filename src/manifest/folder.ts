/**
 * The filesystem implementation of a document skill: a folder with a SKILL.md. Loading the
 * folder reads only the front matter — just enough bytes to reach the closing `---` — so a
 * discovery over a thousand skills never reads their bodies. The body, the resource list and the
 * toolsets are read when the skill is activated (`load()`, `loadActions()`).
 *
 * I/O: reads the skill's folder. Never writes.
 */
import { closeSync, existsSync, lstatSync, readlinkSync, readSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { diagnostic, type Diagnostic } from '../core/diagnostics.js';
import { isInside } from './confine.js';
import type { DocumentSkill, LoadedSkill } from './document.js';
import { manifestError, ManifestError } from './errors.js';
import { frontMatterEnd, normalizeText } from './frontmatter.js';
import { DEFAULT_MAX_MANIFEST_BYTES, inspectSkillManifest, type ParsedManifest } from './parse.js';
import { NotRegularFileError, openRegularFileSync } from './regular.js';
import { listResources } from './resources.js';
import { loadToolsets } from './toolsets.js';
import { invalidUtf8Offset } from './utf8.js';

/** The manifest file names looked for, in order (the reference validator accepts both). */
export const MANIFEST_NAMES = ['SKILL.md', 'skill.md'] as const;

/**
 * The warning for a folder holding both `SKILL.md` and `skill.md` as two files: `SKILL.md` is the
 * manifest and `skill.md` is never read, which its author should know. Undefined when there is
 * at most one (on a case-insensitive file system both names are the same file).
 */
export function bothManifestsDiagnostic(dir: string, skill?: string): Diagnostic | undefined {
  const [used, ignored] = MANIFEST_NAMES.map((name) => path.join(dir, name)) as [string, string];
  let a: ReturnType<typeof statSync>;
  let b: ReturnType<typeof statSync>;
  try {
    a = statSync(used);
    b = statSync(ignored);
  } catch {
    return undefined;
  }
  if (a.ino === b.ino && a.dev === b.dev) return undefined;
  return diagnostic('warning', 'manifest_file_ignored', `${dir} holds both SKILL.md and skill.md: SKILL.md is used and skill.md is ignored; remove or rename one`, {
    subject: ignored,
    skill,
    details: { used, ignored },
  });
}

/** First read: enough for most front matter; doubled until the block closes. */
const CHUNK = 1024;

export interface ManifestHead {
  /** The text read: at least the whole front matter, or the whole file. */
  text: string;
  /** Bytes read from disk. */
  bytesRead: number;
  /** The file's size. */
  size: number;
  /** Offset of the first byte that is not valid UTF-8 (read as U+FFFD in `text`), if any. */
  invalidUtf8At: number | undefined;
}

/**
 * Reads the start of a SKILL.md, chunk by chunk, until the front matter is closed (or the file
 * ends); with `whole`, reads the whole file. Files over `maxBytes` are refused with
 * `invalid_manifest`, and so is anything that is not a regular file (a FIFO, a socket, a device,
 * a folder named SKILL.md), without waiting on it. Bytes that are not UTF-8 are located and
 * reported in `invalidUtf8At`.
 */
export async function readManifestHead(file: string, maxBytes = DEFAULT_MAX_MANIFEST_BYTES, whole = false): Promise<ManifestHead> {
  return readManifestHeadSync(file, maxBytes, whole);
}

/**
 * `readManifestHead`, synchronously: a few small reads of a local file take microseconds, far
 * less than a round trip through the I/O thread pool each, which is what made discovery of a
 * thousand skills slow. Opened non-blocking so that a FIFO cannot hang the process.
 */
export function readManifestHeadSync(file: string, maxBytes = DEFAULT_MAX_MANIFEST_BYTES, whole = false): ManifestHead {
  let opened: ReturnType<typeof openRegularFileSync>;
  try {
    opened = openRegularFileSync(file);
  } catch (error) {
    if (error instanceof NotRegularFileError) {
      throw manifestError('invalid_manifest', `${file}: is a ${error.kind}, not a regular file; it is not read`, { subject: file, details: { reason: 'not_a_file', kind: error.kind } });
    }
    throw error;
  }
  const { fd, info } = opened;
  try {
    const { size } = info;
    if (size > maxBytes) {
      throw manifestError('invalid_manifest', `${file}: SKILL.md is ${size} bytes, over the ${maxBytes}-byte limit`, { subject: file, details: { size, maxBytes } });
    }
    const chunks: Buffer[] = [];
    let bytesRead = 0;
    const done = (complete: boolean): ManifestHead => {
      const bytes = Buffer.concat(chunks);
      const invalid = invalidUtf8Offset(bytes, complete);
      return { text: bytes.toString('utf8'), bytesRead, size, invalidUtf8At: invalid < 0 ? undefined : invalid };
    };
    for (;;) {
      const buffer = Buffer.alloc(Math.min(CHUNK << Math.min(chunks.length, 6), size - bytesRead || CHUNK));
      const got = readSync(fd, buffer, 0, buffer.length, bytesRead);
      if (got === 0) break;
      chunks.push(buffer.subarray(0, got));
      bytesRead += got;
      if (bytesRead >= size) return done(true);
      if (!whole && frontMatterEnd(normalizeText(Buffer.concat(chunks).toString('utf8')).text) >= 0) return done(false);
    }
    return done(true);
  } finally {
    closeSync(fd);
  }
}

/** The warning for a SKILL.md holding bytes that are not UTF-8: names the file and the offset. */
export function invalidUtf8Diagnostic(file: string, offset: number, skill?: string): Diagnostic {
  return diagnostic('warning', 'manifest_invalid_utf8', `${file}: byte ${offset} is not valid UTF-8; invalid bytes were read as U+FFFD`, {
    subject: file,
    skill,
    details: { file, offset },
  });
}

export interface FolderSkillOptions {
  maxManifestBytes?: number;
  maxAliasCount?: number;
}

export interface FolderSkillResult {
  skill: DocumentSkill;
  parsed: ParsedManifest;
  diagnostics: Diagnostic[];
  bytesRead: number;
}

/**
 * Loads a skill folder's front matter (leniently) into a `DocumentSkill`. Throws a
 * `ManifestError` (`invalid_manifest`, naming the file) when it cannot be used, and
 * `skill_not_found` when the folder has no SKILL.md.
 */
export async function loadSkillFolder(dir: string, options: FolderSkillOptions = {}): Promise<FolderSkillResult> {
  const rootPath = path.resolve(dir);
  let brokenLink: string | undefined;
  for (const name of MANIFEST_NAMES) {
    const file = path.join(rootPath, name);
    let head: ManifestHead;
    try {
      head = await readManifestHead(file, options.maxManifestBytes);
    } catch (error) {
      if (error instanceof ManifestError) throw error;
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        brokenLink ??= danglingLink(file);
        continue;
      }
      throw manifestError('invalid_manifest', `${file}: cannot be read: ${(error as Error).message}`, { subject: file });
    }
    assertManifestInside(file, rootPath);
    const text = frontMatterText(head.text);
    const report = inspectSkillManifest(text, { file, dirName: path.basename(rootPath), maxAliasCount: options.maxAliasCount, maxBytes: options.maxManifestBytes });
    if (!report.parsed || report.errors.length) {
      throw manifestError('invalid_manifest', `${file}: ${report.errors.join('; ')}`, {
        subject: file,
        issues: report.errors.map((message) => ({ path: [], message })),
      });
    }
    const diagnostics = report.diagnostics;
    if (head.invalidUtf8At !== undefined) diagnostics.push(invalidUtf8Diagnostic(file, head.invalidUtf8At, report.parsed.manifest.id));
    const both = name === MANIFEST_NAMES[0] ? bothManifestsDiagnostic(rootPath, report.parsed.manifest.id) : undefined;
    if (both) diagnostics.push(both);
    return { skill: folderSkill(rootPath, file, report.parsed, text, options), parsed: report.parsed, diagnostics, bytesRead: head.bytesRead };
  }
  // A manifest that is a link to nothing is a skill the author meant to ship: skipped, and said so.
  if (brokenLink !== undefined) throw brokenLinkError(brokenLink);
  throw manifestError('skill_not_found', `${rootPath}: Missing required file: SKILL.md`, { subject: rootPath });
}

/**
 * Refuses a SKILL.md that is a symbolic link leading out of its skill's folder: it is read under
 * the rule of the skill's other files, which are never read through a link that leaves the folder
 * (a cloned project could otherwise link its SKILL.md to any file of the user's that starts with
 * front matter, and have it shown to a model). A link inside the folder, or a linked folder, is fine.
 */
function assertManifestInside(file: string, rootPath: string): void {
  let real: string;
  let root: string;
  try {
    if (!lstatSync(file).isSymbolicLink()) return;
    real = realpathSync(file);
    root = realpathSync(rootPath);
  } catch {
    return; // Gone since it was read: the next read reports it.
  }
  if (isInside(root, real)) return;
  throw manifestError('invalid_manifest', `${file}: is a symbolic link to ${real}, outside the skill's folder ${root}; the skill is not loaded (a skill's files are read only inside its folder)`, {
    subject: file,
    details: { reason: 'escapes', target: real },
  });
}

/** The path of a manifest that is a symbolic link whose target does not exist, or undefined. */
function danglingLink(file: string): string | undefined {
  try {
    return lstatSync(file).isSymbolicLink() ? file : undefined;
  } catch {
    return undefined;
  }
}

/** The error of a manifest that is a broken symbolic link: names the link and where it points. */
function brokenLinkError(file: string): ManifestError {
  let target = '?';
  try {
    target = readlinkSync(file);
  } catch {
    // Gone since: the message still names the link.
  }
  return manifestError('invalid_manifest', `${file}: is a symbolic link to ${target}, which does not exist; the skill is not loaded`, {
    subject: file,
    details: { reason: 'broken_link', target },
  });
}

/**
 * The `skill_not_found` error of a skill whose SKILL.md (or whole folder) went away after it was
 * discovered, or undefined when `error` is another failure. Said in the words a person acts on:
 * what is missing, and how to bring the skill back or have it forgotten.
 */
function goneSince(error: unknown, file: string, rootPath: string, skill: string): ManifestError | undefined {
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== 'ENOENT' && code !== 'ENOTDIR') return undefined;
  const what = existsSync(rootPath) ? file : `its folder ${rootPath}`;
  return manifestError(
    'skill_not_found',
    `skill '${skill}' is no longer on disk: ${what} was removed after the skill was discovered; it cannot be loaded until it is put back (a rescan of the skill folders stops offering the skill)`,
    { skill, subject: file },
    error,
  );
}

/** The front matter block of a SKILL.md's text (delimiters included), or the whole text when it has none. */
function frontMatterText(raw: string): string {
  const { text } = normalizeText(raw);
  const end = frontMatterEnd(text);
  return end >= 0 ? text.slice(0, end) : raw;
}

/**
 * The `DocumentSkill` of a folder whose front matter is already parsed (`frontMatter`, as read).
 * Loading reads the body then; a front matter changed meanwhile is not taken up (the registry
 * reads it again on `refresh()` or when watching), and loading says so. A SKILL.md or folder
 * deleted meanwhile is `skill_not_found`, saying so.
 */
function folderSkill(rootPath: string, file: string, parsed: ParsedManifest, frontMatter: string, options: FolderSkillOptions): DocumentSkill {
  const { manifest } = parsed;
  return {
    name: manifest.id,
    description: manifest.description,
    version: manifest.version,
    manifest,
    rootPath,
    file,
    async load(): Promise<LoadedSkill> {
      let head: ManifestHead;
      try {
        head = await readManifestHead(file, options.maxManifestBytes, true);
      } catch (error) {
        throw goneSince(error, file, rootPath, manifest.id) ?? error;
      }
      assertManifestInside(file, rootPath);
      const report = inspectSkillManifest(head.text, { file, maxAliasCount: options.maxAliasCount, maxBytes: options.maxManifestBytes });
      if (!report.parsed) throw manifestError('invalid_manifest', `${file}: ${report.errors.join('; ')}`, { subject: file, skill: manifest.id });
      const listed = await listResources(rootPath).catch((error: unknown) => {
        throw goneSince(error, file, rootPath, manifest.id) ?? error;
      });
      const diagnostics = head.invalidUtf8At === undefined ? listed.diagnostics : [invalidUtf8Diagnostic(file, head.invalidUtf8At, manifest.id), ...listed.diagnostics];
      if (frontMatterText(head.text) !== frontMatter) {
        diagnostics.unshift(
          diagnostic('warning', 'skill_changed_on_disk', `${file}: the front matter changed since skill '${manifest.id}' was discovered; the body is read as it is now, the name, description and other fields as they were (refresh() or watch() reads them again)`, {
            skill: manifest.id,
            subject: file,
          }),
        );
      }
      return { instructions: report.parsed.body, resources: listed.resources, root: rootPath, diagnostics };
    },
    loadActions: () => loadToolsets(rootPath, manifest.toolsets, manifest.id),
  };
}
