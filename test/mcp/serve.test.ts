/**
 * `skillstate mcp` as MCP clients see it: the SDK's own client against the real command, over
 * stdio and over Streamable HTTP, with the same expectations for both.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BIN, BUNDLED, eventually, FIXTURE_AGENT, onCleanup, ONLY, overHttp, overStdio, stopProcess, type Connected } from './processes.js';

const SKILLS = ['--path', path.join(BUNDLED, 'hello-extended'), '--path', path.join(BUNDLED, 'csv-tools')];

function text(result: unknown): string {
  const content = (result as { content: { type: string; text?: string }[] }).content;
  return content.map((part) => part.text ?? '').join('');
}

describe.each([
  ['stdio', overStdio],
  ['http', overHttp],
] as const)('skillstate mcp over %s', (_transport, connect: (args: string[]) => Promise<Connected>) => {
  it('offers the skill tools, loads a skill, and tells the client the tool list changed', async () => {
    const { client, notifications } = await connect([...ONLY, ...SKILLS]);
    const before = await client.listTools();
    expect(before.tools.map((tool) => tool.name)).toEqual(['load_skill', 'list_skills', 'read_skill_resource']);
    const load = before.tools.find((tool) => tool.name === 'load_skill')!;
    expect(load.inputSchema).toMatchObject({ type: 'object', required: ['name'] });

    const loaded = await client.callTool({ name: 'load_skill', arguments: { name: 'hello-extended' } });
    expect(loaded.isError).toBeFalsy();
    expect(loaded.structuredContent).toMatchObject({ skill: 'hello-extended', tools: ['say_hello', 'wave'], alreadyLoaded: false });
    await eventually(() => notifications.some((n) => n.method === 'notifications/tools/list_changed'), 'tools/list_changed');

    const after = await client.listTools();
    expect(after.tools.map((tool) => tool.name)).toEqual(['load_skill', 'list_skills', 'read_skill_resource', 'say_hello', 'wave']);
    const hello = await client.callTool({ name: 'say_hello', arguments: { name: 'Ada', style: 'excited' } });
    expect(hello.isError).toBeFalsy();
    expect(text(hello)).toContain('Ada');
    // Loading it again changes nothing: no second notification.
    const again = await client.callTool({ name: 'load_skill', arguments: { name: 'hello-extended' } });
    expect(again.structuredContent).toMatchObject({ alreadyLoaded: true });
  });

  it('answers a failing call and invalid arguments with isError and the typed code, and keeps serving', async () => {
    const { client } = await connect([...ONLY, ...SKILLS]);
    const unknown = await client.callTool({ name: 'load_skill', arguments: { name: 'no-such-skill' } });
    expect(unknown.isError).toBe(true);
    expect(JSON.parse(text(unknown)).error).toMatchObject({ code: 'action_failed', message: expect.stringContaining("no skill named 'no-such-skill'") });
    const invalid = await client.callTool({ name: 'load_skill', arguments: { name: 42 } });
    expect(invalid.isError).toBe(true);
    expect(JSON.parse(text(invalid)).error.code).toBe('invalid_params');
    const missing = await client.callTool({ name: 'no_such_tool', arguments: {} });
    expect(missing.isError).toBe(true);
    expect(JSON.parse(text(missing)).error.code).toBe('unknown_action');
    const list = await client.callTool({ name: 'list_skills', arguments: {} });
    expect(list.structuredContent).toMatchObject({ count: 2 });
  });

  it('reads skills as resources through the same confinement, and offers the disclosure prompt', async () => {
    const { client } = await connect([...ONLY, ...SKILLS]);
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri).sort()).toEqual(['skill://csv-tools/SKILL.md', 'skill://hello-extended/SKILL.md']);
    // Each resource is described as the catalog describes its skill: the whole description.
    const csvTools = 'Summarise and inspect CSV files. Use it when the user has a .csv file, a spreadsheet export or comma-separated data and wants row counts, column names or column totals.';
    expect(resources.find((resource) => resource.uri === 'skill://csv-tools/SKILL.md')?.description).toBe(csvTools);
    const manifest = await client.readResource({ uri: 'skill://hello-extended/SKILL.md' });
    // The file as it is on disk, front matter included.
    const onDisk = await readFile(path.join(BUNDLED, 'hello-extended', 'SKILL.md'), 'utf8');
    expect(manifest.contents[0]).toEqual({ uri: 'skill://hello-extended/SKILL.md', mimeType: 'text/markdown', text: onDisk });
    expect(onDisk.startsWith('---\nname: hello-extended\n')).toBe(true);
    const reference = await client.readResource({ uri: 'skill://csv-tools/reference.md' });
    expect((reference.contents[0] as { text: string }).text.length).toBeGreaterThan(0);
    await expect(client.readResource({ uri: 'skill://csv-tools/../hello-extended/SKILL.md' })).rejects.toThrow(/resource_refused/);
    await expect(client.readResource({ uri: 'skill://csv-tools/%2Fetc%2Fpasswd' })).rejects.toThrow(/resource_refused/);
    await expect(client.readResource({ uri: 'skill://csv-tools/nope.md' })).rejects.toThrow(/resource_not_found/);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates[0]?.uriTemplate).toBe('skill://{skill}/{+path}');

    const prompt = await client.getPrompt({ name: 'skills', arguments: { query: 'please greet Bob' } });
    expect(prompt.description).toMatch(/^tier 3/);
    expect((prompt.messages[0]!.content as { text: string }).text).toContain('hello-extended');
    const catalog = await client.getPrompt({ name: 'skills' });
    expect((catalog.messages[0]!.content as { text: string }).text).toContain(`- **csv-tools**: ${csvTools}\n`);
  });

  it('--agent serves a user agent: state changes across calls, structured output, typed failures', async () => {
    const { client } = await connect([...ONLY, '--agent', `${FIXTURE_AGENT}:Calculator`]);
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['increment', 'get_count', 'divide', 'describe_number', 'explode']));
    const described = tools.find((tool) => tool.name === 'describe_number')!;
    expect(described.outputSchema).toMatchObject({ type: 'object', properties: { even: { type: 'boolean' } } });

    await client.callTool({ name: 'increment', arguments: {} });
    await client.callTool({ name: 'increment', arguments: { by: 4 } });
    expect((await client.callTool({ name: 'get_count', arguments: {} })).structuredContent).toEqual({ count: 5 });
    expect((await client.callTool({ name: 'describe_number', arguments: { n: 3 } })).structuredContent).toEqual({ even: false, square: 9 });

    const divide = await client.callTool({ name: 'divide', arguments: { a: 1, b: 0 } });
    expect(divide.isError).toBe(true);
    expect(JSON.parse(text(divide)).error).toMatchObject({ code: 'action_failed', details: { reason: 'division_by_zero' } });
    const exploded = await client.callTool({ name: 'explode', arguments: {} });
    expect(JSON.parse(text(exploded)).error).toMatchObject({ code: 'action_failed', action: 'explode' });
    // The failures left the state as it was.
    expect((await client.callTool({ name: 'get_count', arguments: {} })).structuredContent).toEqual({ count: 5 });
  });
});

describe('skillstate mcp on stdio', () => {
  it('writes nothing but protocol to stdout, even when an action prints', async () => {
    const child = spawn(process.execPath, [BIN, 'mcp', ...ONLY, '--agent', `${FIXTURE_AGENT}:Calculator`], { stdio: ['pipe', 'pipe', 'pipe'] });
    onCleanup(() => stopProcess(child));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'chatty', arguments: {} } });
    await eventually(() => stdout.includes('"id":2'), 'the answer to the call', 15_000);
    const lines = stdout.trim().split('\n');
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
    expect(JSON.parse(lines.at(-1)!).result.structuredContent).toEqual({ said: 'hello' });
    expect(stderr).toContain('printed by an action');
    expect(stderr).toContain('more printing');
    // Every console method, formatted as console formats it.
    expect(stderr).toContain('formatted and 42');
    expect(stderr).toContain("{ via: 'dir' }");
    expect(stderr).toMatch(/│\s*via\s*│/);
    expect(stderr).toContain('counted: 1');
    // The server ends when its stdin does.
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.stdin.end();
    expect(await exited).toBe(0);
  });
});

describe('skillstate mcp on stdio, when its stdin ends', () => {
  it('answers the requests it has already read, then exits', async () => {
    const child = spawn(process.execPath, [BIN, 'mcp', ...SKILLS, ...ONLY], { stdio: ['pipe', 'pipe', 'pipe'] });
    onCleanup(() => stopProcess(child));
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    // Both read files: their answers come after stdin has ended.
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'load_skill', arguments: { name: 'hello-extended' } } });
    send({ jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: 'skill://csv-tools/SKILL.md' } });
    child.stdin.end();
    expect(await exited).toBe(0);
    const answers = stdout.trim().split('\n').map((line) => JSON.parse(line) as { id?: number; result?: Record<string, unknown>; error?: unknown });
    // (Besides the answers, the notification that the tool list changed.)
    expect(answers.flatMap((answer) => (answer.id === undefined ? [] : [answer.id])).sort()).toEqual([1, 2, 3]);
    expect(answers.every((answer) => answer.error === undefined)).toBe(true);
    expect(JSON.stringify(answers.find((answer) => answer.id === 2)!.result)).toContain('skill_content');
    expect(JSON.stringify(answers.find((answer) => answer.id === 3)!.result)).toContain('csv');
  });
});

describe('skillstate mcp tells what discovery skipped and shadowed', () => {
  it('writes each skipped folder, missing source and shadowed skill to stderr, and serves the rest', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'skillstate-mcp-discovery-'));
    onCleanup(() => rm(root, { recursive: true, force: true }));
    const write = async (folder: string, text: string) => {
      await mkdir(path.join(root, folder), { recursive: true });
      await writeFile(path.join(root, folder, 'SKILL.md'), text);
    };
    await write('first/notes', '---\nname: notes\ndescription: Notes from the first folder\n---\nFirst.\n');
    await write('second/notes', '---\nname: notes\ndescription: Notes from the second folder\n---\nSecond.\n');
    await write('first/broken', 'no front matter here\n');
    const missing = path.join(root, 'nowhere');
    const server = await overStdio([...ONLY, '--path', path.join(root, 'first'), '--path', path.join(root, 'second'), '--path', missing]);
    const listed = text(await server.client.callTool({ name: 'list_skills', arguments: {} }));
    expect(listed).toContain('Notes from the first folder');
    const stderr = server.stderr();
    expect(stderr).toMatch(/skillstate: (warning|error): .*broken/);
    expect(stderr).toContain(missing);
    expect(stderr).toMatch(/skill 'notes' of .*second.* is shadowed by the one of .*first/);
  });
});

describe('skillstate mcp and untrusted project skills', () => {
  it('leaves an untrusted project skill out of the resources and the Skills extension, says why, and load_skill still gives it with the notice', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'skillstate-mcp-untrusted-'));
    onCleanup(() => rm(root, { recursive: true, force: true }));
    await mkdir(path.join(root, 'project', 'notes'), { recursive: true });
    await writeFile(path.join(root, 'project', 'notes', 'SKILL.md'), '---\nname: notes\ndescription: Project notes\n---\nKeep notes.\n');
    const server = await overStdio(['--no-user', '--no-bundled', '--project', path.join(root, 'project'), '--trust-file', path.join(root, 'trusted.json')]);
    expect((await server.client.listResources()).resources).toEqual([]);
    const listed = await server.client.request({ method: 'skills/list', params: {} }, z.object({ skills: z.array(z.unknown()) }));
    expect(listed.skills).toEqual([]);
    const refused = await server.client.readResource({ uri: 'skill://notes/SKILL.md' }).then(
      () => undefined,
      (error: McpError) => error,
    );
    expect(refused?.code).toBe(-32602);
    expect(refused?.data).toMatchObject({ uri: 'skill://notes/SKILL.md', code: 'skill_not_served', reason: 'untrusted' });
    expect(server.stderr()).toContain("skill 'notes' is not served as an MCP skill (skills/list, resources): it is an untrusted project skill (trust it with 'skillstate trust notes')");
    const loaded = await server.client.callTool({ name: 'load_skill', arguments: { name: 'notes' } });
    expect(text(loaded)).toContain("Skill 'notes' comes from the project folder and is not trusted");
  });
});
