/**
 * `skillstate init <name>`: scaffolds a skill folder — `<dir>/<name>/SKILL.md` with valid front
 * matter and a body to fill in — then validates it strictly, so what it writes always passes
 * `skillstate validate`. Refuses a name the specification rejects and a folder that already holds
 * a SKILL.md.
 *
 * I/O: creates one folder and one file.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { defaultSkillSources } from '../../manifest/discover.js';
import { checkManifestFields } from '../../manifest/fields.js';
import { validateSkillDir } from '../../manifest/validate.js';
import { parseCommandArgs, UsageError, type Command } from '../io.js';

/** The SKILL.md `init` writes. */
export function scaffoldManifest(name: string, description: string): string {
  return `---
name: ${name}
description: ${JSON.stringify(description)}
---

# ${name}

## When to use this skill

Say when a model should load this skill, and what it must not be used for. A model picks skills
by their description, which its catalog shows whole: say there too when to use this one
("Use when…"); this section is read only once the skill is loaded.

## Instructions

1. The first step.
2. The next step.

## Files

Name the files of this folder the instructions rely on (for example \`reference.md\`), by their
path relative to this folder.
`;
}

export const initCommand: Command = {
  name: 'init',
  help: `Usage: skillstate init [--dir <parent>] [--description "<text>"] <name>

Creates <parent>/<name>/SKILL.md (parent: the current folder) with valid front matter and a body
to fill in, then validates it. The name must be a valid skill name: lowercase letters, digits
and hyphens, at most 64 characters, no leading, trailing or double hyphen.

  --dir <parent>          where to create the folder (e.g. .agent/skills)
  --description "<text>"  what the skill does and when to use it`,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs({
      args,
      allowPositionals: true,
      options: { dir: { type: 'string' }, description: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    });
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    if (positionals.length !== 1) throw new UsageError('init needs exactly one skill name');
    const name = positionals[0]!;
    const description = values.description ?? `Describe what the ${name} skill does and when to use it.`;
    const { problems } = checkManifestFields({ name, description }, { dirName: name });
    const errors = problems.filter((problem) => problem.level === 'fatal' || problem.level === 'spec');
    if (errors.length) {
      io.err(`skillstate init: cannot create skill '${name}':\n${errors.map((problem) => `  - ${problem.message}\n`).join('')}`);
      return 1;
    }
    const dir = path.resolve(values.dir ?? '.', name);
    await mkdir(dir, { recursive: true });
    try {
      await writeFile(path.join(dir, 'SKILL.md'), scaffoldManifest(name, description), { flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      io.err(`skillstate init: ${path.join(dir, 'SKILL.md')} already exists; nothing was written\n`);
      return 1;
    }
    const result = await validateSkillDir(dir);
    if (!result.valid) {
      io.err(`skillstate init: the new skill is not valid:\n${result.errors.map((error) => `  - ${error}\n`).join('')}`);
      return 1;
    }
    io.out(`Created ${path.join(dir, 'SKILL.md')}\nValid skill: ${dir}\n${unscannedHint(path.dirname(dir))}`);
    return 0;
  },
};

/**
 * A skill made where discovery does not look by default (`init my-skill` in an application's
 * folder) would be missing from the next `skillstate list` without a word: the line that says how
 * to reach it. Nothing for the project and user folders.
 */
function unscannedHint(parent: string): string {
  const { project, user } = defaultSkillSources();
  if (parent === project || parent === user) return '';
  const shown = path.relative(process.cwd(), parent) || '.';
  return `Discovery scans ./.agent/skills and ~/.agent/skills, not ${shown === '.' ? 'the current folder' : shown}: give the other commands --path ${shown}, or create skills with --dir .agent/skills\n`;
}
