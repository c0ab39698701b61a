/**
 * `defineDocumentSkill` checks its definition when it is made, as `defineSkill` and
 * `defineAction` do: a `DefinitionError` (`invalid_skill`) naming the skill and the field, the
 * field probably meant for a misspelled one, and resource paths held to the rules a folder's files
 * follow, so that every path offered to the model can be read.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cmd, createDocumentSkillRegistry, createSkillTools, defineAction, defineAgent, defineDocumentSkill, DefinitionError, type DocumentSkillDefinition } from '../../src/index.js';

const base = { name: 'memo', description: 'Keeps memos. Use when the user wants a memo.', instructions: '# Memo' } satisfies DocumentSkillDefinition;

/** What `defineDocumentSkill(definition)` throws. */
function refusal(definition: unknown): DefinitionError {
  try {
    defineDocumentSkill(definition as DocumentSkillDefinition);
  } catch (error) {
    if (error instanceof DefinitionError) return error;
    throw error;
  }
  throw new Error('defineDocumentSkill accepted the definition');
}

describe('what defineDocumentSkill refuses', () => {
  it.each([
    [undefined, 'defineDocumentSkill needs a definition object { name, description, instructions }, got undefined'],
    [null, 'defineDocumentSkill needs a definition object { name, description, instructions }, got null'],
    ['memo', "defineDocumentSkill needs a definition object { name, description, instructions }, got a string, 'memo'"],
  ])('%j: no definition at all', (definition, message) => {
    expect(() => defineDocumentSkill(definition as never)).toThrow(DefinitionError);
    expect(refusal(definition)).toMatchObject({ code: 'invalid_skill', message });
  });

  it('a misspelled field, with the field it probably meant', () => {
    const error = refusal({ ...base, resourses: { 'guide.md': '# Guide' } });
    expect(error).toMatchObject({ code: 'invalid_skill', skill: 'memo', details: { field: 'resourses' } });
    expect(error.message).toBe(
      "document skill 'memo': resourses is not a field of a document skill definition; did you mean 'resources'? (fields: name, description, version, instructions, resources, triggers, briefDescription, defaultEnabled, disableModelInvocation, actions, metadata)",
    );
    expect(refusal({ ...base, instruction: '# Memo' }).message).toContain("did you mean 'instructions'?");
  });

  it.each([
    ['../up.md', "resources[\"../up.md\"] is not a path the skill can offer: '../up.md' contains '..'; only paths inside the skill's root are allowed"],
    ['docs/../../up.md', "resources[\"docs/../../up.md\"] is not a path the skill can offer: 'docs/../../up.md' contains '..'"],
    ['/etc/abs.md', "resources[\"/etc/abs.md\"] is not a path the skill can offer: '/etc/abs.md' is an absolute path; give a path relative to the skill's root"],
    ['C:\\notes.md', "resources[\"C:\\\\notes.md\"] is not a path the skill can offer: 'C:\\notes.md' is an absolute path"],
    ['', 'resources[""] is not a path the skill can offer: the path must be a non-empty relative path without NUL characters'],
    ['a\0.md', 'resources["a\\u0000.md"] is not a path the skill can offer: the path must be a non-empty relative path without NUL characters'],
    ['./guide.md', "resources[\"./guide.md\"] is not written as the model would ask for it: write 'guide.md'"],
    ['docs//guide.md', "resources[\"docs//guide.md\"] is not written as the model would ask for it: write 'docs/guide.md'"],
    ['docs\\guide.md', "resources[\"docs\\\\guide.md\"] is not written as the model would ask for it: write 'docs/guide.md'"],
  ])('the resource path %j', (key, message) => {
    const error = refusal({ ...base, resources: { 'ok.md': 'fine', [key]: 'text' } });
    expect(error).toMatchObject({ code: 'invalid_skill', skill: 'memo', details: { field: `resources[${JSON.stringify(key)}]` } });
    expect(error.message).toContain(`document skill 'memo': ${message}`);
  });

  it.each([
    [42, 'got 42'],
    [null, 'got null'],
    [{ text: 'x' }, 'got an object'],
    [['x'], 'got an array'],
  ])('a resource of %j', (value, given) => {
    const error = refusal({ ...base, resources: { 'data.md': value } });
    expect(error).toMatchObject({ details: { field: 'resources["data.md"]' } });
    expect(error.message).toBe(`document skill 'memo': resources["data.md"] must be text (a string), bytes (a Uint8Array) or a function returning either, ${given}`);
  });

  it.each([
    [new Map([['a.md', 'x']]), 'resources must be an object of relative path → content, not a Map (write Object.fromEntries(map))'],
    [['a.md'], 'resources must be an object of relative path → text, bytes or a function returning either, got an array'],
    ['a.md', "resources must be an object of relative path → text, bytes or a function returning either, got a string, 'a.md'"],
  ])('resources given as %j', (resources, message) => {
    expect(refusal({ ...base, resources })).toMatchObject({ message: `document skill 'memo': ${message}`, details: { field: 'resources' } });
  });

  it('instructions, actions and the manifest fields, each named', () => {
    expect(refusal({ ...base, instructions: undefined })).toMatchObject({ message: "document skill 'memo': instructions must be a string (the body a model reads), got undefined", details: { field: 'instructions' } });
    expect(refusal({ ...base, actions: 'say_hello' })).toMatchObject({ details: { field: 'actions' } });
    expect(refusal({ ...base, actions: [{ name: 'fake' }] })).toMatchObject({ message: "document skill 'memo': actions[0] is not an action made by defineAction", details: { field: 'actions[0]' } });
    expect(refusal({ ...base, briefDescription: 5 })).toMatchObject({ message: "document skill 'memo': Field 'briefDescription' must be a string", details: { field: 'briefDescription' } });
    const unnamed = refusal({ description: base.description, instructions: base.instructions });
    expect(unnamed).toMatchObject({ code: 'invalid_skill', details: { field: 'name' } });
    expect(unnamed.skill).toBeUndefined();
    expect(unnamed.message).toBe("document skill '?': Field 'name' must be a non-empty string");
  });
});

