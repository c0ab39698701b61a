/**
 * The host side of MCP's Skills extension: `mountMcpSkills` against the real `skillstate mcp`
 * command (a subprocess, over stdio and over Streamable HTTP) serving skill folders in a temp
 * directory. The skills are listed, loaded through the registry's loading path with every file
 * checked against its entry, refused when a file changes after the listing (and the entry then
 * fetched again), kept apart from a local skill and from another server's skill of the same name.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cmd, createDocumentSkillRegistry, createSkillTools, defineAgent, defineDocumentSkill, type Diagnostic } from '../../src/index.js';
import { checkEntry, mountMcpSkills, type McpSkillsMount, type McpSkillsOptions } from '../../src/mcp/remote-skills.js';
import { BIN, eventually, httpServer, ONLY, onCleanup, SOURCE_ENV, stopProcess } from './processes.js';

let root: string;
let alpha: string;
let beta: string;

const skill = (name: string, description: string, body: string, extra = '') => `---\nname: ${name}\ndescription: ${description}\n${extra}---\n\n${body}\n`;

async function write(folder: string, files: Record<string, string>): Promise<void> {
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(folder, file)), { recursive: true });
    await writeFile(path.join(folder, file), text);
  }
}

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'skillstate-remote-'));
  alpha = path.join(root, 'alpha');
  beta = path.join(root, 'beta');
  await write(alpha, {
    'greet/SKILL.md': skill('greet', 'Greets people. Use when someone says hello.', '# Greet\n\nSay hello back; see references/phrases.md.'),
    'greet/references/phrases.md': 'Hello! Good morning! Welcome!\n',
    'forms/SKILL.md': skill('forms', 'Fills forms from server alpha. Use when a form is to be filled.', '# Forms from alpha', 'allowed-tools: Bash(rm:*)\n'),
    'hidden/SKILL.md': skill('hidden', 'Only found by its URI. Use when pointed to it.', '# Hidden', 'default_enabled: false\n'),
  });
  await write(beta, {
    'forms/SKILL.md': skill('forms', 'Fills forms from server beta. Use when a form is to be filled.', '# Forms from beta'),
  });
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A registry holding a local `greet`, and a diagnostics list. */
function localRegistry() {
  const diagnostics: Diagnostic[] = [];
  const registry = createDocumentSkillRegistry({ onDiagnostic: (item) => diagnostics.push(item) });
  registry.register(defineDocumentSkill({ name: 'greet', description: 'The local greeting skill. Use when greeting.', instructions: '# Local greet' }));
  return { registry, diagnostics };
}

const stdio = (name: string, folder: string): McpSkillsOptions => ({ name, command: process.execPath, args: [BIN, 'mcp', ...ONLY, '--path', folder], env: SOURCE_ENV });
const http = async (name: string, folder: string): Promise<McpSkillsOptions> => ({ name, url: (await httpServer([...ONLY, '--path', folder])).url });

async function mounted(registry: ReturnType<typeof localRegistry>['registry'], options: McpSkillsOptions): Promise<McpSkillsMount> {
  const mount = await mountMcpSkills(registry, options);
  onCleanup(() => mount.close());
  return mount;
}

