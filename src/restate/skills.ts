/**
 * The skills a Restate host can name: code skills (those the definitions attach, and
 * `restateAgents({ skills })`), then skill resolvers (`restateAgents({ resolvers })`, and the
 * document-skill registries behind the skill tools a definition attaches, whose `load_skill`
 * mounts their skills).
 *
 * No agent lives in a service process between steps, so a process that restores an agent with a
 * document skill mounted (after a crash, or because another process loaded it) loads that skill
 * from its folder first, as `system.loadAndRestore` does in-process. Every service process must
 * therefore see the same skill folders.
 */
import type * as restate from '@restatedev/restate-sdk';
import type { AgentDefinition } from '../core/agent-definition.js';
import { describeThrown, errorInfo, type ErrorInfo } from '../core/errors.js';
import type { SkillResolver } from '../core/skill-registry.js';
import type { AnySkill } from '../core/skill.js';
import { DocumentSkillRegistry } from '../manifest/document-registry.js';
import { skillToolsRegistry } from '../manifest/skill-tools.js';

/** A resolver that can also load a skill it knows by name but has not read yet (a document-skill registry). */
interface LoadingResolver extends SkillResolver {
  has?(name: string): boolean;
  load(names: string[]): Promise<unknown>;
}

/** `details.reason` of the `unknown_skill` an agent answers when a skill it has mounted cannot be read here. */
export const UNREADABLE = 'skill_unreadable';

const loads = (resolver: SkillResolver): resolver is LoadingResolver => typeof (resolver as Partial<LoadingResolver>).load === 'function';

/** The skills of one host, by name, and the loading of those read from folders. */
export class HostSkills implements SkillResolver {
  readonly #code = new Map<string, AnySkill>();
  readonly #resolvers: readonly SkillResolver[];
  readonly #given: readonly SkillResolver[];
  /** When the registries last scanned again (`#rescan`). */
  #scanned = 0;

  constructor(definitions: Iterable<AgentDefinition<object>>, skills: readonly AnySkill[], resolvers: readonly SkillResolver[]) {
    this.#given = resolvers;
    const found: SkillResolver[] = [...resolvers];
    const add = (skill: AnySkill) => {
      this.#code.set(skill.name, skill);
      const registry = skillToolsRegistry(skill);
      if (registry && !found.includes(registry)) found.push(registry);
    };
    for (const definition of definitions) {
      for (const skill of definition.skills()) add(skill);
      // A definition's own registry that reads skills from folders is searched and loaded too.
      const own = definition.blueprint.registry;
      if (own && loads(own) && !found.includes(own)) found.push(own);
    }
    for (const skill of skills) add(skill);
    this.#resolvers = found;
  }

  get(name: string): AnySkill | undefined {
    const own = this.#code.get(name);
    if (own) return own;
    for (const resolver of this.#resolvers) {
      const found = resolver.get(name);
      if (found) return found;
    }
    return undefined;
  }