describe('what defineDocumentSkill accepts', () => {
  it('text, bytes and functions under plain relative paths, each readable by the path offered', async () => {
    const registry = createDocumentSkillRegistry();
    registry.register(
      defineDocumentSkill({
        ...base,
        resources: { 'guide.md': '# Guide', 'docs/data.bin': new Uint8Array([0, 1, 2]), 'docs/later.md': async () => '# Later', 'docs/wrong.md': async () => 42 as never },
        actions: [defineAction({ name: 'note', description: 'Notes', input: z.object({}), run: () => 'noted' })],
      }),
    );
    const Agent = defineAgent({ name: 'assistant', skills: [createSkillTools(registry)], registry });
    const agent = Agent.new({ id: 'a' });
    const loaded = await cmd(agent, { action: 'load_skill', params: { name: 'memo' } });
    expect(loaded.results[0]).toMatchObject({ ok: true, output: { resources: ['guide.md', 'docs/data.bin', 'docs/later.md', 'docs/wrong.md'], tools: ['note'] } });
    const read = async (file: string) => (await cmd(agent, { action: 'read_skill_resource', params: { skill: 'memo', path: file } })).results[0]!;
    expect(await read('guide.md')).toMatchObject({ ok: true, output: { content: '# Guide', binary: false } });
    expect(await read('docs/data.bin')).toMatchObject({ ok: true, output: { binary: true, size: 3 } });
    expect(await read('docs/later.md')).toMatchObject({ ok: true, output: { content: '# Later' } });
    // A function's result is known only when it is read: the error names the skill and the file.
    const wrong = await read('docs/wrong.md');
    expect(wrong.ok).toBe(false);
    expect(!wrong.ok && wrong.error.message).toContain("skill 'memo': 'docs/wrong.md' could not be read: its function returned 42, not text (a string) or bytes (a Uint8Array)");
  });
});
