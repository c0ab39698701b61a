/**
 * Skill registries resolve names to specs. Each is a value the user owns: two registries never
 * share their skills.
 */
import { describe, expect, it } from 'vitest';
import { createSkillRegistry, defineSkill, DefinitionError } from '../../src/index.js';
import { arithmetic, counter } from '../../skills/index.js';
import { thrownBy } from './support.js';

describe('createSkillRegistry', () => {
  it('registers skills and resolves them by name', () => {
    const registry = createSkillRegistry([arithmetic]).register(counter);
    expect(registry.get('arithmetic')).toBe(arithmetic);
    expect(registry.get('counter')).toBe(counter);
    expect(registry.get('calculator')).toBeUndefined();
    expect(registry.has('counter')).toBe(true);
    expect(registry.names()).toEqual(['arithmetic', 'counter']);
    expect(registry.list()).toEqual([arithmetic, counter]);
    expect(registry.size).toBe(2);
  });

  it('registering the same skill again is harmless; a different skill under a taken name is refused', () => {
    const registry = createSkillRegistry([counter]).register(counter);
    expect(registry.size).toBe(1);
    const impostor = defineSkill({ name: 'counter' });
    const error = thrownBy(() => registry.register(impostor), DefinitionError, 'invalid_skill');
    expect(error.skill).toBe('counter');
    expect(error.message).toContain('use replace()');
    expect(registry.replace(impostor).get('counter')).toBe(impostor);
  });

  it('unregisters by name', () => {
    const registry = createSkillRegistry([counter]);
    expect(registry.unregister('counter')).toBe(true);
    expect(registry.unregister('counter')).toBe(false);
    expect(registry.size).toBe(0);
  });

  it.each([[{ name: 'fake' }], [null], ['counter']])('refuses something that is not a skill (%j)', (value) => {
    thrownBy(() => createSkillRegistry().register(value as never), DefinitionError, 'invalid_skill');
  });

  it('two registries do not see each other’s skills', () => {
    const a = createSkillRegistry([counter]);
    const b = createSkillRegistry();
    expect(b.get('counter')).toBeUndefined();
    b.register(arithmetic);
    expect(a.get('arithmetic')).toBeUndefined();
  });
});
