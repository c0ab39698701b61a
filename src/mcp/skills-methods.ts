/**
 * The Skills extension's methods on an MCP server: `skills/list` (paged by an opaque cursor, a
 * skill's entry never split across pages), `skills/get` (any served skill, listed or not) and
 * `resources/directory/read` (the direct children of a skill's folder or of a folder in it).
 * Unknown URIs, URIs that are not a `SKILL.md` or not a folder, and bad cursors are `-32602`
 * errors whose `data.uri` names the URI.
 *
 * I/O: through the catalog only.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, type Resource } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { MANIFEST, parseSkillUri, skillFileUri, type ServedSkill, type SkillCatalog, type SkillExtensionEntry } from './skill-catalog.js';
import { protocolError } from './protocol-error.js';
import { handleRequest } from './request-handler.js';

/** Skills per `skills/list` page. */
export const SKILLS_PAGE_SIZE = 100;
/** Children per `resources/directory/read` page. */
export const DIRECTORY_PAGE_SIZE = 500;
/** How long a host may hold a listing or an entry before asking again (a hint, not an integrity property). */
const CACHE_HINT = { ttlMs: 60_000, cacheScope: 'public' } as const;
const DIRECTORY_MIME = 'inode/directory';

const cursorParams = z.object({ cursor: z.string().optional() }).loose().optional();
const ListSkillsRequest = z.object({ method: z.literal('skills/list'), params: cursorParams });
const GetSkillRequest = z.object({ method: z.literal('skills/get'), params: z.object({ uri: z.string() }).loose() });
const ReadDirectoryRequest = z.object({ method: z.literal('resources/directory/read'), params: z.object({ uri: z.string(), cursor: z.string().optional() }).loose() });

/** A `-32602` (invalid params) for a handler to throw; `data` names the culprit (`uri`, `cursor`). */
export function invalidParams(message: string, data: Record<string, unknown>): Error {
  return protocolError(ErrorCode.InvalidParams, message, data);
}

/** An opaque cursor for the item at `offset`. */
function cursorAt(offset: number): string {
  return Buffer.from(`skillstate:${offset}`).toString('base64url');
}

/** The offset a cursor stands for; an error naming the cursor when it is not one of ours. */
function offsetOf(cursor: string | undefined, extra: Record<string, unknown> = {}): number {
  if (cursor === undefined) return 0;
  const match = /^skillstate:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!match) throw invalidParams(`the cursor '${cursor}' was not given by this server`, { cursor, ...extra });
  return Number(match[1]);
}

/** One page of `items` from `cursor`, with the next page's cursor when there is one. */
function page<T>(items: readonly T[], cursor: string | undefined, size: number, extra: Record<string, unknown> = {}): { items: T[]; nextCursor?: string } {
  const offset = offsetOf(cursor, extra);
  const end = offset + size;
  return end < items.length ? { items: items.slice(offset, end), nextCursor: cursorAt(end) } : { items: items.slice(offset) };
}

/** The served skill a URI names and the path in it, or the `-32602` that names the URI. */
export async function servedAt(catalog: SkillCatalog, uri: string): Promise<{ skill: ServedSkill; path: string }> {
  const parsed = parseSkillUri(uri);
  const found = parsed && (await catalog.get(parsed.skill));
  if (!parsed || !found) throw invalidParams(`No skill is served at ${uri}`, { uri, code: 'unknown_skill' });
  if ('skipped' in found) throw invalidParams(`No skill is served at ${uri}: ${found.skipped.message}`, { uri, code: 'skill_not_served', reason: found.skipped.details?.reason });
  return { skill: found, path: parsed.path };
}

/** The direct children of a folder of a skill (`''` for its root), as directory-read resources. */
export function directoryChildren(skill: ServedSkill, folder: string): Resource[] | undefined {
  const prefix = folder === '' ? '' : `${folder}/`;
  const files: Resource[] = [];
  const folders = new Set<string>();
  for (const [relative, info] of skill.files) {
    if (!relative.startsWith(prefix)) continue;
    const rest = relative.slice(prefix.length);
    const slash = rest.indexOf('/');
    if (slash >= 0) folders.add(rest.slice(0, slash));
    else files.push({ uri: skillFileUri(skill.name, relative), name: rest, mimeType: info.mimeType, size: info.size });
  }
  if (folder !== '' && files.length === 0 && folders.size === 0) return undefined;
  const directories = [...folders].map((name) => ({ uri: skillFileUri(skill.name, `${prefix}${name}`), name, mimeType: DIRECTORY_MIME }));
  return [...directories, ...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Answers the extension's methods on `server` from `catalog`. */
export function serveSkillsExtension(server: Server, catalog: SkillCatalog): void {
  handleRequest(server, ListSkillsRequest, async (request) => {
    // A page is a window on the registry's skills: those left out of it make it shorter, never split an entry.
    const { skills, next } = await catalog.page(offsetOf(request.params?.cursor), SKILLS_PAGE_SIZE);
    const entries: SkillExtensionEntry[] = skills.map((skill) => skill.entry);
    return { resultType: 'complete', skills: entries, ...(next === undefined ? {} : { nextCursor: cursorAt(next) }), ...CACHE_HINT };
  });
  handleRequest(server, GetSkillRequest, async (request) => {
    const { uri } = request.params;
    const { skill, path } = await servedAt(catalog, uri);
    if (path !== MANIFEST || uri !== skill.entry.uri) throw invalidParams(`${uri} is not the URI of a skill's SKILL.md; this skill's is ${skill.entry.uri}`, { uri });
    return { resultType: 'complete', skill: skill.entry, ...CACHE_HINT };
  });
  handleRequest(server, ReadDirectoryRequest, async (request) => {
    const { uri, cursor } = request.params;
    const { skill, path } = await servedAt(catalog, uri);
    const children = directoryChildren(skill, path);
    if (!children || uri !== skillFileUri(skill.name, path)) throw invalidParams(`${uri} is not a directory resource`, { uri });
    const { items, nextCursor } = page(children, cursor, DIRECTORY_PAGE_SIZE, { uri });
    return { resultType: 'complete', resources: items, ...(nextCursor ? { nextCursor } : {}) };
  });
}
