/**
 * `skillstate read <skill> <path>`: one resource of a skill, with the same refusals as the
 * `read_skill_resource` tool.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { readSkillResource } from '../../manifest/resources.js';
import { parseCommandArgs, UsageError, type Command } from '../io.js';
import { discoverFromFlags, SOURCE_HELP, SOURCE_OPTIONS } from '../sources.js';

export const readCommand: Command = {
  name: 'read',
  help: `Usage: skillstate read [--max-bytes n] [sources] <skill> <path>

Prints a file of a skill: its SKILL.md, or one of its resources. The path is relative to the
skill's root, or an absolute path inside the root; '..', absolute paths outside the root and links
leaving the skill are refused; binary files are described, not printed; a missing file lists the
files that exist.

${SOURCE_HELP}`,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs({ args, allowPositionals: true, options: { ...SOURCE_OPTIONS, 'max-bytes': { type: 'string' } } });
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    if (positionals.length !== 2) throw new UsageError('read needs a skill name and a path');
    const [skill, file] = positionals as [string, string];
    const registry = await discoverFromFlags(values, io);
    const maxBytes = values['max-bytes'] === undefined ? undefined : Number(values['max-bytes']);
    if (maxBytes !== undefined && !(maxBytes > 0)) throw new UsageError('--max-bytes must be a positive number');
    const loaded = await registry.content(skill);
    // The manifest is not one of the resources a model reads through read_skill_resource (it has
    // it from load_skill), but it is a file of the skill: printed as it is on disk.
    if (loaded.root !== undefined && path.resolve(loaded.root, file) === path.join(loaded.root, 'SKILL.md')) {
      io.out(await readFile(path.join(loaded.root, 'SKILL.md'), 'utf8'));
      return 0;
    }
    const content = await readSkillResource(skill, loaded, file, { maxBytes });
    if (content.binary) {
      io.out(`[binary file '${content.path}' of ${content.size ?? 'unknown'} bytes: not shown]\n`);
      return 0;
    }
    io.out(content.text ?? '');
    if (content.truncated) io.err(`note: '${content.path}' is larger than the limit; the rest was not printed\n`);
    return 0;
  },
};
