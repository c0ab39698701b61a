/**
 * What the studio is told of an application's agents (`describe`) and how it mounts a skill by
 * name: every skill that may be mounted — the definition's own, its registry's, the system's, and
 * those of the system's resolvers (document skills in folders, skills an MCP server serves) — with
 * its description and where it comes from; mounting one that was never loaded loads it first.
 * Real systems, a real skill folder copied from the corpus, the real `skillstate mcp` subprocess.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentSkillRegistry, createSkillRegistry, defineAgent, defineSkill, type AgentSystem, type DocumentSkillRegistry } from '../../src/index.js';
import { mountMcpSkills } from '../../src/mcp/remote-skills.js';
import { carryOut } from '../../src/runtime/steering.js';
import type { DescribedAgent } from '../../src/viewer/steering.js';
import { BIN, ONLY, onCleanup, SOURCE_ENV } from '../mcp/processes.js';
import { notebook, quietSystem } from '../runtime/fixtures.js';

const CORPUS = '/work/shared/corpus/anthropics-skills';
let root: string;
let documents: string;
let served: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'skillstate-studio-describe-'));
  documents = path.join(root, 'documents');
  served = path.join(root, 'served');
  await cp(path.join(CORPUS, 'brand-guidelines'), path.join(documents, 'brand-guidelines'), { recursive: true });
  await cp(path.join(CORPUS, 'internal-comms'), path.join(served, 'internal-comms'), { recursive: true });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const ledger = defineSkill({ name: 'ledger', description: 'Keeps accounts.' });
const weather = defineSkill({ name: 'weather', description: 'Reports the weather.' });
const stamps = defineSkill({ name: 'stamps', description: "The definition's registry's stamps." });
const shadowedStamps = defineSkill({ name: 'stamps', description: "The system's stamps, which the definition's registry's shadow." });

/** Two resolvers: a registry of the skill folder `brand-guidelines`, and one of the skills `skillstate mcp` serves (`internal-comms`). */
async function resolvers(): Promise<{ folders: DocumentSkillRegistry; remote: DocumentSkillRegistry }> {
  const folders = createDocumentSkillRegistry();
  await folders.registerPath(path.join(documents, 'brand-guidelines'));
  const remote = createDocumentSkillRegistry();
  const mcp = await mountMcpSkills(remote, { name: 'comms', command: process.execPath, args: [BIN, 'mcp', ...ONLY, '--path', served], env: SOURCE_ENV });
  onCleanup(() => mcp.close());
  return { folders, remote };
}

/** The agent `id` as the studio is told of it. */
async function described(system: AgentSystem, id: string): Promise<DescribedAgent> {
  const answer = await carryOut(system, { op: 'describe' });
  if (!answer.ok) throw new Error(`describe failed: ${answer.error.message}`);
  return (answer.value as DescribedAgent[]).find((agent) => agent.id === id)!;
}

describe('the skills the studio offers to mount', () => {
  it("lists the definition's skills, its registry's, the system's and its resolvers' (a skill folder, an MCP server's), each with its description and where it comes from", async () => {
    const { folders, remote } = await resolvers();
    const Keeper = defineAgent({ name: 'keeper', skills: [notebook, ledger], registry: createSkillRegistry([stamps]) });
    const system = quietSystem({ skills: [weather, shadowedStamps], resolvers: [folders, remote] });
    try {
      const ada = system.spawn(Keeper, { id: 'ada' });
      await ada.unmount('ledger');
      const agent = await described(system, 'ada');
      expect(agent.mounted).toEqual(['notebook']);
      expect(agent.status).toBe('idle');
      expect(agent.mountable).toEqual([
        { name: 'brand-guidelines', from: 'documents', description: expect.stringMatching(/^Applies Anthropic's official brand colors and typography .* Use it when brand colors/) },
        { name: 'internal-comms', from: 'mcp', description: expect.stringMatching(/ \(from MCP server 'comms'\)$/) },
        { name: 'ledger', from: 'definition', description: 'Keeps accounts.' },
        // A name is found where a mount looks first: the definition's registry before the system's skills.
        { name: 'stamps', from: 'registry', description: "The definition's registry's stamps." },
        { name: 'weather', from: 'registry', description: 'Reports the weather.' },
      ]);
      // The description of a document skill is what a model is disclosed of it.
      expect(agent.mountable[0]!.description).toBe(folders.entry('brand-guidelines')!.briefDescription);
    } finally {
      await system.shutdown();
    }
  }, 30_000);

  it("mounts a document skill or an MCP server's skill by name from the list, loading it first; it is then mounted, not offered", async () => {
    const { folders, remote } = await resolvers();
    const system = quietSystem({ resolvers: [folders, remote] });
    try {
      const ada = system.spawn(defineAgent({ name: 'keeper', skills: [notebook] }), { id: 'ada' });
      expect(folders.get('brand-guidelines')).toBeUndefined(); // not loaded yet
      await expect(carryOut(system, { op: 'mount', agent: 'ada', skill: 'brand-guidelines' })).resolves.toMatchObject({ ok: true, value: { skill: 'brand-guidelines', changed: true } });
      await expect(carryOut(system, { op: 'mount', agent: 'ada', skill: 'internal-comms' })).resolves.toMatchObject({ ok: true, value: { skill: 'internal-comms', changed: true } });
      expect(ada.getSnapshot().lifecycles).toMatchObject({ 'brand-guidelines': 'active', 'internal-comms': 'active' });
      const agent = await described(system, 'ada');
      expect(agent.mounted).toEqual(['notebook', 'brand-guidelines', 'internal-comms']);
      expect(agent.mountable).toEqual([]);
    } finally {
      await system.shutdown();
    }
  }, 30_000);

  it("mounts a document skill of the definition's own registry, which the system does not load, by loading it first", async () => {
    const folders = createDocumentSkillRegistry();
    await folders.registerPath(path.join(documents, 'brand-guidelines'));
    const system = quietSystem();
    try {
      const ada = system.spawn(defineAgent({ name: 'keeper', skills: [notebook], registry: folders }), { id: 'ada' });
      expect((await described(system, 'ada')).mountable).toEqual([{ name: 'brand-guidelines', from: 'documents', description: expect.stringMatching(/^Applies Anthropic's/) }]);
      // The same mount on the ref alone finds nothing: the system's resolvers do not hold this registry.
      await expect(ada.mount('brand-guidelines')).rejects.toMatchObject({ code: 'unknown_skill' });
      await expect(carryOut(system, { op: 'mount', agent: 'ada', skill: 'brand-guidelines' })).resolves.toMatchObject({ ok: true, value: { skill: 'brand-guidelines' } });
      expect(ada.getSnapshot().lifecycles).toMatchObject({ 'brand-guidelines': 'active' });
    } finally {
      await system.shutdown();
    }
  });

  it('a name nothing knows is refused with its typed error, and the agent is unchanged', async () => {
    const system = quietSystem({ resolvers: [createDocumentSkillRegistry()] });
    try {
      const ada = system.spawn(defineAgent({ name: 'keeper', skills: [notebook] }), { id: 'ada' });
      await expect(carryOut(system, { op: 'mount', agent: 'ada', skill: 'nowhere' })).resolves.toMatchObject({ ok: false, error: { code: 'unknown_skill' } });
      expect(ada.getSnapshot().mounted.map((skill) => skill.name)).toEqual(['notebook']);
    } finally {
      await system.shutdown();
    }
  });
});
