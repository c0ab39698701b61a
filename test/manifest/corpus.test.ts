/**
 * The published skills in the shared corpus (22 SKILL.md files from anthropics/skills and
 * openai/skills) all load, and strict validation against the standard judges them as the
 * reference validator does.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { discoverSkills } from '../../src/index.js';
import { validateSkillDir } from '../../src/manifest/index.js';

const CORPUS = '/work/shared/corpus';
const ROOTS = ['anthropics-skills', 'openai-skills'].map((name) => path.join(CORPUS, name));
const folders = () => ROOTS.flatMap((root) => readdirSync(root).map((name) => path.join(root, name)).filter((dir) => existsSync(path.join(dir, 'SKILL.md'))));

describe.runIf(existsSync(CORPUS))('the corpus of published skills', () => {
  it('every skill loads: 22 folders, 21 names (both repositories ship a skill-creator)', async () => {
    expect(folders()).toHaveLength(22);
    const registry = await discoverSkills({ extra: ROOTS });
    expect(registry.size).toBe(21);
    expect(registry.shadowed.map((clash) => clash.name)).toEqual(['skill-creator']);
    expect(registry.diagnostics.filter((item) => item.code === 'skill_skipped')).toEqual([]);
  });

  it('strictly, against the standard alone, only claude-api fails: its description is 1,068 characters', async () => {
    const failing: [string, string[]][] = [];
    for (const dir of folders()) {
      const result = await validateSkillDir(dir, { spec: 'agentskills' });
      if (!result.valid) failing.push([path.basename(dir), result.errors]);
    }
    expect(failing).toEqual([['claude-api', ['Description exceeds 1024 character limit (1068 chars)']]]);
  });
});
