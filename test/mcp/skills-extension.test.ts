/**
 * MCP's Skills extension (`io.modelcontextprotocol/skills`) as a host sees it: the SDK's own client
 * against the real `skillstate mcp` command, over stdio and over Streamable HTTP, on a folder
 * holding a published skill (algorithmic-art, with a PNG, a reference over 256 KiB and a
 * subfolder added), one that breaks the Agent Skills specification (claude-api: its description
 * is over 1,024 characters) and 120 small ones, so that the listing takes two pages. The two
 * published skills are verbatim copies from anthropics/skills (commit 9d2f1ae), with their licence.
 */
import { createHash } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32, deflateSync } from 'node:zlib';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { ONLY, overHttp, overStdio, type Connected } from './processes.js';

const PUBLISHED = fileURLToPath(new URL('./fixtures/published', import.meta.url));
const BIG_REFERENCE_BYTES = 307_303;

const Entry = z.object({
  uri: z.string(),
  frontmatter: z.record(z.string(), z.unknown()),
  resources: z.array(z.object({ uri: z.string(), digest: z.string(), size: z.number() })),
});
type Entry = z.infer<typeof Entry>;
const ListResult = z.object({ skills: z.array(Entry), nextCursor: z.string().optional() });
const GetResult = z.object({ skill: Entry });
const DirectoryResult = z.object({ resources: z.array(z.object({ uri: z.string(), name: z.string(), mimeType: z.string().optional(), size: z.number().optional() })), nextCursor: z.string().optional() });

function digest(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** A real PNG: 16×16 pixels of noise (so it does not compress away), NUL bytes and all. */
function png(): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(16, 0);
  header.writeUInt32BE(16, 4);
  header.set([8, 6, 0, 0, 0], 8);
  const rows: number[] = [];
  let seed = 7;
  for (let y = 0; y < 16; y++) {
    rows.push(0);
    for (let x = 0; x < 64; x++) rows.push((seed = (seed * 1103515245 + 12345) % 2 ** 31) & 0xff);
  }
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(Buffer.from(rows))), chunk('IEND', Buffer.alloc(0))]);
}

let root: string;
let art: string;
const files: Record<string, Buffer> = {};

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'skillstate-mcp-skills-'));
  art = path.join(root, 'skills', 'algorithmic-art');
  await cp(path.join(PUBLISHED, 'algorithmic-art'), art, { recursive: true });
  await cp(path.join(PUBLISHED, 'claude-api'), path.join(root, 'skills', 'claude-api'), { recursive: true });
  await mkdir(path.join(art, 'assets'));
  await mkdir(path.join(art, 'references'));
  await mkdir(path.join(art, 'templates'));
  await writeFile(path.join(art, 'assets', 'swatch.png'), png());
  // Over today's 256 KiB cut, and not all ASCII: served whole, byte for byte.
  await writeFile(path.join(art, 'references', 'big.md'), `é${'A line of the palette reference.\n'.repeat(10_000)}`.slice(0, BIG_REFERENCE_BYTES - 1));
  await writeFile(path.join(art, 'templates', 'viewer.html'), '<!doctype html>\n<title>viewer</title>\n');
  for (let index = 0; index < 120; index++) {
    const name = `note-${String(index).padStart(3, '0')}`;
    await mkdir(path.join(root, 'skills', name));
    await writeFile(path.join(root, 'skills', name, 'SKILL.md'), `---\nname: ${name}\ndescription: Note ${index}. Use when note ${index} is asked for.\nmetadata:\n  version: "1.${index}"\n---\nNote ${index}.\n`);
  }
  for (const relative of ['SKILL.md', 'LICENSE.txt', 'assets/swatch.png', 'references/big.md', 'templates/viewer.html']) files[relative] = await readFile(path.join(art, relative));
});

afterAll(() => rm(root, { recursive: true, force: true }));

async function failure(promise: Promise<unknown>): Promise<McpError> {
  return promise.then(
    () => {
      throw new Error('expected an MCP error');
    },
    (error: McpError) => error,
  );
}