  /**
   * Loads those of `names` that nothing resolves yet, from the first resolver that knows them.
   * A name no resolver knows is left alone (the step that needs it fails with `unknown_skill`);
   * a skill that fails to load answers the error that says why.
   */
  async ensure(names: Iterable<string>): Promise<ErrorInfo | undefined> {
    for (const name of names) {
      if (this.get(name)) continue;
      if (!this.#resolvers.some((resolver) => knows(resolver, name))) await this.#rescan();
      let problem = await this.#load(name);
      // A folder renamed or moved since the last scan: scan again (rate-limited) and try once more.
      if (problem && (await this.#rescan())) problem = await this.#load(name);
      if (problem) return problem;
    }
    return undefined;
  }

  /** Loads `name` from the first resolver that knows it; the error that says why it failed. */
  async #load(name: string): Promise<ErrorInfo | undefined> {
    for (const resolver of this.#resolvers) {
      if (!loads(resolver) || !knows(resolver, name)) continue;
      try {
        await resolver.load([name]);
      } catch (error) {
        return errorInfo('unknown_skill', `skill '${name}' could not be loaded: ${describeThrown(error)}`, { skill: name, details: { reason: UNREADABLE } });
      }
      if (resolver.get(name)) return undefined;
    }
    return undefined;
  }

  /** The message of the retryable error of an agent that cannot take a step here because of `problem`. */
  unavailable(agent: string, problem: ErrorInfo): string {
    const message = `agent '${agent}' cannot take a step here: ${problem.message}. Restate retries it until the skill can be read (every service process must see the same skill folders)`;
    console.warn(`skillstate: ${message}`);
    return message;
  }

  /**
   * Reads the skills named, or throws an error Restate retries. For a replay that must take the
   * path its journal recorded (a mount the journal says succeeded), and for a turn, which cannot
   * go on without the agent: the invocation waits, retried with Restate's backoff, until the skill
   * can be read; each attempt writes why to this process's log.
   */
  async require(names: readonly string[], agent: string): Promise<void> {
    const problem = await this.check(names);
    if (problem) throw new Error(this.unavailable(agent, problem));
  }

  /**
   * Whether `names` can be read here, journaled (as `what`) so that a replay gets the first
   * attempt's answer: the problem, or undefined. A replay told they could be read, in a process
   * that cannot read them, throws an error Restate retries (see `require`).
   */
  async readJournaled(ctx: restate.ObjectContext | restate.ObjectSharedContext, what: string, names: readonly string[]): Promise<ErrorInfo | undefined> {
    if (names.length === 0) return undefined;
    const problem: ErrorInfo | null = await ctx.run(what, async () => (await this.check(names)) ?? null);
    if (problem) return problem;
    await this.require(names, ctx.key);
    return undefined;
  }

  /** Loads what `names` need, and says which one cannot be read here (undefined: all can). */
  async check(names: readonly string[]): Promise<ErrorInfo | undefined> {
    return (await this.ensure(names)) ?? this.#missing(names);
  }

  /** The document-skill registry among the resolvers given (`restateAgents({ resolvers })`): disclosed to an agent whose `load_skill` is of another make, as in-process. */
  documents(): DocumentSkillRegistry | undefined {
    return this.#given.find((resolver): resolver is DocumentSkillRegistry => resolver instanceof DocumentSkillRegistry);
  }

  /**
   * Those of `names` that are read from folders, for an agent of `definition`: not code skills
   * (the deployment's own), nor skills the definition attaches or its own registry of code skills
   * holds.
   */
  fromFolders(names: readonly string[], definition: AgentDefinition<object>): string[] {
    const { skills, registry } = definition.blueprint;
    // Only what cannot change while the process runs decides: a registry that loads skills
    // answers for those it has read so far, which differs from one process to another.
    const fixed = registry && !loads(registry) ? registry : undefined;
    return names.filter((name) => !this.#code.has(name) && !skills.some((skill) => skill.name === name) && !fixed?.get(name));
  }

  /** The first of `names` that nothing resolves, as an error. */
  #missing(names: readonly string[]): ErrorInfo | undefined {
    const name = names.find((candidate) => !this.get(candidate));
    if (name === undefined) return undefined;
    return errorInfo('unknown_skill', `skill '${name}' is mounted on it, but neither the definitions, restateAgents({ skills }), nor the ${this.#resolvers.length} skill resolver(s) here know it`, { skill: name, details: { reason: UNREADABLE } });
  }

  /** Scans the registries that can scan again (at most once every few seconds): a skill folder may have come back. Whether it scanned. */
  async #rescan(): Promise<boolean> {
    if (Date.now() - this.#scanned < RESCAN_MS) return false;
    this.#scanned = Date.now();
    for (const resolver of this.#resolvers) {
      const scanning = resolver as SkillResolver & { refresh?(): Promise<unknown> };
      if (typeof scanning.refresh !== 'function') continue;
      await scanning.refresh().catch((error: unknown) => console.warn(`skillstate: a skill registry failed to scan its folders again: ${describeThrown(error)}`));
    }
    return true;
  }
}

/** How often a name no registry knows makes the registries scan again. */
const RESCAN_MS = 5_000;

const knows = (resolver: SkillResolver, name: string) => loads(resolver) && (resolver.has === undefined || resolver.has(name));

/** The names of the skills an agent's stored value has mounted. */
export function mountedNames(data: unknown): string[] {
  const mounted = typeof data === 'object' && data !== null ? (data as { mounted?: unknown }).mounted : undefined;
  if (!Array.isArray(mounted)) return [];
  return mounted.flatMap((record: unknown) => {
    const name = typeof record === 'object' && record !== null ? (record as { name?: unknown }).name : undefined;
    return typeof name === 'string' ? [name] : [];
  });
}
