/**
 * Skill registries: resolve skill names to specs. A restored agent records its mounted skills
 * by name, so whoever restores it needs a registry. Registries are values the user creates —
 * an agent definition or an agent system owns one — never a process-wide singleton, so two
 * systems in one process never see each other's skills.
 *
 * Pure: no I/O, no XState.
 */
import { DefinitionError } from './errors.js';
import { isSkill, type AnySkill } from './skill.js';

/** Anything that can resolve a skill name to a spec. */
export interface SkillResolver {
  get(name: string): AnySkill | undefined;
}

/** A registry of code skills by name, made by `createSkillRegistry`. */
export interface SkillRegistry extends SkillResolver {
  /** Registers skills. Registering a different skill under a name already taken throws. */
  register(skills: AnySkill | readonly AnySkill[]): SkillRegistry;
  /** Replaces (or adds) a skill under its name. */
  replace(skill: AnySkill): SkillRegistry;
  unregister(name: string): boolean;
  has(name: string): boolean;
  list(): AnySkill[];
  names(): string[];
  readonly size: number;
}

/** Creates a registry, optionally filled with `skills`. */
export function createSkillRegistry(skills: readonly AnySkill[] = []): SkillRegistry {
  const byName = new Map<string, AnySkill>();
  const check = (skill: unknown): AnySkill => {
    if (!isSkill(skill)) {
      throw new DefinitionError({ code: 'invalid_skill', message: 'only skills made by defineSkill can be registered' });
    }
    return skill;
  };
  const registry: SkillRegistry = {
    register(input) {
      const list = Array.isArray(input) ? (input as readonly AnySkill[]) : [input as AnySkill];
      for (const skill of list.map(check)) {
        const existing = byName.get(skill.name);
        if (existing && existing !== skill) {
          throw new DefinitionError({
            code: 'invalid_skill',
            message: `a different skill named '${skill.name}' is already registered; use replace() to swap it`,
            skill: skill.name,
          });
        }
        byName.set(skill.name, skill);
      }
      return registry;
    },
    replace(skill) {
      byName.set(check(skill).name, skill);
      return registry;
    },
    unregister: (name) => byName.delete(name),
    get: (name) => byName.get(name),
    has: (name) => byName.has(name),
    list: () => [...byName.values()],
    names: () => [...byName.keys()],
    get size() {
      return byName.size;
    },
  };
  return registry.register(skills);
}
