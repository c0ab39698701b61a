/**
 * Rendering disclosed skills in the injection format — `## Agent Skills`, the
 * `### Skill Catalog`, the `### Critical Rules for Using Skills` on path resolution, then
 * `### Skill Details` with each skill's `**Root Path:**` and its body — within a budget. The
 * root path is shown absolute, relative to the workspace or not at all (`rootPath`), and the
 * path rule's wording follows that choice, so it never tells the model to use a path it was not
 * given or a tool that would refuse it. When the text does not fit, it is cut in grades, each cut
 * reported: catalog entries of skills not shown in full go first, then bodies are shortened
 * (lowest-ranked first, preloaded skills last), then whole skills are dropped, and as a last
 * resort only the breadcrumb is left.
 *
 * An untrusted skill's body is shown after the notice saying why its tools are missing
 * (`bodyForModel`); the budget shortens the body, never the notice.
 *
 * Pure: no I/O. Every manifest-supplied string goes through `escape.ts`.
 */
import path from 'node:path';
import { codeSpan, escapeInline, wrapBody } from './escape.js';
import type { SkillEntry, SkillSourceKind } from './skill-entry.js';
import { bodyForModel } from './trust.js';

/** How the disclosure shows a skill's folder to the model. */
export type RootPathMode = 'absolute' | 'relative' | 'hidden';

/** Where skill folders are shown from, shared by `disclose` and `renderDisclosure`. */
export interface RootPathOptions {
  /**
   * How each skill's folder appears under `**Root Path:**`, and what the path rule tells the model:
   * - `'absolute'` (default): the folder's absolute path on this machine; the rule says to read
   *   files with `read_skill_resource` (relative paths, or absolute ones inside the root) and,
   *   for other tools, to join Root Path and relative path;
   * - `'relative'`: the folder relative to `workspace`, so the machine's layout above it is not
   *   shown; the rule says the joined path is relative to the workspace;
   * - `'hidden'`: no folder at all; the rule says to read files with `read_skill_resource` only.
   */
  rootPath?: RootPathMode;
  /** The folder `'relative'` paths start from (default: the process's working directory). */
  workspace?: string;
}

const RULES_HEADING = '### Critical Rules for Using Skills';
const RELATIVE_PATHS = '> Skill instructions use relative paths (e.g., `./scripts/run.sh` or `scripts/run.sh`) to refer to the skill\'s own files.';
const READ_TOOL =
  '> To read one, call `read_skill_resource` with the skill\'s name and the path as written there, relative to the skill\'s root (e.g., `scripts/run.sh`).';

function joinExamples(root: string, result: string): string {
  return `> **Examples:**
>
> 1. Root Path: \`${root}\`
>    Relative: \`./scripts/run.sh\`
>    Result: \`${result}\`
>
> 2. Root Path: \`${root}\`
>    Relative: \`scripts/run.sh\`
>    Result: \`${result}\``;
}

/** The path rule for each way of showing root paths; each names only what that way offers. */
export const PATH_RULES: Readonly<Record<RootPathMode, string>> = {
  absolute: `${RULES_HEADING}

> **Paths in a skill are relative to its Root Path**
>
${RELATIVE_PATHS}
${READ_TOOL} An absolute path inside the skill's Root Path works too.
> Other tools that take file paths (a shell, an editor) resolve relative paths against the User's Workspace, not the skill directory.
> With those tools, convert the path to ABSOLUTE:
> \`Root Path\` + \`Relative Path\` = \`Absolute Path\`
>
${joinExamples('/path/to/skill', '/path/to/skill/scripts/run.sh')}`,
  relative: `${RULES_HEADING}

> **Paths in a skill are relative to its Root Path**
>
${RELATIVE_PATHS}
${READ_TOOL}
> Each Root Path below is relative to the User's Workspace. Other tools that take file paths (a shell, an editor) resolve relative paths against the Workspace, not the skill directory.
> With those tools, join the two:
> \`Root Path\` + \`Relative Path\` = \`Path in the Workspace\`
>
${joinExamples('skills/my-skill', 'skills/my-skill/scripts/run.sh')}`,
  hidden: `${RULES_HEADING}

> **Read skill files with \`read_skill_resource\`**
>
${RELATIVE_PATHS}
${READ_TOOL}
> The skills' folders are not shown: other tools that take file paths (a shell, an editor) cannot reach these files.`,
};

