/**
 * Document skills as MCP resources and the disclosure as an MCP prompt.
 *
 * Each served skill (see `skill-catalog.ts`) is `skill://<name>/SKILL.md`, listed under its
 * front matter's name and whole description, and each of its files is `skill://<name>/<relative
 * path>`. A read sends the file whole and as it is on disk: `SKILL.md` with its front matter,
 * text (UTF-8 without NUL) as text, anything else as a base64 blob, with a MIME type chosen by
 * content. Only the files the skill's entry lists are read (`..`, absolute paths and links
 * leaving the root are refused). The trust notice and the disclosure's wording belong to the tool
 * path (`load_skill`), not to these resources. A refused or missing path is an MCP error whose
 * data carries the URI and the typed code, never a crash.
 *
 * The prompt `skills` is `disclose(registry, query)`: the text a model would get in its system
 * prompt for that query (the catalog when no query is given).
 *
 * I/O: through the registry and the skills' folders.
 */
import type { GetPromptResult, Prompt, ReadResourceResult, Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import type { DocumentSkillRegistry } from '../index.js';
import { disclose } from '../manifest/disclose.js';
import { confine, normalizeRelative } from '../manifest/confine.js';
import { readServedFile } from './served-file.js';
import { MANIFEST, SKILL_SCHEME, skillFileUri, type SkillCatalog } from './skill-catalog.js';
import { invalidParams, servedAt } from './skills-methods.js';

export { SKILL_SCHEME };

/** The name of the disclosure prompt. */
export const DISCLOSURE_PROMPT = 'skills';
/** With no query, the prompt asks for the catalog (a query disclosure reads as a request for the skill list). */
const LIST_QUERY = 'what skills are available?';

/** The URI of a skill's file (`SKILL.md` for its instructions). */
export function skillResourceUri(skill: string, path: string = MANIFEST): string {
  return skillFileUri(skill, path);
}

/** One resource per served skill: its SKILL.md, named by its front matter. Files are reached through the template. */
export async function listSkillResources(catalog: SkillCatalog): Promise<Resource[]> {
  return (await catalog.list()).map((skill) => ({
    uri: skill.entry.uri,
    name: skill.entry.frontmatter.name,
    description: skill.entry.frontmatter.description,
    mimeType: skill.files.get(MANIFEST)!.mimeType,
    size: skill.files.get(MANIFEST)!.size,
  }));
}

/** The template clients fill in to read any file of a skill. */
export const SKILL_RESOURCE_TEMPLATE: ResourceTemplate = {
  uriTemplate: `${SKILL_SCHEME}{skill}/{+path}`,
  name: 'skill-file',
  description: "A file of a document skill, by its path relative to the skill's root (SKILL.md for its instructions).",
};

/** Reads one file of a served skill, whole; throws an `McpError` whose data names the URI and the typed code. */
export async function readSkillUri(catalog: SkillCatalog, uri: string): Promise<ReadResourceResult> {
  const { skill, path } = await servedAt(catalog, uri);
  if (!skill.files.has(path)) {
    const normal = path === '' ? { ok: true as const } : normalizeRelative(path);
    const code = normal.ok ? 'resource_not_found' : 'resource_refused';
    const why = normal.ok ? `is not a file of skill '${skill.name}' (a folder is read with resources/directory/read)` : `is refused: ${normal.message}`;
    throw invalidParams(`${uri} ${why} [${code}]`, { uri, code, skill: skill.name, subject: path });
  }
  const confined = await confine(skill.root, path);
  if (!confined.ok) throw invalidParams(`${uri} is refused: ${confined.message} [resource_refused]`, { uri, code: 'resource_refused', skill: skill.name, subject: path });
  const { bytes, info: read } = await readServedFile(confined.real);
  return { contents: [read.text ? { uri, mimeType: read.mimeType, text: bytes.toString('utf8') } : { uri, mimeType: read.mimeType, blob: bytes.toString('base64') }] };
}

/** The disclosure prompt, as `prompts/list` describes it. */
export const DISCLOSURE_PROMPT_INFO: Prompt = {
  name: DISCLOSURE_PROMPT,
  description: 'The document skills for a task: the catalog, or the full instructions of the skills the query calls for.',
  arguments: [{ name: 'query', description: 'What the user asked (leave out for the catalog of every skill)', required: false }],
};

/** The disclosure for a query, as one user message. */
export async function disclosurePrompt(registry: DocumentSkillRegistry, query: string | undefined): Promise<GetPromptResult> {
  const shown = await disclose(registry, query?.trim() ? query : LIST_QUERY);
  return {
    description: `tier ${shown.tier}: ${shown.reason}`,
    messages: [{ role: 'user', content: { type: 'text', text: shown.text || 'No document skills are available.' } }],
  };
}
