/**
 * Progressive disclosure (four tiers, rendered in the injection format of `render.ts`): given the
 * registry and the user's query, decide how much of the skills a language model should see.
 *
 * - Tier 0 — nothing: there are no skills (no catalog, and no `load_skill` tool either).
 * - Tier 1 — a breadcrumb, `[N skills available]`: skills exist, all have triggers, none match.
 * - Tier 2 — the catalog (names and whole descriptions, "Use when…" included, or each
 *   `brief_description` where the author gives one): the user asks what the agent can do or
 *   to list skills, or some skills have no triggers (so they could never be reached otherwise);
 *   the catalog then lists the skills most relevant to the query first (`rank.ts`).
 * - Tier 3 — the full bodies of the top matches (default 3): by triggers, ranked by explicit
 *   mention of the skill's name, then the longest exact trigger phrase, then recent use, then
 *   name; or, when no trigger matches, skills without triggers whose relevance stands a clear
 *   margin above the rest.
 *
 * The catalog is held to a budget of its own (default about 1,500 tokens): the least relevant
 * entries are cut, and a line says how many and how to find them. Skills marked
 * `disable-model-invocation` are never disclosed.
 *
 * Preloaded skills (named, or given by path and registered on the spot) are always shown in full.
 * Skills with `default_enabled: false` are left out unless enabled by name. `planDisclosure` is
 * the synchronous decision; `disclose` also reads the bodies it needs and renders the text.
 *
 * I/O: only reading bodies (and preloaded folders) through the registry.
 */
import { diagnostic, type Diagnostic } from '../core/diagnostics.js';
import { describeValue } from '../core/plain.js';
import { optionsProblem } from '../core/options.js';
import { ManifestError, manifestError } from './errors.js';
import { DEFAULT_MAX_QUERY_CHARS, rankMatches, TriggerIndex, type SkillUsage, type TriggerMatch } from './match.js';
import { RelevanceIndex, strongMatches, type RelevanceScore } from './rank.js';
import type { DocumentSkillRegistry } from './document-registry.js';
import type { SkillEntry } from './skill-entry.js';
import { estimateTokens, renderDisclosure, type Budget, type Cut, type RootPathOptions } from './render.js';

/** The catalog's default budget: about 1,500 tokens, whatever the number of skills. */
export const DEFAULT_CATALOG_BUDGET: Readonly<Budget> = Object.freeze({ tokens: 1500 });

/** How much of the skills a disclosure shows: from a catalog of names to full bodies. */
export type Tier = 0 | 1 | 2 | 3;

/** Queries that ask what the agent can do, or for the list of skills. */
export const CATALOG_QUERY =
  /\b(?:what (?:can|could) you do|what are you able to do|what do you know how to do|what are your (?:skills|capabilities|abilities)|(?:list|show)(?: me)?(?: all| your| the| available)* skills|(?:which|what) skills|available skills|your capabilities)\b/i;

/** Options of `disclose`: the query, the budget, the skills to enable, disable or preload. */
export interface DiscloseOptions extends RootPathOptions {
  /** How many matching skills to show in full (default 3). */
  maxSkills?: number;
  /** Skills always shown in full: registry names, or folders (registered on the spot). */
  preload?: readonly string[];
  /** Recent use per skill (larger = more recent), the third ranking key. */
  usage?: SkillUsage;
  budget?: Budget;
  /** Only this much of the query is matched against (default 4,096 characters). */
  maxQueryChars?: number;
  /** Skills with `default_enabled: false` to include anyway. */
  enable?: readonly string[];
  /** What counts as asking for the catalog (default `CATALOG_QUERY`). */
  catalogQuery?: RegExp;
  /** Earlier turns of the conversation, oldest first: their words rank skills, weighing less than the query's. */
  recent?: readonly string[];
  /**
   * Budget for the catalog part of the text (default `DEFAULT_CATALOG_BUDGET`, about 1,500
   * tokens): the least relevant entries are cut first, and a line says how many and how to list
   * them. `budget` bounds the whole text.
   */
  catalogBudget?: Budget;
  /**
   * When no trigger matches, a skill without triggers is shown in full if its relevance score is
   * at least this many times the next skill's (default 1.5).
   */
  margin?: number;
}

