/**
 * The document-skill layer's options are checked by name: `disclose`, `createSkillTools` (its
 * `scripts` too), `parseSkillManifest`, `inspectSkillManifest`, `runSkillScript` and the tree
 * validation refuse a key they do not take with a `ManifestError` (`invalid_options`) naming it and
 * the option it probably meant, and a `spec` that is not `agentskills` or `skillstate` is refused
 * rather than read as the default.
 */
import { describe, expect, it } from 'vitest';
import { createDocumentSkillRegistry, createSkillTools, ManifestError } from '../../src/index.js';
import { disclose, inspectSkillManifest, parseSkillManifest, runSkillScript, validateSkillDir, type DiscloseOptions, type ManifestSpec, type ParseOptions, type ScriptOptions } from '../../src/manifest/index.js';
import type { SkillToolsOptions } from '../../src/manifest/skill-tools.js';
import { validateSkillTree } from '../../src/manifest/validate-tree.js';
import { simpleSkill, tree } from './tree.js';

/** What `run` throws or rejects with, failing the test when it does neither. */
async function refusal(run: () => unknown): Promise<ManifestError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(ManifestError);
    return error as ManifestError;
  }
  throw new Error('expected a refusal');
}

const text = simpleSkill('notes');

describe('an option a function of the document-skill layer does not take', () => {
  const registry = createDocumentSkillRegistry();
  const cases: { where: string; option: string; suggestion: string | undefined; run: () => unknown }[] = [
    { where: 'disclose', option: 'budjet', suggestion: 'budget', run: () => disclose(registry, 'hello', { budjet: { tokens: 10 } } as DiscloseOptions) },
    { where: 'createSkillTools', option: 'scripst', suggestion: 'scripts', run: () => createSkillTools(registry, { scripst: true } as SkillToolsOptions) },
    { where: 'createSkillTools scripts', option: 'timeoutMS', suggestion: 'timeoutMs', run: () => createSkillTools(registry, { scripts: { timeoutMS: 5 } } as unknown as SkillToolsOptions) },
    { where: 'parseSkillManifest', option: 'strcit', suggestion: 'strict', run: () => parseSkillManifest(text, { strcit: true } as ParseOptions) },
    { where: 'inspectSkillManifest', option: 'spce', suggestion: 'spec', run: () => inspectSkillManifest(text, { spce: 'agentskills' } as ParseOptions) },
    { where: 'validateSkillTree', option: 'spce', suggestion: 'spec', run: () => validateSkillTree('.', { spce: 'agentskills' } as { spec?: ManifestSpec }) },
    { where: 'runSkillScript', option: 'timeout', suggestion: undefined, run: () => runSkillScript('.', 'run.sh', [], { timeout: 5 } as ScriptOptions) },
  ];

  it.each(cases)('$where refuses $option', async ({ where, option, suggestion, run }) => {
    const error = await refusal(run);
    expect(error).toMatchObject({ code: 'invalid_options', subject: option, details: { option } });
    expect(error.message).toContain(`unknown option '${option}'${suggestion ? `; did you mean '${suggestion}'?` : ' ('}`);
    expect(error.message).toContain(`(${where} options are: `);
    if (suggestion) expect(error.details).toMatchObject({ suggestion });
  });

  it('the right names are taken', async () => {
    expect((await disclose(registry, 'hello', { budget: { tokens: 10 } })).tier).toBe(0);
    expect(createSkillTools(registry, { scripts: { timeoutMs: 5 } }).name).toBe('skills');
    expect(parseSkillManifest(text, { strict: true, spec: 'agentskills' }).manifest.name).toBe('notes');
  });
});

describe('a spec that is neither agentskills nor skillstate', () => {
  it('is refused, naming the values there are and the one it probably meant', async () => {
    const root = await tree({ 'notes/SKILL.md': text });
    const runs: (() => unknown)[] = [
      () => parseSkillManifest(text, { strict: true, spec: 'agentskillz' as ManifestSpec }),
      () => inspectSkillManifest(text, { strict: true, spec: 'agentskillz' as ManifestSpec }),
      () => validateSkillDir(`${root}/notes`, { spec: 'agentskillz' as ManifestSpec }),
      () => validateSkillTree(root, { spec: 'agentskillz' as ManifestSpec }),
    ];
    for (const run of runs) {
      const error = await refusal(run);
      expect(error).toMatchObject({ code: 'invalid_options', subject: 'spec', details: { option: 'spec', value: 'agentskillz' } });
      expect(error.message).toBe("spec must be 'agentskills' or 'skillstate', got a string, 'agentskillz'; did you mean 'agentskills'?");
    }
    expect((await validateSkillTree(root, { spec: 'agentskills' })).valid).toBe(true);
  });

  it('a spec that is not a string is refused too', async () => {
    const error = await refusal(() => parseSkillManifest(text, { spec: 1 as unknown as ManifestSpec }));
    expect(error.message).toBe("spec must be 'agentskills' or 'skillstate', got 1");
  });
});