describe.each([
  ['stdio', async (name: string, folder: string) => stdio(name, folder)],
  ['Streamable HTTP', http],
])('mountMcpSkills over %s', (_transport, server) => {
  it('lists the skills with their origin, untrusted, and never over a local skill of the same name', async () => {
    const { registry, diagnostics } = localRegistry();
    const mount = await mounted(registry, await server('alpha', alpha));
    // `hidden` is disabled by default_enabled: false, so skills/list leaves it out.
    expect(mount.skills()).toEqual(['alpha__greet', 'forms']);
    expect(registry.entry('greet')!.source).toBe('memory');
    const forms = registry.entry('forms')!;
    expect(forms).toMatchObject({ source: 'mcp', trusted: false, rootPath: undefined, origin: { server: 'alpha', uri: 'skill://forms/SKILL.md' } });
    expect(forms.briefDescription).toBe("Fills forms from server alpha. Use when a form is to be filled. (from MCP server 'alpha')");
    // allowed-tools of a skill served over MCP pre-approves nothing.
    expect(forms.manifest!.allowedTools).toEqual([]);
    expect(diagnostics.find((item) => item.code === 'mcp_skill_qualified')).toMatchObject({ skill: 'alpha__greet', details: { server: 'alpha', uri: 'skill://greet/SKILL.md', name: 'greet' } });
    expect(diagnostics.find((item) => item.code === 'mcp_skill_untrusted')).toMatchObject({ skill: 'forms', details: { ignored: ['allowed-tools'] } });
    expect(registry.diagnostics.some((item) => item.code === 'skill_shadowed')).toBe(false);
  });

  it('loads a skill through load_skill, the model told its origin, and reads only the files its entry lists', async () => {
    const { registry } = localRegistry();
    await mounted(registry, await server('alpha', alpha));
    const agent = defineAgent({ name: 'host', skills: [createSkillTools(registry)], registry }).new({ id: 'host' });
    const loaded = await cmd(agent, { action: 'load_skill', params: { name: 'alpha__greet' } });
    const result = loaded.results[0]!;
    if (!result.ok) throw new Error(result.error.message);
    const output = result.output as { instructions: string; resources: string[]; tools: string[]; trusted: boolean };
    expect(output.trusted).toBe(false);
    expect(output.tools).toEqual([]);
    expect(output.resources).toEqual(['references/phrases.md']);
    expect(output.instructions).toContain("comes from MCP server 'alpha' (skill://greet/SKILL.md) and is not trusted");
    expect(output.instructions).toContain('Say hello back; see references/phrases.md.');
    expect(output.instructions).not.toContain(alpha);

    const read = await cmd(agent, { action: 'read_skill_resource', params: { skill: 'alpha__greet', path: 'references/phrases.md' } });
    expect(read.results[0]).toMatchObject({ ok: true, output: { content: 'Hello! Good morning! Welcome!\n' } });

    // A file added on the server after the listing is not in the held entry: it is not the skill's.
    await write(alpha, { 'greet/references/added.md': 'added later\n' });
    onCleanup(() => rm(path.join(alpha, 'greet/references/added.md')));
    const added = await cmd(agent, { action: 'read_skill_resource', params: { skill: 'alpha__greet', path: 'references/added.md' } });
    expect(added.results[0]).toMatchObject({ ok: false, error: { details: { reason: 'resource_not_found' } } });
    const outside = await cmd(agent, { action: 'read_skill_resource', params: { skill: 'alpha__greet', path: '../forms/SKILL.md' } });
    expect(outside.results[0]).toMatchObject({ ok: false, error: { details: { reason: 'resource_refused' } } });
  });

  it('refuses a SKILL.md changed after the listing, fetches the entry again with skills/get, and loads the new one', async () => {
    const folder = path.join(root, `changing-${_transport.length}`);
    await write(folder, { 'notes/SKILL.md': skill('notes', 'Takes notes. Use when asked to note something.', '# Notes version one'), 'notes/log.md': 'first line\n' });
    const { registry, diagnostics } = localRegistry();
    await mounted(registry, await server('gamma', folder));
    // Same size, other bytes: the digest tells.
    await write(folder, { 'notes/SKILL.md': skill('notes', 'Takes notes. Use when asked to note something.', '# Notes version two') });
    const refused = await registry.content('notes').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toMatchObject({ code: 'skill_unverified', details: { reason: 'digest', server: 'gamma', uri: 'skill://notes/SKILL.md' } });
    expect(diagnostics.some((item) => item.code === 'mcp_skill_refreshed' && item.skill === 'notes')).toBe(true);
    // A resource that grows now: loading the skill reads its SKILL.md only, so the load succeeds...
    await write(folder, { 'notes/log.md': 'first line\nsecond line\n' });
    const loaded = await registry.content('notes');
    expect(loaded.instructions).toBe('# Notes version two\n');
    // ...and reading the resource fails: its size tells, before any digest.
    const log = loaded.resources.get('log.md')!;
    await expect(log.read()).rejects.toMatchObject({ code: 'skill_unverified', details: { reason: 'size', uri: 'skill://notes/log.md' } });
  });

  it('keeps two servers’ same-named skills apart, each read from its own server, and unmounting removes them', async () => {
    const { registry, diagnostics } = localRegistry();
    const first = await mounted(registry, await server('alpha', alpha));
    const second = await mounted(registry, await server('beta', beta));
    expect(second.skills()).toEqual(['beta__forms']);
    expect(diagnostics.find((item) => item.code === 'mcp_skill_qualified' && item.skill === 'beta__forms')!.message).toContain("MCP server 'alpha' (skill://forms/SKILL.md) already has a skill of that name");
    expect((await registry.content('forms')).instructions).toBe('# Forms from alpha\n');
    expect((await registry.content('beta__forms')).instructions).toBe('# Forms from beta\n');
    expect(registry.entry('beta__forms')!.origin).toEqual({ server: 'beta', uri: 'skill://forms/SKILL.md' });

    await first.close();
    expect(registry.has('forms')).toBe(false);
    expect(registry.has('alpha__greet')).toBe(false);
    expect(registry.entry('greet')!.source).toBe('memory');
    expect(registry.has('beta__forms')).toBe(true);
  });

  it('registers a skill never listed once skills/get confirms its URI', async () => {
    const { registry } = localRegistry();
    const mount = await mounted(registry, await server('alpha', alpha));
    expect(registry.has('hidden')).toBe(false);
    expect(await mount.add('skill://hidden/SKILL.md')).toBe('hidden');
    expect((await registry.content('hidden')).instructions).toBe('# Hidden\n');
    await expect(mount.add('skill://nowhere/SKILL.md')).rejects.toMatchObject({ code: 'skill_not_found' });
  });
});

