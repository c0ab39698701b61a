/**
 * Document skills as MCP resources and the disclosure as an MCP prompt.
 *
 * Each skill of the registry is `skill://<name>/SKILL.md` (its instructions: the body without front
 * matter, as `load_skill` returns it), and each file of the skill is `skill://<name>/<relative
 * path>`, read with `readSkillResource`: the same confinement as the `read_skill_resource` tool
 * (`..`, absolute paths and links leaving the skill's root are refused), the same size cap, binary
 * files described rather than sent as text. A refused or missing path is an MCP error carrying the
 * typed code, never a crash.
 *
 * The prompt `skills` is `disclose(registry, query)`: the text a model would get in its system
 * prompt for that query (the catalog when no query is given).
 *
 * I/O: through the registry only.
 */
import { ErrorCode, type McpError, type GetPromptResult, type Prompt, type ReadResourceResult, type Resource, type ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import { disclose } from '../manifest/disclose.js';
import { SkillstateError, type DocumentSkillRegistry } from '../index.js';
import { readSkillResource } from '../manifest/resources.js';
import { bodyForModel } from '../manifest/trust.js';
import { protocolError } from './protocol-error.js';

/** The URI scheme of skill resources. */
export const SKILL_SCHEME = 'skill://';
/** The name of the disclosure prompt. */
export const DISCLOSURE_PROMPT = 'skills';
const MANIFEST = 'SKILL.md';
/** With no query, the prompt asks for the catalog (a query disclosure reads as a request for the skill list). */
const LIST_QUERY = 'what skills are available?';

/** The URI of a skill's file (`SKILL.md` for its instructions). */
export function skillResourceUri(skill: string, path: string = MANIFEST): string {
  return `${SKILL_SCHEME}${encodeURIComponent(skill)}/${path.split('/').map(encodeURIComponent).join('/')}`;
}

/** One resource per enabled skill: its SKILL.md. Files are reached through the template. */
export function listSkillResources(registry: DocumentSkillRegistry): Resource[] {
  return registry.entries().map((entry) => ({
    uri: skillResourceUri(entry.name),
    name: `${entry.name}/${MANIFEST}`,
    title: entry.name,
    description: entry.briefDescription,
    mimeType: 'text/markdown',
  }));
}

/** The template clients fill in to read any file of a skill. */
export const SKILL_RESOURCE_TEMPLATE: ResourceTemplate = {
  uriTemplate: `${SKILL_SCHEME}{skill}/{+path}`,
  name: 'skill-file',
  description: "A file of a document skill, by its path relative to the skill's root (SKILL.md for its instructions).",
};

function invalid(message: string, data: Record<string, unknown>): McpError {
  return protocolError(ErrorCode.InvalidParams, message, data);
}

/** Splits `skill://<name>/<path>`; percent-escapes are decoded. */
function parseUri(uri: string): { skill: string; path: string } {
  if (!uri.startsWith(SKILL_SCHEME)) throw invalid(`'${uri}' is not a skill resource: skill resources are ${SKILL_SCHEME}<skill>/<path>`, { code: 'resource_not_found', subject: uri });
  const rest = uri.slice(SKILL_SCHEME.length);
  const slash = rest.indexOf('/');
  if (slash <= 0 || slash === rest.length - 1) throw invalid(`'${uri}' names no file: use ${SKILL_SCHEME}<skill>/<path>`, { code: 'resource_not_found', subject: uri });
  try {
    return { skill: decodeURIComponent(rest.slice(0, slash)), path: decodeURIComponent(rest.slice(slash + 1)) };
  } catch {
    throw invalid(`'${uri}' has a malformed percent-escape`, { code: 'resource_not_found', subject: uri });
  }
}

/** Reads one skill resource; throws an `McpError` whose data names the typed code. */
export async function readSkillUri(registry: DocumentSkillRegistry, uri: string, maxBytes: number | undefined): Promise<ReadResourceResult> {
  const { skill, path } = parseUri(uri);
  if (!registry.has(skill)) {
    throw invalid(`no skill named '${skill}'; available skills: ${registry.names().join(', ') || '(none)'}`, { code: 'unknown_skill', skill });
  }
  try {
    const loaded = await registry.content(skill);
    if (path === MANIFEST) return { contents: [{ uri, mimeType: 'text/markdown', text: bodyForModel(registry.entry(skill)!, loaded.instructions) }] };
    const content = await readSkillResource(skill, loaded, path, maxBytes === undefined ? {} : { maxBytes });
    const text = content.binary
      ? `[binary file of ${content.size ?? 'unknown'} bytes: not shown]`
      : `${content.text ?? ''}${content.truncated ? `\n[cut at ${maxBytes ?? 'the size limit'} bytes]` : ''}`;
    return { contents: [{ uri, mimeType: content.binary ? 'text/plain' : mimeOf(path), text }] };
  } catch (error) {
    if (error instanceof SkillstateError) throw invalid(`${error.message} [${error.code}]`, { code: error.code, skill, subject: path });
    throw error;
  }
}

function mimeOf(path: string): string {
  if (path.endsWith('.md')) return 'text/markdown';
  if (path.endsWith('.json')) return 'application/json';
  return 'text/plain';
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