/** The options `disclose` takes: one entry per key of `DiscloseOptions`. */
const DISCLOSE_OPTIONS = {
  rootPath: true,
  workspace: true,
  maxSkills: true,
  preload: true,
  usage: true,
  budget: true,
  maxQueryChars: true,
  enable: true,
  catalogQuery: true,
  recent: true,
  catalogBudget: true,
  margin: true,
} as const satisfies Record<keyof DiscloseOptions, true>;

/** The decision, before any body is read. */
export interface DisclosurePlan {
  tier: Tier;
  /** Skills that can be disclosed (enabled ones). */
  available: SkillEntry[];
  /** Every matching skill, ranked. */
  matches: TriggerMatch[];
  /** Skills to show in full, in order: preloaded first, then the top matches. */
  detailed: string[];
  /** Relevance of the skills to the query (those sharing a word with it), best first. */
  relevance: RelevanceScore[];
  /** The catalog's order: skills shown in full, then by relevance, then by name. */
  ranked: string[];
  preloaded: string[];
  queryTruncated: boolean;
  /** Why this tier. */
  reason: string;
}

/** What `disclose` returns: the text to put in front of a model, the tier chosen and what was cut. */
export interface Disclosure extends DisclosurePlan {
  /** The exact text for the model ('' at tier 0). */
  text: string;
  chars: number;
  /** Estimated tokens (four characters each). */
  tokens: number;
  /** Names in the rendered catalog. */
  catalog: string[];
  /** What the budget removed. */
  cuts: Cut[];
  /** Whether to offer the `load_skill` tool (false at tier 0). */
  offerTools: boolean;
  diagnostics: Diagnostic[];
}

interface Indexed {
  key: string;
  available: SkillEntry[];
  index: TriggerIndex;
  /** Built on first use: registries whose skills all have triggers rarely need it. */
  relevance: RelevanceIndex | undefined;
  /** The registry's `headingsRevision` the relevance index has taken in. */
  headings: number;
  /** Each available skill's place in `available` (name order). */
  position: Map<string, number>;
  /** Whether each available skill declares triggers. */
  triggered: Uint8Array;
}

const indexCache = new WeakMap<DocumentSkillRegistry, Indexed>();

/** Skills disclosure may show: enabled (or enabled by name), and not reserved to explicit loading. */
function disclosable(registry: DocumentSkillRegistry, enable: readonly string[]): SkillEntry[] {
  return registry.entries({ includeDisabled: true }).filter((entry) => entry.modelInvocable && (entry.enabled || enable.includes(entry.name)));
}

function indexFor(registry: DocumentSkillRegistry, enable: readonly string[]): Indexed {
  const key = `${registry.revision}\u0000${enable.join('\u0000')}`;
  const cached = indexCache.get(registry);
  if (cached && cached.key === key) return cached;
  const available = disclosable(registry, enable);
  const built: Indexed = {
    key,
    available,
    index: new TriggerIndex(available),
    relevance: undefined,
    headings: -1,
    position: new Map(available.map((entry, i) => [entry.name, i])),
    triggered: Uint8Array.from(available, (entry) => Number(hasTriggers(entry))),
  };
  indexCache.set(registry, built);
  return built;
}

/** The relevance index of the registry's disclosable skills, with every body heading read so far. */
function relevanceFor(registry: DocumentSkillRegistry, indexed: Indexed): RelevanceIndex {
  indexed.relevance ??= new RelevanceIndex(indexed.available, (name) => registry.headings(name));
  if (indexed.headings !== registry.headingsRevision) {
    if (indexed.headings >= 0) {
      for (const entry of indexed.available) {
        const headings = registry.headings(entry.name);
        if (headings !== undefined) indexed.relevance.setHeadings(entry.name, headings);
      }
    }
    indexed.headings = registry.headingsRevision;
  }
  return indexed.relevance;
}

/**
 * Ranks the registry's disclosable skills against `query` (and earlier turns, weighing less):
 * every skill sharing a word with them, best first. What `list_skills` answers with a query.
 */
export function rankSkills(registry: DocumentSkillRegistry, query: string, options: Pick<DiscloseOptions, 'enable' | 'recent' | 'maxQueryChars'> = {}): RelevanceScore[] {
  const indexed = indexFor(registry, options.enable ?? []);
  const max = options.maxQueryChars ?? DEFAULT_MAX_QUERY_CHARS;
  const text = typeof query === 'string' ? query.slice(0, max) : '';
  return relevanceFor(registry, indexed).rank(text, (options.recent ?? []).map((turn) => (typeof turn === 'string' ? turn.slice(0, max) : '')));
}