describe('mountMcpSkills when the connection restarts', () => {
  it('lists the skills again: a skill added meanwhile appears, one gone is removed', async () => {
    const folder = path.join(root, 'restarting');
    await write(folder, { 'before/SKILL.md': skill('before', 'There before the restart. Use when testing.', '# Before') });
    const { registry, diagnostics } = localRegistry();
    const first = await httpServer([...ONLY, '--path', folder]);
    const mount = await mounted(registry, { name: 'delta', url: first.url });
    expect(mount.skills()).toEqual(['before']);

    await stopProcess(first.child);
    await eventually(() => diagnostics.some((item) => item.code === 'mcp_skills_relisted'), 'the mount to see the connection drop');
    await rm(path.join(folder, 'before'), { recursive: true });
    await write(folder, { 'after/SKILL.md': skill('after', 'Added during the restart. Use when testing.', '# After') });
    await httpServer([...ONLY, '--path', folder], undefined, Number(new URL(first.url).port));

    // The next need connects again, which reads the listing again.
    await mount.add('skill://after/SKILL.md');
    expect(mount.skills()).toEqual(['after']);
    expect(registry.has('before')).toBe(false);
    expect(diagnostics.some((item) => item.code === 'mcp_skill_removed' && item.skill === 'before')).toBe(true);
  });
});

describe('mountMcpSkills against a server whose entries cannot be taken as they are', () => {
  const LYING = fileURLToPath(new URL('./fixtures/lying-skills-server.mjs', import.meta.url));

  it('refuses malformed entries with a diagnostic, and a SKILL.md whose front matter differs from its entry', async () => {
    const { registry, diagnostics } = localRegistry();
    // The server calls itself 'skillstate': the label the app gave it is what names it.
    const mount = await mounted(registry, { name: 'lying', command: process.execPath, args: [LYING] });
    expect(mount.skills()).toEqual(['liar']);
    const refused = diagnostics.filter((item) => item.code === 'mcp_skill_refused').map((item) => [item.details!.uri, item.details!.reason]);
    expect(refused).toEqual([
      ['skill://no-resources/SKILL.md', 'malformed'],
      ['skill://generated/SKILL.md', 'dynamic'],
      ['skill://other/SKILL.md', 'name'],
    ]);
    expect(registry.entry('liar')!.origin).toEqual({ server: 'lying', uri: 'skill://liar/SKILL.md' });
    await expect(registry.content('liar')).rejects.toMatchObject({ code: 'skill_unverified', details: { reason: 'frontmatter', server: 'lying' } });
    expect(diagnostics.some((item) => item.code === 'mcp_skill_refreshed' && item.skill === 'liar')).toBe(true);
  });

  it('gives up on a listing that never ends once it holds more skills than one server may list, registering none', async () => {
    const { registry } = localRegistry();
    const endless = fileURLToPath(new URL('./fixtures/endless-skills-server.mjs', import.meta.url));
    await expect(mountMcpSkills(registry, { name: 'endless', command: process.execPath, args: [endless] })).rejects.toMatchObject({
      code: 'mcp_protocol_error',
      message: expect.stringContaining('more than 10000 skills'),
    });
    expect(registry.names()).toEqual(['greet']);
  });

  it('gives up on a listing that pages slowly for ever once callTimeout has passed for the whole listing, registering none', async () => {
    const { registry } = localRegistry();
    const endless = fileURLToPath(new URL('./fixtures/endless-skills-server.mjs', import.meta.url));
    const mounting = mountMcpSkills(registry, { name: 'slow', command: process.execPath, args: [endless, 'slow'], callTimeout: 1_500 });
    await expect(mounting).rejects.toMatchObject({ code: 'mcp_timeout', message: expect.stringContaining('slow') });
    expect(registry.names()).toEqual(['greet']);
  });

  it('gives up on a listing whose entries come to more than 64 MiB over its pages, registering none', async () => {
    const { registry } = localRegistry();
    const endless = fileURLToPath(new URL('./fixtures/endless-skills-server.mjs', import.meta.url));
    await expect(mountMcpSkills(registry, { name: 'fat', command: process.execPath, args: [endless, 'fat'] })).rejects.toMatchObject({
      code: 'mcp_protocol_error',
      message: expect.stringContaining(`more than ${64 * 1024 * 1024} bytes`),
    });
    expect(registry.names()).toEqual(['greet']);
  });
});

