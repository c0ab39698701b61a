/**
 * Which skills a server publishes under MCP's Skills extension, and how their digests follow the
 * files: the SDK's client against `createMcpServer` on the in-memory transport, on skill folders
 * written to a temporary folder.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgentSystem, defineAgent, discoverSkills, type Diagnostic } from 'skillstate';
import { createMcpServer } from 'skillstate/mcp';
import { onCleanup } from './processes.js';

const Entry = z.object({ uri: z.string(), frontmatter: z.record(z.string(), z.unknown()), resources: z.array(z.object({ uri: z.string(), digest: z.string(), size: z.number() })) });
const ListResult = z.object({ skills: z.array(Entry), nextCursor: z.string().optional() });
const GetResult = z.object({ skill: Entry });

function digest(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

async function folder(): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'skillstate-mcp-catalog-'));
  onCleanup(() => rm(root, { recursive: true, force: true }));
  return root;
}

async function skill(root: string, name: string, extra = '', files: Record<string, string> = {}): Promise<string> {
  const dir = path.join(root, name);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'SKILL.md'), `---\nname: ${name}\ndescription: The ${name} skill. Use when ${name} is asked for.\n${extra}---\nDo ${name}.\n`);
  for (const [relative, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, relative)), { recursive: true });
    await writeFile(path.join(dir, relative), text);
  }
  return dir;
}

/** A client of an MCP server over the skills of `root`, and the diagnostics the server reported. */
async function serve(root: string): Promise<{ client: Client; diagnostics: Diagnostic[] }> {
  const registry = await discoverSkills({ extra: [root] });
  const system = createAgentSystem({ onUnhandledDiagnostic: () => {} });
  onCleanup(() => system.shutdown());
  const agent = system.spawn(defineAgent({ name: 'skills', skills: [] }), { id: 'skills' });
  const diagnostics: Diagnostic[] = [];
  const server = createMcpServer(agent, { registry, onDiagnostic: (item) => diagnostics.push(item) });
  const [near, far] = InMemoryTransport.createLinkedPair();
  await server.connect(far);
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(near);
  onCleanup(() => client.close());
  return { client, diagnostics };
}

const list = (client: Client) => client.request({ method: 'skills/list', params: {} }, ListResult);
const get = (client: Client, uri: string) => client.request({ method: 'skills/get', params: { uri } }, GetResult);