/** Catalog order: the given names first, then by relevance, then the rest by name. */
function catalogOrder(first: readonly string[], relevance: readonly RelevanceScore[], indexed: Indexed): string[] {
  const { available, position } = indexed;
  const listed = new Uint8Array(available.length);
  // Sized once: every available skill is listed, plus any of `first` that is not available.
  const order: string[] = new Array<string>(available.length + first.length);
  let n = 0;
  for (const name of first) {
    order[n++] = name;
    const at = position.get(name);
    if (at !== undefined) listed[at] = 1;
  }
  for (const item of relevance) {
    const at = position.get(item.name)!;
    if (!listed[at]) (listed[at] = 1), (order[n++] = item.name);
  }
  for (let at = 0; at < available.length; at++) if (!listed[at]) order[n++] = available[at]!.name;
  order.length = n;
  return order;
}

/** Decides the tier and the skills to show for `query`. Synchronous: preloaded names must be registered. */
export function planDisclosure(registry: DocumentSkillRegistry, query: string, options: DiscloseOptions = {}): DisclosurePlan {
  const indexed = indexFor(registry, options.enable ?? []);
  const { available, index } = indexed;
  const preloaded = (options.preload ?? []).filter((name) => registry.has(name));
  const maxQuery = options.maxQueryChars ?? DEFAULT_MAX_QUERY_CHARS;
  const text = typeof query === 'string' ? query : '';
  const found = index.match(text, maxQuery);
  const matches = rankMatches(found.matches.values(), options.usage);
  let relevance: RelevanceScore[] = [];
  /** `whole`: the catalog lists every skill (most relevant first), not only those shown in full. */
  const plan = (tier: Tier, reason: string, top: string[] = [], whole = false): DisclosurePlan => {
    const detailed = [...preloaded, ...top.filter((name) => !preloaded.includes(name))];
    return {
      tier: detailed.length ? 3 : tier,
      available,
      matches,
      detailed,
      relevance,
      ranked: whole ? catalogOrder(detailed, relevance, indexed) : detailed,
      preloaded,
      queryTruncated: found.truncated,
      reason: detailed.length && tier !== 3 ? `${reason}; preloaded skills shown in full` : reason,
    };
  };
  if (!available.length) return plan(0, 'no skills');
  const bounded = text.length > maxQuery ? text.slice(0, maxQuery) : text;
  const catalogAsked = (options.catalogQuery ?? CATALOG_QUERY).test(bounded);
  // Asked for the catalog, the user wants all of it: it stays in name order.
  if (!catalogAsked && !matches.length && index.untriggered > 0) relevance = rankSkills(registry, text, options);
  if (catalogAsked) return plan(2, 'the query asks what the agent can do', [], true);
  if (matches.length) return plan(3, 'triggers match the query', matches.slice(0, options.maxSkills ?? 3).map((m) => m.name));
  if (index.untriggered > 0) {
    const strong = strongMatches(relevance, { margin: options.margin, max: options.maxSkills ?? 3 }).filter((item) => !indexed.triggered[indexed.position.get(item.name)!]);
    if (strong.length) {
      const names = strong.map((item) => item.name);
      return plan(3, `${names.map((name) => `'${name}'`).join(', ')} clearly ${names.length === 1 ? 'matches' : 'match'} the query best (relevance)`, names, true);
    }
    const why = `${index.untriggered} skill${index.untriggered === 1 ? ' has' : 's have'} no triggers`;
    return plan(2, relevance.length ? `${why}; the catalog lists the most relevant first` : why, [], true);
  }
  return plan(1, 'no trigger matches the query');
}

function hasTriggers(entry: SkillEntry): boolean {
  const { keywords, verbs, patterns } = entry.triggers;
  return keywords.length > 0 || verbs.length > 0 || patterns.length > 0;
}

/**
 * Registers the folders among `preload` (entries containing a path separator, or starting with
 * `.` or `~`) and returns every entry's registry name. Unknown names throw `skill_not_found`.
 */
