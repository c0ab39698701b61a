/**
 * The option bags of the skill-source helpers are read by name: a misspelled option is refused
 * (`invalid_options`), naming it and the one meant, rather than left to its default.
 */
import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDocumentSkillRegistry } from '../../src/index.js';
import { defaultSkillSources, validateSkillDir } from '../../src/manifest/index.js';
import { validateSkillTree } from '../../src/manifest/validate-tree.js';

describe('option bags of the skill-source helpers', () => {
  it('defaultSkillSources refuses a misspelled option, and options that are not an object', () => {
    expect(() => defaultSkillSources({ bundeld: './skills' } as never)).toThrow(
      expect.objectContaining({ code: 'invalid_options', message: "unknown option 'bundeld'; did you mean 'bundled'? (defaultSkillSources options are: cwd, home, bundled, extra, examples)" }),
    );
    expect(() => defaultSkillSources('./skills' as never)).toThrow(expect.objectContaining({ code: 'invalid_options', message: "defaultSkillSources options must be an object such as { bundled: './skills' }, got a string, './skills'" }));
    expect(defaultSkillSources({ bundled: '/opt/skills' }).bundled).toBe('/opt/skills');
  });

  it('validateSkillDir refuses a misspelled option or spec, whatever the folder holds', async () => {
    const empty = await mkdtemp(path.join(tmpdir(), 'skillstate-options-'));
    await expect(validateSkillDir(empty, { spce: 'agentskills' } as never)).rejects.toMatchObject({ code: 'invalid_options', details: { option: 'spce', suggestion: 'spec' } });
    await expect(validateSkillDir(empty, { spec: 'agentskillz' as never })).rejects.toMatchObject({ code: 'invalid_options', message: "spec must be 'agentskills' or 'skillstate', got a string, 'agentskillz'; did you mean 'agentskills'?" });
    // Options it can read: a folder without a SKILL.md is invalid, as before.
    await expect(validateSkillDir(empty, { spec: 'agentskills' })).resolves.toMatchObject({ valid: false });
    const skill = path.join(empty, 'notes');
    await mkdir(skill);
    await writeFile(path.join(skill, 'SKILL.md'), '---\nname: notes\ndescription: Notes. Use when taking notes.\n---\nbody\n');
    await expect(validateSkillDir(skill, { spec: 'agentskills' })).resolves.toMatchObject({ valid: true });
  });

  it('validateSkillTree searches with its maxDepth and validates each folder with its spec', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'skillstate-tree-'));
    const deep = path.join(root, 'a', 'b', 'notes');
    await mkdir(deep, { recursive: true });
    await writeFile(path.join(deep, 'SKILL.md'), '---\nname: notes\ndescription: Notes. Use when taking notes.\n---\nbody\n');
    const found = await validateSkillTree(root, { spec: 'agentskills', maxDepth: 4 });
    expect(found.results.map((result) => [result.dir, result.valid])).toEqual([[deep, true]]);
    const shallow = await validateSkillTree(root, { spec: 'agentskills', maxDepth: 1 });
    expect(shallow.results.map((result) => result.dir)).not.toContain(deep);
  });

  it('createDocumentSkillRegistry refuses a misspelled option', () => {
    expect(() => createDocumentSkillRegistry({ onDiagnostics: () => {} } as never)).toThrow(expect.objectContaining({ code: 'invalid_options', details: expect.objectContaining({ option: 'onDiagnostics', suggestion: 'onDiagnostic' }) }));
    expect(createDocumentSkillRegistry({ onDiagnostic: () => {} }).names()).toEqual([]);
  });
});