describe('the skills a server publishes under the Skills extension', () => {
  it("follows a file's changes: a new size or modification time gives a new digest", async () => {
    const root = await folder();
    const dir = await skill(root, 'notes', '', { 'guide.md': 'first\n' });
    const { client } = await serve(root);
    const guide = (entry: z.infer<typeof Entry>) => entry.resources.find((file) => file.uri === 'skill://notes/guide.md');
    expect(guide((await get(client, 'skill://notes/SKILL.md')).skill)).toEqual({ uri: 'skill://notes/guide.md', digest: digest('first\n'), size: 6 });

    await writeFile(path.join(dir, 'guide.md'), 'the second\n');
    expect(guide((await get(client, 'skill://notes/SKILL.md')).skill)).toEqual({ uri: 'skill://notes/guide.md', digest: digest('the second\n'), size: 11 });

    // Same size, a later modification time: hashed again.
    await writeFile(path.join(dir, 'guide.md'), 'the third!\n');
    const later = new Date(Date.now() + 60_000);
    await utimes(path.join(dir, 'guide.md'), later, later);
    expect(guide((await get(client, 'skill://notes/SKILL.md')).skill)).toEqual({ uri: 'skill://notes/guide.md', digest: digest('the third!\n'), size: 11 });

    // A file added to the skill joins its entry.
    await writeFile(path.join(dir, 'more.md'), 'more\n');
    expect((await get(client, 'skill://notes/SKILL.md')).skill.resources.map((file) => file.uri)).toEqual(['skill://notes/SKILL.md', 'skill://notes/guide.md', 'skill://notes/more.md']);
  });

  it('digests are cached by size and modification time: a file rewritten with both kept is not hashed again', async () => {
    const root = await folder();
    const dir = await skill(root, 'notes', '', { 'guide.md': 'aaaa\n' });
    // A time the file system keeps exactly (whole seconds), to put back after the rewrite.
    const kept = new Date('2026-01-01T00:00:00Z');
    await utimes(path.join(dir, 'guide.md'), kept, kept);
    const { client } = await serve(root);
    const before = await get(client, 'skill://notes/SKILL.md');
    await writeFile(path.join(dir, 'guide.md'), 'bbbb\n');
    await utimes(path.join(dir, 'guide.md'), kept, kept);
    expect((await stat(path.join(dir, 'guide.md'))).mtimeMs).toBe(kept.getTime());
    expect((await get(client, 'skill://notes/SKILL.md')).skill).toEqual(before.skill);
    // A read sends the bytes on disk, and the next entry describes them.
    const read = await client.readResource({ uri: 'skill://notes/guide.md' });
    expect(read.contents[0]).toMatchObject({ text: 'bbbb\n' });
    expect((await get(client, 'skill://notes/SKILL.md')).skill.resources[1]).toEqual({ uri: 'skill://notes/guide.md', digest: digest('bbbb\n'), size: 5 });
  });

  it("leaves out a skill over the extension's 512 files, says so once, and serves one at the limit", async () => {
    const root = await folder();
    const many = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, index) => [`data/${index}.txt`, `${index}\n`]));
    await skill(root, 'at-limit', '', many(511));
    await skill(root, 'over-limit', '', many(512));
    const { client, diagnostics } = await serve(root);
    const listed = await list(client);
    expect(listed.skills.map((entry) => [entry.frontmatter.name, entry.resources.length])).toEqual([['at-limit', 512]]);
    await list(client);
    expect(diagnostics.filter((item) => item.skill === 'over-limit')).toEqual([
      expect.objectContaining({ level: 'warning', code: 'skill_not_served', details: expect.objectContaining({ reason: 'over_limits', files: 513 }) }),
    ]);
    const refused = await get(client, 'skill://over-limit/SKILL.md').then(
      () => undefined,
      (error: McpError) => error,
    );
    expect(refused?.data).toMatchObject({ uri: 'skill://over-limit/SKILL.md', code: 'skill_not_served', reason: 'over_limits' });
  });

  it('serves a link that stays inside the skill as the file it names, and leaves out one that leaves it, saying so once', async () => {
    const root = await folder();
    const outside = path.join(await folder(), 'secret.txt');
    await writeFile(outside, 'not for the host\n');
    const dir = await skill(root, 'linked', '', { 'real.md': 'the real file\n' });
    await symlink(path.join(dir, 'real.md'), path.join(dir, 'alias.md'));
    await symlink(outside, path.join(dir, 'secret.txt'));
    const { client, diagnostics } = await serve(root);
    const { skill: entry } = await get(client, 'skill://linked/SKILL.md');
    expect(entry.resources.slice(1)).toEqual([
      { uri: 'skill://linked/alias.md', digest: digest('the real file\n'), size: 14 },
      { uri: 'skill://linked/real.md', digest: digest('the real file\n'), size: 14 },
    ]);
    await list(client);
    expect(diagnostics).toEqual([expect.objectContaining({ code: 'resource_skipped', skill: 'linked', message: expect.stringContaining("'secret.txt' links outside the skill's root") })]);
    const refused = await client.readResource({ uri: 'skill://linked/secret.txt' }).then(
      () => undefined,
      (error: McpError) => error,
    );
    expect(refused?.data).toMatchObject({ uri: 'skill://linked/secret.txt', code: 'resource_not_found' });
  });

  it('answers skills/get for a skill left out of the listing because it is disabled by default', async () => {
    const root = await folder();
    await skill(root, 'hidden', 'default_enabled: false\n');
    await skill(root, 'shown');
    const { client } = await serve(root);
    expect((await list(client)).skills.map((entry) => entry.frontmatter.name)).toEqual(['shown']);
    const hidden = await get(client, 'skill://hidden/SKILL.md');
    expect(hidden.skill.frontmatter).toEqual({ name: 'hidden', description: 'The hidden skill. Use when hidden is asked for.', default_enabled: false });
  });

  it('leaves out a skill whose front matter is not strict YAML, which the lenient loader repairs', async () => {
    const root = await folder();
    const dir = path.join(root, 'colons');
    await mkdir(dir);
    await writeFile(path.join(dir, 'SKILL.md'), '---\nname: colons\ndescription: Use when: the user asks\n---\nBody.\n');
    const { client, diagnostics } = await serve(root);
    expect((await list(client)).skills).toEqual([]);
    expect(diagnostics.find((item) => item.skill === 'colons')?.message).toMatch(/not served as an MCP skill/);
  });
});