async function listAll(client: Client): Promise<Entry[][]> {
  const pages: Entry[][] = [];
  let cursor: string | undefined;
  do {
    const page = await client.request({ method: 'skills/list', params: cursor ? { cursor } : {} }, ListResult);
    pages.push(page.skills);
    cursor = page.nextCursor;
  } while (cursor);
  return pages;
}

describe.each([
  ['stdio', overStdio],
  ['http', overHttp],
] as const)('the Skills extension over %s', (_transport, connect: (args: string[]) => Promise<Connected>) => {
  it('declares the extension, lists every valid skill in pages, and answers skills/get with the same entry', async () => {
    const server = await connect([...ONLY, '--path', path.join(root, 'skills')]);
    const { client } = server;
    expect(client.getServerCapabilities()).toMatchObject({ resources: {}, extensions: { 'io.modelcontextprotocol/skills': { directoryRead: true } } });

    const pages = await listAll(client);
    // Pages are windows of 100 on the registry's 122 skills: claude-api, left out, makes the first one shorter.
    expect(pages.map((page) => page.length)).toEqual([99, 22]);
    const names = pages.flat().map((entry) => entry.frontmatter.name);
    expect(names).toEqual(['algorithmic-art', ...Array.from({ length: 120 }, (_, index) => `note-${String(index).padStart(3, '0')}`)]);
    // claude-api breaks the specification: left out, and the server says why.
    expect(server.stderr()).toMatch(/skill 'claude-api' is not served as an MCP skill .*Description exceeds 1024 character limit/);

    const entry = pages[0]![0]!;
    const text = files['SKILL.md']!.toString('utf8');
    expect(entry.uri).toBe('skill://algorithmic-art/SKILL.md');
    // The front matter verbatim, as any YAML parser reads the file's.
    expect(entry.frontmatter).toEqual(parse(text.slice(4, text.indexOf('\n---\n', 4))));
    const expected = Object.entries(files).map(([relative, bytes]) => ({ uri: `skill://algorithmic-art/${relative}`, digest: digest(bytes), size: bytes.length }));
    expect([...entry.resources].sort((a, b) => a.uri.localeCompare(b.uri))).toEqual(expected.sort((a, b) => a.uri.localeCompare(b.uri)));
    expect(pages[1]![0]!.frontmatter).toEqual({ name: 'note-098', description: 'Note 98. Use when note 98 is asked for.', metadata: { version: '1.98' } });

    const got = await client.request({ method: 'skills/get', params: { uri: entry.uri } }, GetResult);
    expect(got.skill).toEqual(entry);
    const unknown = await failure(client.request({ method: 'skills/get', params: { uri: 'skill://nope/SKILL.md' } }, GetResult));
    expect(unknown.code).toBe(-32602);
    expect(unknown.message).toBe('MCP error -32602: No skill is served at skill://nope/SKILL.md');
    expect(unknown.data).toMatchObject({ uri: 'skill://nope/SKILL.md' });
    const notManifest = await failure(client.request({ method: 'skills/get', params: { uri: 'skill://algorithmic-art/LICENSE.txt' } }, GetResult));
    expect(notManifest.code).toBe(-32602);
    expect(notManifest.message).toBe("MCP error -32602: skill://algorithmic-art/LICENSE.txt is not the URI of a skill's SKILL.md; this skill's is skill://algorithmic-art/SKILL.md");
    expect(notManifest.data).toMatchObject({ uri: 'skill://algorithmic-art/LICENSE.txt' });
    const leftOut = await failure(client.request({ method: 'skills/get', params: { uri: 'skill://claude-api/SKILL.md' } }, GetResult));
    expect(leftOut.data).toMatchObject({ uri: 'skill://claude-api/SKILL.md', code: 'skill_not_served', reason: 'invalid' });
    const badCursor = await failure(client.request({ method: 'skills/list', params: { cursor: 'not-a-cursor' } }, ListResult));
    expect(badCursor.code).toBe(-32602);
  });

  it('reads every file whole and as it is on disk: SKILL.md with its front matter, text as text, a PNG as a blob', async () => {
    const { client } = await connect([...ONLY, '--path', path.join(root, 'skills')]);
    const { resources } = await client.listResources();
    const manifest = resources.find((resource) => resource.uri === 'skill://algorithmic-art/SKILL.md');
    const front = parse(files['SKILL.md']!.toString('utf8').split('\n---\n')[0]!.slice(4)) as { name: string; description: string };
    expect(manifest).toMatchObject({ name: 'algorithmic-art', description: front.description, mimeType: 'text/markdown' });
    expect(resources.some((resource) => resource.uri.startsWith('skill://claude-api/'))).toBe(false);

    const read = async (relative: string) => (await client.readResource({ uri: `skill://algorithmic-art/${relative}` })).contents[0] as { uri: string; mimeType: string; text?: string; blob?: string };
    const skillMd = await read('SKILL.md');
    expect(skillMd).toEqual({ uri: 'skill://algorithmic-art/SKILL.md', mimeType: 'text/markdown', text: files['SKILL.md']!.toString('utf8') });
    expect(Buffer.byteLength(skillMd.text!)).toBe(19_769);
    expect(skillMd.text!.startsWith('---\nname: algorithmic-art\n')).toBe(true);
    const image = await read('assets/swatch.png');
    expect(image.mimeType).toBe('image/png');
    expect(image.text).toBeUndefined();
    expect(Buffer.from(image.blob!, 'base64').equals(files['assets/swatch.png']!)).toBe(true);
    const big = await read('references/big.md');
    expect(Buffer.byteLength(big.text!)).toBe(BIG_REFERENCE_BYTES);
    expect(Buffer.from(big.text!).equals(files['references/big.md']!)).toBe(true);
    expect(big.mimeType).toBe('text/markdown');

    const outside = await failure(client.readResource({ uri: 'skill://algorithmic-art/../claude-api/SKILL.md' }));
    expect(outside.data).toMatchObject({ uri: 'skill://algorithmic-art/../claude-api/SKILL.md', code: 'resource_refused' });
    const missing = await failure(client.readResource({ uri: 'skill://algorithmic-art/nope.md' }));
    expect(missing.code).toBe(-32602);
    expect(missing.data).toMatchObject({ uri: 'skill://algorithmic-art/nope.md', code: 'resource_not_found' });
  });

  it('reads directories: the direct children of a skill folder, subfolders as inode/directory', async () => {
    const { client } = await connect([...ONLY, '--path', path.join(root, 'skills')]);
    const readDirectory = (uri: string) => client.request({ method: 'resources/directory/read', params: { uri } }, DirectoryResult);
    const top = await readDirectory('skill://algorithmic-art');
    expect(top.nextCursor).toBeUndefined();
    expect(top.resources.map(({ uri, mimeType }) => [uri, mimeType]).sort()).toEqual(
      [
        ['skill://algorithmic-art/LICENSE.txt', 'text/plain'],
        ['skill://algorithmic-art/SKILL.md', 'text/markdown'],
        ['skill://algorithmic-art/assets', 'inode/directory'],
        ['skill://algorithmic-art/references', 'inode/directory'],
        ['skill://algorithmic-art/templates', 'inode/directory'],
      ].sort(),
    );
    const assets = await readDirectory('skill://algorithmic-art/assets');
    expect(assets.resources).toEqual([{ uri: 'skill://algorithmic-art/assets/swatch.png', name: 'swatch.png', mimeType: 'image/png', size: files['assets/swatch.png']!.length }]);
    for (const uri of ['skill://algorithmic-art/SKILL.md', 'skill://algorithmic-art/nowhere', 'skill://nope']) {
      const error = await failure(readDirectory(uri));
      expect(error.code).toBe(-32602);
      expect(error.data).toMatchObject({ uri });
    }
  });
});
