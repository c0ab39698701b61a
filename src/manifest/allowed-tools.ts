/**
 * A document skill's `allowed-tools`, read the way the Agent Skills specification defines it: the
 * tools the skill pre-approves (they run without asking for approval while it is active). It
 * never restricts anything. This file only reads the entries — a tool name (`*` matches any run
 * of characters), optionally with a specifier in parentheses (`Bash(git:*)`, `Read(./docs/**)`,
 * `run_skill_script(scripts/*.py)`); what an entry pre-approves on a given agent is decided by
 * the model loop (`model/pre-approval.ts`), against the tools that agent offers.
 *
 * Pure: no I/O.
 */
import { diagnostic, type Diagnostic } from '../core/diagnostics.js';

/** One `allowed-tools` entry, read. */
export interface AllowedToolEntry {
  /** The entry as the skill wrote it, such as `Bash(git:*)`. */
  entry: string;
  /** The tool it names (`*` matches any run of characters). */
  tool: string;
  /** What the parentheses hold, when the entry has them: which calls of the tool it covers. */
  specifier?: string;
}

/** The entries of a skill's `allowed-tools`, and a diagnostic for each entry that cannot be read. */
export interface AllowedTools {
  entries: AllowedToolEntry[];
  diagnostics: Diagnostic[];
}

const ENTRY = /^([A-Za-z0-9_*-]+)(?:\((.*)\))?$/s;

/**
 * Reads `skill`'s `allowed-tools` items (as the manifest holds them: the string split at white
 * space, or the list as written). A specifier split at its spaces (`Bash(git diff *)`) is put
 * back together; commas between entries (`Read, Grep`, `Read,Grep`) separate them too. An entry that is neither a
 * tool name nor `Tool(specifier)` pre-approves nothing and gets an `allowed_tools_invalid`
 * warning naming it.
 */
export function parseAllowedTools(skill: string, items: readonly string[]): AllowedTools {
  const entries: AllowedToolEntry[] = [];
  const diagnostics: Diagnostic[] = [];
  for (const text of joinSpecifiers(items)) {
    const match = ENTRY.exec(text);
    const specifier = match?.[2]?.trim();
    if (!match || specifier === '') {
      diagnostics.push(
        diagnostic('warning', 'allowed_tools_invalid', `skill '${skill}': allowed-tools entry '${shown(text)}' is neither a tool name nor Tool(specifier); it pre-approves nothing`, {
          skill,
          subject: shown(text),
        }),
      );
      continue;
    }
    entries.push(specifier === undefined ? { entry: text, tool: match[1]! } : { entry: text, tool: match[1]!, specifier });
  }
  return { entries, diagnostics };
}

/** The items as entries: an item left with an open parenthesis is joined to the next ones until it closes. */
function joinSpecifiers(items: readonly string[]): string[] {
  const joined: string[] = [];
  // The item pieces of the entry being joined, and its parentheses still open: counted item by
  // item, so an unclosed `Tool(` before a long list costs no more than the list.
  let open: string[] = [];
  let unclosed = 0;
  for (const item of items) {
    const piece = item.trim();
    open.push(piece);
    unclosed = depth(piece, unclosed);
    if (unclosed > 0) continue;
    joined.push(...splitAtCommas(open.join(' ')));
    open = [];
  }
  if (open.length) joined.push(open.join(' ').replace(/^,+/, '').trim());
  return joined;
}

/** `entry` cut at its commas outside parentheses: `Read,Grep` is two entries, `Bash(a,b)` one. */
function splitAtCommas(entry: string): string[] {
  const parts: string[] = [];
  let open = 0;
  let start = 0;
  for (let i = 0; i < entry.length; i++) {
    const char = entry[i];
    if (char === '(') open++;
    else if (char === ')' && open > 0) open--;
    else if (char === ',' && open === 0) {
      parts.push(entry.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(entry.slice(start));
  return parts.map((part) => part.trim()).filter(Boolean);
}

/** Parentheses still open after `text`, `open` of them being open before it. */
function depth(text: string, open: number): number {
  for (const char of text) {
    if (char === '(') open++;
    else if (char === ')' && open > 0) open--;
  }
  return open;
}

/** An entry as a diagnostic shows it: an unclosed `Tool(` swallows the rest of the list, which can be long. */
function shown(entry: string): string {
  return entry.length > 200 ? `${entry.slice(0, 200)}… (${entry.length} characters)` : entry;
}
