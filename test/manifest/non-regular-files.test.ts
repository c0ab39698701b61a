/**
 * A SKILL.md, a resource or a script that is not a regular file — a FIFO, a socket, a folder
 * named SKILL.md — is skipped with a diagnostic and never opened for a blocking read. Every test
 * has a time bound: if something waited on a FIFO, the test fails instead of hanging the run, and
 * the FIFO is then opened for writing to release the waiting reader.
 */
import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { mkdir, open, symlink } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cmd, createSkillTools, defineAgent, discoverSkills, ManifestError } from '../../src/index.js';
import { runSkillScript, validateSkillDir } from '../../src/manifest/index.js';
import { scanSkillSources } from '../../src/manifest/discover.js';
import { readManifestHead } from '../../src/manifest/folder.js';
import { simpleSkill, tree } from './tree.js';

const BOUND = { timeout: 5000 };
const fifos: string[] = [];
const servers: net.Server[] = [];

afterEach(async () => {
  // Should a reader be stuck on a FIFO, a writer opening it lets the reader (and the run) go on.
  for (const fifo of fifos.splice(0)) {
    await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK).then(
      (handle) => handle.close(),
      () => undefined,
    );
  }
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

function mkfifo(file: string): string {
  execFileSync('mkfifo', [file]);
  fifos.push(file);
  return file;
}

async function unixSocket(file: string): Promise<string> {
  const server = net.createServer();
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(file, resolve));
  return file;
}

describe('a SKILL.md that is not a regular file is skipped with a diagnostic, never read', () => {
  it('discovery skips a FIFO named SKILL.md and loads the other skills', BOUND, async () => {
    const root = await tree({ 'good/SKILL.md': simpleSkill('good') });
    await mkdir(path.join(root, 'piped'));
    mkfifo(path.join(root, 'piped', 'SKILL.md'));
    const scan = await scanSkillSources({ extra: [root] });
    expect(scan.entries.map((entry) => entry.name)).toEqual(['good']);
    const skipped = scan.diagnostics.find((d) => d.code === 'skill_skipped' && d.subject === path.join(root, 'piped'));
    expect(skipped).toMatchObject({ level: 'error', details: { reason: 'invalid_manifest', code: 'invalid_manifest' } });
    expect(skipped?.message).toContain('is a FIFO, not a regular file');
  });

  it('discovery skips a folder named SKILL.md', BOUND, async () => {
    const root = await tree({ 'good/SKILL.md': simpleSkill('good'), 'odd/SKILL.md/readme.txt': 'a folder, not a manifest' });
    const scan = await scanSkillSources({ extra: [root] });
    expect(scan.entries.map((entry) => entry.name)).toEqual(['good']);
    const skipped = scan.diagnostics.find((d) => d.code === 'skill_skipped' && d.subject === path.join(root, 'odd'));
    expect(skipped?.message).toContain('is a directory, not a regular file');
  });

  it('discovery skips a socket named SKILL.md', BOUND, async () => {
    const root = await tree({ 'good/SKILL.md': simpleSkill('good') });
    await mkdir(path.join(root, 'sock'));
    await unixSocket(path.join(root, 'sock', 'SKILL.md'));
    const scan = await scanSkillSources({ extra: [root] });
    expect(scan.entries.map((entry) => entry.name)).toEqual(['good']);
    expect(scan.diagnostics.find((d) => d.subject === path.join(root, 'sock'))?.message).toContain('is a socket, not a regular file');
  });

  it('discovery skips a SKILL.md linked to a device (/dev/zero never ends)', BOUND, async () => {
    const root = await tree({ 'good/SKILL.md': simpleSkill('good') });
    await mkdir(path.join(root, 'endless'));
    await symlink('/dev/zero', path.join(root, 'endless', 'SKILL.md'));
    const scan = await scanSkillSources({ extra: [root] });
    expect(scan.entries.map((entry) => entry.name)).toEqual(['good']);
    expect(scan.diagnostics.find((d) => d.subject === path.join(root, 'endless'))?.message).toContain('is a character device, not a regular file');
  });

  it('strict validation reports a FIFO SKILL.md as an error', BOUND, async () => {
    const root = await tree();
    mkfifo(path.join(root, 'SKILL.md'));
    const result = await validateSkillDir(root);
    expect(result.valid).toBe(false);
    expect(result.errors).toEqual(['is a FIFO, not a regular file; it is not read']);
  });

  it('readManifestHead throws invalid_manifest for a FIFO', BOUND, async () => {
    const root = await tree();
    const fifo = mkfifo(path.join(root, 'SKILL.md'));
    const error = await readManifestHead(fifo).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ManifestError);
    expect(error).toMatchObject({ code: 'invalid_manifest', details: { reason: 'not_a_file', kind: 'FIFO' } });
  });
});

describe('a resource that is not a regular file is neither listed nor read', () => {
  it('read_skill_resource refuses a FIFO with resource_refused, and the listing reports it', BOUND, async () => {
    const root = await tree({ 'tool/SKILL.md': simpleSkill('tool'), 'tool/notes.md': '# Notes' });
    mkfifo(path.join(root, 'tool', 'pipe.md'));
    const registry = await discoverSkills({ extra: [root] });
    const loaded = await registry.content('tool');
    expect([...loaded.resources.keys()]).toEqual(['notes.md']);
    expect((loaded.diagnostics ?? []).map((d) => d.message)).toContain("'pipe.md' is a FIFO, not a regular file; it is not offered");
    const agent = defineAgent({ name: 'reader', skills: [createSkillTools(registry)] }).new();
    const outcome = await cmd(agent, { action: 'read_skill_resource', params: { skill: 'tool', path: 'pipe.md' } });
    expect(outcome.results[0]).toMatchObject({ ok: false, error: { details: { reason: 'resource_refused' } } });
    expect(!outcome.results[0]!.ok && outcome.results[0]!.error.message).toContain("'pipe.md' is a FIFO, not a regular file");
  });

  it('a listed file replaced by a FIFO after the listing is refused, not waited on', BOUND, async () => {
    const root = await tree({ 'tool/SKILL.md': simpleSkill('tool'), 'tool/data.txt': 'fine' });
    const registry = await discoverSkills({ extra: [root] });
    const loaded = await registry.content('tool');
    const { rm } = await import('node:fs/promises');
    await rm(path.join(root, 'tool', 'data.txt'));
    mkfifo(path.join(root, 'tool', 'data.txt'));
    const error = await loaded.resources.get('data.txt')!.read().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'resource_refused', details: { reason: 'not_a_file', kind: 'FIFO' } });
  });
});

describe('a script that is not a regular file is refused', () => {
  it.each(['run.sh', 'run'])('a FIFO named %s', BOUND, async (name) => {
    const root = await tree({ 'tool/SKILL.md': simpleSkill('tool') });
    mkfifo(path.join(root, 'tool', name));
    const error = await runSkillScript(path.join(root, 'tool'), name).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'script_refused', details: { reason: 'not_a_file' } });
    expect((error as Error).message).toContain('is a FIFO, not a regular file');
  });
});
