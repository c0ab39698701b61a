/**
 * Escaping for the prompt. Text that comes from a manifest (names, descriptions, paths) is placed
 * inside markdown that a language model reads, so it must not be able to start a heading, a list,
 * a code block or a table, close the tag that wraps a skill's body, or pretend to be the system's
 * own instructions. Inline text is flattened to one line and its markdown and HTML metacharacters
 * are escaped; a body keeps its markdown (it is the skill's own content) but cannot close or open
 * the wrapper it sits in, whatever variant of the tag it tries (spacing, case, invisible
 * characters, full-width forms).
 *
 * Pure: no I/O.
 */

/** The tag a skill's body is wrapped in, in prompts and in `load_skill` results. */
export const CONTENT_TAG = 'skill_content';

// `＜` `﹤` `＞` `﹥` are folded into `<` and `>` by NFKC, and read as them.
const INLINE_SPECIALS = /[\\`*_[\]<>#|~\uFE64\uFE65\uFF1C\uFF1E]/g;
const HTML: Record<string, string> = { '<': '&lt;', '>': '&gt;', '\uFE64': '&lt;', '\uFF1C': '&lt;', '\uFE65': '&gt;', '\uFF1E': '&gt;' };

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
  return flat.replace(INLINE_SPECIALS, (ch) => HTML[ch] ?? `\\${ch}`);
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

/** `<` and the characters NFKC folds into it. */
const LESS_THAN = /[<\uFE64\uFF1C]/g;
/** What a reader skips inside a tag: white space, invisible (default-ignorable) and control characters. */
const SKIPPED_IN_TAG = /^[\s\p{Default_Ignorable_Code_Point}\p{Cc}]$/u;
const TAG_NAMES = [`/${CONTENT_TAG}`, CONTENT_TAG];

/**
 * True when the text after a `<` at `at` reads as the wrapper's tag name, opening or closing,
 * once white space and invisible characters are skipped, compatibility forms folded (NFKC:
 * `／`, `ｓ`, `＿`...) and case ignored: `< /skill_content>`, `</ SKILL_content >`,
 * `<\u200b/skill_content>`, `＜／ｓｋｉｌｌ＿ｃｏｎｔｅｎｔ＞` all do.
 */
function readsAsWrapperTag(text: string, at: number): boolean {
  let read = '';
  for (let i = at + 1; i < text.length; ) {
    const ch = String.fromCodePoint(text.codePointAt(i)!);
    i += ch.length;
    if (SKIPPED_IN_TAG.test(ch)) continue;
    read += ch.normalize('NFKC').toLowerCase();
    if (TAG_NAMES.some((name) => read.startsWith(name))) return true;
    if (!TAG_NAMES.some((name) => name.startsWith(read))) return false;
  }
  return false;
}

/**
 * A body with every `<` that starts something a reader would take for the wrapper's tag (any
 * spacing, case, invisible characters or compatibility forms) turned into `&lt;`; the rest of
 * the body is untouched.
 */
export function neutralizeWrapperTags(body: string): string {
  return body.replace(LESS_THAN, (ch, at: number) => (readsAsWrapperTag(body, at) ? '&lt;' : ch));
}

/** A skill's body inside `<skill_content name="...">`, with anything read as the wrapper's tag in it neutralised. */
export function wrapBody(name: string, body: string): string {
  const safe = neutralizeWrapperTags(body);
  const attribute = name.replace(/[&"<>]/g, (ch) => `&#${ch.charCodeAt(0)};`);
  return `<${CONTENT_TAG} name="${attribute}">\n${safe.trimEnd()}\n</${CONTENT_TAG}>`;
}
