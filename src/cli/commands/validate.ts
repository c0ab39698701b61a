/**
 * `skillstate validate <dir...>`: strict validation of skill folders, in the Agent Skills
 * reference validator's words. Exit 0 when every folder is valid, 1 otherwise.
 */
import { parseArgs } from 'node:util';
import { validateSkillDir } from '../../manifest/validate.js';
import { UsageError, type Command } from '../io.js';

export const validateCommand: Command = {
  name: 'validate',
  summary: 'check skill folders strictly against the Agent Skills specification',
  help: `Usage: skillstate validate [--spec agentskills|skillstate] [--json] <dir...>

Validates each skill folder strictly: SKILL.md present, front matter opening the file and closed,
a YAML mapping, every field within the specification. Problems are reported in the words of the
Agent Skills reference validator (skills-ref). Exit code 1 when any folder is invalid.

  --spec agentskills   accept only the standard fields
  --spec skillstate    also accept the extension fields: version, toolsets, scripts, triggers,
                       default_enabled, brief_description (default)
  --json               print the results as JSON`,
  async run(args, io) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { spec: { type: 'string', default: 'skillstate' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    });
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    if (!positionals.length) throw new UsageError('validate needs at least one skill folder');
    if (values.spec !== 'agentskills' && values.spec !== 'skillstate') throw new UsageError(`--spec must be agentskills or skillstate, not '${values.spec}'`);
    const results = [];
    for (const dir of positionals) results.push(await validateSkillDir(dir, { spec: values.spec }));
    if (values.json) {
      io.out(`${JSON.stringify(results.map(({ manifest: _manifest, ...rest }) => rest), null, 2)}\n`);
    } else {
      for (const result of results) {
        if (result.valid) io.out(`Valid skill: ${result.dir}\n`);
        else {
          io.err(`Validation failed for ${result.dir}:\n`);
          for (const error of result.errors) io.err(`  - ${error}\n`);
        }
        for (const warning of result.warnings) io.err(`  warning: ${warning.message}\n`);
      }
    }
    return results.every((result) => result.valid) ? 0 : 1;
  },
};
