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
import type { AgentDefinition } from '../core/agent-definition.js';
import { describeThrown, errorInfo, type ErrorInfo } from '../core/errors.js';
import type { SkillResolver } from '../core/skill-registry.js';
import type { AnySkill } from '../core/skill.js';
import { skillToolsRegistry } from '../manifest/skill-tools.js';

/** A resolver that can also load a skill it knows by name but has not read yet (a document-skill registry). */
interface LoadingResolver extends SkillResolver {
  has?(name: string): boolean;
  load(names: string[]): Promise<unknown>;
}

const loads = (resolver: SkillResolver): resolver is LoadingResolver => typeof (resolver as Partial<LoadingResolver>).load === 'function';

export class HostSkills implements SkillResolver {
  readonly #code = new Map<string, AnySkill>();
  readonly #resolvers: readonly SkillResolver[];

  constructor(definitions: Iterable<AgentDefinition<object>>, skills: readonly AnySkill[], resolvers: readonly SkillResolver[]) {
    const found: SkillResolver[] = [...resolvers];
    const add = (skill: AnySkill) => {
      this.#code.set(skill.name, skill);
      const registry = skillToolsRegistry(skill);
      if (registry && !found.includes(registry)) found.push(registry);
    };
    for (const definition of definitions) for (const skill of definition.skills()) add(skill);
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

  /** Whether some resolver can load `name` (it knows the name, loaded or not). */
  knows(name: string): boolean {
    return this.get(name) !== undefined || this.#resolvers.some((resolver) => loads(resolver) && resolver.has?.(name) === true);
  }

  /**
   * Loads those of `names` that nothing resolves yet, from the first resolver that knows them.
   * A name no resolver knows is left alone (the step that needs it fails with `unknown_skill`);
   * a skill that fails to load answers the error that says why.
   */
  async ensure(names: Iterable<string>): Promise<ErrorInfo | undefined> {
    for (const name of names) {
      if (this.get(name)) continue;
      for (const resolver of this.#resolvers) {
        if (!loads(resolver) || (resolver.has !== undefined && !resolver.has(name))) continue;
        try {
          await resolver.load([name]);
        } catch (error) {
          return errorInfo('unknown_skill', `skill '${name}' could not be loaded: ${describeThrown(error)}`, { skill: name });
        }
        if (resolver.get(name)) break;
      }
    }
    return undefined;
  }
}

/** The names of the skills an agent's stored value has mounted. */
export function mountedNames(data: unknown): string[] {
  const mounted = typeof data === 'object' && data !== null ? (data as { mounted?: unknown }).mounted : undefined;
  if (!Array.isArray(mounted)) return [];
  return mounted.flatMap((record: unknown) => {
    const name = typeof record === 'object' && record !== null ? (record as { name?: unknown }).name : undefined;
    return typeof name === 'string' ? [name] : [];
  });
}
