/**
 * The identifier a document skill is registered, disclosed and loaded under. It is the skill's
 * name as written whenever that name can be one (1 to 64 letters of any script, their marks,
 * digits, `_` or `-`, starting with a letter or digit). Published skills also carry names that
 * cannot (`Active Directory Attacks`, `my.skill`, `-draft`, a name over 64 characters); the
 * client implementation guide says to warn and load them, so they get an identifier derived
 * from the name, and lookups by the name as written, or by its NFKC form, still find them.
 *
 * Pure: no I/O.
 */
import { SKILL_NAME } from '../core/skill.js';

/** The longest identifier, in code points (the specification's name limit). */
const MAX_IDENTIFIER_LENGTH = 64;

/**
 * The identifier for a skill named `name`: the name itself when it is a valid skill name, else
 * the name NFKC-normalised and lowercased, every run of characters an identifier cannot hold
 * (spaces, dots, symbols) made one hyphen, leading hyphens and underscores dropped, cut to 64
 * code points, trailing hyphens dropped. Undefined when nothing usable is left (`...`).
 */
export function skillIdentifier(name: string): string | undefined {
  if (SKILL_NAME.test(name)) return name;
  const hyphenated = name
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}_-]+/gu, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-_\p{M}]+/u, '');
  const derived = [...hyphenated].slice(0, MAX_IDENTIFIER_LENGTH).join('').replace(/-+$/, '');
  return SKILL_NAME.test(derived) ? derived : undefined;
}

/** The form two skill names are compared in for lookup: NFKC, so `ﬁle` is found as `file`. */
export function lookupKey(name: string): string {
  return name.normalize('NFKC');
}
