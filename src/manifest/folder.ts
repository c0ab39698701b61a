/**
 * The filesystem implementation of a document skill: a folder with a SKILL.md. Loading the
 * folder reads only the front matter — just enough bytes to reach the closing `---` — so a
 * discovery over a thousand skills never reads their bodies. The body, the resource list and the
 * toolsets are read when the skill is activated (`load()`, `loadActions()`).
 *
 * I/O: reads the skill's folder. Never writes.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import type { Diagnostic } from '../core/diagnostics.js';
import type { DocumentSkill, LoadedSkill } from './document.js';
import { manifestError, ManifestError } from './errors.js';
import { frontMatterEnd, normalizeText } from './frontmatter.js';
import { DEFAULT_MAX_MANIFEST_BYTES, inspectSkillManifest, type ParsedManifest } from './parse.js';
import { listResources } from './resources.js';
import { loadToolsets } from './toolsets.js';

/** The manifest file names looked for, in order (the reference validator accepts both). */
export const MANIFEST_NAMES = ['SKILL.md', 'skill.md'] as const;

/** First read: enough for most front matter; doubled until the block closes. */
const CHUNK = 1024;

export interface ManifestHead {
  /** The text read: at least the whole front matter, or the whole file. */
  text: string;
  /** Bytes read from disk. */
  bytesRead: number;
  /** The file's size. */
  size: number;
}

/**
 * Reads the start of a SKILL.md, chunk by chunk, until the front matter is closed (or the file
 * ends); with `whole`, reads the whole file. Files over `maxBytes` are refused with
 * `invalid_manifest`, and so is anything that is not a regular file (a FIFO would never end).
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
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw manifestError('invalid_manifest', `${file}: SKILL.md is not a regular file`, { subject: file });
    const { size } = info;
    if (size > maxBytes) {
      throw manifestError('invalid_manifest', `${file}: SKILL.md is ${size} bytes, over the ${maxBytes}-byte limit`, { subject: file, details: { size, maxBytes } });
    }
    const chunks: Buffer[] = [];
    let bytesRead = 0;
    for (;;) {
      const buffer = Buffer.alloc(Math.min(CHUNK << Math.min(chunks.length, 6), size - bytesRead || CHUNK));
      const got = readSync(fd, buffer, 0, buffer.length, bytesRead);
      if (got === 0) break;
      chunks.push(buffer.subarray(0, got));
      bytesRead += got;
      const text = Buffer.concat(chunks).toString('utf8');
      if (bytesRead >= size || (!whole && frontMatterEnd(normalizeText(text).text) >= 0)) return { text, bytesRead, size };
    }
    return { text: Buffer.concat(chunks).toString('utf8'), bytesRead, size };
  } finally {
    closeSync(fd);
  }
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
  for (const name of MANIFEST_NAMES) {
    const file = path.join(rootPath, name);
    let head: ManifestHead;
    try {
      head = await readManifestHead(file, options.maxManifestBytes);
    } catch (error) {
      if (error instanceof ManifestError) throw error;
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw manifestError('invalid_manifest', `${file}: cannot be read: ${(error as Error).message}`, { subject: file });
    }
    const end = frontMatterEnd(normalizeText(head.text).text);
    const text = end >= 0 ? normalizeText(head.text).text.slice(0, end) : head.text;
    const report = inspectSkillManifest(text, { file, dirName: path.basename(rootPath), maxAliasCount: options.maxAliasCount, maxBytes: options.maxManifestBytes });
    if (!report.parsed || report.errors.length) {
      throw manifestError('invalid_manifest', `${file}: ${report.errors.join('; ')}`, {
        subject: file,
        issues: report.errors.map((message) => ({ path: [], message })),
      });
    }
    return { skill: folderSkill(rootPath, file, report.parsed, options), parsed: report.parsed, diagnostics: report.diagnostics, bytesRead: head.bytesRead };
  }
  throw manifestError('skill_not_found', `${rootPath}: Missing required file: SKILL.md`, { subject: rootPath });
}

/** The `DocumentSkill` of a folder whose front matter is already parsed. */
function folderSkill(rootPath: string, file: string, parsed: ParsedManifest, options: FolderSkillOptions): DocumentSkill {
  const { manifest } = parsed;
  return {
    name: manifest.name,
    description: manifest.description,
    version: manifest.version,
    manifest,
    rootPath,
    file,
    async load(): Promise<LoadedSkill> {
      const head = await readManifestHead(file, options.maxManifestBytes, true);
      const report = inspectSkillManifest(head.text, { file, maxAliasCount: options.maxAliasCount, maxBytes: options.maxManifestBytes });
      if (!report.parsed) throw manifestError('invalid_manifest', `${file}: ${report.errors.join('; ')}`, { subject: file, skill: manifest.name });
      const listed = await listResources(rootPath);
      return { instructions: report.parsed.body, resources: listed.resources, root: rootPath, diagnostics: listed.diagnostics };
    },
    loadActions: () => loadToolsets(rootPath, manifest.toolsets, manifest.name),
  };
}
