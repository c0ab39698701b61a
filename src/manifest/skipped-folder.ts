/**
 * Folders passed over while searching for skill folders, and why. Discovery (`discoverSkills`)
 * and tree validation (`skillstate validate <parent>`) search folders the same way, and both
 * report every folder they did not look into, in the same words and at the same level: a hidden
 * folder or `node_modules` is information, a folder past the depth limit a warning, a folder that
 * cannot be read an error.
 *
 * Pure: no I/O.
 */
import path from 'node:path';
import { diagnostic, type Diagnostic, type DiagnosticLevel } from '../core/diagnostics.js';

/** Why a folder was not searched, with what the message needs for each reason. */
export type FolderSkip =
  /** Its name starts with a dot. */
  | { reason: 'hidden' }
  /** `node_modules` or `.git`: never searched. */
  | { reason: 'ignored' }
  /** It lies more than `maxDepth` levels below `root`. */
  | { reason: 'too_deep'; maxDepth: number; root: string }
  /** Searched, and neither it nor any folder in it holds a SKILL.md. */
  | { reason: 'no_skill_md' }
  /** Its real path was already searched under another name (a link cycle or a second link). */
  | { reason: 'already_seen'; real: string; firstSeen: string }
  /** It, or its SKILL.md, could not be read (permissions, an I/O error). */
  | { reason: 'unreadable'; error: string };

/** The reasons a folder can be passed over by the search. */
export type FolderSkipReason = FolderSkip['reason'];

/** A folder that was not searched: where, why, and how much it matters. */
export interface SkippedFolder {
  dir: string;
  skip: FolderSkip;
  /** `info` for what is skipped by design; `warning` or `error` when a skill may have been missed. */
  level: DiagnosticLevel;
  /** `<dir> skipped: <why>`. */
  message: string;
}

const IGNORED_NAMES: ReadonlySet<string> = new Set(['node_modules', '.git']);

/** Whether the search passes over a folder of this name without looking into it (`hidden`, `ignored`), or undefined. */
export function neverSearched(name: string): 'hidden' | 'ignored' | undefined {
  if (IGNORED_NAMES.has(name)) return 'ignored';
  return name.startsWith('.') ? 'hidden' : undefined;
}

type SkipWords = { [R in FolderSkipReason]: { level: DiagnosticLevel; why: (dir: string, skip: Extract<FolderSkip, { reason: R }>) => string } };

const WORDS: SkipWords = {
  hidden: { level: 'info', why: () => 'hidden folder' },
  ignored: { level: 'info', why: (dir) => `'${path.basename(dir)}' folders are never searched` },
  too_deep: { level: 'warning', why: (_dir, skip) => `deeper than ${skip.maxDepth} levels below ${skip.root}` },
  no_skill_md: { level: 'info', why: () => 'no SKILL.md in it or in its folders' },
  already_seen: { level: 'info', why: (_dir, skip) => `it is ${skip.real}, already visited as ${skip.firstSeen} (a link cycle or a second link)` },
  unreadable: { level: 'error', why: (_dir, skip) => `cannot be read: ${skip.error}` },
};

/** Describes a skipped folder: its level and its message. */
export function skippedFolder(dir: string, skip: FolderSkip): SkippedFolder {
  const words = WORDS[skip.reason] as { level: DiagnosticLevel; why: (dir: string, skip: FolderSkip) => string };
  return { dir, skip, level: words.level, message: `${dir} skipped: ${words.why(dir, skip)}` };
}

/** A skipped folder as a `skill_skipped` diagnostic (`details.reason` and the reason's own fields). */
export function skippedFolderDiagnostic(skipped: SkippedFolder): Diagnostic {
  const { reason, ...fields } = skipped.skip;
  return diagnostic(skipped.level, 'skill_skipped', skipped.message, { subject: skipped.dir, details: { reason, ...fields } });
}

/**
 * Why a skill asked for by `name` is not there when a folder of that name was passed over (its
 * SKILL.md broken, say): the skipped folder's message, from the registry's diagnostics.
 */
export function skippedFolderNamed(diagnostics: readonly Diagnostic[], name: string): string | undefined {
  return diagnostics.find((note) => note.code === 'skill_skipped' && note.level !== 'info' && typeof note.subject === 'string' && path.basename(note.subject) === name)?.message;
}
