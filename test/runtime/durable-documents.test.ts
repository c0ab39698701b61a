/**
 * Durable agents with document skills: a system opening its SQLite file restores at once the agents
 * whose skills it knows, and the agents with mounted document skills (which load lazily, from
 * their folders) once those load, with their descendants; `ready()` waits for them. One whose
 * skill cannot be loaded is reported and stays in the file.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSkillTools, createSqliteStore, discoverSkills, type Diagnostic, type DocumentSkillRegistry, type ErrorInfo } from '../../src/index.js';
import { simpleSkill, tree, writeTree } from '../manifest/tree.js';
import { createSignal, defineAgent, itemsOf, notebook, systemPerTest } from './fixtures.js';

const systems = systemPerTest();
const zodUrl = new URL('../../node_modules/zod/index.js', import.meta.url).href;

/** A folder of one document skill, `field-notes`, whose toolset answers `ping` with `pong <word>`. */
const skillFiles = (word: string) => ({
  'field-notes/SKILL.md': simpleSkill('field-notes', 'toolsets:\n  - "tools:Tools"'),
  'field-notes/tools.mjs': `import { z } from '${zodUrl}';\nexport const Tools = { ping: { description: 'Ping', parameters: z.object({}), execute: () => 'pong ${word}' } };\n`,
});

/** The agents of these tests: `assistant` mounts document skills by name, `plain` never does. */
function definitions(registry: DocumentSkillRegistry) {
  return {
    Assistant: defineAgent({ name: 'assistant', skills: [notebook, createSkillTools(registry)], registry }),
    Plain: defineAgent({ name: 'plain', skills: [notebook] }),
  };
}

/** A system on the database `file`, with `registry` as its resolver (or only as the definition's: `resolvers: false`); what it reports is collected. */
function open(registry: DocumentSkillRegistry, file: string, resolvers = true) {
  const { Assistant, Plain } = definitions(registry);
  const diagnostics: Array<{ agent: string | undefined; diagnostic: Diagnostic }> = [];
  const errors: Array<{ agent: string | undefined; error: ErrorInfo }> = [];
  const system = systems.start({
    definitions: [Assistant, Plain],
    resolvers: resolvers ? [registry] : [],
    store: createSqliteStore({ path: file }),
    onUnhandledDiagnostic: (diagnostic, agent) => diagnostics.push({ agent, diagnostic }),
    onUnhandledError: (error, agent) => errors.push({ agent, error }),
  });
  return { system, diagnostics, errors, Assistant, Plain };
}

/** `open`, with a registry discovered afresh over `root` (nothing loaded yet). */
async function reopen(root: string, file: string) {
  return open(await discoverSkills({ extra: [root] }), file);
}

/** Stores, in `file`: `reader` with `field-notes` mounted and a note, its child `helper`, and `plain`, which mounts nothing lazily. */
async function stored(root: string, file: string): Promise<void> {
  const { system, Assistant, Plain } = await reopen(root, file);
  const reader = system.spawn(Assistant, { id: 'reader' });
  await reader.mount('field-notes');
  await reader.call(createSignal('notes.add_now', { item: 'kept' }));
  system.spawn(Plain, { id: 'helper', parent: reader });
  system.spawn(Plain, { id: 'plain' });
  await system.shutdown();
}

describe('opening a durable system with agents whose document skills load lazily', () => {
  it('restores them, and their descendants, once the skills load; ready() resolves with them', async () => {
    const root = await tree(skillFiles('one'));
    const file = path.join(await tree(), 'agents.db');
    await stored(root, file);

    const { system, diagnostics, errors } = await reopen(root, file);
    // Back at once: the agent whose skills are all known.
    expect(system.list().map((ref) => ref.id)).toEqual(['plain']);
    expect(diagnostics.filter(({ diagnostic }) => diagnostic.code === 'restore_waits').map(({ agent, diagnostic }) => [agent, diagnostic.details])).toEqual([
      ['reader', { skills: ['field-notes'] }],
      ['helper', { skills: [] }],
    ]);

    const late = await system.ready();
    expect(late.map((ref) => ref.id)).toEqual(['reader', 'helper']);
    expect(system.list().map((ref) => ref.id)).toEqual(['plain', 'reader', 'helper']);
    const reader = system.get('reader')!;
    expect(reader.getSnapshot().lifecycles['field-notes']).toBe('active');
    expect(itemsOf(reader)).toEqual(['kept']);
    await expect(reader.callTool('ping', {})).resolves.toBe('pong one');
    expect(system.get('helper')!.persist().parent).toBe('reader');
    expect(errors).toEqual([]);
  });

  it("loads them through the definition's registry when the system has no resolver", async () => {
    const root = await tree(skillFiles('one'));
    const file = path.join(await tree(), 'agents.db');
    await stored(root, file);

    const { system, errors } = open(await discoverSkills({ extra: [root] }), file, false);
    expect((await system.ready()).map((ref) => ref.id)).toEqual(['reader', 'helper']);
    await expect(system.get('reader')!.callTool('ping', {})).resolves.toBe('pong one');
    expect(errors).toEqual([]);
  });

  it('reports one whose skill cannot be loaded, with its id, and leaves it in the file for the next system', async () => {
    const root = await tree(skillFiles('one'));
    const file = path.join(await tree(), 'agents.db');
    await stored(root, file);

    // Discovered, then gone before it loads.
    const registry = await discoverSkills({ extra: [root] });
    expect(registry.has('field-notes')).toBe(true);
    await rm(path.join(root, 'field-notes', 'tools.mjs'));
    const { system: broken, errors } = open(registry, file);
    // helper, restored without its parent, runs as an orphan (said with a warning).
    expect((await broken.ready()).map((ref) => ref.id)).toEqual(['helper']);
    expect(errors.map(({ agent, error }) => [agent, error.message])).toEqual([['reader', expect.stringContaining("stored agent 'reader' was not restored and is left in the store")]]);
    expect(broken.get('reader')).toBeUndefined();
    await broken.shutdown();

    await writeTree(root, skillFiles('two'));
    const { system } = await reopen(root, file);
    await system.ready();
    await expect(system.get('reader')!.callTool('ping', {})).resolves.toBe('pong two');
  });

  it('a system shut down before the skills load leaves the waiting agents in the file', async () => {
    const root = await tree(skillFiles('one'));
    const file = path.join(await tree(), 'agents.db');
    await stored(root, file);

    const first = await reopen(root, file);
    await first.system.shutdown();
    expect(await first.system.ready()).toEqual([]);
    expect(first.errors).toEqual([]);

    const { system } = await reopen(root, file);
    expect((await system.ready()).map((ref) => ref.id)).toEqual(['reader', 'helper']);
  });
});