/** The path rule with absolute root paths (the default). */
export const CRITICAL_RULES = PATH_RULES.absolute;

/** A budget for the rendered text, in characters or estimated tokens (4 characters each). */
export interface Budget {
  chars?: number;
  tokens?: number;
}

/** Something the budget removed. */
export interface Cut {
  kind: 'catalog_entries' | 'body_truncated' | 'skill_dropped' | 'breadcrumb_only';
  skill?: string;
  /** Catalog entries removed, or characters of a body removed. */
  count: number;
}

/** One catalog entry: a skill's name and what catalogs show of it (`SkillEntry.briefDescription`). */
export interface CatalogLine {
  name: string;
  description: string;
}

export interface DetailBlock {
  name: string;
  rootPath: string | undefined;
  /** The skill's own body; budget cuts shorten it, never the untrusted notice put before it. */
  body: string;
  preloaded: boolean;
  /** Where the skill comes from (named in the untrusted notice). */
  source: SkillSourceKind;
  /** False for an untrusted skill: its body is shown after the notice. */
  trusted: boolean;
  /** The MCP server and URI of a skill served over MCP (named in the notice). */
  origin?: SkillEntry['origin'];
}

export interface RenderInput extends RootPathOptions {
  tier: 1 | 2 | 3;
  /** Skills available in total (the breadcrumb's N). */
  available: number;
  catalog: CatalogLine[];
  /** Skills not in `catalog` (named by a "more skills" line). */
  omitted: number;
  /** The catalog lists the most relevant first: the "more skills" line says to search with a query. */
  ranked?: boolean;
  details: DetailBlock[];
}

/** Characters to tokens, the usual estimate of four characters per token. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export function breadcrumb(available: number): string {
  return `[${available} skill${available === 1 ? '' : 's'} available]`;
}

const MIN_BODY_CHARS = 200;

function renderText(input: RenderInput): string {
  if (input.tier === 1) return breadcrumb(input.available);
  const parts = ['## Agent Skills', '### Skill Catalog'];
  const lines = input.catalog.map((line) => `- **${escapeInline(line.name)}**: ${escapeInline(line.description)}`);
  if (input.omitted > 0) {
    const more = `- … ${input.omitted} more skill${input.omitted === 1 ? '' : 's'}`;
    lines.push(input.ranked ? `${more}, less relevant to this request: call \`list_skills\` with a query to find them` : `${more}: call \`list_skills\` to see them`);
  }
  parts.push(lines.join('\n') || '(none)');
  if (!input.details.length) {
    parts.push('To load a skill, use the `load_skill` tool.');
    return `${parts.join('\n\n')}\n`;
  }
  const mode = input.rootPath ?? 'absolute';
  parts.push('To load a skill not shown in detail below, use the `load_skill` tool.', PATH_RULES[mode], '### Skill Details');
  for (const detail of input.details) {
    parts.push(`#### ${escapeInline(detail.name)}`);
    if (mode !== 'hidden') parts.push(`**Root Path:** ${shownRoot(detail.rootPath, mode, input.workspace)}`);
    parts.push(wrapBody(detail.name, bodyForModel(detail, detail.body)));
  }
  return `${parts.join('\n\n')}\n`;
}

/** A skill's folder as the `**Root Path:**` line shows it. */
function shownRoot(rootPath: string | undefined, mode: 'absolute' | 'relative', workspace: string | undefined): string {
  if (!rootPath) return '(none: this skill lives in memory; read its files with `read_skill_resource`)';
  if (mode === 'absolute') return codeSpan(rootPath);
  const relative = path.relative(workspace ?? process.cwd(), rootPath).split(path.sep).join('/');
  return codeSpan(relative === '' ? '.' : relative);
}

function limitOf(budget: Budget | undefined): number {
  const limits = [budget?.chars, budget?.tokens === undefined ? undefined : budget.tokens * 4].filter((n): n is number => typeof n === 'number');
  return limits.length ? Math.max(0, Math.min(...limits)) : Infinity;
}

/**
 * Renders the disclosure, cutting it to the budget in grades. Returns the text and every cut.
 * `catalogBudget` bounds the catalog part alone (the text before the rules and the details):
 * entries of skills not shown in full are cut from the end of the catalog, which lists the most
 * relevant first, and the "more skills" line says how many.
 */
