/**
 * Escaping for the prompt. Text that comes from a manifest (names, descriptions, paths) is placed
 * inside markdown that a language model reads, so it must not be able to start a heading, a list,
 * a code block or a table, close the tag that wraps a skill's body, or pretend to be the system's
 * own instructions. Inline text is flattened to one line and its markdown and HTML metacharacters
 * are escaped; a body keeps its markdown (it is the skill's own content) but cannot close or open
 * the wrapper it sits in.
 *
 * Pure: no I/O.
 */

/** The tag a skill's body is wrapped in, in prompts and in `load_skill` results. */
export const CONTENT_TAG = 'skill_content';

const INLINE_SPECIALS = /[\\`*_[\]<>#|~]/g;
const HTML = { '<': '&lt;', '>': '&gt;' } as const;

/**
 * One line of inert text: control characters and line breaks become spaces, runs of space
 * collapse, markdown metacharacters are backslash-escaped and `<` `>` become entities. Cut to
 * `maxChars` code points (with `…`) when given.
 */
export function escapeInline(text: string, maxChars?: number): string {
  // eslint-disable-next-line no-control-regex
  let flat = text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').replace(/\s+/g, ' ').trim();
  if (maxChars !== undefined) {
    const chars = [...flat];
    if (chars.length > maxChars) flat = `${chars.slice(0, maxChars - 1).join('')}…`;
  }
  return flat.replace(INLINE_SPECIALS, (ch) => (ch === '<' || ch === '>' ? HTML[ch] : `\\${ch}`));
}

/** A path as a markdown code span that its own backticks or line breaks cannot break out of. */
export function codeSpan(text: string): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f]+/g, ' ');
  const longest = Math.max(0, ...(flat.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = flat.startsWith('`') || flat.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${flat}${pad}${fence}`;
}

/** A skill's body inside `<skill_content name="...">`, with any wrapper tag in it neutralised. */
export function wrapBody(name: string, body: string): string {
  const safe = body.replace(new RegExp(`<(/?)(${CONTENT_TAG})`, 'gi'), '&lt;$1$2');
  const attribute = name.replace(/[&"<>]/g, (ch) => `&#${ch.charCodeAt(0)};`);
  return `<${CONTENT_TAG} name="${attribute}">\n${safe.replace(/\s+$/, '')}\n</${CONTENT_TAG}>`;
}
