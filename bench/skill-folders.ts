/**
 * Generated skill folders for the MCP Skills extension's benches: each a `SKILL.md` of about 2 KiB
 * (name, description, license, metadata), a 4 KiB reference and a 1 KiB script in subfolders.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** The files of each generated skill, relative to its folder. */
export const SKILL_FILES = ['SKILL.md', 'references/guide.md', 'scripts/run.py'];

/** Writes `count` skills (`skill-0000`...) in a new temp folder and returns it. */
export async function generateSkillFolders(count: number, prefix: string): Promise<string> {
  const base = await mkdtemp(path.join(os.tmpdir(), prefix));
  for (let i = 0; i < count; i++) {
    const name = `skill-${String(i).padStart(4, '0')}`;
    const dir = path.join(base, name);
    await mkdir(path.join(dir, 'references'), { recursive: true });
    await mkdir(path.join(dir, 'scripts'));
    await writeFile(path.join(dir, 'SKILL.md'), `---\nname: ${name}\ndescription: Skill ${i} does task ${i % 37}. Use when the user asks for task ${i % 37}.\nlicense: Apache-2.0\nmetadata:\n  version: "1.${i}"\n---\n${'Step by step instructions. '.repeat(75)}\n`);
    await writeFile(path.join(dir, 'references', 'guide.md'), `# Guide ${i}\n${'Reference material for the skill. '.repeat(120)}\n`);
    await writeFile(path.join(dir, 'scripts', 'run.py'), `print(${i})\n${'# a comment line of the script\n'.repeat(32)}`);
  }
  return base;
}

/** The middle value of the runs. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