describe('checkEntry', () => {
  const digest = `sha256:${'a'.repeat(64)}`;
  const good = { uri: 'skill://acme/refunds/SKILL.md', frontmatter: { name: 'refunds', description: 'Refunds. Use when refunding.' }, resources: [{ uri: 'skill://acme/refunds/SKILL.md', digest, size: 10 }] };

  it('accepts a well-formed entry, keeping the skill path’s prefix', () => {
    const checked = checkEntry(good);
    expect(checked.ok && { prefix: checked.held.prefix, files: [...checked.held.files.keys()] }).toEqual({ prefix: ['acme'], files: ['SKILL.md'] });
  });

  it.each([
    ['no resources', { ...good, resources: undefined }, 'malformed'],
    ['resources that are not a list', { ...good, resources: {} }, 'malformed'],
    ['a digest that is not sha256', { ...good, resources: [{ ...good.resources[0], digest: 'md5:00' }] }, 'malformed'],
    ['"dynamic" resources', { ...good, resources: 'dynamic' }, 'dynamic'],
    ['a name that is not the last segment', { ...good, frontmatter: { ...good.frontmatter, name: 'refund' } }, 'name'],
    ['a name the specification refuses', { ...good, uri: 'skill://Re_funds/SKILL.md', frontmatter: { ...good.frontmatter, name: 'Re_funds' }, resources: [{ ...good.resources[0], uri: 'skill://Re_funds/SKILL.md' }] }, 'invalid'],
    ['a resource outside the skill', { ...good, resources: [...good.resources, { uri: 'skill://acme/other/x.md', digest, size: 1 }] }, 'malformed'],
    ['a resource with ..', { ...good, resources: [...good.resources, { uri: 'skill://acme/refunds/../x.md', digest, size: 1 }] }, 'malformed'],
    ['no SKILL.md among the resources', { ...good, resources: [{ uri: 'skill://acme/refunds/a.md', digest, size: 1 }] }, 'malformed'],
    ['over 16 MiB', { ...good, resources: [{ ...good.resources[0], size: 16 * 1024 * 1024 + 1 }] }, 'over_limits'],
    ['over 512 files', { ...good, resources: [...good.resources, ...Array.from({ length: 512 }, (_, n) => ({ uri: `skill://acme/refunds/f${n}.md`, digest, size: 1 }))] }, 'over_limits'],
  ])('refuses %s', (_what, entry, reason) => {
    expect(checkEntry(entry)).toMatchObject({ ok: false, reason });
  });
});

describe('mountMcpSkills refuses', () => {
  it('a server refusing its bearer token with mcp_unauthorized (the HTTP status in details), not mcp_unreachable', async () => {
    const { url } = await httpServer([...ONLY, '--path', alpha, '--token', 'sesame']);
    const refused = await mountMcpSkills(createDocumentSkillRegistry(), { name: 'alpha', url, headers: { authorization: 'Bearer wrong' } }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'mcp_unauthorized', subject: 'alpha', details: { status: 401 } });
    expect((refused as Error).message).toContain(`MCP server 'alpha' (${url}), connecting: the server refused the request (HTTP 401`);
    const registry = createDocumentSkillRegistry();
    const mount = await mounted(registry, { name: 'alpha', url, headers: { authorization: 'Bearer sesame' } });
    expect(mount.skills()).toEqual(['forms', 'greet']);
  });

  it('a label that cannot prefix a skill name', async () => {
    await expect(mountMcpSkills(createDocumentSkillRegistry(), { name: 'my server', command: process.execPath })).rejects.toMatchObject({ code: 'invalid_config' });
  });

  it('anything but a registry, before it connects to the server', async () => {
    // The server's address is never tried: a registry is checked first, whatever the server does.
    const spawned = mountMcpSkills(undefined as never, { name: 'team', command: 'skillstate-no-such-command' });
    await expect(spawned).rejects.toMatchObject({ code: 'invalid_options', subject: 'registry', message: expect.stringContaining('createDocumentSkillRegistry()') });
  });
});
