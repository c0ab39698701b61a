/**
 * Test helper: real folders in a temporary directory, written from a map of relative paths to
 * contents, removed after the test.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';

const made: string[] = [];

afterEach(async () => {
  while (made.length) await rm(made.pop()!, { recursive: true, force: true });
});

/** Creates a temporary folder holding `files` (relative path → text); removed after the test. */
export async function tree(files: Record<string, string | Buffer> = {}): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'skillstate-test-'));
  made.push(root);
  await writeTree(root, files);
  return root;
}

export async function writeTree(root: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [relative, content] of Object.entries(files)) {
    const file = path.join(root, relative);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
  }
}

/** A SKILL.md with the given front matter lines and body. */
export function skillMd(frontMatter: string, body = '# Body\n\nInstructions.\n'): string {
  return `---\n${frontMatter.trim()}\n---\n\n${body}`;
}

/** A minimal valid SKILL.md for a skill called `name`. */
export function simpleSkill(name: string, extra = '', body?: string): string {
  return skillMd(`name: ${name}\ndescription: The ${name} skill. It does ${name} things.\n${extra}`, body);
}