export function renderDisclosure(input: RenderInput, budget: Budget = {}, catalogBudget?: Budget): { text: string; cuts: Cut[]; catalog: string[] } {
  const limit = limitOf(budget);
  const state: RenderInput = { ...input, catalog: [...input.catalog], details: input.details.map((d) => ({ ...d })) };
  const cuts: Cut[] = [];
  const names = () => (input.tier === 1 ? [] : state.catalog.map((line) => line.name));
  const shown = new Set(state.details.map((d) => d.name));
  const lineLength = (line: CatalogLine) => escapeInline(line.name).length + escapeInline(line.description).length + 8;
  let removed = 0;
  /** Drops catalog entries of skills not shown in full, from the end, until `measure()` fits `max`. */
  const cutCatalog = (measure: () => number, max: number) => {
    let size = measure();
    while (size > max) {
      let overflow = size - max;
      const drop = new Set<number>();
      for (let i = state.catalog.length - 1; i >= 0 && overflow > 0; i--) {
        if (shown.has(state.catalog[i]!.name)) continue;
        drop.add(i);
        overflow -= lineLength(state.catalog[i]!);
      }
      if (!drop.size) break;
      state.catalog = state.catalog.filter((_, i) => !drop.has(i));
      state.omitted += drop.size;
      removed += drop.size;
      size = measure();
    }
  };

  // 0. The catalog within its own budget. A long catalog is first cut to the lines that can fit,
  // so that a thousand skills are not all escaped and rendered only to be dropped.
  const catalogLimit = input.tier === 1 ? Infinity : limitOf(catalogBudget);
  if (catalogLimit < Infinity) {
    let total = 0;
    let kept = 0;
    // Once a line does not fit, none after it is measured: only skills shown in full stay.
    const keep = state.catalog.filter((line) => {
      if (!shown.has(line.name) && total > catalogLimit) return false;
      const length = lineLength(line) + 1;
      const fits = shown.has(line.name) || (total += length) <= catalogLimit;
      if (fits) kept += length;
      return fits;
    });
    removed += state.catalog.length - keep.length;
    state.omitted += state.catalog.length - keep.length;
    state.catalog = keep;
    // The headings, the "more skills" line and the closing line take under 300 characters.
    if (kept + 300 > catalogLimit) cutCatalog(() => renderText({ ...state, details: [] }).length, catalogLimit);
  }
  let text = renderText(state);

  // 1. Catalog entries of skills not shown in full, from the end.
  if (text.length > limit) cutCatalog(() => (text = renderText(state)).length, limit);
  if (removed) cuts.push({ kind: 'catalog_entries', count: removed });
  if (text.length <= limit) return { text, cuts, catalog: names() };

  // 2. Shorten bodies, lowest-ranked first, preloaded last; 3. then drop whole skills.
  const order = () => [...state.details].reverse().sort((a, b) => Number(a.preloaded) - Number(b.preloaded));
  for (const detail of order()) {
    if (text.length <= limit) break;
    const full = detail.body;
    const note = (cutChars: number) => `\n\n[… ${cutChars} characters cut: call \`load_skill\` with "${detail.name}" for the full text]`;
    let keep = full.length;
    // The first estimate cannot see everything (white space the wrapper trims from the end, the
    // note's own digits): what is still over is cut in another pass, down to the minimum.
    while (text.length > limit && keep > MIN_BODY_CHARS) {
      keep = Math.max(MIN_BODY_CHARS, keep - (text.length - limit) - (keep === full.length ? note(full.length).length : 0));
      detail.body = `${full.slice(0, keep)}${note(full.length - keep)}`;
      text = renderText(state);
    }
    if (keep < full.length) cuts.push({ kind: 'body_truncated', skill: detail.name, count: full.length - keep });
  }
  for (const detail of order()) {
    if (text.length <= limit) break;
    state.details = state.details.filter((d) => d !== detail);
    cuts.push({ kind: 'skill_dropped', skill: detail.name, count: 1 });
    text = renderText(state);
  }
  if (text.length > limit) {
    cuts.push({ kind: 'breadcrumb_only', count: state.catalog.length });
    return { text: breadcrumb(input.available), cuts, catalog: [] };
  }
  return { text, cuts, catalog: names() };
}