export async function preloadSkills(registry: DocumentSkillRegistry, preload: readonly string[]): Promise<string[]> {
  const names: string[] = [];
  for (const item of preload) {
    if (registry.has(item)) names.push(item);
    else if (/[\\/]/.test(item) || item.startsWith('.') || item.startsWith('~')) {
      const dir = item.startsWith('~') ? item.replace(/^~/, process.env.HOME ?? '~') : item;
      names.push((await registry.registerPath(dir)).name);
    } else await registry.content(item); // throws skill_not_found, listing the available names
  }
  return names;
}

/**
 * Discloses the registry's skills for `query`: decides the tier, reads the bodies it shows and
 * renders the injection format within the budget. Throws `invalid_options` for a query that is
 * not a string or an option `DiscloseOptions` does not have.
 */
export async function disclose(registry: DocumentSkillRegistry, query: string, options: DiscloseOptions = {}): Promise<Disclosure> {
  if (typeof query !== 'string') {
    throw manifestError('invalid_options', `disclose takes the query as a string (the user's message; '' for none), got ${describeValue(query)}`, { subject: 'query', details: { option: 'query', value: describeValue(query) } });
  }
  // A misspelled `budjet` would leave the text unbounded, without a word.
  const unknown = optionsProblem('disclose', options, DISCLOSE_OPTIONS, '{ budget: { tokens: 2000 } }');
  if (unknown) throw new ManifestError(unknown);
  const diagnostics: Diagnostic[] = [];
  const preload = options.preload?.length ? await preloadSkills(registry, options.preload) : [];
  const plan = planDisclosure(registry, query, { ...options, preload });
  if (plan.queryTruncated) {
    const max = options.maxQueryChars ?? DEFAULT_MAX_QUERY_CHARS;
    diagnostics.push(diagnostic('info', 'query_truncated', `the query has ${query.length} characters; only the first ${max} were matched against triggers`, { details: { length: query.length, max } }));
  }
  if (plan.tier === 0) return { ...plan, text: '', chars: 0, tokens: 0, catalog: [], cuts: [], offerTools: false, diagnostics };
  // The available skills by name from the index the plan was made with: a map of them all,
  // built per call, cost more than the rest of the call over 1,000 skills.
  const { position } = indexFor(registry, options.enable ?? []);
  const entryOf = (name: string): SkillEntry => {
    const at = position.get(name);
    return at === undefined ? registry.entry(name)! : plan.available[at]!;
  };
  const details = await Promise.all(
    plan.detailed.map(async (name) => {
      const entry = entryOf(name);
      const loaded = await registry.content(name);
      return { name, rootPath: entry.rootPath, body: loaded.instructions, preloaded: plan.preloaded.includes(name), source: entry.source, trusted: entry.trusted, ...(entry.origin ? { origin: entry.origin } : {}) };
    }),
  );
  const catalogEntries = plan.ranked.map(entryOf);
  const omitted = Math.max(0, plan.available.length - catalogEntries.filter((entry) => position.has(entry.name)).length);
  const rendered = renderDisclosure(
    {
      tier: plan.tier,
      available: plan.available.length,
      catalog: catalogEntries.map((entry) => ({ name: entry.name, description: entry.briefDescription })),
      omitted,
      ranked: plan.relevance.length > 0,
      details,
      rootPath: options.rootPath,
      workspace: options.workspace,
    },
    options.budget,
    options.catalogBudget ?? DEFAULT_CATALOG_BUDGET,
  );
  for (const cut of rendered.cuts) {
    diagnostics.push(diagnostic('warning', 'disclosure_cut', describeCut(cut), { skill: cut.skill, details: { kind: cut.kind, count: cut.count } }));
  }
  return { ...plan, text: rendered.text, chars: rendered.text.length, tokens: estimateTokens(rendered.text), catalog: rendered.catalog, cuts: rendered.cuts, offerTools: true, diagnostics };
}

function describeCut(cut: Cut): string {
  switch (cut.kind) {
    case 'catalog_entries':
      return `the budget left ${cut.count} skill${cut.count === 1 ? '' : 's'} out of the catalog`;
    case 'body_truncated':
      return `the budget cut ${cut.count} characters from the body of skill '${cut.skill}'`;
    case 'skill_dropped':
      return `the budget dropped the details of skill '${cut.skill}'`;
    case 'breadcrumb_only':
      return 'the budget is too small for any catalog: only the breadcrumb is shown';
  }
}
